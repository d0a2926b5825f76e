"""Tables that fit the terminal (80 columns and up): paths folded at separators, names never cut. Output.

rich wraps a cell at spaces and, for a word longer than its column, cuts the word anywhere
(``overflow="fold"``) or drops its end (``"ellipsis"``). Names (packages, GPUs) must stay whole,
so their columns are ``no_wrap`` and sized to the longest name; paths are broken only after a
``/`` (``fold_path``), so each piece is a whole folder name.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = ["MIN_WIDTH", "fold_path", "print_fitted"]

#: The narrowest terminal the tables are laid out for.
MIN_WIDTH: Final = 80
_SEPARATORS: Final = frozenset({"/", os.sep})


def fold_path(path: str, width: int) -> str:
    """``path`` as lines of at most ``width`` characters, broken after a separator where possible
    (a single folder or file name longer than ``width`` is cut, which nothing else can avoid)."""
    width = max(width, 8)
    lines: list[str] = []
    rest = path
    while len(rest) > width:
        cut = max((i + 1 for i, ch in enumerate(rest[:width]) if ch in _SEPARATORS and i + 1 < len(rest)), default=0)
        if cut == 0:
            cut = width
        lines.append(rest[:cut])
        rest = rest[cut:]
    lines.append(rest)
    return "\n".join(lines)


def print_fitted(console: Console, renderable: RenderableType) -> None:
    """Print a table laid out by rich for the console's width, not left to the terminal to wrap."""
    console.print(renderable, soft_wrap=False)
