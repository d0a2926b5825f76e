"""lock.sync and lock.record without pip: RECORD comparison, the per-package verdict, what a lock needs."""

from __future__ import annotations

import sys
import zipfile
from typing import TYPE_CHECKING

import pytest
from tiny_wheels import build_wheel

from cudaresolve.errors import InvalidInput
from cudaresolve.lock.installed import InstalledDist, read_installed
from cudaresolve.lock.model import Lock
from cudaresolve.lock.record import cached_record, parse_record, read_wheel_record, same_files, store_record
from cudaresolve.lock.sync import Change, compare, dependencies, foreign
from cudaresolve.resolve.model import LockedPackage

if TYPE_CHECKING:
    from pathlib import Path

INDEX = "https://download.pytorch.org/whl/cu126"
MARKERS = {"python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64"}
WHEEL = (
    "fbgemm_gpu/__init__.py,sha256=AAA,10\n"
    "fbgemm_gpu/lib.so,sha256=BBB,20\n"
    "fbgemm_gpu-1.9.0.data/platlib/fbgemm_gpu_extra.so,sha256=CCC,30\n"
    "fbgemm_gpu-1.9.0.data/scripts/tool,sha256=DDD,40\n"
    "fbgemm_gpu-1.9.0.dist-info/METADATA,sha256=EEE,50\n"
    "fbgemm_gpu-1.9.0.dist-info/RECORD,,\n"
)
INSTALLED = (
    "fbgemm_gpu/__init__.py,sha256=AAA,10\n"
    "fbgemm_gpu/lib.so,sha256=BBB,20\n"
    "fbgemm_gpu_extra.so,sha256=CCC,30\n"
    "../../../bin/tool,sha256=rewritten,44\n"
    "fbgemm_gpu/__pycache__/__init__.cpython-311.pyc,,\n"
    "fbgemm_gpu-1.9.0.dist-info/METADATA,sha256=EEE,50\n"
    "fbgemm_gpu-1.9.0.dist-info/INSTALLER,sha256=FFF,4\n"
    "fbgemm_gpu-1.9.0.dist-info/REQUESTED,sha256=GGG,0\n"
    "fbgemm_gpu-1.9.0.dist-info/RECORD,,\n"
)


def test_parse_record_keeps_rows_with_a_hash_and_reads_csv_quoting() -> None:
    assert parse_record('"a,b.py",sha256=X,1\nRECORD,,\n\nc.py,sha256=Y,2\n') == {
        "a,b.py": "sha256=X",
        "c.py": "sha256=Y",
    }


def test_installed_wheel_is_the_same_files_despite_what_installing_adds() -> None:
    assert same_files(parse_record(WHEEL), parse_record(INSTALLED))


@pytest.mark.parametrize(
    ("installed", "why"),
    [
        (INSTALLED.replace("sha256=BBB", "sha256=ZZZ"), "a file with another hash"),
        (INSTALLED.replace("fbgemm_gpu/lib.so,sha256=BBB,20\n", ""), "a file missing"),
        (INSTALLED + "fbgemm_gpu/evil.py,sha256=HHH,5\n", "a file the wheel does not have"),
        (INSTALLED.replace("fbgemm_gpu_extra.so", "fbgemm_gpu/extra.so"), "a data file elsewhere"),
    ],
)
def test_another_build_is_not_the_same_files(installed: str, why: str) -> None:
    assert not same_files(parse_record(WHEEL), parse_record(installed)), why


def test_an_empty_wheel_record_never_matches() -> None:
    assert not same_files({}, parse_record(INSTALLED))


def test_read_wheel_record(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "fbgemm-gpu", "1.9.0", "py3-none-any")
    text = read_wheel_record(tmp_path / wheel.filename)
    assert text is not None
    assert set(parse_record(text)) == {
        "fbgemm_gpu/__init__.py",
        "fbgemm_gpu-1.9.0.dist-info/METADATA",
        "fbgemm_gpu-1.9.0.dist-info/WHEEL",
    }
    (tmp_path / "not.whl").write_bytes(b"not a zip")
    assert read_wheel_record(tmp_path / "not.whl") is None
    with zipfile.ZipFile(tmp_path / "empty.whl", "w") as archive:
        archive.writestr("x.py", "")
    assert read_wheel_record(tmp_path / "empty.whl") is None


