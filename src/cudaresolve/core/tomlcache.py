"""TOML texts read before, kept parsed. Does I/O: reads and writes the user cache.

A lock or project file is read on every install; parsing it again, and loading a TOML parser to do so, cost a
warm install more than the rest of reading the lock. ``load_toml(text)`` is ``decode.loads_toml(text)``, but the
value of a text parsed before is read back from ``<cache>/toml-v2/<sha256 of the text>`` (JSON: ``json`` is
in C and loaded anyway), so the same text is parsed once. TOML's dates and times are kept as one-key objects
(``{"\\u0000datetime": "2025-01-01T00:00:00+00:00"}``) and read back as the same values.

An entry is used only when it is a regular file of at most ``MAX_ENTRY_BYTES`` that only this user could have
written (``files.private_entry``) and names the sha256 of the text it was made from; anything else (damaged,
planted, a link, a FIFO) is parsed again. Never kept: a text that does not parse (its error is raised each
time), a value over ``MAX_ENTRY_BYTES`` as JSON, a table shaped like a tag, and a value holding a URL that may
carry a secret (a user or password before ``@``, or a query after ``?``, in any string or key as parsed, escapes
resolved: a mirror's token never reaches the cache). The folder keeps the newest ``KEEP`` entries. Without a
user cache every text is parsed.
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

__all__ = ["FOLDER", "KEEP", "MAX_ENTRY_BYTES", "load_toml"]

#: The folder under the user cache.
FOLDER: Final = "toml-v2"
#: Entries kept (the newest): a few projects and locks.
KEEP: Final = 64
#: A value larger than this as JSON is not kept (a lock of thousands of packages): the folder stays bounded.
MAX_ENTRY_BYTES: Final = 2 * 1024 * 1024
_NAMES: Final = re.compile(r"[0-9a-f]{64}")
_TIMES: Final[dict[str, type[datetime] | type[date] | type[time]]] = {
    "\x00datetime": datetime, "\x00date": date, "\x00time": time,
}


def load_toml(text: str) -> dict[str, Any]:
    """The table ``text`` holds (module docstring); a TOML error as ``decode.loads_toml`` raises it."""
    entry = _entry(text)
    if entry is not None:
        found = _kept(*entry)
        if found is not None:
            return found
    data = loads_toml(text)
    if entry is not None and not _may_hold_secret(data):
        _keep(*entry, data)
    return data


def _entry(text: str) -> tuple[Path, str] | None:
    from cudaresolve.core.paths import default_cache_dir

    digest = sha256_hex(text.encode("utf-8", "surrogatepass"))
    try:
        return default_cache_dir() / FOLDER / digest, digest
    except (OSError, RuntimeError, KeyError):  # no user cache to be found
        return None


def _kept(path: Path, digest: str) -> dict[str, Any] | None:
    """The value kept at ``path`` for the text of sha256 ``digest``; None when there is none to trust."""
    from cudaresolve.core.files import private_entry, read_regular_bounded

    if not private_entry(path, MAX_ENTRY_BYTES):
        return None
    try:
        kept = loads_json(read_regular_bounded(path, MAX_ENTRY_BYTES).decode("utf-8"))
        if isinstance(kept, dict) and kept.get("sha256") == digest and isinstance(kept.get("value"), dict):
            return _thawed(kept["value"])  # type: ignore[no-any-return]
    except (OSError, ValueError, RecursionError):  # damaged, or gone meanwhile: parsed again
        pass
    return None


def _keep(path: Path, digest: str, data: dict[str, Any]) -> None:
    from cudaresolve.core.files import store_bounded

    try:
        entry = {"sha256": digest, "value": _frozen(data)}
        body = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError):  # a value JSON cannot hold: not kept
        return
    if len(body) > MAX_ENTRY_BYTES:
        return
    store_bounded(path, body, keep=KEEP, names=_NAMES)


def _may_hold_secret(value: Any) -> bool:
    """Whether a string (or key) of ``value`` has a URL with ``@`` or ``?`` after its ``://``. Linear in the
    value's size; iterative, so no nesting depth can overflow it."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            at = item.find("://")
            if at >= 0 and ("@" in item[at:] or "?" in item[at:]):
                return True
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return False


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
