"""Human views of findings, solutions and why-not answers: a short tree, most basic cause first. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.resolve.model import Solution
    from cudaresolve.resolve.whynot import WhyNot

__all__ = ["render_lock_result", "render_solution", "render_warnings", "render_why_not"]


def render_solution(solution: Solution, console: Console, *, lang: str = "en") -> None:
    """The variant line, the package table and every warning (``report.solution_items``)."""
    from cudaresolve.render.report import print_items, solution_items

    print_items(solution_items(solution, console.width, lang), console)


def render_warnings(solution: Solution, console: Console, *, lang: str = "en") -> None:
    """One ``warning: <code>: <message>`` line per warning of ``solution``."""
    from cudaresolve.render.report import print_items, warning_items

    print_items(warning_items(solution, lang), console)


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
    """What was locked, where it went, and every warning (under ``-q`` the warnings alone): ``report.lock_items``."""
    from cudaresolve.render.report import lock_items, print_items

    print_items(lock_items(result, console.width, lang), console)
