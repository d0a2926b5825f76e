"""A wheel kept unpacked in the user cache and damaged since (a file or a link in its folder's place, its
``.dist-info`` gone): the next install unpacks the verified wheel again, never installs what the damaged entry
holds, and never blames the lock. Real venvs, a lock made from an index on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex

from cudaresolve.cli import main
from cudaresolve.install.unpack import UNPACKED, forget, is_kept

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The unpacked cache's folder of the one wheel of a CPU lock installed into a first venv."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    index = LocalIndex(tmp_path / "index")
    index.add("pypi", "tinypkg", "1.0")
    with index.serve() as base:
        assert main(["lock", "tinypkg", "--cpu", "-i", f"{base}/pypi/simple", "-o", "pylock.toml", "-q"]) == 0
        assert _install(tmp_path, "first") == 0
        [kept] = [p for p in (tmp_path / "cache" / UNPACKED).iterdir() if len(p.name) == 64]  # its sha256
        yield kept


def _install(root: Path, name: str) -> int:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / name)], check=True)
    return main(["install", "--from", "pylock.toml", "--python", str(root / name / "bin" / "python"), "-q"])


def _installed(root: Path, name: str) -> set[str]:
    [site] = (root / name / "lib").glob("python*/site-packages")
    return {p.name for p in site.iterdir()}


@pytest.mark.parametrize("damage", ["a-file", "a-link", "no-dist-info"])
def test_a_damaged_unpacked_wheel_is_unpacked_again(
    locked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "planted").mkdir(parents=True)
    if damage == "a-file":
        shutil.rmtree(locked)
        locked.write_text("not a folder")
    elif damage == "a-link":  # a folder of other files, which the verified wheel never held
        shutil.rmtree(locked)
        locked.symlink_to(elsewhere)
    else:
        for info in locked.glob("*.dist-info"):
            shutil.rmtree(info)
    capsys.readouterr()
    assert _install(tmp_path, "second") == 0, capsys.readouterr().err
    assert {"tinypkg", "tinypkg-1.0.dist-info"} <= _installed(tmp_path, "second")
    assert "planted" not in _installed(tmp_path, "second")
    assert locked.is_dir() and not locked.is_symlink() and (elsewhere / "planted").is_dir()


def test_forget_removes_a_link_not_what_it_points_at(tmp_path: Path) -> None:
    target = tmp_path / "target"
    (target / "kept").mkdir(parents=True)
    (tmp_path / "root").mkdir()
    os.symlink(target, tmp_path / "root" / "abc")
    assert not is_kept(tmp_path / "root", "abc")  # and the link is gone
    assert not (tmp_path / "root" / "abc").exists() and (target / "kept").is_dir()
    os.symlink(target, tmp_path / "root" / "abc")
    forget(tmp_path / "root", "abc")
    assert not os.path.lexists(tmp_path / "root" / "abc") and (target / "kept").is_dir()
