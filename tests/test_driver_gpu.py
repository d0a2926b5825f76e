"""The driver against the GPU: [[driver-gpu]] rows, their checks, and the ``driver-unsupported-gpu`` finding."""

# The Chinese expectation uses full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from cudaresolve.cli import main
from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import InvalidArch, InvalidCompatData, NoSolution
from cudaresolve.resolve.catalog import CUDA, build_catalog
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.build import load_host_file, resolve_gpu
from cudaresolve.target.model import Target
from cudaresolve.text.catalogue import format_text

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.text.findings import Finding


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(validate=True)


def target(db: CompatDB, driver: str, *gpus: str, platform: str = "linux_x86_64") -> Target:
    return Target(
        gpus=tuple(resolve_gpu(g, db) for g in gpus), driver=parse_driver(driver), python="3.11", platform=platform
    )


def failure(db: CompatDB, t: Target, request: str = "torch") -> Finding:
    with pytest.raises(NoSolution) as info:
        solve([request], db, t)
    return info.value.findings[0]


# -- the three cases of the issue, and the branches that ended -------------------------------


@pytest.mark.parametrize(
    ("gpu", "driver", "needed", "words"),
    [
        ("H100", "450.80.02", "520.61.05", "NVIDIA H100 (Hopper)"),
        ("RTX 4090", "470.129.06", "520.61.05", "NVIDIA GeForce RTX 4090 (Ada)"),
        ("RTX 5090", "525.60.13", "570.26", "NVIDIA GeForce RTX 5090 (Blackwell)"),
    ],
)
def test_a_driver_older_than_the_gpu_locks_nothing(
    db: CompatDB, gpu: str, driver: str, needed: str, words: str
) -> None:
    t = target(db, driver, gpu)
    first = failure(db, t)
    assert (first.code, first.required, first.found) == ("driver-unsupported-gpu", needed, driver)
    assert first.message == (
        f"driver {driver} does not support {words}: it needs driver {needed} or newer;"
        f" the lowest driver that supports every GPU here is {needed}"
    )
    catalog = build_catalog(db, t)
    assert catalog.for_name(CUDA) == ()
    rejected = catalog.rejected(CUDA)
    assert {r.variant for r in rejected} == {v.name for v in db.variants if v.cuda is not None}
    assert {r.finding.code for r in rejected} == {"driver-unsupported-gpu"}


def test_the_same_gpus_lock_on_a_driver_that_knows_them(db: CompatDB) -> None:
    for gpu, driver in (
        ("H100", "520.61.05"),
        ("RTX 4090", "535.54.03"),
        ("RTX 5090", "570.26"),
        ("A100", "450.80.02"),
    ):
        assert solve(["torch"], db, target(db, driver, gpu)).solution.packages


def test_pascal_on_a_driver_after_its_last_branch_fails(db: CompatDB) -> None:
    first = failure(db, target(db, "590.44.01", "GTX 1080 Ti"))
    assert (first.code, first.required, first.found) == ("driver-unsupported-gpu", "R580", "590.44.01")
    assert first.message == (
        "driver 590.44.01 does not support NVIDIA GeForce GTX 1080 Ti (Pascal): its support ended with the R580"
        " driver branch; every GPU here runs on a driver from 367.48 up to the last R580 release"
    )
    assert solve(["torch"], db, target(db, "580.65.06", "GTX 1080 Ti")).solution.packages


def test_a_gpu_given_by_compute_capability_finds_its_architecture(db: CompatDB) -> None:
    first = failure(db, target(db, "590.44.01", "5.2"))  # Maxwell: no [[gpu]] row, the cc list of its row
    assert first.message == (
        "driver 590.44.01 does not support sm_52 (Maxwell): its support ended with the R580 driver branch;"
        " every GPU here runs on an R580 driver"
    )
    assert failure(db, target(db, "450.80.02", "9.0")).required == "520.61.05"


def test_mixed_box_without_a_common_driver(db: CompatDB) -> None:
    t = target(db, "535.54.03", "3.7", "H100")  # Kepler ended with R470; Hopper begins with R520
    first = failure(db, t)
    assert (first.code, first.required) == ("driver-unsupported-gpu", "none")
    assert first.message == (
        "driver 535.54.03 does not support sm_37 (Kepler): no single driver supports every GPU here:"
        " sm_37 (Kepler) needs an R470 driver or older, NVIDIA H100 (Hopper) needs 520.61.05 or newer"
    )
    answer = why_not("torch", [], db, t)
    assert [(a.spec, a.code) for a in answer.alternatives] == [("split-gpus", "driver-unsupported-gpu")]
    assert format_text(answer.alternatives[0].text) == (
        "no single NVIDIA driver supports all of sm_37, NVIDIA H100: run the older and the newer GPUs on separate"
        " machines, and lock for each with its own --gpu"
    )


