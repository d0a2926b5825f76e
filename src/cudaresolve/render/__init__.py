"""Output: the only place rich is imported (lazily, inside functions) and where a ``Text`` becomes words. Does output.

May import every folder but cli.

``format_*`` returns text, ``render_*`` writes to a Console passed in, ``emit_json`` writes
the one JSON object of the contract to stdout.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    from typing import IO, Any

    from rich.console import Console

    from cudaresolve.errors import CudaResolveError

__all__ = ["emit_json", "make_console", "plain", "render_error"]

SCHEMA = 1


def make_console(*, stderr: bool = True, file: IO[str] | None = None, errors: bool = False) -> Console:
    """A rich Console for human output (messages go to stderr by default; JSON alone goes to stdout).

    Colour follows ``--color``, NO_COLOR and FORCE_COLOR (``render.output``). Under ``-qq`` a stderr
    console prints nothing, except the one for ``errors``.
    """
    import os

    from rich.console import Console

    from cudaresolve.render.output import current, wants_color

    settings = current()
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_terminal = bool(getattr(stream, "isatty", lambda: False)())
    colour = wants_color(settings.color, os.environ, is_terminal=is_terminal)
    quiet = stderr and file is None and not errors and settings.silent
    return Console(
        file=file,
        stderr=stderr if file is None else False,
        highlight=False,
        emoji=False,  # ``:cd:`` in a user's text (a path, a label) stays as typed; and rich's emoji table is not loaded
        soft_wrap=True,
        no_color=not colour,
        color_system="auto" if colour else None,
        force_terminal=colour or is_terminal,
        quiet=quiet,
    )


def plain(value: Any, lang: str = "en") -> Any:
    """``value`` with every ``Text`` inside it (dicts, lists, tuples) turned into words in ``lang``."""
    from cudaresolve.text.catalogue import format_text
    from cudaresolve.text.model import Text

    if isinstance(value, Text):
        return format_text(value, lang)
    if isinstance(value, dict):
        return {k: plain(v, lang) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, lang) for v in value]
    return value


def emit_json(payload: dict[str, Any], *, lang: str = "en", stream: IO[str] | None = None) -> None:
    """Print exactly one JSON object with ``"schema": 1`` first; its sentences in ``lang``."""
    out = stream if stream is not None else sys.stdout
    import json

    ascii_only = "utf" not in (getattr(out, "encoding", None) or "utf-8").lower()  # a stream that encodes less
    out.write(json.dumps({"schema": SCHEMA, **plain(payload, lang)}, indent=2, ensure_ascii=ascii_only) + "\n")


def _one_line(text: str) -> str:
    """``text`` with each character that is not printable (a newline, a tab, an escape sequence's ESC, as a path or
    a value the user gave may hold) written as its Python escape: an error stays one line, and says what it saw."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def render_error(err: CudaResolveError, console: Console, *, lang: str = "en") -> None:
    """The error and its hint on one line, then any findings or problems indented below it."""
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text
    from cudaresolve.text.model import Text

    hint = _one_line(format_text(err.hint_text, lang)) if err.hint_text is not None else None
    console.print(
        f"[bold red]error[/]: {escape(err.code)}: {escape(_one_line(format_text(err.text, lang)))}"
        + (f" [cyan](hint: {escape(hint)})[/]" if hint else "")
    )
    for path, problem in getattr(err, "problems", []):
        console.print(f"  {escape(_one_line(path or '<top>'))}: {escape(_one_line(format_text(problem, lang)))}")
    findings = getattr(err, "findings", [])
    if findings:
        from rich.tree import Tree

        tree = Tree(format_text(Text("render.findings"), lang))
        for finding in findings:
            tree.add(f"[red]{escape(finding.code)}[/]: {escape(format_text(finding.text, lang))}")
        console.print(tree, soft_wrap=False)
