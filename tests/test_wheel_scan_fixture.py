"""The shipped database against what the PyPI wheels hold (``tests/fixtures/wheel-scan``), offline.

The fixture is written by ``tools/scan_wheels.py --fixture`` from real wheels read with the
project's own fatbin reader; the comparison rule is ``tools/wheel_compare.py``. Each scanned
wheel is one test: zero disagreements for the facts compared (variant / CUDA major, SASS base
list, PTX, nvcc reach, and on linux_x86_64 the Python tags and tracked Requires-Dist pins).

``KNOWN`` lists the builds where the database is wrong today (empty since the fixes of issue 11). They are
``xfail(strict=True)``: fixing a row makes its test pass, which fails the run until the entry is
removed from the table, so the table can only shrink.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from cudaresolve.db.database import CompatDB, load_compat  # the loader; its module may move within db/

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from wheel_compare import (  # a script beside scan_wheels.py, shared with it
    Comparison,
    MissingWheel,
    WheelFacts,
    compare,
    find_release,
    pypi_build,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

FIXTURE: Final = Path(__file__).parent / "fixtures" / "wheel-scan" / "pypi-wheels.json"

# (package, version, database build variant ("" if none), platform) -> what is wrong.
# Generated from the scan report; see /work/scan-report.txt of the run and the audit (shared/facts).
KNOWN: Final[dict[tuple[str, str, str, str], str]] = {}


def _load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _key(db: CompatDB, facts: WheelFacts) -> tuple[str, str, str, str]:
    release = find_release(db, facts.package, facts.version)
    build = pypi_build(release, facts.platform, facts.variant) if release is not None else None
    return (facts.package, facts.version, build.variant if build else "", facts.platform)


def _params() -> list[Any]:
    db = load_compat()
    data = _load()
    params = []
    for entry in data["wheels"]:
        facts = WheelFacts.from_dict(entry)
        key = _key(db, facts)
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
        params.append(pytest.param(facts, id="-".join(k or "none" for k in key), marks=marks))
    for entry in data["missing"]:
        gone = MissingWheel.from_dict(entry)
        key = (gone.package, gone.version, gone.variant, gone.platform)
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
        params.append(pytest.param(gone, id="missing-" + "-".join(key), marks=marks))
    return params


@pytest.mark.parametrize("item", _params())
def test_database_agrees_with_the_wheel(item: WheelFacts | MissingWheel) -> None:
    db = load_compat()
    result = compare(db, [item]) if isinstance(item, WheelFacts) else compare(db, [], [item])
    assert [d.line() for d in result.disagreements] == []
    assert result.facts >= 1


def test_known_table_names_only_scanned_builds() -> None:
    """A KNOWN entry for a build the fixture does not hold would never be checked."""
    db = load_compat()
    data = _load()
    keys = {_key(db, WheelFacts.from_dict(e)) for e in data["wheels"]}
    keys |= {(e["package"], e["version"], e["variant"], e["platform"]) for e in data["missing"]}
    assert sorted(set(KNOWN) - keys) == []


def test_fixture_is_compact() -> None:
    data = _load()
    assert FIXTURE.stat().st_size < 200_000
    for entry in data["wheels"]:
        assert set(entry) <= set(WheelFacts.__dataclass_fields__)
        assert "requires_dist" not in entry


# --------------------------------------------------------------------------- the rule itself


def _tiny(tiny_db_dict: Mapping[str, Any]) -> CompatDB:
    """conftest's tiny database plus a torch release on PyPI and an xformers release with a PyPI build."""
    data = dict(tiny_db_dict)
    cpu = {"name": "cpu", "index-url": "https://download.pytorch.org/whl/cpu", "source": "s"}
    data["variant"] = [*data["variant"], cpu]
    data["torch"] = [
        {
            "version": "2.1.0",
            "python": ["3.10", "3.11"],
            "platforms": ["linux_x86_64", "win_amd64"],
            "pypi-variant": "cu121",
            "metadata-requires": ["triton==2.1.0; platform_system == \"Linux\""],
            "source": "s",
            "build": [
                {"variant": "cu121", "sass": ["sm_80", "sm_90"], "platforms": ["linux_x86_64"]},
                {"variant": "cu118", "sass": ["sm_80"], "ptx": ["compute_80"], "platforms": ["linux_x86_64"]},
                {"variant": "cpu", "platforms": ["linux_x86_64", "win_amd64"]},
            ],
        },
    ]
    data["xformers"] = [
        {
            "version": "0.0.22",
            "python": ["3.11"],
            "platforms": ["linux_x86_64", "win_amd64"],
            "requires": ["torch==2.1.0"],
            "source": "s",
            "build": [{"variant": "cu121", "channel": "pypi", "sass": ["sm_80", "sm_90a"], "ptx": ["compute_80"]}],
        },
    ]
    return CompatDB.from_dict(data)