def test_mixed_box_with_a_common_range_names_its_lowest_driver(db: CompatDB) -> None:
    old = failure(db, target(db, "470.129.06", "GTX 1080 Ti", "RTX 5090"))  # no torch covers both SMs either
    assert (old.code, old.required, "NVIDIA GeForce RTX 5090" in old.message) == (
        "driver-unsupported-gpu",
        "570.26",
        True,
    )
    late = failure(db, target(db, "590.44.01", "GTX 1080 Ti", "RTX 5090"))
    assert late.required == "R580"
    assert "from 570.26 up to the last R580 release" in late.message
    answer = why_not("cu128", [], db, target(db, "590.44.01", "GTX 1080 Ti", "RTX 5090"))
    # an R580 driver would support both GPUs, but no cu128 torch has code for sm_61 and sm_120 at once: no driver
    # makes cu128 possible, so none is offered; a source build for both is
    assert [a.code for a in answer.alternatives if a.code == "driver-unsupported-gpu"] == []
    assert [a.spec for a in answer.alternatives] == ["TORCH_CUDA_ARCH_LIST=6.1;12.0"]


def test_why_not_names_the_driver_upgrade_first(db: CompatDB) -> None:
    answer = why_not("torch", [], db, target(db, "450.80.02", "H100"))
    assert not answer.possible
    assert [r.code for r in answer.reasons] == ["driver-unsupported-gpu"]
    first = answer.alternatives[0]
    assert (first.spec, first.code) == ("driver>=520.61.05", "driver-unsupported-gpu")
    assert (
        format_text(first.text, "zh")
        == "将 NVIDIA 驱动升级到 520.61.05 或更新版本，这是支持本机所有 GPU（NVIDIA H100）的最低版本"
    )


def test_declared_host_files_are_checked_too(db: CompatDB, tmp_path: Path) -> None:
    host = tmp_path / "host.json"
    host.write_text('{"gpus": [{"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"}], "driver": "450.80.02"}')
    assert failure(db, load_host_file(str(host), db)).code == "driver-unsupported-gpu"


def test_jetson_windows_and_unknown_architectures(db: CompatDB) -> None:
    orin = db.driver_supports_gpu("Orin (nvgpu)", parse_cc("8.7"), parse_driver("35.4"), tegra=True)
    assert orin.ok and orin.row is None
    unknown = db.driver_supports_gpu("sm_130", parse_cc("13.0"), parse_driver("450.80.02"))
    assert (unknown.ok, unknown.arch) == (True, None)
    win = db.driver_supports_gpu("RTX 4090", parse_cc("8.9"), parse_driver("591.44"), platform="win_amd64")
    assert (win.ok, str(win.needed), win.last_branch) == (True, "520.06", None)
    old_win = db.driver_supports_gpu("RTX 4090", parse_cc("8.9"), parse_driver("472.12"), platform="win_amd64")
    assert not old_win.ok
    pascal_win = db.driver_supports_gpu("GTX 1080", parse_cc("6.1"), parse_driver("581.57"), platform="win_amd64")
    assert pascal_win.ok and pascal_win.last_branch == 580  # 581.x: an R580 driver on Windows


@pytest.mark.parametrize(
    ("gpu", "cc", "driver", "ok"),
    [
        ("GTX 1080", "6.1", "591.44", False),  # R590 on Windows: Pascal's support ended with R580
        ("GTX 1080", "6.1", "580.88", True),
        ("TITAN V", "7.0", "590.00", False),
        ("GTX 980", "5.2", "581.94", True),
        ("Tesla K80", "3.7", "537.13", False),  # Kepler ended with R470, whose Windows drivers reach 474.x
        ("Tesla K80", "3.7", "472.50", True),  # Table 3 pairs it with Linux 470.82.01
        ("Tesla K80", "3.7", "496.04", False),  # the R495 driver of CUDA 11.5 on Windows
    ],
)
def test_a_windows_driver_past_the_last_branch_is_refused(
    db: CompatDB, gpu: str, cc: str, driver: str, ok: bool
) -> None:
    """Found by the hardware audit: on Windows only the floor was checked, so a GTX 1080 on an R590 driver locked a
    cu126 torch its driver cannot run. A branch's Windows drivers are numbered below the next branch (Table 3)."""
    check = db.driver_supports_gpu(gpu, parse_cc(cc), parse_driver(driver), platform="win_amd64")
    assert check.ok is ok and check.ended is not ok


