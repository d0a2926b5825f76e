"""TOML and JSON decoded so that nesting deeper than Python can follow is the parser's own error. Pure.

``tomllib`` and ``json`` recurse once per level of ``[``/``{``: a file or page nested a few thousand deep
raises ``RecursionError``, which no caller expects (an internal error for the user). Every TOML and JSON
text read from a file, a page, a cache entry or a child process goes through ``loads_toml`` or
``loads_json`` (a project page's entries: ``index.json_page``, which raises the same), which turn it into
``TooDeep``: a ``tomllib.TOMLDecodeError`` or ``json.JSONDecodeError``
as well, so the caller's handling of a malformed text covers it. The bound is Python's recursion limit
(``sys.getrecursionlimit()``, 1,000 unless changed); no real lock, page or settings file comes near it.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import Any

__all__ = ["TooDeep", "loads_json", "loads_toml", "nesting_limit"]


def nesting_limit() -> int:
    """About how deep a text may nest before it is ``TooDeep``: Python's recursion limit."""
    return sys.getrecursionlimit()


class TooDeep(ValueError):
    """A TOML or JSON text nested deeper than ``nesting_limit()`` levels."""

    def __init__(self, kind: str) -> None:
        ValueError.__init__(self, f"{kind} nested deeper than {nesting_limit():,} levels")


class _JsonTooDeep(TooDeep, json.JSONDecodeError):
    def __init__(self, kind: str, doc: str) -> None:
        TooDeep.__init__(self, kind)
        self.msg, self.doc, self.pos, self.lineno, self.colno = str(self), doc, 0, 1, 1


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; nesting Python cannot follow raises ``TooDeep`` (a ``TOMLDecodeError``)."""
    import tomllib  # here: a run that reads no TOML (or only texts ``core.tomlcache`` kept) loads no parser

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise _toml_too_deep()("TOML") from None


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
