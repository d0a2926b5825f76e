"""TOML and JSON nested deeper than Python's parsers can follow (``core.decode``): a lock, a pyproject, a uv
settings file and an inventory, each a coded one-line error naming what was wrong, never a RecursionError."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from hostile.case import Case, Result

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_HEAD = 'lock-version = "1.0"\ncreated-by = "hostile"\n'


def _write(name: str, text: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / name).write_text(text, encoding="utf-8")
    return setup


def _coded(code: str, *words: str) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"error: {code}: "), first
        assert all(word in first for word in words), first
    return check


def _arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def _tables(depth: int) -> str:
    return "{a = " * depth + "1" + "}" * depth


_INSTALL = ["install", "--from", "{tmp}/pylock.toml", "--dry-run", "--python", sys.executable]
_LOCK = ["lock", "torch", "--cpu", "--python-version", "3.11", "--offline", "-o", "{tmp}/pylock.toml"]
CASES = [
    Case("nest-pylock-arrays-3000", _INSTALL, setup=_write("pylock.toml", f"{_HEAD}a = {_arrays(3000)}\n"),
         codes=(1,), check=_coded("invalid-lockfile", "nested deeper")),
    Case("nest-pylock-inline-tables-5000", _INSTALL, setup=_write("pylock.toml", f"{_HEAD}a = {_tables(5000)}\n"),
         codes=(1,), check=_coded("invalid-lockfile", "nested deeper")),
    Case("nest-pylock-in-packages", _INSTALL,
         setup=_write("pylock.toml", f'{_HEAD}[[packages]]\nname = "x"\nversion = "1"\nx = {_arrays(2000)}\n'),
         codes=(1,), check=_coded("invalid-lockfile", "nested deeper")),
    Case("nest-pyproject-tool-table", _LOCK,
         setup=_write("pyproject.toml", f"[tool.cudaresolve]\nx = {_arrays(4000)}\n"),
         codes=(1,), check=_coded("invalid-input", "nested deeper")),
    Case("nest-uv-config", _LOCK, setup=_write("uv.toml", f"index-url = {_arrays(4000)}\n"),
         env={"UV_CONFIG_FILE": "uv.toml", "UV_NO_CONFIG": ""}, codes=(1,),
         check=_coded("invalid-input", "uv.toml", "nested deeper")),
    Case("nest-plan-json-inventory", ["plan", "--from", "{tmp}/hosts.json"],
         setup=_write("hosts.json", _arrays(200_000)), codes=(1,), check=_coded("invalid-input")),
]
