"""TOML and JSON decoded so that nesting deeper than Python can follow is the parser's own error. Pure.

``tomllib`` and ``json`` recurse once per level of ``[``/``{``: a file or page nested a few thousand deep
raises ``RecursionError``, which no caller expects (an internal error for the user). Every TOML and JSON
text read from a file, a page, a cache entry or a child process goes through ``loads_toml`` or
``loads_json`` (a project page's entries: ``index.json_page``, which raises the same), which turn it into
``TooDeep``: a ``tomllib.TOMLDecodeError`` or ``json.JSONDecodeError``
as well, so the caller's handling of a malformed text covers it. The bound is Python's recursion limit
(``sys.getrecursionlimit()``, 1,000 unless changed); no real lock, page or settings file comes near it.

A dotted key nests without recursing, but ``tomllib``'s work on one grows with the square of its parts (each
key checks every prefix of itself: a 40,000-part key, 80 KB, took 30 s, and a 16 MiB lock of such keys would
take days). A TOML key of more than ``MAX_KEY_PARTS`` parts is ``TooDeep`` too, found before ``tomllib`` reads
the text by a scan in linear time; no real file's key has more than a handful.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from typing import Any, Final

__all__ = ["MAX_KEY_PARTS", "TooDeep", "loads_json", "loads_toml", "nesting_limit"]

#: The most parts one dotted TOML key may have (``[tool.uv.sources]`` has three).
MAX_KEY_PARTS: Final = 100
# A key's part: bare, or a quoted string, which runs to the line's end when not closed (so that no position is
# scanned twice: linear).
_PART: Final = r"""[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?"""
# A dotted run of parts, at most one more than the bound (a longer run is found as soon as that many are).
_DOTTED: Final = re.compile(rf"(?:{_PART})(?:[ \t]*\.[ \t]*(?:{_PART})){{0,{MAX_KEY_PARTS}}}")
_PARTS: Final = re.compile(_PART)


def nesting_limit() -> int:
    """About how deep a text may nest before it is ``TooDeep``: Python's recursion limit."""
    return sys.getrecursionlimit()


class TooDeep(ValueError):
    """A TOML or JSON text nested deeper than ``nesting_limit()`` levels, or (``parts``) a TOML key of more than
    ``MAX_KEY_PARTS`` parts."""

    def __init__(self, kind: str, parts: int = 0) -> None:
        said = (f"{kind} key of more than {MAX_KEY_PARTS:,} dotted parts" if parts
                else f"{kind} nested deeper than {nesting_limit():,} levels")
        ValueError.__init__(self, said)


class _JsonTooDeep(TooDeep, json.JSONDecodeError):
    def __init__(self, kind: str, doc: str) -> None:
        TooDeep.__init__(self, kind)
        self.msg, self.doc, self.pos, self.lineno, self.colno = str(self), doc, 0, 1, 1


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; nesting Python cannot follow raises ``TooDeep`` (a ``TOMLDecodeError``)."""
    import tomllib  # here: a run that reads no TOML (or only texts ``core.tomlcache`` kept) loads no parser

    if (parts := _longest_key(text)) > MAX_KEY_PARTS:
        raise _toml_too_deep()("TOML", parts)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise _toml_too_deep()("TOML") from None


def _longest_key(text: str) -> int:
    """More than ``MAX_KEY_PARTS`` when ``text`` has a dotted run of key-like words of more parts (a key, or a run
    inside a string or comment, which no real file has), else 0. Linear in ``text``."""
    if text.count(".") < MAX_KEY_PARTS:
        return 0
    from itertools import islice

    for line in text.split("\n"):  # a key is on one line, and one of more parts has that many dots
        if line.count(".") < MAX_KEY_PARTS or max(map(len, _DOTTED.findall(line)), default=0) <= 2 * MAX_KEY_PARTS:
            continue  # no run long enough to hold that many parts (the common case, found without a Python loop)
        for run in _DOTTED.finditer(line):
            if run.end() - run.start() > 2 * MAX_KEY_PARTS:
                parts = sum(1 for _ in islice(_PARTS.finditer(line, run.start(), run.end()), MAX_KEY_PARTS + 1))
                if parts > MAX_KEY_PARTS:
                    return parts
    return 0


@cache
def _toml_too_deep() -> type[TooDeep]:
    """The ``TooDeep`` that is a ``tomllib.TOMLDecodeError`` too (made once ``tomllib`` is loaded)."""
    import tomllib

    class _TomlTooDeep(TooDeep, tomllib.TOMLDecodeError):
        pass

    return _TomlTooDeep


def loads_json(text: str | bytes) -> Any:
    """``json.loads(text)``; nesting Python cannot follow raises ``TooDeep`` (a ``JSONDecodeError``)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise _JsonTooDeep("JSON", "") from None
