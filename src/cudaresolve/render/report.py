"""What a lock or an install says of its answer, as values: printed by rich, or as plain text. Output.

``solution_items`` and ``lock_items`` decide what is said (the variant line, the package table, each warning, what
moved, where the lock went); ``print_items`` prints that on a rich console. Where the console would be no terminal
and have no colour (a pipe, a file, a CI log), what rich prints is the text itself: markup escaped and read back,
no style written, no line wrapped or cut (the console soft-wraps), a newline after each print. ``plain_lines``
gives that text and ``report_lock`` writes it without loading rich, which cost a lock about 15 ms, a sixth of a
repeated lock kept as it is. A line rich would change (a tab, a control character, anything not printable, a
backslash, which its markup escape may double), a table it lays out its own way (``fit.plain_table``), a console
rich would size otherwise (Windows, Jupyter, a ``COLUMNS`` of 0): the report goes to rich, as before.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rich.console import Console

    from cudaresolve.resolve.model import Solution

__all__ = [
    "Table", "Warned", "lock_items", "plain_lines", "plain_width", "print_items", "report_lock", "solution_items",
    "warning_items",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Warned:
    """One ``warning: <code>: <message>`` line (the word ``warning`` in yellow)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Table:
    """The package table: its headers, and a row per package (a folded index URL spans lines of its cell)."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


Item = str | Warned | Table  # a ``str``: one print of that text, as it is


def warning_items(solution: Solution, lang: str) -> list[Item]:
    from cudaresolve.text.catalogue import format_text

    return [Warned(w.code, format_text(w.text, lang)) for w in solution.warnings]


def solution_items(solution: Solution, width: int, lang: str) -> list[Item]:
    """The variant line (when a package comes from the variant's index: a set with no GPU build has none), the
    package table for a console ``width`` wide (names and versions whole, an index URL broken only after a '/'),
    then every warning."""
    from cudaresolve.render.fit import fold_path
    from cudaresolve.text.catalogue import format_text
    from cudaresolve.text.model import Text
    from cudaresolve.text.redact import redact_text

    variant = Text.of("render.solution.variant", variant=solution.variant, index=solution.index_url)
    keys = ("render.solution.package", "render.solution.version", "render.solution.index")
    names = max((len(p.name) for p in solution.packages), default=0)
    versions = max((len(p.version) for p in solution.packages), default=0)
    room = max(20, width - max(names, 7) - max(versions, 7) - 4)
    rows = []
    for p in solution.packages:
        where = p.url if not p.index and p.url else p.index  # a direct reference: its URL, from no index
        rows.append((p.name, p.version, fold_path(redact_text(where), room)))
    table = Table(tuple(format_text(Text(key), lang) for key in keys), tuple(rows))
    # a set none of whose packages comes from the variant's index holds no GPU build: no variant to speak of
    base = solution.index_url.rstrip("/")
    said = [] if solution.packages and all(p.index.rstrip("/") != base for p in solution.packages) else [variant]
    return [*(format_text(v, lang) for v in said), table, *warning_items(solution, lang)]


def lock_items(result: object, width: int, lang: str) -> list[Item]:
    """What ``lock`` says when it is done: the solution, then whether the lock there stood, what moved and where
    it was written (under ``-q`` the warnings alone)."""
    from cudaresolve.render.output import current
    from cudaresolve.text.catalogue import format_text
    from cudaresolve.text.model import Text

    solution = result.solution  # type: ignore[attr-defined]
    if not current().shows_info:
        return warning_items(solution, lang)
    items = solution_items(solution, width, lang)
    path = result.path  # type: ignore[attr-defined]
    if path is None or path == "-":  # nothing written (its warning says why), or the lock went to stdout
        return items
    if result.unchanged:  # type: ignore[attr-defined]
        same = Text.of("render.lock.unchanged", path=str(path), count=len(solution.packages))
        return [*items, format_text(same, lang)]
    for change in result.changes:  # type: ignore[attr-defined]
        moved, added = "render.lock.moved", "render.lock.added"
        key = moved if change.old and change.new else added if change.new else "render.lock.removed"
        items.append(format_text(Text.of(key, name=change.name, old=change.old, new=change.new), lang))
    wrote = Text.of("render.lock.wrote", path=str(path), format=result.format)  # type: ignore[attr-defined]
    return [*items, format_text(wrote, lang)]


def print_items(items: Sequence[Item], console: Console) -> None:
    from rich.markup import escape

    for item in items:
        if isinstance(item, Table):
            _print_table(item, console)
        elif isinstance(item, Warned):
            console.print(f"[yellow]warning[/]: {escape(item.code)}: {escape(item.message)}")
        else:
            console.print(escape(item))


def _print_table(table: Table, console: Console) -> None:
    from rich.text import Text as RichText

    from cudaresolve.render.fit import plain_table, print_fitted

    lines = plain_table(table.headers, table.rows, console.width)
    if lines is not None:  # rich's layout, made without rich's per-cell work
        shown = RichText("\n".join(lines))
        shown.stylize("table.header", 0, len(lines[0]))
        console.print(shown, soft_wrap=True)
        return
    from rich.table import Table as RichTable

    laid = RichTable(box=None, pad_edge=False)  # cells as text: no markup, no emoji codes
    for header in table.headers:
        laid.add_column(RichText(header), no_wrap=True)
    for row in table.rows:
        laid.add_row(*(RichText(cell) for cell in row))
    print_fitted(console, laid)


def plain_lines(items: Sequence[Item], width: int) -> list[str] | None:
    """The lines a soft-wrapping console ``width`` wide with no colour prints for ``items``; None where rich would
    change a line (a character that is not printable) or lay the table out itself."""
    from cudaresolve.render.fit import plain_table

    lines: list[str] = []
    for item in items:
        if isinstance(item, Table):
            laid = plain_table(item.headers, item.rows, width)
            if laid is None:
                return None
            lines.extend(laid)
            continue
        text = f"warning: {item.code}: {item.message}" if isinstance(item, Warned) else item
        parts = text.split("\n")
        if "\\" in text or not all(part.isprintable() for part in parts):  # a tab rich expands, a control it
            return None  # drops, a backslash its markup escape doubles at the end of a text, ...
        lines.extend(parts)
    return lines


def plain_width(environ: Mapping[str, str]) -> int | None:
    """The width rich gives a console on a stream that is no terminal: ``COLUMNS`` when it is digits, else the
    first terminal among stdin, stdout and stderr, else 80; None for a ``COLUMNS`` of 0 (rich keeps that)."""
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns) or None
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):  # not a terminal
            continue
    return 80


def _plain_stderr() -> tuple[IO[str], int] | None:
    """stderr and its width when the run's console there would print plain text (module docstring), else None."""
    import builtins

    from cudaresolve.render.output import current, wants_color

    stream = sys.stderr
    if stream is None or sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return None
    if bool(getattr(stream, "isatty", lambda: False)()) or wants_color(current().color, os.environ, is_terminal=False):
        return None
    width = plain_width(os.environ)
    return None if width is None else (stream, width)


def report_lock(result: object, *, lang: str = "en") -> None:
    """``lock_items`` of ``result`` on stderr: as plain text where that is what rich would print, else by rich.
    Under ``-qq``, nothing."""
    from cudaresolve.render.output import current

    if current().silent:  # the stderr console prints nothing (``render.make_console``)
        return
    plain = _plain_stderr()
    if plain is not None:
        stream, width = plain
        lines = plain_lines(lock_items(result, width, lang), width)
        if lines is not None:
            stream.write("".join(f"{line}\n" for line in lines))
            stream.flush()
            return
    from cudaresolve.render import make_console

    console = make_console()
    print_items(lock_items(result, console.width, lang), console)
