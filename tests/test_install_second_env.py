"""Installing one lock into a second environment (issue 24's warm install): what it reads, what it imports,
and the verdicts it keeps. Real uv or pip into real venvs from an index on 127.0.0.1 (the e2e fixtures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudaresolve.install.installed import read_installed
from cudaresolve.install.verdicts import VERDICTS, closure_key, environment_key, known, remember
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import FileKind, LockedPackage
from test_cli_install_habits import locked, pristine, venv  # noqa: F401 (fixtures; venv needs pristine)
from test_cli_lock_install_e2e import mirror  # noqa: F401 (a fixture)

_INSTALL = """
import json, sys
from cudaresolve.cli import main
code = main(sys.argv[2:])
watched = ("cudaresolve.lock.flow", "cudaresolve.resolve.solve", "resolvelib", "httpx", "cudaresolve.index.client",
           "cudaresolve.index.simple", "cudaresolve.install.closure")
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "loaded": sorted(m for m in watched if m in sys.modules)}, out)
"""


def _install(python: Path, flags: list[str], report: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the target venv would inherit it
    argv = [sys.executable, "-c", _INSTALL, str(report), "install", "--from", "pylock.toml", "--python", str(python),
            "-q", *flags]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(report.read_text())


def test_a_second_environment_reads_no_requirement_and_loads_no_solver(
    locked: tuple[list[str], dict[str, str], list[object]],  # noqa: F811
    venv: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    flags, _, _ = locked
    first = _install(venv, flags, tmp_path / "first.json")
    cache = Path(os.environ["CUDARESOLVE_CACHE_DIR"])
    kept = [p for p in (cache / VERDICTS).iterdir() if not p.name.startswith(".")]
    assert first["code"] == 0 and len(kept) == 3  # its Python range, its wheels' tags and its closure held here
    assert "cudaresolve.install.closure" in first["loaded"]  # the first install read the wheel's requirements
    second_venv = tmp_path / "second"
    subprocess.run([str(venv), "-m", "venv", "--without-pip", str(second_venv)], check=True)
    second = _install(second_venv / "bin" / "python", flags, tmp_path / "second.json")
    assert second == {"code": 0, "loaded": []}  # nothing checked again, no solver, no HTTP client
    listed = subprocess.run([str(second_venv / "bin" / "python"), "-c", "import torch, sys; print(torch.__file__)"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert listed.stdout.startswith(str(second_venv))


def _lock(*packages: LockedPackage) -> Lock:
    return Lock(packages=packages, index_url="https://pypi.org/simple")


def _wheel(name: str, sha: str, kind: FileKind = FileKind.WHEEL) -> LockedPackage:
    filename = f"{name}-1.0-py3-none-any.whl"
    return LockedPackage(name=name, version="1.0", index="https://pypi.org/simple", filename=filename,
                         url=f"https://files.example/{filename}", sha256=sha, kind=kind)


MARKERS = {"python_full_version": "3.11.7", "sys_platform": "linux"}


def test_the_verdict_key_follows_every_input_of_the_check() -> None:
    lock = _lock(_wheel("a", "1" * 64), _wheel("b", "2" * 64))
    key = closure_key(lock, {"a", "b"}, {}, MARKERS)
    assert key is not None and key == closure_key(lock, {"a", "b"}, {}, dict(reversed(MARKERS.items())))
    others = [
        closure_key(_lock(_wheel("a", "1" * 64), _wheel("b", "3" * 64)), {"a", "b"}, {}, MARKERS),  # another file
        closure_key(lock, {"a", "b"}, {}, {**MARKERS, "python_full_version": "3.11.0"}),  # another interpreter
        closure_key(lock, {"a"}, {"b": ()}, MARKERS),  # b kept as installed, not installed from its file
        closure_key(lock, {"a"}, {"b": ("c>=1",)}, MARKERS),  # ... and its installed copy needs c
    ]
    assert len({key, *others}) == 5
    for kind in (FileKind.SDIST, FileKind.DIRECTORY):  # requirements no hash fixes: never kept
        assert closure_key(_lock(_wheel("a", "1" * 64, kind)), {"a"}, {}, MARKERS) is None
    assert closure_key(_lock(_wheel("a", "")), {"a"}, {}, MARKERS) is None
    assert closure_key(_lock(_wheel("a", "")), set(), {"a": ()}, MARKERS) is not None  # kept: its requires say


def test_the_environment_key_follows_the_range_the_environments_and_the_interpreter() -> None:
    lock = Lock(packages=(), requires_python="==3.11.*", environments=("sys_platform == 'linux'",))
    key = environment_key(lock, MARKERS)
    others = [
        environment_key(Lock(packages=(), requires_python=">=3.11", environments=lock.environments), MARKERS),
        environment_key(Lock(packages=(), requires_python="==3.11.*"), MARKERS),
        environment_key(lock, {**MARKERS, "sys_platform": "darwin"}),
        # the same characters split another way: a range holding what was an environment
        environment_key(Lock(packages=(), requires_python="==3.11.*sys_platform == 'linux'"), MARKERS),
    ]
    assert len({key, *others}) == 5 and key == environment_key(lock, dict(reversed(MARKERS.items())))


def test_a_lock_whose_range_held_here_is_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from cudaresolve.errors import InvalidLockfile
    from cudaresolve.install import install, verify

    checked: list[str | None] = []
    real = verify.check_environment

    def counting(lock: Lock, source: str, environment: dict[str, str]) -> None:
        checked.append(lock.requires_python)
        real(lock, source, environment)

    monkeypatch.setattr(verify, "check_environment", counting)
    good = Lock(packages=(), requires_python="==3.11.*", environments=("sys_platform == 'linux'",))
    bad = Lock(packages=(), requires_python=">=3.12")
    for _ in range(2):
        install._check_environment(good, "pylock.toml", MARKERS)
        with pytest.raises(InvalidLockfile):  # a lock that does not hold is refused on every try
            install._check_environment(bad, "pylock.toml", MARKERS)
    assert checked == ["==3.11.*", ">=3.12", ">=3.12"]
    install._check_environment(good, "pylock.toml", {**MARKERS, "python_full_version": "3.11.9"})
    assert checked[-1] == "==3.11.*"  # another interpreter: checked


def test_verdicts_are_kept_and_bounded(tmp_path: Path) -> None:
    keys = [f"{n:064x}" for n in range(300)]
    assert not known(tmp_path, keys[0]) and not known(tmp_path, None)
    for key in keys:
        remember(tmp_path, key)
    remember(tmp_path, None)  # nothing to keep
    left = sorted(p.name for p in (tmp_path / VERDICTS).iterdir() if not p.name.startswith("."))
    assert 0 < len(left) <= 256 and known(tmp_path, keys[-1])
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    remember(blocked, keys[0])  # a cache that cannot be written: skipped, no error
    assert not known(blocked, keys[0])


# --- the installed distributions, read without importlib.metadata where it can be ------------------------------


def _dist(site: Path, folder: str, metadata: bytes | None) -> None:
    (site / folder).mkdir(parents=True)
    if metadata is not None:
        (site / folder / "METADATA").write_bytes(metadata)


def _meta(name: str, version: str, *requires: str) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n\nA description: with a colon.\n").encode()


def test_installed_distributions_are_read_as_importlib_metadata_reads_them(tmp_path: Path) -> None:
    import importlib.metadata

    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "Alpha_Pkg-1.0.dist-info", _meta("Alpha_Pkg", "1.0", "beta>=2; python_version >= '3'"))
    _dist(first, "beta-2.0.dist-info", _meta("beta", "2.0"))
    _dist(first, "nometa-1.0.dist-info", None)  # no METADATA: no name, left out
    _dist(first, "delta-4.0.dist-info", None)  # no METADATA but a PKG-INFO: importlib.metadata reads that
    (first / "delta-4.0.dist-info" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: delta\nVersion: 4.0\n")
    _dist(second, "beta-1.0.dist-info", _meta("beta", "1.0"))  # shadowed by the first path's beta
    _dist(second, "gamma-3.0.egg-info", None)  # an egg-info folder: read through importlib.metadata
    (second / "gamma-3.0.egg-info" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: gamma\nVersion: 3.0\n")
    paths = [str(first), str(tmp_path / "missing"), str(second)]
    found = read_installed(None, paths=paths)
    assert {n: (d.version, d.requires) for n, d in found.items()} == {
        "alpha-pkg": ("1.0", ("beta>=2; python_version >= '3'",)),
        "beta": ("2.0", ()),
        "gamma": ("3.0", ()),
        "delta": ("4.0", ()),
    }
    seen: dict[str, str] = {}
    for dist in importlib.metadata.distributions(path=paths):
        if dist.metadata["Name"]:
            seen.setdefault(dist.metadata["Name"].lower().replace("_", "-"), dist.version)
    assert seen == {n: d.version for n, d in found.items()}
    assert found["beta"].path == str(first / "beta-2.0.dist-info")


def test_an_installed_metadata_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    from cudaresolve.errors import InvalidInput

    _dist(tmp_path, "bad-1.0.dist-info", b"Name: bad\nVersion: \xff\n")
    with pytest.raises(InvalidInput, match=r"bad-1\.0\.dist-info"):
        read_installed(None, paths=[str(tmp_path)])
