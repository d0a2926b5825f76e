"""Output: the only place rich is imported (lazily, inside functions). Does output.

``format_*`` returns text, ``render_*`` writes to a Console passed in, ``emit_json`` writes
the one JSON object of the contract to stdout.
"""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.errors import CudaResolveError

__all__ = ["emit_json", "make_console", "render_error"]

SCHEMA = 1


def make_console(*, stderr: bool = True, file: IO[str] | None = None) -> Console:
    """A rich Console for human output (stderr by default, as design section 4 asks)."""
    from rich.console import Console

    return Console(file=file, stderr=stderr if file is None else False, highlight=False, soft_wrap=True)


def emit_json(payload: dict[str, Any], *, stream: IO[str] | None = None) -> None:
    """Print exactly one JSON object with ``"schema": 1`` first."""
    out = stream if stream is not None else sys.stdout
    out.write(json.dumps({"schema": SCHEMA, **payload}, indent=2, ensure_ascii=False) + "\n")


def render_error(err: CudaResolveError, console: Console, *, lang: str = "en") -> None:
    """The error and its hint on one line, then any findings or problems indented below it."""
    from rich.markup import escape

    console.print(
        f"[bold red]error[/]: {escape(err.code)}: {escape(err.message)}"
        + (f" [cyan](hint: {escape(err.hint)})[/]" if err.hint else "")
    )
    for path, message in getattr(err, "problems", []):
        console.print(f"  {escape(path or '<top>')}: {escape(message)}")
    findings = getattr(err, "findings", [])
    if findings:
        from rich.tree import Tree

        from cudaresolve.text.catalogue import message

        tree = Tree(message("render.findings", lang))
        for finding in findings:
            tree.add(f"[red]{escape(finding.code)}[/]: {escape(finding.message)}")
        console.print(tree, soft_wrap=False)
