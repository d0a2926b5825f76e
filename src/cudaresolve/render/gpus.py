"""The GPUs the database knows, as a table of at most 80 columns (``cudaresolve gpus``). Output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cudaresolve.text.catalogue import format_text, shown
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.db.gpu_names import GpuListing
    from cudaresolve.db.rows import GpuModel

__all__ = ["render_gpus"]

_WIDTH: Final = 80
_COLUMNS: Final = (
    "gpus.render.column.name",
    "gpus.render.column.cc",
    "gpus.render.column.arch",
    "gpus.render.column.kind",
    "gpus.render.column.aliases",
)


def _kind(gpu: GpuModel) -> Text:
    if gpu.tegra:
        return Text("gpus.render.kind.tegra")
    return Text("gpus.render.kind.datacenter" if gpu.datacenter else "gpus.render.kind.other")


def render_gpus(listing: GpuListing, console: Console, *, lang: str = "en") -> None:
    """One row per GPU: name, compute capability, architecture, kind and the other names it goes by."""
    from rich.markup import escape
    from rich.table import Table

    if not listing.gpus:
        console.print(escape(format_text(Text.of("gpus.render.none", pattern=repr(listing.pattern or "")), lang)))
        return
    table = Table(*(format_text(Text(key), lang) for key in _COLUMNS), box=None, pad_edge=False)
    for gpu in listing.gpus:
        table.add_row(
            escape(shown(gpu.name)),
            str(gpu.cc),
            escape(gpu.arch),
            format_text(_kind(gpu), lang),
            escape(shown(", ".join(gpu.aliases))),
        )
    console.print(table, width=min(console.width, _WIDTH), soft_wrap=False)
    console.print(escape(format_text(Text.of("gpus.render.count", count=len(listing.gpus)), lang)))
