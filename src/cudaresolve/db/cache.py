"""The parse cache of the shipped compat.toml: tomllib's result kept as JSON. Does I/O: files under the cache dir.

json reads the parsed data about ten times faster than tomllib reads the TOML, which keeps
start-up fast. An entry is named after the file's path, size and modification time, so an
edited or upgraded file is parsed anew without reading or hashing it first. The folder holds at
most ``KEEP`` entries: after each write the oldest others are removed. An unreadable or
unwritable cache is skipped: it is only an optimisation.
"""

from __future__ import annotations

import contextlib
import json
import zlib
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.files import write_text_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

__all__ = ["FORMAT", "KEEP", "SUBDIR", "cached_parse", "entry_name"]

FORMAT: Final = 1  # bump when the cached JSON's meaning changes
KEEP: Final = 3  # entries kept: the current file's, and a couple for other installs or checkouts
SUBDIR: Final = "compat"


def entry_name(path: Path) -> str:
    """The cache entry of ``path`` as it is now: ``<crc32 of the path>-<size>-<mtime_ns>-v<FORMAT>.json``."""
    stat = path.stat()
    return f"{zlib.crc32(str(path).encode()):08x}-{stat.st_size}-{stat.st_mtime_ns}-v{FORMAT}.json"


def cached_parse(path: Path, cache_dir: Path, parse: Callable[[str], Mapping[str, Any]]) -> Mapping[str, Any]:
    """``parse(path's text)``, read from the cache entry when there is one, else stored there."""
    entry = cache_dir / SUBDIR / entry_name(path)
    with contextlib.suppress(OSError, ValueError):
        cached = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(cached, dict):
            return cached
    data = parse(path.read_text(encoding="utf-8"))
    with contextlib.suppress(OSError):
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(entry, json.dumps(data))
        prune(entry.parent, keep=entry.name)
    return data


def prune(folder: Path, *, keep: str) -> None:
    """Remove all but the ``KEEP`` newest entries of ``folder``; ``keep`` (just written) always stays."""
    entries = [p for p in folder.glob("*.json") if p.name != keep]
    entries.sort(key=_mtime, reverse=True)
    for old in entries[KEEP - 1 :]:
        with contextlib.suppress(OSError):
            old.unlink()


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
