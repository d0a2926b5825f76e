"""Human and JSON views of explained error messages (``explain-error``). Output.

``format_explanations`` returns plain text, ``render_explanations`` writes the same lines to a
Console, ``to_json`` builds the ``matches`` payload of the JSON contract (``render.emit_json``
formats its ``Text`` values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cudaresolve.text.catalogue import format_text, message

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from cudaresolve.errorlog.explain import Explanation
    from cudaresolve.text.findings import Notice

__all__ = ["format_explanations", "render_explanations", "render_notices", "to_json"]


def to_json(explanations: Sequence[Explanation], notices: Sequence[Notice] = ()) -> dict[str, Any]:
    """``{"matches": [{"code", "cause", "fixes"}]}``, plus ``"warnings": [{"code", "message"}]`` when
    there are notices (``input-truncated``); ``emit_json`` adds the schema and formats the Texts."""
    payload: dict[str, Any] = {"matches": [e.to_dict() for e in explanations]}
    if notices:
        payload["warnings"] = [n.to_dict() for n in notices]
    return payload


def render_notices(notices: Sequence[Notice], console: Console, lang: str = "en") -> None:
    """One ``warning: <code>: <message>`` line per notice (on the stderr console the CLI passes)."""
    from rich.markup import escape

    for notice in notices:
        console.print(f"[yellow]warning[/]: {escape(notice.code)}: {escape(format_text(notice.text, lang))}")


def _labels(lang: str) -> tuple[str, str]:
    colon = message("render.colon", lang)
    return message("render.cause", lang) + colon, message("render.fix", lang) + colon


def format_explanations(explanations: Sequence[Explanation], lang: str = "en") -> str:
    """Each match as its code, an indented cause line and one line per fix; a blank line between matches."""
    cause_label, fix_label = _labels(lang)
    blocks = []
    for e in explanations:
        lines = [
            e.code,
            f"  {cause_label}{format_text(e.cause, lang)}",
            *(f"  {fix_label}{format_text(fix, lang)}" for fix in e.fixes),
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_explanations(explanations: Sequence[Explanation], console: Console, lang: str = "en") -> None:
    """``format_explanations`` with the code in bold and the labels coloured."""
    from rich.markup import escape

    cause_label, fix_label = _labels(lang)
    for i, e in enumerate(explanations):
        if i:
            console.print()
        console.print(f"[bold]{escape(e.code)}[/]")
        console.print(f"  [yellow]{escape(cause_label)}[/]{escape(format_text(e.cause, lang))}")
        for fix in e.fixes:
            console.print(f"  [cyan]{escape(fix_label)}[/]{escape(format_text(fix, lang))}")