@pytest.mark.parametrize(
    ("gpu", "cc", "driver", "ok"),
    [
        ("GTX 1080", "6.1", "581.57", True),  # Ubuntu on WSL 2: nvidia-smi prints the Windows R580 driver's number
        ("GTX 980", "5.2", "582.16", True),
        ("GTX 1080", "6.1", "580.105.08", True),
        ("GTX 1080", "6.1", "590.44.01", False),  # the R590 of CUDA 13.1: Pascal's support ended with R580
        ("Tesla K80", "3.7", "474.44", True),  # the Windows R470 driver through WSL
        ("Tesla K80", "3.7", "495.29.05", False),  # the R495 of CUDA 11.5
        ("GTX 580", "2.0", "396.54", False),  # Fermi's last branch, R390, is no toolkit's: the next number ends it
    ],
)
def test_a_linux_driver_numbered_below_the_next_branch_is_of_the_last_branch(
    db: CompatDB, gpu: str, cc: str, driver: str, ok: bool
) -> None:
    """Found by the hardware audit: WSL 2's nvidia-smi reports the Windows driver (Driver Version: 581.57, an R580
    driver), and on Linux the branch ended at the next number, so a GTX 1080 Ti under WSL on the newest R580 driver
    was refused although R580 drives it. No Linux driver is numbered between R580 and R590 (R470 and R495)."""
    check = db.driver_supports_gpu(gpu, parse_cc(cc), parse_driver(driver), platform="linux_x86_64")
    assert check.ok is ok and check.ended is not ok


def test_a_windows_floor_below_the_next_branch_shares_a_driver_with_an_ended_gpu(db: CompatDB) -> None:
    """Windows numbers run up to the next branch a toolkit names: a GPU whose Windows floor is 480.00 and a Kepler
    (last branch R470, whose Windows drivers reach the R495 of CUDA 11.5) share the R470 drivers from 480.00. The
    range was compared in Linux numbers (480 > 470), so such a box was told that no single driver runs it."""
    from dataclasses import replace

    from cudaresolve.resolve.gpudriver import unsupported_gpus, way_out

    rows = tuple(
        replace(r, min_driver_windows=parse_driver("480.00")) if r.arch == "Ada" else r for r in db.driver_gpus
    )
    patched = replace(db, driver_gpus=rows)
    verdict = unsupported_gpus(patched, target(patched, "472.50", "3.7", "RTX 4090", platform="win_amd64"))
    assert verdict is not None and verdict.common
    assert way_out(verdict)[0] == "driver R470"
    split = unsupported_gpus(db, target(db, "472.50", "3.7", "RTX 4090", platform="win_amd64"))  # floor 520.06
    assert split is not None and not split.common


def test_the_most_specific_row_wins(db: CompatDB) -> None:
    def needed(gpu: str, cc: str, *, datacenter: bool = True) -> str:
        return str(db.driver_supports_gpu(gpu, parse_cc(cc), parse_driver("400.1"), datacenter=datacenter).needed)

    assert needed("NVIDIA B200", "10.0") == "570.133.20"  # its own row
    assert needed("NVIDIA GB200", "10.0") == "570.26"  # the cc 10.0 row
    assert needed("GB10", "12.1", datacenter=False) == "575.51.03"
    assert needed("RTX 3090", "8.6", datacenter=False) == "455.23"
    assert needed("A100", "8.0") == "450.36.06"


# -- the shipped table -------------------------------------------------------------------------


def test_every_shipped_row_has_a_source_and_every_desktop_gpu_a_row(db: CompatDB) -> None:
    assert len(db.driver_gpus) >= 10
    assert all(r.source.strip() for r in db.driver_gpus)
    assert [r.arch for r in db.driver_gpus if r.last_branch == 580] == ["Volta", "Pascal", "Maxwell"]
    assert [r.arch for r in db.driver_gpus if r.last_branch == 470] == ["Kepler"]
    for gpu in db.gpus:
        check = db.driver_supports_gpu(
            gpu.name, gpu.cc, parse_driver("999.1"), datacenter=gpu.datacenter, tegra=gpu.tegra
        )
        assert gpu.tegra or check.row is not None, gpu.name


