"""A repeated lock keeps the pins of the lock already at its output path (issue 22, item 4; uv's rule).

Pins move only when they no longer fit or when asked (``-U/--upgrade``, ``-P/--upgrade-package``); a lock that
would say exactly what the file says is not written again ("unchanged"); every moved pin is reported.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex

from cudaresolve.db.database import load_compat
from cudaresolve.lock.previous import PreviousLock, changes, preferences, read_pins
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
from test_direct_e2e import run_cli

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

TARGET = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index = LocalIndex(tmp_path_factory.mktemp("stable"))
    for version in ("1.0", "1.1", "2.0"):
        index.add("pypi", "numpyish", version)
    for version in ("3.0", "3.1"):
        index.add("pypi", "helper", version)
    index.add("pypi", "app", "1.0", requires=["helper"])
    with index.serve() as base:
        yield base


def _lock(base: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    return run_cli(["lock", *args, *TARGET, mirror], cwd, cwd / "cache")


def _pins(cwd: Path) -> dict[str, str]:
    found = read_pins(str(cwd / "pylock.toml"))
    assert found is not None
    return found


def test_relaxing_a_pin_keeps_the_locked_version_until_asked(served: Any, tmp_path: Path) -> None:
    assert _lock(served, ["numpyish==1.0", "app"], tmp_path).returncode == 0
    assert _pins(tmp_path) == {"numpyish": "1.0", "app": "1.0", "helper": "3.1"}
    relaxed = _lock(served, ["numpyish", "app", "--json"], tmp_path)
    out = json.loads(relaxed.stdout)
    assert out["unchanged"] is True and out["changes"] == [] and _pins(tmp_path)["numpyish"] == "1.0"
    human = _lock(served, ["numpyish", "app"], tmp_path)
    assert "pylock.toml is unchanged: the lock there already holds these 3 packages" in human.stderr + human.stdout
    only = _lock(served, ["numpyish", "app", "--upgrade-package", "numpyish", "--json"], tmp_path)
    assert json.loads(only.stdout)["changes"] == [{"name": "numpyish", "from": "1.0", "to": "2.0"}]
    assert _pins(tmp_path) == {"numpyish": "2.0", "app": "1.0", "helper": "3.1"}  # helper was not moved


def test_upgrade_moves_every_pin_and_a_pin_that_no_longer_fits_moves_anyway(served: Any, tmp_path: Path) -> None:
    assert _lock(served, ["numpyish==1.0", "helper==3.0"], tmp_path).returncode == 0
    bounded = _lock(served, ["numpyish>=1.1", "helper", "--json"], tmp_path)  # 1.0 no longer fits; 3.0 does
    assert json.loads(bounded.stdout)["changes"] == [{"name": "numpyish", "from": "1.0", "to": "2.0"}]
    everything = _lock(served, ["numpyish", "helper", "-U", "--json"], tmp_path)
    assert json.loads(everything.stdout)["changes"] == [{"name": "helper", "from": "3.0", "to": "3.1"}]
    dropped = _lock(served, ["helper", "--json"], tmp_path)
    assert json.loads(dropped.stdout)["changes"] == [{"name": "numpyish", "from": "2.0", "to": None}]


def test_a_file_that_is_no_pep_751_lock_gives_no_preference(tmp_path: Path) -> None:
    (tmp_path / "pylock.toml").write_text("this is = not [a lock\n")
    assert read_pins(str(tmp_path / "pylock.toml")) is None
    (tmp_path / "pylock.toml").write_text('lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "a"\n')
    assert read_pins(str(tmp_path / "pylock.toml")) is None  # no file for the package: not valid PEP 751
    folder = '[[packages]]\nname = "a"\ndirectory = {path = "a"}\n[[packages]]\nname = "b"\nversion = "2"\n'
    wheel = 'wheels = [{url = "https://x.example/b-2-py3-none-any.whl", hashes = {sha256 = "' + "0" * 64 + '"}}]\n'
    (tmp_path / "pylock.toml").write_text('lock-version = "1.0"\ncreated-by = "x"\n' + folder + wheel)
    assert read_pins(str(tmp_path / "pylock.toml")) == {"b": "2"}  # a local folder has no version to keep
    assert read_pins(str(tmp_path / "absent.toml")) is None
    pins = PreviousLock(pins={"a": "1", "b": "2"}, index_failed=False)
    assert preferences(pins, upgrade=False, upgrade_packages=["A"]) == {"b": "2"}
    assert preferences(pins, upgrade=True, upgrade_packages=[]) == {}
    failed = replace(pins, index_failed=True)  # the GPU stack's pins go; the others stay (``preferences``)
    assert preferences(failed, upgrade=False, upgrade_packages=[], stack=("A", "torch")) == {"b": "2"}
    assert preferences(failed, upgrade=False, upgrade_packages=[]) == {"a": "1", "b": "2"}


def test_the_gpu_stack_keeps_its_locked_build_while_it_fits() -> None:
    db = load_compat(None)
    target = build_target(TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11"), db)
    newest = solve(["torch"], db, target).solution
    held = {"torch": "2.9.0+cu128"}  # an older build this target runs, from a previous lock
    assert [p.version for p in newest.packages] != ["2.9.0+cu128"]
    kept = solve(["torch"], db, target, preferences=held).solution
    assert (kept.variant, [p.version for p in kept.packages]) == ("cu128", ["2.9.0+cu128"])
    grown = solve(["torch", "xformers"], db, target, preferences=held).solution  # an unrelated addition
    assert {p.name: p.version for p in grown.packages}["torch"] == "2.9.0+cu128"
    assert solve(["torch>2.9"], db, target, preferences=held).solution == newest  # ruled out: it moves
    assert solve(["torch"], db, target, preferences={"torch": "2.9.0+cu999"}).solution == newest


def test_changes_are_reported_by_name() -> None:
    from cudaresolve.lock.model import Lock, LockedPackage

    lock = Lock(packages=(LockedPackage(name="a", version="2", index="i"), LockedPackage(name="c", version="1",
                                                                                     index="i")))  # fmt: skip
    assert [c.to_dict() for c in changes({"a": "1", "b": "1", "c": "1"}, lock)] == [
        {"name": "a", "from": "1", "to": "2"}, {"name": "b", "from": "1", "to": None}
    ]  # fmt: skip
    assert changes(None, lock) == ()


@pytest.mark.parametrize("fmt", ["pylock", "requirements"])
def test_a_local_folder_locked_again_is_no_change(tmp_path: Path, fmt: str) -> None:
    """A lock writes a project folder without a version (PEP 751 ``directory``): the same folder locked again is
    no change, so a repeated lock of a project with a path dependency is "unchanged", not "my-lib 0.2 (added)"."""
    from cudaresolve.lock.lockfile import render_lock
    from cudaresolve.lock.model import Lock, LockedPackage
    from cudaresolve.lock.previous import previous_lock
    from cudaresolve.resolve.model import FileKind

    (tmp_path / "lib").mkdir()
    folder = LockedPackage(name="my-lib", version="0.2", index="", url=(tmp_path / "lib").as_uri(),
                           kind=FileKind.DIRECTORY)  # fmt: skip
    wheel = LockedPackage(name="b", version="2", index="https://pypi.org/simple", sha256="0" * 64,
                          url="https://x.example/b-2-py3-none-any.whl", filename="b-2-py3-none-any.whl")  # fmt: skip
    lock = Lock(packages=(wheel, folder))
    name = "pylock.toml" if fmt == "pylock" else "requirements.txt"
    prior = previous_lock(render_lock(str(tmp_path / name), lock, fmt=fmt), fmt)
    assert prior is not None and prior.pins == {"b": "2"} and prior.folders == {"my-lib"}
    assert changes(prior.pins, lock, folders=prior.folders) == ()
    assert [c.to_dict() for c in changes(prior.pins, lock)] == [{"name": "my-lib", "from": None, "to": "0.2"}]


@pytest.mark.parametrize("name", ["pylock.toml", "requirements.txt"])
def test_a_previous_lock_saved_with_a_byte_order_mark_gives_its_pins(tmp_path: Path, name: str) -> None:
    """Found by the hostile-input audit: install --from read such a lock, but lock took it for no lock and solved
    afresh, moving every pin."""
    from cudaresolve.lock.lockfile import render_lock
    from cudaresolve.lock.model import Lock
    from cudaresolve.resolve.model import LockedPackage

    six = LockedPackage(name="six", version="1.17.0", index="https://pypi.org/simple", sha256="a" * 64,
                        url="https://files.example/six-1.17.0-py2.py3-none-any.whl",
                        filename="six-1.17.0-py2.py3-none-any.whl")
    fmt = "requirements" if name.endswith(".txt") else "pylock"
    (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + render_lock(name, Lock(packages=(six,)), fmt=fmt).encode())
    assert read_pins(str(tmp_path / name), fmt) == {"six": "1.17.0"}