def _locked(name: str, version: str) -> LockedPackage:
    return LockedPackage(name=name, version=version, index=INDEX, sha256="1" * 64)


def _dist(
    name: str, version: str, *requires: str, record: str | None = INSTALLED, damaged: tuple[str, ...] = ()
) -> InstalledDist:
    return InstalledDist(name=name, version=version, path=None, requires=requires, record=record, damaged=damaged)


@pytest.mark.parametrize(
    ("dist", "wheel", "change"),
    [
        (None, WHEEL, Change.MISSING),
        (_dist("fbgemm-gpu", "1.9.0+cu126"), WHEEL, Change.VERSION),  # the local label counts
        (_dist("fbgemm-gpu", "1.9.0"), None, Change.UNREADABLE),
        (_dist("fbgemm-gpu", "1.9.0", record=None), WHEEL, Change.UNREADABLE),
        (_dist("fbgemm-gpu", "1.9.0", damaged=("fbgemm_gpu/lib.so",)), WHEEL, Change.DAMAGED),
        (_dist("fbgemm-gpu", "1.9.0", record=INSTALLED.replace("BBB", "ZZZ")), WHEEL, Change.FILES),
        (_dist("fbgemm-gpu", "1.9.0"), WHEEL, None),
        (_dist("fbgemm-gpu", "1.9"), WHEEL, None),  # the same version, written another way
    ],
)
def test_compare(dist: InstalledDist | None, wheel: str | None, change: Change | None) -> None:
    assert compare(_locked("fbgemm-gpu", "1.9.0"), dist, wheel) is change


def test_dependencies_follow_markers_extras_and_the_environment() -> None:
    lock = Lock(packages=(_locked("torch", "2.7.1+cu126"),))
    dists = {
        "torch": _dist(
            "torch",
            "2.7.1+cu126",
            "filelock",
            "sympy>=1.13",
            "triton==3.3.1; platform_machine == 'aarch64'",
            "opt-einsum>=3.3; extra == 'opt-einsum'",
            "typing-extensions",
        ),
        "filelock": _dist("filelock", "3.13.1"),
        "sympy": _dist("sympy", "1.12", "mpmath[tests]<1.4"),  # too old for torch
        "mpmath": _dist("mpmath", "1.3.0", "pytest; extra == 'tests'"),
        "pytest": _dist("pytest", "8.0.0"),
        "triton": _dist("triton", "3.3.1"),  # for aarch64 only: foreign here
        "opt-einsum": _dist("opt-einsum", "3.3.0"),  # only with torch[opt-einsum]
        "einops": _dist("einops", "0.8.1"),
        "pip": _dist("pip", "24.0"),
    }
    needed, unmet = dependencies(lock, dists, MARKERS)
    assert needed == {"filelock", "sympy", "mpmath", "pytest"}
    assert unmet == ("sympy>=1.13", "typing-extensions")
    assert foreign(lock, dists, MARKERS) == ("einops", "opt-einsum", "triton")


def test_read_installed_from_this_interpreter() -> None:
    dists = read_installed(sys.executable, records=["pytest"])
    assert dists["pytest"].record is not None
    assert "pytest/__init__.py" in parse_record(dists["pytest"].record)
    assert dists["pytest"].damaged == ()
    assert dists["packaging"].record is None  # not asked for


def test_read_installed_of_a_missing_interpreter(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        read_installed(str(tmp_path / "nope"))
    assert info.value.code == "invalid-input"


def test_record_cache_round_trip_and_refusals(tmp_path: Path) -> None:
    sha = "a" * 64
    assert cached_record(tmp_path, sha) is None
    store_record(tmp_path / "records", sha, WHEEL)
    assert cached_record(tmp_path / "records", sha) == WHEEL
    store_record(tmp_path, "../escape", WHEEL)  # not a sha256: never a path
    assert cached_record(tmp_path, "../escape") is None
    assert not (tmp_path.parent / "escape.RECORD").exists()
