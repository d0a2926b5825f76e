"""``install --from`` of a lock with PEP 751 ``[packages.directory]`` entries: local project folders, their paths
relative to the lock file's folder, built by the installer (``-e`` in place when locked ``editable``) into a
real venv, beside a locked wheel from an index on 127.0.0.1; with uv and with pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from cudaresolve.cli import main
from cudaresolve.errors import InvalidLockfile
from cudaresolve.install.sync import Change, sync_environment
from cudaresolve.lock.lockfile import read_lock, write_lock
from cudaresolve.lock.model import Lock
from test_install_exactly_the_lock import Served, clean_pip, pip_list, pristine, served, venv  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses the POSIX venv layout (bin/python)")
TARGET = ["--cpu", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}", "--platform", "linux_x86_64"]

# An in-tree PEP 517 backend with PEP 660 editables: no build requirement, so nothing is fetched to build it.
_BACKEND = '''
import base64, hashlib, os, zipfile
NAME, VERSION = {name!r}, "0.1"
DIST = NAME.replace("-", "_")
def _meta():
    return f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n"
def _wheel(directory, files):
    info = f"{{DIST}}-{{VERSION}}.dist-info"
    files = {{**files, f"{{info}}/METADATA": _meta(),
             f"{{info}}/WHEEL": "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}}
    rows = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        rows.append(f"{{path}},sha256={{digest}},{{len(text.encode())}}")
    name = f"{{DIST}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{{info}}/RECORD", "\\n".join(rows + [f"{{info}}/RECORD,,"]) + "\\n")
    return name
def get_requires_for_build_wheel(config_settings=None):
    return []
def get_requires_for_build_editable(config_settings=None):
    return []
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, DIST, "__init__.py")) as source:
        return _wheel(wheel_directory, {{f"{{DIST}}/__init__.py": source.read()}})
def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    return _wheel(wheel_directory, {{f"__editable__.{{DIST}}.pth": here + "\\n"}})
'''


def _project(root: Path, name: str) -> Path:
    folder = root / name
    package = folder / name.replace("-", "_")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('ORIGIN = "first"\n')
    (folder / "backend.py").write_text(_BACKEND.format(name=name))
    build = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    (folder / "pyproject.toml").write_text(build + f'[project]\nname = "{name}"\nversion = "0.1"\n')
    return folder


def _lock_with_folders(index: Served, root: Path) -> Path:
    """``root/lock/pylock.toml``: the wheel ``late`` from the index, ``in-place`` (editable) and ``copied`` (not),
    their paths relative to the lock's folder."""
    _project(root / "src", "in-place")
    _project(root / "src", "copied")
    path = root / "lock" / "pylock.toml"
    path.parent.mkdir()
    write_lock(path, Lock(packages=(index.locked("late"),), index_url=index.index))
    text = path.read_text() + textwrap.dedent("""
        [[packages]]
        name = "in-place"
        directory = { path = "../src/in-place", editable = true }

        [[packages]]
        name = "copied"
        directory = { path = "../src/copied" }
    """)
    path.write_text(text)
    return path


def _origin(python: Path, module: str) -> str:
    script = f"import {module}, json; print(json.dumps([{module}.ORIGIN, {module}.__file__]))"
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True, cwd="/")
    origin, file = json.loads(done.stdout)
    return f"{origin} {'site-packages' if 'site-packages' in file else 'folder'}"


@pytest.mark.parametrize("installer", ["", "uv", "pip"])  # "": the wheel linked in this process, the folders by uv
def test_local_folders_install_beside_the_locked_wheel(
    served: Served, venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installer: str,  # noqa: F811
    clean_pip: None,  # noqa: F811
) -> None:
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", installer)
    lock = _lock_with_folders(served, tmp_path)
    monkeypatch.chdir(tmp_path)  # not the lock's folder: paths are relative to the lock file, not here

    assert main(["install", "--from", str(lock), "--python", str(venv), *TARGET, "-q"]) == 0

    assert pip_list(venv) == {"late": "1.0", "in-place": "0.1", "copied": "0.1"}
    assert _origin(venv, "in_place") == "first folder"  # -e: imported from the project folder
    assert _origin(venv, "copied") == "first site-packages"  # built into a wheel and copied
    for folder in ("in-place", "copied"):
        (tmp_path / "src" / folder / folder.replace("-", "_") / "__init__.py").write_text('ORIGIN = "second"\n')
    assert _origin(venv, "in_place") == "second folder"
    assert _origin(venv, "copied") == "first site-packages"

    # a second install keeps the wheel and the editable folder, and builds the copied folder again
    result = sync_environment(rooted_lock(lock), python=str(venv), env={**os.environ})
    assert (result.returncode, result.installed) == (0, (("copied", Change.FOLDER),))
    assert set(result.kept) == {"late", "in-place"} and result.notices == ()
    assert _origin(venv, "copied") == "second site-packages"


