"""End to end: install a lock with real pip into a fresh venv from PEP 503 indexes on 127.0.0.1.

Two indexes are served from a temporary directory: A plays the PyTorch index (torch
2.7.1+cu118 built for this interpreter's first wheel tag, and torch's dependency filelock), B plays
PyPI with bait: a higher torch (2.8.0), a higher filelock (99.0) and flashinfer-python, which
the lock takes from B. The wheels are tiny zips (``tools/tiny_wheels.py``, shared with the
bench); each module records which index it came from in ``ORIGIN``. pip runs without network
access beyond 127.0.0.1 and without the machine's pip configuration (PIP_CONFIG_FILE=/dev/null),
except in the test that feeds it a hostile one.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import pytest
from tiny_wheels import TinyWheel, build_wheel  # tools/: on the path by pytest's pythonpath setting

from cudaresolve.cli import main
from cudaresolve.errors import IndexUnavailable
from cudaresolve.install.sync import Change, SyncResult, sync_environment
from cudaresolve.lock.lockfile import read_lock, write_lock
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import LockedPackage

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from cudaresolve.install.pip import PipCommand

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses the POSIX venv layout (bin/python)")
pytest.importorskip("ensurepip", reason="python -m venv needs ensurepip to give the venv pip")


def write_simple_index(root: Path, wheels: list[TinyWheel]) -> None:
    """PEP 503 pages under ``root/simple/<project>/`` linking ``root/files/<wheel>#sha256=``."""
    projects: dict[str, list[TinyWheel]] = {}
    for wheel in wheels:
        projects.setdefault(re.sub(r"[-_.]+", "-", wheel.name).lower(), []).append(wheel)
    for project, files in projects.items():
        links = "".join(
            f'<a href="../../files/{w.filename.replace("+", "%2B")}#sha256={w.sha256}">{w.filename}</a><br>\n'
            for w in files
        )
        page = root / "simple" / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass(frozen=True)