# -- validation (db check) ---------------------------------------------------------------------


def problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(InvalidCompatData) as info:
        CompatDB.from_dict(data)
    return [(path, format_text(problem)) for path, problem in info.value.problems]


def row(**fields: Any) -> dict[str, Any]:
    return {"arch": "Ampere", "min-driver": "450.36.06", "source": "s", **fields}


def test_valid_rows_load(tiny_db_dict: dict[str, Any]) -> None:
    kepler = {"arch": "Kepler", "cc": ["3.7"], "last-branch": 470, "source": "s"}
    tiny_db_dict["driver-gpu"] = [row(cc=["8.0"]), row(datacenter=False), kepler]
    db = CompatDB.from_dict(tiny_db_dict)
    assert [(r.arch, r.specificity) for r in db.driver_gpus] == [
        ("Ampere", (False, True, False)),
        ("Ampere", (False, False, True)),
        ("Kepler", (False, True, False)),
    ]


def test_malformed_rows_are_rejected(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["driver-gpu"] = [
        row(cc=["8.0"], **{"min-driver": "five"}),
        row(cc=["8.x"], colour="red"),
        {"arch": "Ampere", "cc": ["8.2"], "source": "s"},
        row(cc=["8.3"], **{"last-branch": 400}),
        row(cc=["8.4"], **{"last-branch": 0, "min-driver-windows": "x"}),
        {"arch": "Ampere", "cc": ["8.5"], "min-driver": "450.36.06"},
    ]
    assert problems(tiny_db_dict) == [
        ("driver-gpu[0].min-driver", "not an NVIDIA driver version: 'five'"),
        ("driver-gpu[1].colour", "unrecognized field"),
        ("driver-gpu[1].cc[0]", _cc_problem("8.x")),
        ("driver-gpu[2]", "a [[driver-gpu]] row needs min-driver, last-branch or both"),
        ("driver-gpu[3].min-driver", "is in a branch after last-branch 400"),
        ("driver-gpu[4].min-driver-windows", "not an NVIDIA driver version: 'x'"),
        ("driver-gpu[4].last-branch", "expected a driver branch such as 580, got 0"),
        ("driver-gpu[5].source", "required field is missing"),
    ]


def _cc_problem(text: str) -> str:
    with pytest.raises(InvalidArch) as info:
        parse_cc(text)
    return format_text(info.value.text)


def test_cross_row_checks(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["driver-gpu"] = [
        row(arch="Ampre"),  # misspelt: no [[gpu]] has it and it lists no cc
        row(arch="Hopper", cc=["8.0"]),  # 8.0 is Ampere in the [[gpu]] rows
        row(gpus=["NVIDIA H100"]),  # not a [[gpu]] row
        row(),
        row(**{"min-driver": "455.23"}),  # as specific as the row before it
    ]
    assert problems(tiny_db_dict) == [
        (
            "driver-gpu[0].arch",
            "unknown architecture 'Ampre': no [[gpu]] row has it; list its compute capabilities in cc",
        ),
        ("driver-gpu[1].cc[0]", "compute capability 8.0 belongs to Ampere in the [[gpu]] rows"),
        ("driver-gpu[2].gpus[0]", "'NVIDIA H100' names no [[gpu]] row of architecture Ampere"),
        ("driver-gpu[4]", "matches the same GPUs as driver-gpu[3], equally specifically"),
    ]


def test_a_gpu_without_a_row_is_reported_once_the_table_exists(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["driver-gpu"] = [row(cc=["8.6"])]
    assert problems(tiny_db_dict) == [("gpu[0]", "no [[driver-gpu]] row covers 'NVIDIA A800' (architecture Ampere)")]


def test_db_check_rejects_a_malformed_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "compat.toml"
    shipped = load_compat.__globals__["shipped_path"]().read_text(encoding="utf-8")
    bad.write_text(shipped.replace('arch = "Turing"\nmin-driver = "410.48"', 'arch = "Turing"\nmin-driver = "R410"'))
    assert main(["db", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert re.search(r"driver-gpu\[[0-9]+\]\.min-driver: not an NVIDIA driver version: 'R410'", err), err


def test_cli_lock_names_the_driver(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lock", "torch", "--gpu", "H100", "--driver", "450.80.02", "--python-version", "3.11", "--offline"])
    assert code == 1
    err = capsys.readouterr().err
    assert "driver-unsupported-gpu" in err
    assert "it needs driver 520.61.05 or newer" in err
