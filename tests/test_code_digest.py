"""The code's digest in a lock's stamp (``core.code_digest``): by content, kept in the cache only while every
file's size and time are as they were, and never taken from a damaged kept file."""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING

from cudaresolve.core.code_digest import code_digest
from cudaresolve.core.files import write_sealed

if TYPE_CHECKING:
    from pathlib import Path


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "code-v1").glob("*.json"))


def _tree(root: Path) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "data").mkdir()
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "a.py").write_text("A = 1\n")
    (root / "pkg" / "sub" / "b.toml").write_text("b = 2\n")
    (root / "pkg" / "data" / "compat.toml").write_text("left out\n")
    (root / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"left out")
    (root / "pkg" / "notes.txt").write_text("left out\n")


def _by_hand(root: Path) -> str:
    digest = hashlib.sha256()
    for relative in ("a.py", os.path.join("sub", "b.toml")):
        digest.update(f"{relative}\0".encode())
        digest.update((root / relative).read_bytes())
    return digest.hexdigest()


def test_the_digest_is_of_the_code_files_by_path_and_content(tmp_path: Path) -> None:
    _tree(tmp_path)
    root = str(tmp_path / "pkg")
    assert code_digest(None, root) == code_digest(tmp_path / "cache", root) == _by_hand(tmp_path / "pkg")
    (tmp_path / "pkg" / "data" / "compat.toml").write_text("changed\n")
    (tmp_path / "pkg" / "notes.txt").write_text("changed\n")
    assert code_digest(tmp_path / "cache", root) == _by_hand(tmp_path / "pkg")


def test_a_kept_digest_is_used_only_while_no_file_changed(tmp_path: Path) -> None:
    _tree(tmp_path)
    root, cache = str(tmp_path / "pkg"), tmp_path / "cache"
    first = code_digest(cache, root)
    [kept] = _kept(cache)
    kept.write_text(kept.read_text().replace(first, "0" * 64))  # edited: its seal no longer matches
    assert code_digest(cache, root) == first
    source = tmp_path / "pkg" / "a.py"
    stat = source.stat()
    source.write_text("A = 2\n")  # the same size and time: the kept digest would stand, so the time moves
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert code_digest(cache, root) == _by_hand(tmp_path / "pkg") != first
    assert len(_kept(cache)) == 2


def test_the_folder_keeps_the_newest_few(tmp_path: Path) -> None:
    _tree(tmp_path)
    root, cache = str(tmp_path / "pkg"), tmp_path / "cache"
    source = tmp_path / "pkg" / "a.py"
    for n in range(12):
        source.write_text(f"A = {n:02d}\n")
        os.utime(source, ns=(10**18 + n, 10**18 + n))
        code_digest(cache, root)
    assert len(_kept(cache)) == 8


def test_the_kept_digest_is_what_is_read_back(tmp_path: Path) -> None:
    _tree(tmp_path)
    root, cache = str(tmp_path / "pkg"), tmp_path / "cache"
    code_digest(cache, root)
    [kept] = _kept(cache)
    write_sealed(kept, json.dumps("f" * 64))  # a digest no hashing gives: returned only when read back
    assert code_digest(cache, root) == "f" * 64
    kept.chmod(0o622)  # writable by others: not trusted
    assert code_digest(cache, root) == _by_hand(tmp_path / "pkg")


def test_two_installs_alike_in_size_and_time_are_told_apart(tmp_path: Path) -> None:
    for name, text in (("one", "X = 1 < 2\n"), ("two", "X = 1 > 2\n")):
        (tmp_path / name / "pkg").mkdir(parents=True)
        (tmp_path / name / "pkg" / "a.py").write_text(text)
        os.utime(tmp_path / name / "pkg" / "a.py", ns=(10**9, 10**9))
    cache = tmp_path / "cache"
    one, two = (code_digest(cache, str(tmp_path / n / "pkg")) for n in ("one", "two"))
    assert one == _by_hand_files(tmp_path / "one" / "pkg", ["a.py"]) != two == _by_hand_files(
        tmp_path / "two" / "pkg", ["a.py"]
    )


def _by_hand_files(root: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for relative in names:
        digest.update(f"{relative}\0".encode())
        digest.update((root / relative).read_bytes())
    return digest.hexdigest()