def test_a_folder_with_no_installer_at_hand_fails_before_the_wheels_are_linked(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:
    from cudaresolve.install import installer

    bare = tmp_path / "bare"  # no pip in it, and neither uv nor this interpreter's pip to be found
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    monkeypatch.setattr(installer, "find_uv", lambda env=None: None)
    monkeypatch.setattr(installer, "_has_pip", lambda: False)
    lock = _lock_with_folders(served, tmp_path)

    assert main(["install", "--from", str(lock), "--python", str(bare / "bin" / "python"), *TARGET, "-q"]) == 1
    err = capsys.readouterr().err
    assert "error: invalid-input: no installer can reach" in err, err
    assert not list((bare / "lib").glob("python*/site-packages/*.dist-info"))  # the wheel was not linked first


def rooted_lock(path: Path) -> Lock:
    from cudaresolve.install.install import rooted

    return rooted(read_lock(path), str(path.parent))


def test_dry_run_names_the_folders_and_a_missing_folder_is_a_coded_error(
    served: Served, venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:
    lock = _lock_with_folders(served, tmp_path)
    assert main(["install", "--from", str(lock), "--python", str(venv), *TARGET, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"-e {tmp_path / 'src' / 'in-place'} {tmp_path / 'src' / 'copied'}" in out
    assert "--no-deps" in out.splitlines()[-1]

    (tmp_path / "src" / "copied" / "pyproject.toml").unlink()
    (tmp_path / "src" / "copied" / "backend.py").unlink()
    (tmp_path / "src" / "copied" / "copied" / "__init__.py").unlink()
    for folder in (tmp_path / "src" / "copied" / "copied", tmp_path / "src" / "copied"):
        folder.rmdir()
    assert main(["install", "--from", str(lock), "--python", str(venv), *TARGET]) == 1
    err = capsys.readouterr().err
    assert "copied is the local project folder" in err and "does not exist" in err
    assert "late" not in pip_list(venv)  # nothing changed

    (tmp_path / "src" / "copied").mkdir()  # there, but no project (found by this stop's hostile-input hunt: /etc)
    assert main(["install", "--from", str(lock), "--python", str(venv), *TARGET]) == 1
    assert "which is no Python project (no pyproject.toml or setup.py there)" in capsys.readouterr().err
    assert "late" not in pip_list(venv)


def test_a_directory_entry_is_read_and_its_editable_flag_checked(tmp_path: Path) -> None:
    path = tmp_path / "pylock.toml"
    head = 'lock-version = "1.0"\ncreated-by = "test"\n'
    path.write_text(head + '[[packages]]\nname = "x"\ndirectory = { path = "a/b", subdirectory = "c" }\n')
    (package,) = read_lock(path).packages
    assert (package.kind.value, package.url, package.editable, package.version) == ("directory", "a/b/c", False, "")
    path.write_text(head + '[[packages]]\nname = "x"\ndirectory = { path = "a", editable = "yes" }\n')
    with pytest.raises(InvalidLockfile) as info:
        read_lock(path)  # packaging.pylock says so first
    assert "packages[0].directory.editable" in info.value.message
    entry = {"name": "x", "directory": {"path": "a", "editable": "yes"}}
    with pytest.raises(InvalidLockfile) as info:
        Lock.from_dict({"lock-version": "1.0", "created-by": "t", "packages": [entry]})
    assert info.value.message == "packages[0].directory.editable should be true or false"


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_folder_whose_build_makes_another_project_installs_nothing_of_it(
    served: Served, venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installer: str,  # noqa: F811
    clean_pip: None, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:
    """Found by this stop's hostile-input hunt: a [packages.directory] entry locked as salpha whose folder builds
    the project otherpkg installed otherpkg, a distribution the lock does not name, and exited 0."""
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", installer)
    _project(tmp_path / "src", "otherpkg")
    lock = tmp_path / "pylock.toml"
    write_lock(lock, Lock(packages=(served.locked("late"),), index_url=served.index))
    lock.write_text(lock.read_text() + '\n[[packages]]\nname = "salpha"\ndirectory = { path = "src/otherpkg" }\n')

    assert main(["install", "--from", str(lock), "--python", str(venv), *TARGET, "-q"]) == 1

    assert "its build installed otherpkg, not salpha" in capsys.readouterr().err
    assert "otherpkg" not in pip_list(venv)
