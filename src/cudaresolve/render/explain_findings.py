"""Human views of findings, solutions and why-not answers: a short tree, most basic cause first. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.resolve.model import Solution
    from cudaresolve.resolve.whynot import WhyNot

__all__ = ["render_lock_result", "render_solution", "render_warnings", "render_why_not"]


def render_solution(solution: Solution, console: Console, *, lang: str = "en") -> None:
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text
    from cudaresolve.text.model import Text
    from cudaresolve.text.redact import redact_text

    console.print(escape(format_text(Text.of("render.solution.variant", variant=solution.variant,
                                             index=solution.index_url), lang)))
    from cudaresolve.render.fit import fold_path, plain_table, print_fitted

    headers = [format_text(Text(key), lang) for key in
               ("render.solution.package", "render.solution.version", "render.solution.index")]
    names = max((len(p.name) for p in solution.packages), default=0)
    versions = max((len(p.version) for p in solution.packages), default=0)
    room = max(20, console.width - max(names, 7) - max(versions, 7) - 4)
    rows = []  # names and versions whole; an index URL broken only after a '/'
    for p in solution.packages:
        where = p.url if not p.index and p.url else p.index  # a direct reference: its URL, from no index
        rows.append((p.name, p.version, fold_path(redact_text(where), room)))
    lines = plain_table(headers, rows, console.width)
    from rich.text import Text as RichText

    if lines is not None:  # rich's layout, made without rich's per-cell work
        shown = RichText("\n".join(lines))
        shown.stylize("table.header", 0, len(lines[0]))
        console.print(shown, soft_wrap=True)
    else:
        from rich.table import Table

        table = Table(box=None, pad_edge=False)  # cells as text: no markup, no emoji codes
        for header in headers:
            table.add_column(RichText(header), no_wrap=True)
        for row in rows:
            table.add_row(*(RichText(cell) for cell in row))
        print_fitted(console, table)
    render_warnings(solution, console, lang=lang)


def render_warnings(solution: Solution, console: Console, *, lang: str = "en") -> None:
    """One ``warning: <code>: <message>`` line per warning of ``solution``."""
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text

    for w in solution.warnings:
        console.print(f"[yellow]warning[/]: {escape(w.code)}: {escape(format_text(w.text, lang))}")


def render_why_not(answer: WhyNot, console: Console, *, lang: str = "en") -> None:
    from rich.markup import escape
    from rich.tree import Tree

    from cudaresolve.text.catalogue import format_text, message

    spec = escape(answer.spec)
    if answer.possible:
        headline = message("render.why-not.possible", lang, spec=spec)
        console.print(f"[green]{headline}[/]")
        if answer.solution is not None:
            render_solution(answer.solution, console, lang=lang)
        return
    headline = message("render.why-not.impossible", lang, spec=spec)
    tree = Tree(f"[bold red]{headline}[/]")
    reasons = tree.add(message("render.why-not.because", lang))
    for r in answer.reasons:
        reasons.add(f"[red]{escape(r.code)}[/]: {escape(format_text(r.text, lang))}")
    if answer.alternatives:
        ways = tree.add(message("render.why-not.ways-out", lang))
        for a in answer.alternatives:
            ways.add(f"[green]{escape(a.spec)}[/]: {escape(format_text(a.text, lang))}")
    console.print(tree, soft_wrap=False)


def render_lock_result(result: object, console: Console, *, lang: str = "en") -> None:
    """What was locked, where it went, and every warning (under ``-q`` the warnings alone)."""
    from rich.markup import escape

    from cudaresolve.render.output import current
    from cudaresolve.text.catalogue import format_text
    from cudaresolve.text.model import Text

    solution = result.solution  # type: ignore[attr-defined]
    if not current().shows_info:
        render_warnings(solution, console, lang=lang)
        return
    render_solution(solution, console, lang=lang)
    path = result.path  # type: ignore[attr-defined]
    if path is None or path == "-":  # nothing written (its warning says why), or the lock went to stdout
        return
    if result.unchanged:  # type: ignore[attr-defined]
        same = Text.of("render.lock.unchanged", path=str(path), count=len(solution.packages))
        console.print(escape(format_text(same, lang)))
        return
    for change in result.changes:  # type: ignore[attr-defined]
        moved, added = "render.lock.moved", "render.lock.added"
        key = moved if change.old and change.new else added if change.new else "render.lock.removed"
        console.print(escape(format_text(Text.of(key, name=change.name, old=change.old, new=change.new), lang)))
    wrote = Text.of("render.lock.wrote", path=str(path), format=result.format)  # type: ignore[attr-defined]
    console.print(escape(format_text(wrote, lang)))