class Indexes:
    a: str
    b: str
    wheels: dict[str, TinyWheel]
    bait: Path  # a find-links directory with an even higher torch
    builds: Path  # other builds of locked versions: fbgemm-gpu 1.9.0+cu126, a torch 2.7.1+cu118 from elsewhere


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pristine venv with pip (created once; tests use copies)."""
    path = tmp_path_factory.mktemp("pristine") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, env=_pip_env(os.devnull))
    return path / "bin" / "python"


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory, venv_python: Path) -> Iterator[Indexes]:
    root = tmp_path_factory.mktemp("indexes")
    platform_tag = subprocess.run(
        [str(venv_python), "-c", "import sys; v = sys.version_info; print(f'cp{v[0]}{v[1]}')"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tag = f"{platform_tag}-{platform_tag}-{_platform()}"
    a = [
        build_wheel(root / "a" / "files", "torch", "2.7.1+cu118", tag, origin="A", requires=("filelock",)),
        build_wheel(root / "a" / "files", "filelock", "3.13.1", "py3-none-any", origin="A"),
        build_wheel(root / "a" / "files", "fbgemm-gpu", "1.9.0", "py3-none-any", origin="A"),
    ]
    b = [
        build_wheel(root / "b" / "files", "torch", "2.8.0", "py3-none-any", origin="B"),
        build_wheel(root / "b" / "files", "filelock", "99.0", "py3-none-any", origin="B"),
        build_wheel(root / "b" / "files", "einops", "0.8.1", "py3-none-any", origin="B"),
        build_wheel(
            root / "b" / "files",
            "flashinfer-python",
            "0.2.5",
            "py3-none-any",
            origin="B",
            requires=("torch>=2.7", "filelock", "einops"),
        ),
    ]
    bait = root / "bait"
    build_wheel(bait, "torch", "9.0.0", "py3-none-any", origin="find-links")
    build_wheel(bait, "filelock", "100.0", "py3-none-any", origin="find-links")
    builds = root / "builds"
    build_wheel(builds, "fbgemm-gpu", "1.9.0+cu126", "py3-none-any", origin="cu126")
    build_wheel(builds, "torch", "2.7.1+cu118", tag, origin="tampered", requires=("filelock",))
    write_simple_index(root / "a", a)
    write_simple_index(root / "b", b)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield Indexes(
            f"{base}/a/simple",
            f"{base}/b/simple",
            {f"{w.name}@{o}": w for o, ws in (("A", a), ("B", b)) for w in ws},
            bait,
            builds,
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def venv(venv_python: Path, tmp_path: Path) -> Path:
    """A private copy of the pristine venv (a fresh venv costs seconds); returns its interpreter."""
    copy = tmp_path / "venv"
    # hard links: no test writes into files the pristine venv has (pip is not upgraded), only adds new ones
    shutil.copytree(venv_python.parent.parent, copy, symlinks=True, copy_function=os.link)
    return copy / "bin" / "python"


def _platform() -> str:
    from packaging.tags import sys_tags

    return next(iter(sys_tags())).platform


def _pip_env(config: str) -> dict[str, str]:
    """This process's environment without pip settings, proxies or Python path, pip pointed at ``config``."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k.upper() not in drop}
    env.update(PIP_CONFIG_FILE=config, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return env


def _lock(indexes: Indexes, *, hashes: bool) -> Lock:
    def locked(key: str, index: str) -> LockedPackage:
        wheel = indexes.wheels[key]
        return LockedPackage(
            name=wheel.name,
            version=wheel.version,
            index=index,
            url=f"{index.removesuffix('/simple')}/files/{wheel.filename.replace('+', '%2B')}",
            filename=wheel.filename,
            sha256=wheel.sha256 if hashes else None,
        )

    return Lock(
        packages=(
            locked("einops@B", indexes.b),
            locked("filelock@A", indexes.a),
            locked("flashinfer-python@B", indexes.b),
            locked("torch@A", indexes.a),
        ),
        variant="cu118",
        index_url=indexes.a,
        target={"platform": "linux_x86_64", "python": "3.11"},
    )


def _installed(python: Path) -> dict[str, tuple[str, str | None]]:
    """name -> (version, ORIGIN of its module) for everything but pip and setuptools."""
    script = (
        "import importlib, importlib.metadata as m, json\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    name = d.metadata['Name']\n"
        "    if name in ('pip', 'setuptools'): continue\n"
        "    module = importlib.import_module(name.replace('-python', '').replace('-', '_'))\n"
        "    out[name] = [d.version, getattr(module, 'ORIGIN', None)]\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run([str(python), "-c", script], check=True, capture_output=True, text=True)
    return {k: (v[0], v[1]) for k, v in json.loads(result.stdout).items()}


def test_installs_a_hashed_pylock_each_package_from_its_own_index(indexes: Indexes, venv: Path, tmp_path: Path) -> None:
    lock_path = tmp_path / "pylock.toml"
    write_lock(lock_path, _lock(indexes, hashes=True))

    code = sync_environment(read_lock(lock_path), python=str(venv), env=_pip_env(os.devnull)).returncode

    assert code == 0
    assert _installed(venv) == {
        "torch": ("2.7.1+cu118", "A"),  # B's torch 2.8.0 is higher and satisfies flashinfer's torch>=2.7
        "filelock": ("3.13.1", "A"),  # torch's dependency from the index the lock names, not B's 99.0
        "flashinfer-python": ("0.2.5", "B"),
        "einops": ("0.8.1", "B"),
    }
    listed = subprocess.run(
        [str(venv), "-m", "pip", "list", "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
        env=_pip_env(os.devnull),
    )
    versions = {item["name"]: item["version"] for item in json.loads(listed.stdout)}
    assert versions["torch"] == "2.7.1+cu118"


def test_hostile_pip_config_cannot_mix_in_another_index_or_find_links(
    indexes: Indexes, venv: Path, tmp_path: Path
) -> None:
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nextra-index-url = {indexes.b}\nfind-links = {indexes.bait}\n")
    lock_path = tmp_path / "requirements.txt"
    write_lock(lock_path, _lock(indexes, hashes=False), fmt="requirements")

    code = sync_environment(read_lock(lock_path), python=str(venv), env=_pip_env(str(config))).returncode

    assert code == 0
    assert _installed(venv) == {
        "torch": ("2.7.1+cu118", "A"),
        "filelock": ("3.13.1", "A"),  # not B's 99.0 nor find-links' 100.0
        "flashinfer-python": ("0.2.5", "B"),
        "einops": ("0.8.1", "B"),
    }


def test_the_bait_works_on_plain_pip_with_an_extra_index(indexes: Indexes, venv: Path, tmp_path: Path) -> None:
    """Control: what the guards prevent. pip with --extra-index-url takes B's higher torch."""
    report = tmp_path / "report.json"
    command = [str(venv), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--report", str(report)]
    command += ["--index-url", indexes.a, "--extra-index-url", indexes.b, "torch", "flashinfer-python"]
    subprocess.run(command, check=True, capture_output=True, env=_pip_env(os.devnull))
    chosen = {
        item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())["install"]
    }
    assert chosen["torch"] == "2.8.0"
    assert chosen["filelock"] == "99.0"


def test_a_tampered_wheel_fails_the_hash_check_and_pip_code_passes_through(indexes: Indexes, venv: Path) -> None:
    lock = _lock(indexes, hashes=True)
    torch = next(p for p in lock.packages if p.name == "torch")
    bad = Lock(
        packages=tuple(
            LockedPackage(name=p.name, version=p.version, index=p.index, sha256="0" * 64) if p is torch else p
            for p in lock.packages
        ),
        index_url=lock.index_url,
    )

    code = sync_environment(bad, python=str(venv), env=_pip_env(os.devnull)).returncode

    assert code == 1
    assert "torch" not in _installed(venv)


# --- install makes the environment equal to the lock ------------------------------------------


@dataclass(frozen=True)
class Drifted:
    """A venv that had other builds of the locked versions and a foreign package, after one sync."""

    python: Path
    lock_path: Path
    lock: Lock
    result: SyncResult
    commands: list[PipCommand]
    after: dict[str, tuple[str, str | None]]
    records: Path  # the RECORD cache of the first sync (a module fixture runs before conftest's cache)
    files: Path  # its file cache


@pytest.fixture(scope="module")
def drifted(indexes: Indexes, venv_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Drifted:
    """fbgemm-gpu 1.9.0+cu126 and a torch 2.7.1+cu118 built elsewhere (same version, other files),
    torch's dependency filelock, and einops that nothing locked needs; then one sync to a lock of
    fbgemm-gpu 1.9.0, filelock 3.13.1 and torch 2.7.1+cu118 from index A. Shared by the tests below (one venv)."""
    root = tmp_path_factory.mktemp("drifted")
    copy = root / "venv"
    shutil.copytree(venv_python.parent.parent, copy, symlinks=True, copy_function=os.link)
    python = copy / "bin" / "python"
    served = indexes.bait.parent
    files = [
        *sorted(indexes.builds.glob("*.whl")),
        served / "a" / "files" / indexes.wheels["filelock@A"].filename,
        served / "b" / "files" / indexes.wheels["einops@B"].filename,
    ]
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", *map(str, files)]
    subprocess.run(pip, check=True, env=_pip_env(os.devnull))
    assert _installed(python)["torch"] == ("2.7.1+cu118", "tampered")

    def locked(key: str) -> LockedPackage:
        wheel = indexes.wheels[key]
        url = f"{indexes.a.removesuffix('/simple')}/files/{wheel.filename.replace('+', '%2B')}"
        return LockedPackage(
            name=wheel.name,
            version=wheel.version,
            index=indexes.a,
            url=url,
            filename=wheel.filename,
            sha256=wheel.sha256,
        )

    lock = Lock(packages=(locked("fbgemm-gpu@A"), locked("filelock@A"), locked("torch@A")), index_url=indexes.a)
    lock_path = root / "pylock.toml"
    write_lock(lock_path, lock)
    commands: list[PipCommand] = []
    records, files = root / "records", root / "files"
    result = sync_environment(
        lock, python=str(python), env=_pip_env(os.devnull), echo=commands.append, record_cache=records,
        file_cache=files,
    )
    return Drifted(python, lock_path, lock, result, commands, _installed(python), records, files)


def test_sync_replaces_another_build_and_another_wheel_of_the_locked_version(drifted: Drifted) -> None:
    assert drifted.result.returncode == 0
    assert drifted.result.installed == (("fbgemm-gpu", Change.VERSION), ("torch", Change.FILES))
    assert drifted.after == {
        "fbgemm-gpu": ("1.9.0", "A"),  # was 1.9.0+cu126
        "torch": ("2.7.1+cu118", "A"),  # same version, was the other wheel
        "filelock": ("3.13.1", "A"),  # locked, installed as locked: kept
        "einops": ("0.8.1", "B"),  # foreign, but only reported without --exact
    }
    assert [n.code for n in drifted.result.notices] == ["installed-differs", "installed-differs", "not-in-lock"]
    assert drifted.result.foreign == ("einops",)
    assert drifted.result.removed == ()
    # the files come from the lock's URLs into the shared cache; one install of the two that differ,
    # replacing what is there; no dependency is ever followed
    (command,) = drifted.commands
    assert [a for a in command.argv if a.endswith(".whl")] == [
        str(drifted.files / drifted.lock.packages[i].sha256 / drifted.lock.packages[i].filename) for i in (0, 2)
    ]
    assert {"--no-deps", "--no-index"} <= set(command.argv)
    if "--force-reinstall" not in command.argv:  # uv: only the two installed now are reinstalled, by name
        named = [command.argv[i + 1] for i, a in enumerate(command.argv) if a == "--reinstall-package"]
        assert sorted(named) == ["fbgemm-gpu", "torch"] and "--reinstall" not in command.argv


def test_sync_a_second_time_installs_nothing(drifted: Drifted, tmp_path: Path) -> None:
    commands: list[PipCommand] = []
    env = _pip_env(os.devnull)
    result = sync_environment(
        drifted.lock, python=str(drifted.python), env=env, echo=commands.append, record_cache=drifted.records,
        file_cache=drifted.files,
    )
    assert (result.returncode, result.installed, result.kept) == (0, (), ("fbgemm-gpu", "filelock", "torch"))
    assert commands == []  # the cached RECORDs of the verified wheels answer: no download, no install
    # without that cache the wheels are read from the file cache to compare, and still nothing is installed
    result = sync_environment(
        drifted.lock, python=str(drifted.python), env=env, echo=commands.append, record_cache=tmp_path,
        file_cache=drifted.files,
    )
    assert (result.returncode, result.installed, commands) == (0, (), [])
    # the two installed from the cache say so in direct_url.json: kept with no RECORD compared and their files
    # gone (offline, no RECORD cache); filelock, installed from elsewhere, is compared with its cached wheel
    gone = [drifted.files / drifted.lock.packages[i].sha256 for i in (0, 2)]
    for folder in gone:
        folder.rename(folder.with_suffix(".away"))
    try:
        by_cache = sync_environment(drifted.lock, python=str(drifted.python), env=env, echo=commands.append,
                                    record_cache=tmp_path / "none", file_cache=drifted.files, offline=True)
    finally:
        for folder in gone:
            folder.with_suffix(".away").rename(folder)
    assert (by_cache.returncode, by_cache.installed, commands) == (0, (), [])
    with pytest.raises(IndexUnavailable):  # without the provenance the files are needed, and offline not had
        sync_environment(drifted.lock, python=str(drifted.python), env=env, record_cache=tmp_path / "none",
                         file_cache=tmp_path / "empty", offline=True)


def test_sync_reinstalls_a_locked_package_whose_files_changed_on_disk(drifted: Drifted) -> None:
    module = drifted.python.parent.parent.glob("lib/python*/site-packages/torch/__init__.py")
    path = next(iter(module))
    path.write_text(path.read_text() + "ORIGIN = 'edited'\n")
    commands: list[PipCommand] = []
    result = sync_environment(
        drifted.lock,
        python=str(drifted.python),
        env=_pip_env(os.devnull),
        echo=commands.append,
        record_cache=drifted.records,
        file_cache=drifted.files,
    )
    assert (result.returncode, result.installed) == (0, (("torch", Change.DAMAGED),))
    (command,) = commands  # only torch is installed again
    assert [a for a in command.argv if a.endswith(".whl")] == [
        str(drifted.files / drifted.lock.packages[2].sha256 / drifted.lock.packages[2].filename)
    ]
    assert _installed(drifted.python)["torch"] == ("2.7.1+cu118", "A")


def test_install_exact_removes_what_the_lock_neither_pins_nor_needs(
    drifted: Drifted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    for key, value in _pip_env(os.devnull).items():
        if key.startswith("PIP_"):
            monkeypatch.setenv(key, value)
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    target = ["--cpu", "--python-version", python, "--platform", "linux_x86_64"]
    argv = ["install", "--from", str(drifted.lock_path), "--python", str(drifted.python), "--exact", *target]
    before = _installed(drifted.python)

    assert main([*argv, "--dry-run"]) == 0  # the plan holds the removal; nothing changes
    out = capsys.readouterr().out
    assert re.search(r"uninstall .*einops", out) and _installed(drifted.python) == before

    assert main(argv) == 0

    err = capsys.readouterr().err
    assert "removed-not-in-lock" in err and "einops" in err
    assert re.search(r"uninstall .*einops", err)
    assert _installed(drifted.python) == {
        "fbgemm-gpu": ("1.9.0", "A"),
        "torch": ("2.7.1+cu118", "A"),
        "filelock": ("3.13.1", "A"),
    }
