"""The metadata an in-process install writes (``INSTALLER``, ``direct_url.json``, ``RECORD``) is kept once per
wheel in the unpacked cache's ``<sha256>.meta`` folder and linked into each environment: real wheels, real venvs,
read back by the venv's own ``importlib.metadata``."""

from __future__ import annotations

import base64
import csv
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudaresolve.install.environment import read_target
from cudaresolve.install.link import Scheme, install_tree
from cudaresolve.install.unpack import META, prune, unpacked
from wheelfiles import write_wheel


def _wheel(folder: Path, name: str, *, script: bool = False) -> tuple[Path, str]:
    """A wheel of ``name`` 1.0: a module, and a ``.data`` script when ``script``."""
    info = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": b"X = 1\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if script:
        files[f"{name}-1.0.data/scripts/{name}-tool"] = b"#!python\nprint('tool')\n"
    path = folder / f"{name}-1.0-py3-none-any.whl"
    return path, write_wheel(path, files, info)


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("venvs")


def _venv(root: Path, name: str) -> Scheme:
    folder = root / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    return Scheme(**dict(read_target(python, cache=root / f"probe-{name}").scheme), python=python)


def _install(tmp_path: Path, wheel: Path, sha: str, scheme: Scheme) -> Path:
    cache = tmp_path / "cache"
    meta = install_tree(unpacked(cache, sha, wheel), scheme, url=wheel.as_uri(), sha256=sha,
                        store=str(cache / f"{sha}{META}"))
    return Path(meta)


def _record_holds(meta: Path) -> None:
    """Every row of the installed RECORD names a file of that hash and size (RECORD itself excepted)."""
    root = meta.parent
    for row in csv.reader(meta.joinpath("RECORD").read_text().splitlines()):
        if row[0].endswith("/RECORD"):
            continue
        body = (root / row[0]).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        assert row[1:] == [f"sha256={digest}", str(len(body))], row


def test_a_second_environment_links_the_kept_metadata(venvs: Path, tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path, "plain")
    first = _install(tmp_path, wheel, sha, _venv(venvs, "a"))
    second_scheme = _venv(venvs, "b")
    second = _install(tmp_path, wheel, sha, second_scheme)
    store = tmp_path / "cache" / f"{sha}{META}"
    for name in ("INSTALLER", "direct_url.json", "RECORD"):
        assert os.stat(first / name).st_ino == os.stat(second / name).st_ino  # one file, linked twice
        assert os.stat(second / name).st_nlink == 3  # and the store's own name
    assert len(list(store.iterdir())) == 3
    _record_holds(second)
    shown = subprocess.run(
        [second_scheme.python, "-c", "import importlib.metadata as m; d = m.distribution('plain'); "
         "print(d.read_text('INSTALLER').strip(), len(d.files))"], capture_output=True, text=True)
    assert shown.stdout.split() == ["cudaresolve", "6"], shown.stderr


def test_a_record_naming_an_environments_own_script_is_its_own(venvs: Path, tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path, "tooled", script=True)
    first = _install(tmp_path, wheel, sha, _venv(venvs, "c"))
    second = _install(tmp_path, wheel, sha, _venv(venvs, "d"))
    assert os.stat(first / "INSTALLER").st_ino == os.stat(second / "INSTALLER").st_ino
    assert os.stat(first / "RECORD").st_ino != os.stat(second / "RECORD").st_ino  # the script's hash differs
    assert first.joinpath("RECORD").read_text() != second.joinpath("RECORD").read_text()
    _record_holds(first)
    _record_holds(second)


def test_a_kept_file_changed_in_place_is_made_again(venvs: Path, tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path, "edited")
    first = _install(tmp_path, wheel, sha, _venv(venvs, "e"))
    with open(first / "INSTALLER", "a") as edited:  # a tool appends to its copy, and so to the store's
        edited.write("someone-else\n")
    second = _install(tmp_path, wheel, sha, _venv(venvs, "f"))
    assert (second / "INSTALLER").read_text() == "cudaresolve\n"
    _record_holds(second)


def test_a_store_that_cannot_be_written_leaves_the_files_written(venvs: Path, tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path, "nostore")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"{sha}{META}").write_text("a file, not a folder")
    meta = _install(tmp_path, wheel, sha, _venv(venvs, "g"))
    assert (meta / "INSTALLER").read_text() == "cudaresolve\n" and os.stat(meta / "INSTALLER").st_nlink == 1
    _record_holds(meta)


def test_the_metadata_folder_is_pruned_with_its_wheel(venvs: Path, tmp_path: Path) -> None:
    kept_wheel, kept = _wheel(tmp_path, "kept")
    (tmp_path / "gone").mkdir()
    gone_wheel, gone = _wheel(tmp_path / "gone", "gone")
    scheme = _venv(venvs, "h")
    _install(tmp_path, kept_wheel, kept, scheme)
    _install(tmp_path, gone_wheel, gone, scheme)
    cache = tmp_path / "cache"
    prune(cache, {kept})
    assert (cache / kept).is_dir() and (cache / f"{kept}{META}").is_dir()
    assert not (cache / gone).exists() and not (cache / f"{gone}{META}").exists()


def test_a_kept_file_changed_in_place_to_the_same_size_is_made_again(venvs: Path, tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path, "samesize")
    first = _install(tmp_path, wheel, sha, _venv(venvs, "i"))
    record = first / "RECORD"
    body = record.read_bytes()
    with open(record, "r+b") as edited:  # an edit in place that keeps the size, through the shared inode
        edited.write(body.replace(b"samesize/__init__.py", b"samesize/__init__.pz"))
    second = _install(tmp_path, wheel, sha, _venv(venvs, "j"))
    assert (second / "RECORD").read_bytes() == body  # the store's copy was made again, not linked as it was
    _record_holds(second)


def test_kept_metadata_is_readable_by_all_whatever_the_first_installs_umask(venvs: Path, tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path, "umasked")
    old = os.umask(0o077)
    try:
        _install(tmp_path, wheel, sha, _venv(venvs, "k"))
    finally:
        os.umask(old)
    second = _install(tmp_path, wheel, sha, _venv(venvs, "l"))
    for name in ("INSTALLER", "direct_url.json", "RECORD", "METADATA"):
        assert (os.stat(second / name).st_mode & 0o777) == 0o644, name


@pytest.mark.parametrize("plant", ["folder", "entry"])
def test_a_link_planted_in_the_store_is_never_followed(venvs: Path, tmp_path: Path, plant: str) -> None:
    wheel, sha = _wheel(tmp_path, "planted")
    store = tmp_path / "cache" / f"{sha}{META}"
    outside = tmp_path / "outside"
    outside.mkdir()
    if plant == "folder":
        store.parent.mkdir(parents=True)
        store.symlink_to(outside)
    else:
        _install(tmp_path, wheel, sha, _venv(venvs, f"m-{plant}"))
        kept = next(p for p in store.iterdir() if p.read_bytes() == b"cudaresolve\n")
        (outside / "evil").write_bytes(b"cudaresolve\n")
        kept.unlink()
        kept.symlink_to(outside / "evil")
    meta = _install(tmp_path, wheel, sha, _venv(venvs, f"n-{plant}"))
    assert (meta / "INSTALLER").read_text() == "cudaresolve\n" and not (meta / "INSTALLER").is_symlink()
    if plant == "entry":
        assert os.stat(meta / "INSTALLER").st_ino != os.stat(outside / "evil").st_ino
    assert sorted(p.name for p in outside.iterdir()) == (["evil"] if plant == "entry" else [])  # nothing written there
    _record_holds(meta)