def _torch(**changes: Any) -> WheelFacts:
    base: dict[str, Any] = {
        "package": "torch", "version": "2.1.0", "platform": "linux_x86_64", "file": "torch-2.1.0-cp311.whl",
        "variant": "cu121", "cuda_major": 12, "sass": ("sm_80", "sm_90"), "sass_all": ("sm_80", "sm_90", "sm_90a"),
        "python": ("cp310", "cp311", "cp313t"), "requires": ('triton==2.1.0; platform_system == "Linux"',),
    }
    base.update(changes)
    return WheelFacts(**base)


def _kinds(result: Comparison) -> list[tuple[str, str, str]]:
    return [(d.kind, d.db, d.wheel) for d in result.disagreements]


def test_a_matching_wheel_has_no_disagreement(tiny_db_dict: dict[str, Any]) -> None:
    result = compare(_tiny(tiny_db_dict), [_torch()])
    assert _kinds(result) == []
    # release + python + requires + build + variant + sass + ptx + nvcc
    assert result.facts == 8


def test_sass_ptx_and_variant_disagreements_name_both_values(tiny_db_dict: dict[str, Any]) -> None:
    wheel = _torch(variant="cu118", sass=("sm_80",), ptx=("compute_80",), sass_all=("sm_80",))
    assert _kinds(compare(_tiny(tiny_db_dict), [wheel])) == [
        ("variant", "cu121", "cu118"),
        ("sass", "[sm_80, sm_90]", "[sm_80]"),
        ("ptx", "[]", "[compute_80]"),
    ]


def test_per_kernel_extras_are_reported_but_not_compared(tiny_db_dict: dict[str, Any]) -> None:
    wheel = _torch(sass=("sm_80",), sass_all=("sm_80", "sm_90", "sm_90a"))
    (only,) = compare(_tiny(tiny_db_dict), [wheel]).disagreements
    assert only.wheel == "[sm_80] (+ per-kernel sm_90, sm_90a)"
    assert only.key == ("torch", "2.1.0", "cu121", "linux_x86_64")


def test_cuda_major_is_compared_when_the_minor_is_unknown(tiny_db_dict: dict[str, Any]) -> None:
    wheel = _torch(variant=None, cuda_major=11)
    assert _kinds(compare(_tiny(tiny_db_dict), [wheel])) == [("cuda-major", "CUDA 12 (cu121)", "CUDA 11")]


def test_nvcc_reach(tiny_db_dict: dict[str, Any]) -> None:
    """conftest's CUDA 12.1 emits sm_80 and sm_90 only: an sm_100a cubin cannot come from it."""
    wheel = _torch(sass_all=("sm_80", "sm_90", "sm_100a"))
    assert _kinds(compare(_tiny(tiny_db_dict), [wheel])) == [
        ("nvcc", "cu121: nvcc 12.1 emits up to sm_90", "has [sm_100a]")
    ]


