"""The ``[[packages]]`` part of a pylock.toml written directly, in the layout tomlkit gives it. Pure.

tomlkit builds a document of wrapped items and renders it, which for a 190-package lock took a quarter of a
second, more than the rest of writing the lock. The packages' shape is fixed (``model._package_to_dict``):
scalar keys, an array of ``[[packages.wheels]]`` tables whose ``hashes`` are inline, and ``[packages.sdist]``
or ``[packages.archive]`` tables likewise. ``packages_toml`` writes exactly that, character for character as
tomlkit does (basic strings with its escapes, ``Z`` datetimes, one-line arrays and inline tables;
``tests/test_toml_out.py`` compares the two), and returns None for any other shape, which the caller then
leaves to tomlkit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Final

__all__ = ["packages_toml", "top_level_toml"]

_BARE_KEY: Final = re.compile(r"^[A-Za-z0-9_-]+$")
_COMPACT: Final = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_ESCAPE: Final = re.compile(r'[\x00-\x1f\x7f"\\]')
_FILE_TABLES: Final = ("sdist", "archive")


def top_level_toml(keys: Mapping[str, Any], comments: tuple[str, ...]) -> str | None:
    """The comment lines and the top-level keys (no tables among them); None for a value tomlkit must write."""
    lines = [f"# {c}" for c in comments]
    body = _lines(keys, inline=False)
    return None if body is None else "\n".join([*lines, *body]) + "\n"


def packages_toml(packages: list[dict[str, Any]]) -> str | None:
    """The ``[[packages]]`` tables (each preceded by an empty line) for ``packages``; None when one holds a
    value this writer does not lay out as tomlkit would, and for none at all (tomlkit then writes ``packages = []``
    above the comments)."""
    if not packages:
        return None
    out: list[str] = []
    for entry in packages:
        lines = ["", "[[packages]]"]
        tables: list[str] = []
        for key, value in entry.items():
            if key == "wheels":
                continue
            if key in _FILE_TABLES and isinstance(value, Mapping):
                body = _lines(value, inline=True)
                if body is None:
                    return None
                tables += ["", f"[packages.{key}]", *body]
                continue
            text = _value(value)
            if text is None:
                return None
            lines.append(f"{_key(key)} = {text}")
        for wheel in entry.get("wheels", ()):
            body = _lines(wheel, inline=True) if isinstance(wheel, Mapping) else None
            if body is None:
                return None
            tables += ["", "[[packages.wheels]]", *body]
        out += lines + tables  # tomlkit puts a table's keys before its sub-tables, which keep their order
    return "\n".join(out) + "\n"


def _lines(table: Mapping[str, Any], *, inline: bool) -> list[str] | None:
    lines = []
    for key, value in table.items():
        text = _inline(value) if inline and isinstance(value, Mapping) else _value(value)
        if text is None:
            return None
        lines.append(f"{_key(key)} = {text}")
    return lines


def _inline(table: Mapping[str, Any]) -> str | None:
    parts = []
    for key, value in table.items():
        text = _value(value)
        if text is None:
            return None
        parts.append(f"{_key(key)} = {text}")
    return "{" + ", ".join(parts) + "}"


def _value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(_string(v) for v in value) + "]"
    return None  # floats, nested tables, arrays of tables: tomlkit's


def _string(text: str) -> str:
    return '"' + _ESCAPE.sub(lambda m: _COMPACT.get(m[0]) or f"\\u{ord(m[0]):04x}", text) + '"'


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)
