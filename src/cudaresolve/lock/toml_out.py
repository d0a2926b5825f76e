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

__all__ = ["packages_toml", "tool_toml", "top_level_toml"]

_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")  # the whole key (``fullmatch``: ``$`` takes a final newline)
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


def tool_toml(tool: Mapping[str, Any]) -> str | None:
    """The ``[tool]`` table as ``tomlkit.dumps({"tool": tool})`` writes it, for a table of named tables
    (``[tool.cudaresolve]``) each holding scalars, arrays of tables of scalars and such tables again; None for any
    other shape (a table of tables only, whose header tomlkit leaves out; an empty table; a float)."""
    lines: list[str] = []
    for key, value in tool.items():
        body = _table(f"tool.{_key(key)}", value) if isinstance(value, Mapping) else None
        if body is None:
            return None
        lines += body
    return "\n".join(lines[1:]) + "\n" if lines else None


def _table(header: str, table: Mapping[str, Any]) -> list[str] | None:
    """An empty line, ``[header]``, the table's scalars, then its tables and arrays of tables in their order.

    As tomlkit lays it out: a key that follows a table is written with the keys before it, and an array of
    tables that is the table's first member has no empty line before its first ``[[...]]``."""
    scalars: list[str] = []
    later: list[str] = []
    for at, (key, value) in enumerate(table.items()):
        name = f"{header}.{_key(key)}"
        if isinstance(value, Mapping):
            body = _table(name, value)
        elif isinstance(value, list) and value and all(isinstance(row, Mapping) for row in value):
            body = []
            for row in value:
                rows = _lines(row, inline=False) if row else None
                if rows is None:
                    return None
                body += ["", f"[[{name}]]", *rows]
            if at == 0:
                body = body[1:]
        else:
            text = _value(value)
            if text is None:
                return None
            scalars.append(f"{_key(key)} = {text}")
            continue
        if body is None:
            return None
        later += body
    return ["", f"[{header}]", *scalars, *later] if scalars else None


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
    return key if _BARE_KEY.fullmatch(key) else _string(key)
