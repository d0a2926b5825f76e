"""A fleet plan for people: pools, groups, blocked pools and their ways out, placement lines. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cudaresolve.text.catalogue import format_text, shown
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.fleet.plan import Plan
    from cudaresolve.fleet.pools import Pool

__all__ = ["render_plan"]

_WIDTH: Final = 80
_LISTED: Final = 12  # packages named per group; the rest are counted
_POOL_COLUMNS: Final = (
    "fleet.render.column.pool",
    "fleet.render.column.hosts",
    "fleet.render.column.gpus",
    "fleet.render.column.driver",
    "fleet.render.column.platform",
    "fleet.render.column.python",
    "fleet.render.column.lock",
)


def _where(plan: Plan, pool: Pool) -> Text:
    for group in plan.groups:
        if pool in group.pools:
            return Text.of("fleet.render.in-group", group=group.number)
    return Text("fleet.render.blocked")


def render_plan(plan: Plan, console: Console, *, lang: str = "en") -> None:
    """The pools table, then each group with its packages and placement, then blocked pools and upgrades."""
    from rich.markup import escape
    from rich.table import Table

    from cudaresolve.fleet.placement import has_affinity, node_affinity_yaml, slurm_line

    def say(text: Text) -> None:
        console.print(escape(format_text(text, lang)), width=min(console.width, _WIDTH))

    table = Table(*(format_text(Text(key), lang) for key in _POOL_COLUMNS),
                  box=None, pad_edge=False)
    for pool in plan.pools:
        count = f"{pool.gpu_count}x " if pool.gpu_count > 1 else ""
        table.add_row(  # an inventory's words, shown without markup or control characters
            escape(shown(pool.id)),
            str(len(pool.hosts)),
            escape(shown(count + " + ".join(pool.short or pool.gpus))) if pool.gpus else "-",
            escape(shown(pool.driver or "-")),
            escape(shown(pool.platform)),
            escape(shown(pool.python)),
            format_text(_where(plan, pool), lang),
        )
    console.print(table, width=min(console.width, _WIDTH), soft_wrap=False)
    if len(plan.groups) == 1 and not plan.blocked:
        say(Text.of("fleet.render.one-lock", pools=len(plan.pools)))
    for group in plan.groups:
        console.print()
        say(Text.of("fleet.render.group", group=group.number, variant=group.solution.variant,
                    pools=tuple(p.id for p in group.pools), index=group.solution.index_url))
        packages = group.solution.packages
        listed = ", ".join(f"{p.name} {p.version}" for p in packages[:_LISTED])
        more = len(packages) - _LISTED
        if more > 0:
            say(Text.of("fleet.render.packages.more", packages=listed, more=more))
        else:
            say(Text.of("fleet.render.packages", packages=listed))
        for notice in group.solution.warnings:
            say(Text.of("fleet.render.warning", code=notice.code, message=notice.text))
        if has_affinity(group):
            console.print(escape(shown(node_affinity_yaml(group))), soft_wrap=True)
        line = slurm_line(group)
        if line is not None:
            say(Text.of("fleet.render.slurm", line=line))
    for item in plan.blocked:
        console.print()
        say(Text.of("fleet.render.blocked-pool", pool=item.pool.id))
        for finding in item.reasons:
            say(Text.of("fleet.render.reason", code=finding.code, message=finding.text))
        for way in item.ways_out():
            say(Text.of("fleet.render.way-out", message=way["message"]))
        if item.upgrade is None and plan.groups:
            key = "fleet.render.no-upgrade-apart" if item.apart else "fleet.render.no-upgrade"
            say(Text.of(key, pool=item.pool.id))
    for item in plan.upgrades:
        if item.upgrade is not None:
            key = "fleet.render.older" if item.older else "fleet.render.upgrade"
            say(Text.of(key, pool=item.pool.id, driver=str(item.upgrade), group=item.joins, branch=item.upgrade.branch))
        elif item.reasons or item.apart:  # a lock of its own and no driver changes that: say why
            say(Text.of("fleet.render.own-lock", pool=item.pool.id))
            for finding in item.reasons:
                say(Text.of("fleet.render.reason", code=finding.code, message=finding.text))
            key = "fleet.render.no-upgrade-apart" if item.apart else "fleet.render.no-upgrade"
            say(Text.of(key, pool=item.pool.id))
    if plan.arch_list:
        console.print()
        say(Text.of("fleet.render.arch-list", arch_list=plan.arch_list))
    for notice in plan.notices:
        say(Text.of("fleet.render.warning", code=notice.code, message=notice.text))
    for path in plan.written:
        say(Text.of("fleet.render.written", path=path))
