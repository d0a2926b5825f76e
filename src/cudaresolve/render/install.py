"""Human view of what ``cudaresolve install`` changed: a warning per notice, then one summary line. Output.

warning: installed-differs: fbgemm-gpu 1.9.0+cu126 is installed but is not the locked 1.9.0 (another version); ...
warning: not-in-lock: 1 installed package(s) are neither in the lock nor needed by it: einops; ...
2 locked package(s) already installed as locked, 1 installed, 0 removed
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.text.catalogue import format_text
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.lock.sync import SyncResult

__all__ = ["render_sync"]


def render_sync(result: SyncResult, console: Console, *, lang: str = "en") -> None:
    """The notices of ``result`` as warnings, then the counts of kept, installed and removed packages."""
    from rich.markup import escape

    from cudaresolve.render.explain import render_notices

    render_notices(result.notices, console, lang)
    summary = Text.of(
        "lock.sync.summary", kept=len(result.kept), installed=len(result.installed), removed=len(result.removed)
    )
    console.print(escape(format_text(summary, lang)))
