"""Install follows no dependency: after ``install --from``, the venv holds exactly the lock, or the command
failed with a coded error and changed nothing.

An index on 127.0.0.1 serves ``demo`` whose wheel requires ``evilpkg`` while its PEP 658 ``.metadata``
file requires nothing (a lock made from the ``.metadata`` lists ``demo`` alone), ``evilpkg 6.6.6``
as the bait, and ``patchy`` whose dependency ``late`` applies only from this interpreter's patch
release on (``python_full_version``), as a lock solved for ``X.Y.0`` would miss it.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from typing import TYPE_CHECKING

import pytest
from tiny_wheels import TinyWheel, build_wheel

from cudaresolve.cli import main
from cudaresolve.errors import IncompleteLock
from cudaresolve.install.sync import sync_environment
from cudaresolve.lock.lockfile import write_lock
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import LockedPackage
from test_install_e2e import _pip_env, _QuietHandler

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses the POSIX venv layout (bin/python)")
FULL = ".".join(str(p) for p in sys.version_info[:3])


class Served:
    def __init__(self, base: str, wheels: dict[str, TinyWheel]) -> None:
        self.index = f"{base}/simple"
        self.base = base
        self.wheels = wheels

    def locked(self, name: str) -> LockedPackage:
        wheel = self.wheels[name]
        return LockedPackage(
            name=name,
            version=wheel.version,
            index=self.index,
            url=f"{self.base}/files/{wheel.filename}",
            filename=wheel.filename,
            sha256=wheel.sha256,
        )

    def lock(self, *names: str) -> Lock:
        short = ".".join(FULL.split(".")[:2])
        return Lock(packages=tuple(self.locked(n) for n in sorted(names)), index_url=self.index,
                    requires_python=f"=={short}.*")


def _unreadable(wheel: TinyWheel, files: Path) -> TinyWheel:
    """``wheel`` with its METADATA (which names a requirement) rewritten in Latin-1: no UTF-8 text to read."""
    import dataclasses
    import zipfile

    path = files / wheel.filename
    with zipfile.ZipFile(path) as archive:
        members = {i.filename: archive.read(i) for i in archive.infolist()}
    for name in members:
        if name.endswith(".dist-info/METADATA"):
            members[name] = members[name] + "Summary: caf\u00e9\n".encode("latin-1")
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return dataclasses.replace(wheel, sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def _smuggling(wheel: TinyWheel, files: Path) -> TinyWheel:
    """``wheel`` with a top-level ``evil-6.6.6.egg-info`` file: importlib would list a distribution ``evil``."""
    import dataclasses
    import zipfile

    path = files / wheel.filename
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("evil-6.6.6.egg-info", "Metadata-Version: 2.1\nName: evil\nVersion: 6.6.6\n")
    return dataclasses.replace(wheel, sha256=hashlib.sha256(path.read_bytes()).hexdigest())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("hostile-index")
    files = root / "files"
    wheels = {
        "demo": build_wheel(files, "demo", "1.0", "py3-none-any", requires=("evilpkg",), metadata_file=True),
        "evilpkg": build_wheel(files, "evilpkg", "6.6.6", "py3-none-any"),
        "patchy": build_wheel(files, "patchy", "1.0", "py3-none-any",
                              requires=(f"late; python_full_version >= '{FULL}'",)),
        "late": build_wheel(files, "late", "1.0", "py3-none-any"),
        "latin": _unreadable(build_wheel(files, "latin", "1.0", "py3-none-any", requires=("late",)), files),
        "smug": _smuggling(build_wheel(files, "smug", "1.0", "py3-none-any"), files),
    }
    lying = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"  # the wheel says Requires-Dist: evilpkg
    (files / f"{wheels['demo'].filename}.metadata").write_text(lying)
    for name, wheel in wheels.items():
        meta = ""
        if name == "demo":
            meta = f' data-dist-info-metadata="sha256={hashlib.sha256(lying.encode()).hexdigest()}"'
        page = root / "simple" / name / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(f'<a href="../../files/{wheel.filename}#sha256={wheel.sha256}"{meta}>{wheel.filename}</a>\n')
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_port}", wheels)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, env=_pip_env(os.devnull))
    return path


@pytest.fixture
def venv(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "venv"
    shutil.copytree(pristine, copy, symlinks=True, copy_function=os.link)
    return copy / "bin" / "python"


@pytest.fixture
def clean_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    for key, value in _pip_env(os.devnull).items():
        if key.startswith("PIP_"):
            monkeypatch.setenv(key, value)


def pip_list(python: Path) -> dict[str, str]:
    """``pip list`` of the venv: normalized name -> version, pip and setuptools left out."""
    done = subprocess.run([str(python), "-m", "pip", "list", "--format", "json"], check=True, capture_output=True,
                          text=True, env=_pip_env(os.devnull))
    listed = {re.sub(r"[-_.]+", "-", i["name"]).lower(): i["version"] for i in json.loads(done.stdout)}
    return {k: v for k, v in listed.items() if k not in ("pip", "setuptools")}


def test_a_wheel_that_needs_more_than_its_metadata_file_said_is_refused_and_nothing_installed(
    served: Served, venv: Path
) -> None:
    with pytest.raises(IncompleteLock) as info:
        sync_environment(served.lock("demo"), python=str(venv), env=_pip_env(os.devnull))
    assert info.value.code == "lock-incomplete"
    assert "evilpkg" in info.value.message and "demo 1.0" in info.value.message
    assert pip_list(venv) == {}  # neither demo nor the unlocked, unhashed evilpkg


def test_the_same_through_the_cli_is_one_coded_line(
    served: Served, venv: Path, tmp_path: Path, clean_pip: None, capsys: pytest.CaptureFixture[str]
) -> None:
    write_lock(tmp_path / "pylock.toml", served.lock("demo"))
    code = main(["install", "--from", str(tmp_path / "pylock.toml"), "--python", str(venv), "--cpu"])
    err = capsys.readouterr().err
    assert code == 1
    assert "lock-incomplete" in err and "evilpkg" in err and "Traceback" not in err
    assert pip_list(venv) == {}


def test_a_lock_that_holds_what_the_wheel_needs_installs_exactly_the_lock(served: Served, venv: Path) -> None:
    lock = served.lock("demo", "evilpkg")
    assert sync_environment(lock, python=str(venv), env=_pip_env(os.devnull)).returncode == 0
    assert pip_list(venv) == {p.name: p.version for p in lock.packages}


def test_a_dependency_from_this_patch_release_on_is_not_followed_but_refused(served: Served, venv: Path) -> None:
    """A lock solved for X.Y.0 lists patchy alone; on this interpreter patchy needs late."""
    with pytest.raises(IncompleteLock) as info:
        sync_environment(served.lock("patchy"), python=str(venv), env=_pip_env(os.devnull))
    assert "late" in info.value.message and FULL in info.value.message
    assert pip_list(venv) == {}
    lock = served.lock("patchy", "late")
    assert sync_environment(lock, python=str(venv), env=_pip_env(os.devnull)).returncode == 0
    assert pip_list(venv) == {"patchy": "1.0", "late": "1.0"}


def test_a_wheel_whose_metadata_cannot_be_read_is_refused_not_taken_as_needing_nothing(
    served: Served, venv: Path
) -> None:
    with pytest.raises(IncompleteLock) as info:
        sync_environment(served.lock("latin"), python=str(venv), env=_pip_env(os.devnull))
    assert "METADATA" in info.value.message and "latin 1.0" in info.value.message
    assert pip_list(venv) == {}


def test_python_may_name_the_environments_folder_as_uv_takes_it(
    served: Served, venv: Path, tmp_path: Path, clean_pip: None
) -> None:
    write_lock(tmp_path / "pylock.toml", served.lock("evilpkg"))
    assert main(["install", "--from", str(tmp_path / "pylock.toml"), "--python", str(venv.parent.parent), "--cpu",
                 "-q"]) == 0
    assert pip_list(venv) == {"evilpkg": "6.6.6"}


# --- the environment the user means ----------------------------------------------------------------


def test_find_environment_follows_uvs_rule(tmp_path: Path) -> None:
    from cudaresolve.errors import NoEnvironment
    from cudaresolve.install.install import find_environment

    active, local = tmp_path / "active", tmp_path / "project" / ".venv"
    for folder in (active, local):
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "python").write_text("")
    project = str(tmp_path / "project")
    assert find_environment(environ={"VIRTUAL_ENV": str(active)}, cwd=project) == str(active / "bin" / "python")
    assert find_environment(environ={}, cwd=project) == str(local / "bin" / "python")
    with pytest.raises(NoEnvironment) as info:
        find_environment(environ={}, cwd=str(tmp_path))
    assert info.value.code == "no-environment" and "--system" in (info.value.hint or "")
    with pytest.raises(NoEnvironment):  # an active venv that is gone is not silently replaced by ./.venv
        find_environment(environ={"VIRTUAL_ENV": str(tmp_path / "gone")}, cwd=project)
    shown = tmp_path / "path"
    shown.mkdir()
    (shown / "python3").write_text("")
    (shown / "python3").chmod(0o755)
    assert find_environment(system=True, environ={"PATH": str(shown)}) == str(shown / "python3")
    with pytest.raises(NoEnvironment):
        find_environment(system=True, environ={"PATH": str(tmp_path / "nothing")})


def test_a_dotvenv_without_an_interpreter_is_not_said_missing(tmp_path: Path) -> None:
    """A ./.venv that is a file, an empty folder or a broken link is there: the error says it has no interpreter,
    not that it does not exist."""
    from cudaresolve.errors import NoEnvironment
    from cudaresolve.install.install import find_environment

    for make in (lambda p: p.write_text(""), lambda p: p.mkdir(), lambda p: p.symlink_to(p)):
        project = tmp_path / f"p{len(list(tmp_path.iterdir()))}"
        project.mkdir()
        make(project / ".venv")
        with pytest.raises(NoEnvironment) as info:
            find_environment(environ={}, cwd=str(project))
        assert "does not exist" not in info.value.message
        assert "has no interpreter at" in info.value.message


def test_install_fills_the_active_venv_then_dot_venv_never_its_own(
    served: Served, pristine: Path, tmp_path: Path, clean_pip: None, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_lock(tmp_path / "pylock.toml", served.lock("late"))
    active = tmp_path / "active"
    shutil.copytree(pristine, active, symlinks=True, copy_function=os.link)
    project = tmp_path / "project"
    shutil.copytree(pristine, project / ".venv", symlinks=True, copy_function=os.link)
    monkeypatch.chdir(project)
    monkeypatch.setenv("VIRTUAL_ENV", str(active))
    assert main(["install", "--from", str(tmp_path / "pylock.toml"), "--cpu"]) == 0
    assert pip_list(active / "bin" / "python") == {"late": "1.0"}
    assert pip_list(project / ".venv" / "bin" / "python") == {}
    monkeypatch.delenv("VIRTUAL_ENV")
    assert main(["install", "--from", str(tmp_path / "pylock.toml"), "--cpu"]) == 0
    assert pip_list(project / ".venv" / "bin" / "python") == {"late": "1.0"}
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["install", "--from", str(tmp_path / "pylock.toml"), "--cpu"]) == 1
    assert "error: no-environment: " in capsys.readouterr().err


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_uv_venv_without_pip_is_filled(
    served: Served, tmp_path: Path, installer: str, clean_pip: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.install.installer import find_uv

    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed")
    folder = tmp_path / "uvenv"
    subprocess.run([uv, "venv", "--no-config", "--python", sys.executable, str(folder)], check=True,
                   capture_output=True)
    python = folder / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import pip"], capture_output=True).returncode != 0  # no pip inside
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", installer)  # pip: this interpreter's pip, with --python
    lock = served.lock("demo", "evilpkg")
    assert sync_environment(lock, python=str(python)).returncode == 0
    listed = subprocess.run([uv, "pip", "list", "--python", str(python), "--format", "json"], check=True,
                            capture_output=True, text=True)
    assert {i["name"]: i["version"] for i in json.loads(listed.stdout)} == {"demo": "1.0", "evilpkg": "6.6.6"}


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_wheel_adding_another_distribution_is_refused_whatever_installs_it(
    served: Served, tmp_path: Path, installer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The member rules the in-process linker applies hold for wheels handed to uv or pip too, also when
    CUDARESOLVE_INSTALLER names one: the locked wheel, its hash right, would add a distribution 'evil'."""
    from cudaresolve.errors import InvalidBinary
    from cudaresolve.install.installer import find_uv

    if installer == "uv" and find_uv() is None:
        pytest.skip("uv is not installed")
    folder = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", installer)
    with pytest.raises(InvalidBinary, match="another distribution"):
        sync_environment(served.lock("smug"), python=str(folder / "bin" / "python"))
    listed = subprocess.run([str(folder / "bin" / "python"), "-c", "import importlib.metadata as m; "
                             "print(sorted(d.metadata['Name'] or '' for d in m.distributions()))"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert "evil" not in listed.stdout and "smug" not in listed.stdout


def test_exact_with_requirements_that_give_no_package_changes_nothing(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Requirements whose markers leave every package out resolved to an empty set, and --exact then uninstalled
    everything in the venv. uv pip sync refuses an empty set; so does install, before anything changes."""
    before = pip_list(venv)
    stray = venv.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (stray / "mine-1.0.dist-info").mkdir()
    (stray / "mine-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: mine\nVersion: 1.0\n")
    (stray / "mine-1.0.dist-info" / "RECORD").write_text("mine-1.0.dist-info/METADATA,,\n")
    code = main(["install", 'numpy; python_version < "3"', "--python", str(venv), "--exact", "--offline"])
    assert code == 1
    assert capsys.readouterr().err.startswith("error: invalid-input: the requirements give no package")
    assert pip_list(venv) == {**before, "mine": "1.0"}


@pytest.mark.parametrize("setting", ["PIP_TARGET", "PIP_PREFIX", "target", "prefix", "root"])
def test_pips_settings_never_send_the_lock_out_of_the_environment(
    served: Served, venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    """With pip installing, a PIP_TARGET or PIP_PREFIX in the environment, or a pip.conf naming a target, prefix or
    root, sent the locked wheels to that folder while install reported them installed in the venv (and the next
    run installed them again). The wheels go into --python's environment, as uv's --no-config puts them."""
    elsewhere = tmp_path / "elsewhere"
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    if setting.startswith("PIP_"):
        monkeypatch.setenv(setting, str(elsewhere))
    else:
        conf = tmp_path / "pip.conf"
        conf.write_text(f"[install]\n{setting} = {elsewhere}\n")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", "pip")
    before = pip_list(venv)
    assert sync_environment(served.lock("evilpkg"), python=str(venv)).returncode == 0
    assert not elsewhere.exists()
    assert pip_list(venv) == {**before, "evilpkg": "6.6.6"}
