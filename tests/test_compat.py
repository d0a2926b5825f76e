from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from cudaresolve.cli import main
from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.db.database import CompatDB, DriverSupport, load_compat
from cudaresolve.errors import InvalidCompatData
from cudaresolve.text.catalogue import format_text

if TYPE_CHECKING:
    from pathlib import Path

# The two tables every file needs, in TOML, for the files written below.
HEAD = """schema-version = 1
[index]
default = "https://pypi.org/simple"
pytorch-root = "https://download.pytorch.org/whl"
allowed-hosts = ["download.pytorch.org", "pypi.org"]
source = "s"
[packages]
tables = ["torch"]
anchor = "torch"
source = "s"
"""


def problems(data: dict[str, Any], lang: str = "en") -> list[tuple[str, str]]:
    with pytest.raises(InvalidCompatData) as info:
        CompatDB.from_dict(data)
    return [(path, format_text(problem, lang)) for path, problem in info.value.problems]


def test_tiny_database_loads(tiny_db_dict: dict[str, Any]) -> None:
    db = CompatDB.from_dict(tiny_db_dict)
    (torch,) = db.packages("torch")
    assert [b.variant for b in torch.builds] == ["cu121", "cu118"]
    assert torch.builds[1].index_url == "https://download.pytorch.org/whl/cu118"
    assert torch.builds[1].local == "+cu118"
    assert db.packages("xformers") == ()


