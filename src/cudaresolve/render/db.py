"""Human views of the compatibility database and of its problems (``db check``, ``db show``). Output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.text.catalogue import format_text
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.db.database import CompatDB
    from cudaresolve.errors import InvalidCompatData

__all__ = ["render_ok", "render_problems", "render_summary"]


def render_problems(err: InvalidCompatData, console: Console, *, lang: str = "en") -> None:
    """``error: invalid-compat-data: PATH has N problems``, then one line per problem."""
    from rich.markup import escape

    count = len(err.problems)
    head = format_text(Text.of("db.render.problems" if count != 1 else "db.render.problem", source=err.source,
                               count=count), lang)
    console.print(f"[bold red]error[/]: {err.code}: {escape(head)}")
    for path, problem in err.problems:
        console.print(f"  {escape(path or '<top>')}: {escape(format_text(problem, lang))}")


def render_ok(db: CompatDB, label: str, console: Console, *, lang: str = "en") -> None:
    info = db.summary()
    console.print(format_text(Text.of(
        "db.render.ok", label=label, cuda=info.cuda_releases, gpus=info.gpus, variants=len(info.variants),
        releases=info.package_releases, unverified=info.unverified_rows,
    ), lang))


def _render_provenance(checked: tuple[tuple[str, int], ...], console: Console, lang: str) -> None:
    """``builds by check: wheel 250, build-script 40, ...``"""
    counts = ", ".join(format_text(Text.of("db.render.level", level=level, count=n), lang) for level, n in checked)
    console.print(format_text(Text.of("db.render.provenance", counts=counts), lang), highlight=False, soft_wrap=False)


def render_summary(db: CompatDB, console: Console, *, lang: str = "en") -> None:
    """The header, then one row per package: names whole, the variants wrapped at spaces (80 columns)."""
    from rich.table import Table

    from cudaresolve.render.fit import print_fitted

    info = db.summary()
    console.print(format_text(Text.of(
        "db.render.header", schema=info.schema_version, snapshot=str(info.snapshot_date), oldest=str(info.cuda_oldest),
        newest=str(info.cuda_newest), gpus=info.gpus, variants=info.variants,
    ), lang), soft_wrap=False)
    columns = ("db.render.column.package", "db.render.column.releases", "db.render.column.oldest",
               "db.render.column.newest", "db.render.column.unverified")
    widest = max((len(row.name) for row in info.packages), default=8)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for i, key in enumerate(columns):
        table.add_column(format_text(Text(key), lang), no_wrap=True, min_width=widest if i == 0 else None,
                         justify="right" if i in (1, 4) else "left")
    builds = Table(box=None, pad_edge=False, header_style="bold")  # the variants need the width to themselves
    builds.add_column(format_text(Text("db.render.column.package"), lang), no_wrap=True, min_width=widest)
    builds.add_column(format_text(Text("db.render.column.variants"), lang))
    for row in info.packages:
        table.add_row(row.name, str(row.releases), row.oldest, row.newest, str(row.unverified))
        builds.add_row(row.name, " ".join(row.variants) or format_text(Text("db.render.pure-python"), lang))
    print_fitted(console, table)
    console.print()
    print_fitted(console, builds)
    _render_provenance(info.checked, console, lang)
    if info.majors:  # [[cuda-major]] / [[cudnn-major]]: ``onnxruntime-gpu cudnn 2``
        items = ", ".join(format_text(Text.of("db.render.major-item", names=n, library=lib, count=c), lang)
                          for n, lib, c, _ in info.majors)  # fmt: skip
        console.print(format_text(Text.of("db.render.majors", counts=items), lang), highlight=False, soft_wrap=False)
