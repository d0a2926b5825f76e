"""install.sync and install.record without pip: RECORD comparison, the verdict per package, closure."""

from __future__ import annotations

import os
import sys
import zipfile
from typing import TYPE_CHECKING

import pytest
from tiny_wheels import build_wheel

from cudaresolve.errors import InvalidInput
from cudaresolve.install.closure import unmet, wheel_requires
from cudaresolve.install.installed import InstalledDist, read_installed
from cudaresolve.install.record import cached_record, parse_record, read_wheel_record, same_files, store_record
from cudaresolve.install.sync import Change, compare, foreign
from cudaresolve.lock.model import Lock
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


def test_unmet_follows_markers_and_extras_through_the_lock() -> None:
    lock = Lock(
        packages=tuple(
            _locked(n, v)
            for n, v in (("torch", "2.7.1+cu126"), ("filelock", "3.13.1"), ("sympy", "1.12"), ("mpmath", "1.3.0"))
        )
    )
    requires = {
        "torch": (
            "filelock",
            "sympy>=1.13",  # locked, but too old
            "triton==3.3.1; platform_machine == 'aarch64'",  # not for this machine
            "opt-einsum>=3.3; extra == 'opt-einsum'",  # only with torch[opt-einsum]
            "typing-extensions",  # not locked
        ),
        "sympy": ("mpmath[tests]<1.4",),
        "mpmath": ("pytest; extra == 'tests'",),  # sympy asks for mpmath[tests]: pytest is needed
    }
    assert unmet(lock, requires, MARKERS) == (
        ("torch", "sympy>=1.13"),
        ("torch", "typing-extensions"),
        ("mpmath", "pytest; extra == 'tests'"),
    )
    assert unmet(lock, {"torch": ("filelock>=3", "sympy")}, MARKERS) == ()


@pytest.mark.parametrize(
    ("full", "missing"),
    [("3.11.0", ()), ("3.11.4", ()), ("3.11.5", (("demo", "late; python_full_version >= '3.11.5'"),))],
)
def test_unmet_evaluates_patch_release_markers_for_the_interpreter(full: str, missing: tuple[str, ...]) -> None:
    lock = Lock(packages=(_locked("demo", "1.0"),))
    requires = {"demo": ("late; python_full_version >= '3.11.5'",)}
    assert unmet(lock, requires, {**MARKERS, "python_full_version": full}) == missing


def test_wheel_requires_reads_the_wheel_itself(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "demo", "1.0", "py3-none-any", requires=("evilpkg>=6", "x; extra == 'y'"))
    assert wheel_requires(tmp_path / wheel.filename) == ("evilpkg>=6", "x; extra == 'y'")
    (tmp_path / "not.whl").write_bytes(b"not a zip")
    assert wheel_requires(tmp_path / "not.whl") is None


def test_foreign_is_what_the_lock_does_not_hold_but_the_installer_tools() -> None:
    lock = Lock(packages=(_locked("torch", "2.7.1+cu126"), _locked("filelock", "3.13.1")))
    dists = {n: _dist(n, "1") for n in ("torch", "filelock", "einops", "pip", "setuptools", "wheel", "triton")}
    assert foreign(lock, dists) == ("einops", "triton")


def test_foreign_is_only_what_the_environment_itself_holds(tmp_path: Path) -> None:
    """A package seen through PYTHONPATH, the user site or a venv's system site-packages is not the environment's:
    never reported as not locked, never removed by --exact."""
    from dataclasses import replace

    venv, elsewhere = tmp_path / "venv", tmp_path / "elsewhere"
    lock = Lock(packages=(_locked("torch", "2.7.1+cu126"),))
    site = venv / "lib" / "python3.11" / "site-packages"
    dists = {
        "torch": replace(_dist("torch", "2.7.1+cu126"), path=str(site / "torch-2.7.1.dist-info")),
        "einops": replace(_dist("einops", "1"), path=str(site / "einops-1.dist-info")),
        "stray": replace(_dist("stray", "1"), path=str(elsewhere / "stray-1.dist-info")),
        "nowhere": _dist("nowhere", "1"),
    }
    (tmp_path / "link").symlink_to(venv)
    assert foreign(lock, dists, prefix=str(venv)) == ("einops",)
    assert foreign(lock, dists, prefix=str(tmp_path / "link")) == ("einops",)  # the same folder through a link
    assert foreign(lock, dists, prefix=str(tmp_path / "ven")) == ()  # a name's start is no folder


def test_exact_never_removes_the_cudaresolve_doing_the_install() -> None:
    """Installing --exact into the environment cudaresolve runs from uninstalled cudaresolve and its dependencies
    first, then failed with a traceback, leaving neither the tool nor the lock. It and what it needs are kept there;
    in another environment a cudaresolve is a package like any other."""
    from dataclasses import replace

    site = os.path.join(sys.prefix, "lib", "site-packages")
    lock = Lock(packages=(_locked("torch", "2.7.1+cu126"),))
    needs = {"cudaresolve": ("httpx>=0.27", "rich; extra == 'x'"), "httpx": ("anyio",), "einops": ("numpy",)}
    dists = {n: replace(_dist(n, "1"), path=os.path.join(site, f"{n}-1.dist-info"), requires=needs.get(n, ()))
             for n in ("torch", "cudaresolve", "httpx", "anyio", "rich", "einops", "numpy")}
    assert foreign(lock, dists, prefix=sys.prefix) == ("einops", "numpy")
    other = {n: replace(d, path=os.path.join("/elsewhere", f"{n}-1.dist-info")) for n, d in dists.items()}
    assert foreign(lock, other, prefix="/elsewhere") == ("anyio", "cudaresolve", "einops", "httpx", "numpy", "rich")


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


def test_the_record_cache_keeps_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cudaresolve.install import record

    monkeypatch.setattr(record, "KEEP_RECORDS", 3)
    folder = tmp_path / "records"
    for n in range(5):
        store_record(folder, f"{n:064x}", WHEEL)
        os.utime(folder / f"{n:064x}.RECORD", ns=(n * 10**9, n * 10**9))
    kept = sorted(p.name for p in folder.glob("*.RECORD"))
    assert kept == [f"{n:064x}.RECORD" for n in (2, 3, 4)]
