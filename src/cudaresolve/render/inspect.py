"""Human view of ``cudaresolve inspect``: one row per file with its SASS, PTX and LTO targets. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from cudaresolve.binaries.scan import BinaryReport

__all__ = ["format_details", "render_inspect"]


def format_details(report: BinaryReport) -> str:
    """The last column: the error, or container/entry counts, compression and PTX ISA versions."""
    if report.error is not None and report.listing is None:
        return f"error: {report.error.code}: {report.error.message}"
    listing = report.listing
    if listing is None:
        return ""
    parts = [
        _count(len(listing.entries), "entry", "entries"),
        _count(len(listing.containers), "container", "containers"),
    ]
    if listing.compressed:
        parts.append(f"{listing.compressed} compressed")
    if listing.ptx_isa:
        parts.append("PTX ISA " + ", ".join(sorted(set(listing.ptx_isa.values()))))
    relocatable = [s for s in listing.sections if s == "__nv_relfatbin"]
    if relocatable:
        parts.append("has -rdc copies")
    if report.error is not None:
        parts.append(f"error: {report.error.message}")
    return ", ".join(parts)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def render_inspect(reports: Sequence[BinaryReport], console: Console) -> None:
    """A table of files, then one line per AOTInductor model and any notes."""
    from rich.markup import escape
    from rich.table import Table

    if not reports:
        console.print("no GPU code found (use --all to list every binary)")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("file", "SASS", "PTX", "LTO", "details"):
        table.add_column(column, overflow="fold")
    for report in reports:
        table.add_row(
            escape(report.path),
            " ".join(report.sass) or "-",
            " ".join(report.ptx) or "-",
            " ".join(report.lto) or "-",
            escape(format_details(report)),
            style="red" if report.error else None,
        )
    console.print(table)
    for report in reports:
        if report.package is not None:
            for model in report.package.models:
                cc = model.compute_capability
                built = f", compiled on a {cc} GPU" if cc else ""
                console.print(
                    f"{escape(report.path)}: model {escape(model.name)} for device "
                    f"{escape(model.device or 'unknown')}{built}; kernels {' '.join(model.sass + model.ptx) or 'none'}"
                )
        for note in report.listing.notes if report.listing else ():
            console.print(f"[yellow]note[/]: {escape(report.path)}: {escape(note)}")
