"""Human view of what ``cudaresolve install`` changed: a warning per notice, then one summary line. Output.

warning: installed-differs: fbgemm-gpu 1.9.0+cu126 is installed but is not the locked 1.9.0 (another version); ...
warning: not-in-lock: 1 installed package(s) are neither in the lock nor needed by it: einops; ...
2 locked package(s) already installed as locked, 1 installed, 0 removed
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cudaresolve.text.catalogue import format_text
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.doctor.report import DoctorReport
    from cudaresolve.install.install import InstallResult
    from cudaresolve.install.sync import SyncResult
    from cudaresolve.lock.model import Lock
    from cudaresolve.resolve.model import Solution

__all__ = ["install_json", "render_plan", "render_sync"]


def render_plan(lock: Lock, solution: Solution | None, console: Console, *, lang: str = "en") -> None:
    """Before pip runs: the resolution table and every warning (a lock read from a file: its packages).
    Under ``-q`` the warnings alone."""
    from dataclasses import replace

    from cudaresolve.lock.model import read_notices
    from cudaresolve.render.explain_findings import render_solution, render_warnings
    from cudaresolve.render.output import current

    noted = read_notices(lock)
    if solution is None and not current().shows_info and not noted:
        return  # -q and a lock file: its table is not shown, and it carries no solver warnings
    if solution is None:  # a lock file: the same table, from the lock's own packages, and what reading it said
        from cudaresolve.resolve.model import Solution as Shown
        from cudaresolve.target.model import Target

        solution = Shown(target=Target(), variant=lock.variant or "-", index_url=lock.index_url or "-",
                         packages=lock.packages, warnings=noted)
    else:
        solution = replace(solution, packages=lock.packages)  # with the mirrors applied, as pip will use them
    if current().shows_info:
        render_solution(solution, console, lang=lang)
    elif solution.warnings:
        render_warnings(solution, console, lang=lang)


def install_json(result: InstallResult, report: DoctorReport | None) -> dict[str, Any]:
    """``install --json``: the packages as locked, what changed, and the doctor pass (``emit_json`` adds the schema)."""
    from cudaresolve.lock.model import read_notices

    sync = result.sync
    return {
        "packages": [p.to_dict() for p in result.lock.packages],
        "dry_run": sync is None,
        "installed": [{"name": name, "reason": change.value} for name, change in sync.installed] if sync else [],
        "kept": list(sync.kept) if sync else [],
        "removed": list(sync.removed) if sync else [],
        "not_in_lock": list(sync.foreign) if sync else [],
        "warnings": [n.to_dict() for n in (*read_notices(result.lock), *result.lock.warnings,
                                           *(sync.notices if sync else ()))],
        "doctor": report.to_dict() if report is not None else None,
    }


def render_sync(result: SyncResult, console: Console, *, lang: str = "en") -> None:
    """The notices of ``result`` as warnings, then the counts of kept, installed and removed packages
    (the counts not under ``-q``)."""
    from cudaresolve.render.output import current

    if result.notices:
        from cudaresolve.render.explain import render_notices

        render_notices(result.notices, console, lang)
    if not current().shows_info:
        return
    from rich.markup import escape

    summary = Text.of(
        "lock.sync.summary", kept=len(result.kept), installed=len(result.installed), removed=len(result.removed)
    )
    console.print(escape(format_text(summary, lang)))
