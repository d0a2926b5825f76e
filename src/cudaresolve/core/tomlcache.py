"""TOML texts read before, kept parsed. Does I/O: reads and writes the user cache.

A lock or project file is read on every install; parsing it again, and loading a TOML parser to do so, cost a
warm install more than the rest of reading the lock. ``load_toml(text)`` is ``decode.loads_toml(text)``, but the
value of a text parsed before is read back from ``<cache>/toml-v1/<sha256 of the text>`` (JSON: ``json`` is
in C and loaded anyway), so the same text is parsed once. TOML's dates and times are kept as one-key objects
(``{"\\u0000datetime": "2025-01-01T00:00:00+00:00"}``) and read back as the same values. An entry that does not
read as a table is parsed again; a text that does not parse is never kept (its error is raised each time), nor
one with a URL that may carry a secret (a user or password before ``@``, a query after ``?``: a mirror's token
never reaches the cache). The folder keeps the newest ``KEEP`` entries. Without a user cache every text is parsed.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.decode import loads_json, loads_toml
from cudaresolve.core.digest import sha256_hex

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FOLDER", "KEEP", "load_toml"]

#: The folder under the user cache.
FOLDER: Final = "toml-v1"
#: Entries kept (the newest): a few projects and locks.
KEEP: Final = 64
_NAMES: Final = re.compile(r"[0-9a-f]{64}")
_SECRET_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'#]*[@?]")
_TIMES: Final[dict[str, type[datetime] | type[date] | type[time]]] = {
    "\x00datetime": datetime, "\x00date": date, "\x00time": time,
}


def load_toml(text: str) -> dict[str, Any]:
    """The table ``text`` holds (module docstring); a TOML error as ``decode.loads_toml`` raises it."""
    entry = _entry(text)
    if entry is not None:
        try:
            kept = loads_json(entry.read_bytes().decode("utf-8"))
            if isinstance(kept, dict):
                return _thawed(kept)  # type: ignore[no-any-return]
        except (OSError, ValueError, RecursionError):  # none yet, or damaged: parsed again
            pass
    data = loads_toml(text)
    if entry is not None and _SECRET_URL.search(text) is None:
        _keep(entry, data)
    return data


def _entry(text: str) -> Path | None:
    from cudaresolve.core.paths import default_cache_dir

    try:
        return default_cache_dir() / FOLDER / sha256_hex(text.encode("utf-8", "surrogatepass"))
    except (OSError, RuntimeError, KeyError):  # no user cache to be found
        return None


def _keep(entry: Path, data: dict[str, Any]) -> None:
    from cudaresolve.core.files import keep_newest, make_cache_dir, write_private_atomic

    try:
        body = json.dumps(_frozen(data), ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError):  # a value JSON cannot hold: not kept
        return
    try:
        make_cache_dir(entry.parent)
        write_private_atomic(entry, body)
        keep_newest(entry.parent, KEEP, _NAMES, spare=entry.name)
    except OSError:  # only an optimisation
        return


def _frozen(value: Any) -> Any:
    """``value`` with its dates and times as one-key tables (``_TIMES``)."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in _TIMES:  # a table that would read back as a time: not kept
            raise ValueError("a key of the tags' form")
        return {key: _frozen(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_frozen(item) for item in value]
    for tag, kind in _TIMES.items():  # datetime before date: a datetime is a date too
        if isinstance(value, kind):
            return {tag: value.isoformat()}
    return value


def _thawed(value: Any) -> Any:
    """``_frozen`` undone; a tag that does not read is a ``ValueError`` (the entry is not used)."""
    if isinstance(value, dict):
        if len(value) == 1:
            tag, text = next(iter(value.items()))
            kind = _TIMES.get(tag)
            if kind is not None and isinstance(text, str):
                return kind.fromisoformat(text)
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_thawed(item) for item in value]
    return value