def test_unknown_keys_are_errors_with_dotted_paths(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["torch"][0]["build"][1]["sasss"] = ["sm_80"]
    tiny_db_dict["colour"] = "blue"
    assert problems(tiny_db_dict) == [
        ("colour", "unrecognized field"),
        ("torch[0].build[1].sasss", "unrecognized field"),
    ]


def test_every_problem_is_collected(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["cuda"][0]["min-driver-linux"] = "abc"
    tiny_db_dict["gpu"][0]["cc"] = "8.x"
    tiny_db_dict["torch"][0]["build"][0]["sass"] = ["sm_80", "compute_90"]
    tiny_db_dict["fbgemm-gpu"][0]["requires"] = ["torch=>2.1"]
    tiny_db_dict["variant"][1]["index-url"] = "http://download.pytorch.org/whl/cu118"
    found = problems(tiny_db_dict)
    assert found == [
        ("cuda[0].min-driver-linux", "not an NVIDIA driver version: 'abc'"),
        ("gpu[0].cc", "not a compute capability or arch: '8.x'"),
        ("variant[1].index-url", "must be an https URL: 'http://download.pytorch.org/whl/cu118'"),
        ("torch[0].build[0].sass[1]", "expected sm_XY form, got 'compute_90'"),
        (
            "fbgemm-gpu[0].requires[0]",
            "not a PEP 508 requirement: 'torch=>2.1'"
            " (Expected semicolon (after name with no version specifier) or end)",
        ),
        (
            "variant[1].index-url",
            "must be https://download.pytorch.org/whl/cu118 (index.pytorch-root followed by the variant name)",
        ),
    ]


def test_references_must_exist(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["torch"][0]["build"].append({"variant": "cu999", "sass": ["sm_80"]})
    tiny_db_dict["fbgemm-gpu"][0]["requires"] = ["torch==2.9.*"]
    tiny_db_dict["variant"].append(
        {"name": "cu130", "cuda": "13.0", "index-url": "https://download.pytorch.org/whl/cu130", "source": "s"}
    )
    assert problems(tiny_db_dict) == [
        ("torch[0].build[2].variant", "unknown variant 'cu999' (no [[variant]] row)"),
        ("variant[2].cuda", "no [[cuda]] row for 13.0"),
        ("fbgemm-gpu[0].requires[0]", "torch==2.9.* matches no [[torch]] row"),
    ]


def test_duplicates_and_order(tiny_db_dict: dict[str, Any]) -> None:
    older = dict(tiny_db_dict["torch"][0], version="2.0.0")
    tiny_db_dict["torch"].insert(0, older)
    tiny_db_dict["torch"].append(dict(tiny_db_dict["torch"][1]))
    tiny_db_dict["variant"].append(dict(tiny_db_dict["variant"][0]))
    tiny_db_dict["gpu"].append(dict(tiny_db_dict["gpu"][0], name="A800 again", aliases=["a800 sxm4 80gb"]))
    assert problems(tiny_db_dict) == [
        ("variant[2].name", "duplicate name 'cu121'"),
        ("gpu[1]", "name or alias 'a800 sxm4 80gb' also names 'NVIDIA A800'"),
        ("torch[1].version", "rows must be newest first: 2.1.0 comes after 2.0.0"),
        ("torch[2].version", "duplicate version 2.1.0"),
    ]


def test_two_gpu_rows_of_one_name_are_refused(tiny_db_dict: dict[str, Any]) -> None:
    """A second [[gpu]] row with the first one's very name (another compute capability) was taken silently, the
    first row winning every lookup; it is a label two rows share, as a shared alias is."""
    first = tiny_db_dict["gpu"][0]
    tiny_db_dict["gpu"].append(dict(first, cc="9.0", aliases=[]))
    assert problems(tiny_db_dict) == [("gpu[1]", f"name or alias {first['name']!r} also names {first['name']!r}")]


def test_missing_fields_and_wrong_types(tiny_db_dict: dict[str, Any]) -> None:
    del tiny_db_dict["gpu"][0]["source"]
    tiny_db_dict["gpu"][0]["datacenter"] = "yes"
    tiny_db_dict["torch"][0]["python"] = ["3.11", "py3"]
    tiny_db_dict["schema-version"] = 2
    assert problems(tiny_db_dict) == [
        ("schema-version", "unsupported schema version 2 (this cudaresolve reads 1)"),
        ("gpu[0].datacenter", "expected true or false, got str"),
        ("gpu[0].source", "required field is missing"),
        ("torch[0].python[1]", "expected 3.X, got 'py3'"),
    ]


def test_queries(tiny_db_dict: dict[str, Any]) -> None:
    db = CompatDB.from_dict(tiny_db_dict)
    old = parse_driver("470.129.06")
    assert db.max_cuda_for_driver(old) is None
    assert db.max_cuda_for_driver(parse_driver("525.60.13")) == CudaVersion(11, 8)
    assert db.driver_support(CudaVersion(11, 8), old, "linux_x86_64") is DriverSupport.MINOR
    assert db.driver_support(CudaVersion(12, 1), old, "linux_x86_64") is DriverSupport.NONE
    assert db.driver_support(CudaVersion(12, 1), parse_driver("530.30.02"), "linux_x86_64") is DriverSupport.FULL
    gpu = db.find_gpu("NVIDIA A800-SXM4-80GB")
    assert gpu is not None and gpu.cc == ComputeCapability(8, 0)
    assert db.find_gpu("a800") is gpu
    assert db.find_gpu("A80") is None
    assert db.find_gpu("") is None


def test_db_check_cli_lists_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "compat.toml"
    bad.write_text(HEAD + '[[gpu]]\nname = "X"\ncc = "8.0"\narch = "A"\ndatacenter = true\n')
    assert main(["db", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"error: invalid-compat-data: {bad} has 1 problem" in err
    assert "gpu[0].source: required field is missing" in err


def test_db_check_malformed_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "compat.toml"
    bad.write_text("schema-version = = 1\n")
    assert main(["db", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "not valid TOML" in err
    assert "Traceback" not in err


def test_db_check_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "check", "/no/such/compat.toml"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: invalid-input: cannot read /no/such/compat.toml")
    assert "hint" in err


def test_load_compat_reads_path(tmp_path: Path) -> None:
    good = tmp_path / "c.toml"
    good.write_text(HEAD + '[[gpu]]\nname = "X1"\ncc = "8.0"\narch = "A"\ndatacenter = true\nsource = "s"\n')
    db = load_compat(good)
    gpu = db.find_gpu("x1")
    assert gpu is not None and (gpu.name, gpu.cc, gpu.datacenter) == ("X1", ComputeCapability(8, 0), True)
    assert db.source == str(good) and db.package_kinds == ("torch",) and db.packages("torch") == ()


def test_a_bad_compat_flag_lists_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "compat.toml"
    bad.write_text(HEAD.replace('anchor = "torch"', 'anchor = "numpy"'))
    assert main(["arch-list", "--gpu", "8.0", "--compat", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: invalid-compat-data: {bad} has 1 problem: packages.anchor: the anchor 'numpy' is not one of "
        "packages.tables (hint: run 'cudaresolve db check PATH' to list them all)",
        "  packages.anchor: the anchor 'numpy' is not one of packages.tables",
    ]


def test_provenance_keys_are_validated(tiny_db_dict: dict[str, Any]) -> None:
    builds = tiny_db_dict["torch"][0]["build"]
    builds[0] |= {"checked": "wheel"}
    builds[1] |= {"checked": "rumour", "scanned": "23/11/2026"}
    assert problems(tiny_db_dict) == [
        ("torch[0].build[0].scanned", 'scanned (the scan date) goes with checked = "wheel", and only with it'),
        ("torch[0].build[1].checked", "expected 'wheel', 'build-script', 'announcement', got 'rumour'"),
        ("torch[0].build[1].scanned", 'scanned (the scan date) goes with checked = "wheel", and only with it'),
        ("torch[0].build[1].scanned", "expected a date YYYY-MM-DD, got '23/11/2026'"),
    ]


def test_build_script_and_withdrawn_need_their_evidence(tiny_db_dict: dict[str, Any]) -> None:
    builds = tiny_db_dict["torch"][0]["build"]
    builds[0] |= {"checked": "build-script", "source": "https://example.org", "verified": False}
    builds[1] |= {"exists": False, "broken": True}
    builds[1].pop("source", None)
    assert problems(tiny_db_dict) == [
        ("torch[0].build[0].checked", "a build cannot say both checked = ... and verified = false"),
        ("torch[0].build[0].source", 'checked = "build-script" needs a source naming owner/repo@tag:path'),
        ("torch[0].build[1].exists", "exists = false needs this build's own source saying why"),
        ("torch[0].build[1].broken", "broken = true needs a note saying what is wrong"),
    ]


def test_withdrawn_builds_are_never_candidates(tiny_db_dict: dict[str, Any]) -> None:
    builds = tiny_db_dict["torch"][0]["build"]
    builds[0] |= {"checked": "wheel", "scanned": "2026-11-23"}
    builds[1] |= {"exists": False, "source": "pytorch/pytorch@v2.1.0:RELEASE.md"}
    db = CompatDB.from_dict(tiny_db_dict)
    (torch,) = db.packages("torch")
    assert [b.variant for b in torch.builds] == ["cu121"]
    assert [(b.variant, b.withdrawn) for b in torch.withdrawn] == [("cu118", "never-published")]
    assert torch.builds[0].checked == "wheel"
    summary = db.summary().to_dict()
    assert summary["withdrawn_builds"] == 1
    assert summary["checked"]["wheel"] == 1
    assert list(summary["checked"]) == ["wheel", "build-script", "announcement", "source", "unverified"]
