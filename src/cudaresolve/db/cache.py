"""The cache of the shipped database, built: the ``CompatDB`` pickled. Does I/O: files under the cache dir.

Reading the TOML and typing some 1,100 build rows costs about 60 ms on every run; unpickling the
built value costs about 10. An entry is named after the file's path, size and modification time
and after the code that built it (``code_key``: the size and modification time of every module
whose classes the value holds, the versions of Python and packaging), so an edited file or an
upgraded or edited cudaresolve builds anew without reading or hashing anything first.

A pickle runs code when loaded, so an entry is loaded only when it is what this user wrote: a
regular file owned by the user, in a folder owned by the user, neither writable by anyone else,
and no larger than ``MAX_ENTRY_BYTES``; and the loaded value must be of the expected type. Anything
else (another user's file, a damaged or foreign entry, an unreadable or unwritable cache) means
the database is built from the TOML: the cache is only an optimisation.

An entry is the pickle after one line, its SHA-256 (``core.files.seal``), written atomically but not synced to disk,
as the page cache's entries are: a first run's sync waited for the disk to commit whatever else was pending
(a cache folder just removed: up to 0.4 s, before the run's first request), and an entry a crash cut short or
left empty fails its seal and is built again. The folder holds at most ``KEEP`` entries: after each write the
oldest others are removed, but only names ``ENTRY_NAMES`` matches, and only in a folder this tool made
(``core.files.keep_newest``): ``--cache-dir .`` in a folder of the user's, or a ``compat-v2`` that is a link to
one, loses nothing. A folder that existed is never chmod-ed.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import zlib
from typing import TYPE_CHECKING, Final, TypeVar

from cudaresolve.core.files import keep_newest, make_cache_dir, private_entry, seal, unseal, write_private_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

__all__ = [
    "ENTRY_NAMES", "FORMAT", "KEEP", "MAX_ENTRY_BYTES", "SUBDIR", "cached_build", "code_key", "entry_name",
    "store_entry",
]  # fmt: skip

FORMAT: Final = 3  # bump when the entry's meaning changes (1 was tomllib's result as JSON; 2 was not sealed)
KEEP: Final = 3  # entries kept: the current file's, and a couple for other installs or checkouts
SUBDIR: Final = "compat-v2"  # "compat" was made without ``make_cache_dir``'s mark: it is left alone
#: Every name ``entry_name`` gives, and nothing else: the only files the folder's bound removes.
ENTRY_NAMES: Final = re.compile(r"[0-9a-f]{8}-[0-9]+-[0-9]+-[0-9a-z]+-v[0-9]+\.pickle")
MAX_ENTRY_BYTES: Final = 64 * 1024 * 1024  # the shipped database pickles to about 0.3 MB

T = TypeVar("T")


def code_key(folders: Iterable[Path]) -> str:
    """A short digest of the code a cached value depends on: every ``.py`` file's name, size and
    modification time in ``folders``, and the versions of Python and packaging."""
    import packaging

    parts = [sys.version, packaging.__version__]
    for folder in folders:
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    st = entry.stat()
                    parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    return f"{zlib.crc32(chr(0).join(parts).encode()):08x}"


def entry_name(path: Path, code: str) -> str:
    """The cache entry of ``path`` as it is now: ``<crc32 of the path>-<size>-<mtime_ns>-<code>-v<FORMAT>.pickle``."""
    st = path.stat()
    return f"{zlib.crc32(str(path).encode()):08x}-{st.st_size}-{st.st_mtime_ns}-{code}-v{FORMAT}.pickle"


def cached_build(
    path: Path, cache_dir: Path, build: Callable[[], T], *, expect: type[T], code: str, store: bool = True
) -> T:
    """``build()`` (the value made from ``path``), loaded from the cache entry when a safe one exists,
    else built and (``store``) stored there."""
    import pickle

    entry = cache_dir / SUBDIR / entry_name(path, code)
    if _safe_to_load(entry):
        with contextlib.suppress(Exception):  # a damaged or foreign entry is rebuilt, whatever it raises
            data = unseal(entry.read_bytes())
            value = pickle.loads(data) if data is not None else None
            if isinstance(value, expect):
                return value
    value = build()
    if store:
        store_entry(path, cache_dir, value, code=code)
    return value


def store_entry(path: Path, cache_dir: Path, value: object, *, code: str) -> None:
    """Store ``value`` as the cache entry of ``path`` (over the one there); a failure leaves the cache as it was."""
    import pickle

    entry = cache_dir / SUBDIR / entry_name(path, code)
    with contextlib.suppress(OSError, pickle.PicklingError, TypeError, AttributeError):
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        make_cache_dir(entry.parent)  # 0700 when made here; one that existed keeps its mode
        write_private_atomic(entry, seal(data))  # atomic, 0600, not synced (module docstring)
        keep_newest(entry.parent, KEEP, ENTRY_NAMES, spare=entry.name)


def _safe_to_load(entry: Path) -> bool:
    """Whether ``entry`` is a regular file of bounded size that only this user could have written."""
    return private_entry(entry, MAX_ENTRY_BYTES)