def test_python_and_requires_are_checked_on_linux_x86_64_only(tiny_db_dict: dict[str, Any]) -> None:
    db = _tiny(tiny_db_dict)
    wrong = {"python": ("cp311", "cp312"), "requires": ("triton==2.1.1",)}
    assert [k for k, _, _ in _kinds(compare(db, [_torch(**wrong)]))] == ["python", "requires"]
    windows = _torch(platform="win_amd64", variant="cpu", cuda_major=None, sass=(), sass_all=(), **wrong)
    assert _kinds(compare(db, [windows])) == []  # PyPI's Windows torch is the cpu build: nothing recorded


def test_windows_cuda_wheel_without_a_build_for_it(tiny_db_dict: dict[str, Any]) -> None:
    windows = _torch(platform="win_amd64", variant="cu121")
    assert _kinds(compare(_tiny(tiny_db_dict), [windows])) == [
        ("no-build", "no build for this PyPI wheel", "cu121 wheel torch-2.1.0-cp311.whl")
    ]


def test_pypi_channel_build_and_missing_wheel(tiny_db_dict: dict[str, Any]) -> None:
    db = _tiny(tiny_db_dict)
    wheel = WheelFacts(
        package="xformers", version="0.0.22", platform="linux_x86_64", file="xformers-0.0.22.whl",
        cuda_major=12, sass=("sm_80",), ptx=("compute_80",), python=("cp311",),
    )
    gone = MissingWheel(package="xformers", version="0.0.22", platform="win_amd64", variant="cu121")
    result = compare(db, [wheel], [gone])
    assert _kinds(result) == [
        ("sass", "[sm_80, sm_90a]", "[sm_80]"),
        ("no-wheel", "cu121 build on PyPI", "no such wheel on PyPI"),
    ]
    assert [d.key for d in result.disagreements][-1] == ("xformers", "0.0.22", "cu121", "win_amd64")


def test_pypi_build_for_one_platform_leaves_the_others_to_the_variant_rule(tiny_db_dict: dict[str, Any]) -> None:
    """torch 2.13.0's shape: a PyPI-only cu130 build for Linux; PyPI's Windows wheel is still the cpu build."""
    data = dict(tiny_db_dict)
    cpu = {"name": "cpu", "index-url": "https://download.pytorch.org/whl/cpu", "source": "s"}
    data["variant"] = [*data["variant"], cpu]
    data["torch"] = [{
        "version": "2.1.0", "python": ["3.11"], "platforms": ["linux_x86_64", "win_amd64"], "pypi-variant": "cu121",
        "source": "s", "build": [
            {"variant": "cu121", "channel": "pypi", "sass": ["sm_80"], "platforms": ["linux_x86_64"]},
            {"variant": "cu121", "sass": ["sm_80"], "ptx": ["compute_80"], "platforms": ["linux_x86_64"]},
            {"variant": "cpu", "platforms": ["linux_x86_64", "win_amd64"]},
        ],
    }]
    db = CompatDB.from_dict(data)
    release = find_release(db, "torch", "2.1.0")
    assert release is not None
    linux, windows = pypi_build(release, "linux_x86_64", "cu121"), pypi_build(release, "win_amd64", "cpu")
    assert linux is not None and (linux.channel, linux.ptx) == ("pypi", ())
    assert windows is not None and windows.variant == "cpu"


def test_a_release_missing_from_the_database(tiny_db_dict: dict[str, Any]) -> None:
    wheel = _torch(version="2.2.0")
    assert _kinds(compare(_tiny(tiny_db_dict), [wheel])) == [("no-release", "no row", "torch-2.1.0-cp311.whl on PyPI")]


def test_fixture_round_trip() -> None:
    wheel = _torch()
    assert WheelFacts.from_dict(json.loads(json.dumps(wheel.to_dict()))) == wheel
    assert "sass_all" in wheel.to_dict()
    assert "sass_all" not in _torch(sass_all=("sm_80", "sm_90")).to_dict()
