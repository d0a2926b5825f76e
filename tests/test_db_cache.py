"""The parse cache of the shipped database (db/cache.py): in the cache dir only, bounded, old entries removed."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cudaresolve.db import cache
from cudaresolve.db.database import load_compat, shipped_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _parse_counting(calls: list[str]) -> Callable[[str], dict[str, object]]:
    def parse(text: str) -> dict[str, object]:
        calls.append(text)
        return {"text": text}

    return parse


def test_entry_is_written_once_then_read(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    calls: list[str] = []
    first = cache.cached_parse(source, tmp_path / "c", _parse_counting(calls))
    second = cache.cached_parse(source, tmp_path / "c", _parse_counting(calls))
    assert first == second == {"text": "a = 1\n"}
    assert calls == ["a = 1\n"]  # the second read came from the entry
    assert [p.name for p in (tmp_path / "c" / cache.SUBDIR).iterdir()] == [cache.entry_name(source)]


def test_an_edited_file_is_parsed_anew(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    calls: list[str] = []
    cache.cached_parse(source, tmp_path, _parse_counting(calls))
    source.write_text("a = 22\n")
    assert cache.cached_parse(source, tmp_path, _parse_counting(calls)) == {"text": "a = 22\n"}
    assert calls == ["a = 1\n", "a = 22\n"]


def test_the_folder_keeps_only_the_newest_entries(tmp_path: Path) -> None:
    folder = tmp_path / cache.SUBDIR
    folder.mkdir()
    for age in range(6):  # six stale entries, the oldest first
        stale = folder / f"stale{age}.json"
        stale.write_text("{}")
        os.utime(stale, ns=(1_000_000_000 * age, 1_000_000_000 * age))
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    cache.cached_parse(source, tmp_path, _parse_counting([]))
    kept = sorted(p.name for p in folder.iterdir())
    assert len(kept) == cache.KEEP
    assert kept == sorted([cache.entry_name(source), "stale5.json", "stale4.json"])


def test_an_unreadable_entry_is_parsed_and_replaced(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    entry = tmp_path / cache.SUBDIR / cache.entry_name(source)
    entry.parent.mkdir()
    entry.write_text("{not json")
    calls: list[str] = []
    assert cache.cached_parse(source, tmp_path, _parse_counting(calls)) == {"text": "a = 1\n"}
    assert calls == ["a = 1\n"] and entry.read_text() == '{"text": "a = 1\\n"}'


def test_an_unwritable_cache_is_skipped(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    assert cache.cached_parse(source, blocked, _parse_counting([])) == {"text": "a = 1\n"}


def test_loading_the_shipped_file_writes_only_under_the_cache_dir(tmp_path: Path) -> None:
    before = {p.name for p in shipped_path().parent.iterdir()}
    load_compat(cache_dir=tmp_path / "cache")
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()] == [
        f"cache/{cache.SUBDIR}/{cache.entry_name(shipped_path())}"
    ]
    assert {p.name for p in shipped_path().parent.iterdir()} == before
