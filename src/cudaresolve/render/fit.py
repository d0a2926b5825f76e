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
    from collections.abc import Callable, Iterable, Sequence

    from rich.console import Console, RenderableType

__all__ = ["MIN_WIDTH", "fold_path", "plain_table", "print_fitted"]

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


def plain_table(headers: Sequence[str], rows: Iterable[Sequence[str]], width: int) -> list[str] | None:
    """The lines rich lays out for ``Table(box=None, pad_edge=False)`` with every column ``no_wrap``, its cells
    ``rich.text.Text`` (no markup): each column as wide as its widest line (a cell may hold several, each its own
    line of the row), two spaces between columns, every line padded to the table's width. None when the table is
    wider than ``width`` (rich then shrinks columns), a cell holds a character that is not printable or takes no
    column (a tab, a control, a zero-width or combining character, which rich crops or measures its own way), or
    a cell of several lines has an empty one: such a table is laid out by rich. For a long table this is a
    hundred times faster than rich (80 ms for a 191-package lock) and, without colour, the same text (with
    colour, the header is one bold run where rich makes one per cell)."""
    cells = [[cell.split("\n") for cell in row] for row in rows]
    every = (*headers, *(line for row in cells for lines in row for line in lines))
    if not all(_plain(line) for line in every):
        return None
    cell_len: Callable[[str], int] = len  # a printable ASCII character takes one column
    if not all(line.isascii() for line in every):
        from rich.cells import cell_len as rich_cell_len

        cell_len = rich_cell_len
    if any(len(lines) > 1 and "" in lines for row in cells for lines in row):  # rich drops some empty lines
        return None
    widths = [cell_len(h) for h in headers]
    for row in cells:
        for column, lines in enumerate(row):
            widths[column] = max(widths[column], *(cell_len(line) for line in lines))
    if sum(widths) + 2 * (len(widths) - 1) > width:
        return None

    def line(parts: Sequence[str]) -> str:
        return "  ".join(part + " " * (w - cell_len(part)) for part, w in zip(parts, widths, strict=True))

    out = [line(headers)]
    for row in cells:
        for i in range(max(len(lines) for lines in row)):
            out.append(line([lines[i] if i < len(lines) else "" for lines in row]))
    return out


def _plain(text: str) -> bool:
    """Whether every character of ``text`` is printable and takes one column or more."""
    if text.isascii():
        return text.isprintable()
    from rich.cells import get_character_cell_size

    return text.isprintable() and all(get_character_cell_size(ch) > 0 for ch in text)
