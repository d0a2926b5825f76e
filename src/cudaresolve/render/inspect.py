"""Human view of ``cudaresolve inspect``: one row per file with its SASS, PTX and LTO targets. Output.

Words and sentences come from the catalogue (``render.inspect.*`` in ``text/<lang>/binaries.toml``)
in the language asked for; target names (``sm_90a``, ``compute_80``) are the same in every language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from cudaresolve.binaries.linkage import AbiCheck
    from cudaresolve.binaries.report import BinaryReport

__all__ = ["MAX_ROWS", "file_errors", "format_details", "render_abi", "render_inspect"]

_DETAILS: Final = 20  # the narrowest the details column gets
_MIN_PATH: Final = 20
#: The most files the table shows, and error lines below it: rich lays a row out in about 3 ms, so a wheel of
#: 100,000 members took minutes to draw; the rest are counted, and ``--json`` lists every one.
MAX_ROWS: Final = 1000


def format_details(report: BinaryReport, lang: str = "en") -> str:
    """The last column: the error, or container/entry counts, compression and PTX ISA versions."""
    from cudaresolve.text.catalogue import join_items, message

    if report.error is not None and report.listing is None:  # the error itself follows the table (``file_errors``)
        return message("render.inspect.error", lang, code=report.error.code)
    listing = report.listing
    if listing is None:
        return ""
    entries, containers = len(listing.entries), len(listing.containers)
    parts = [
        message("render.inspect.entry" if entries == 1 else "render.inspect.entries", lang, count=entries),
        message("render.inspect.container" if containers == 1 else "render.inspect.containers", lang,
                count=containers),
    ]
    if listing.compressed:
        parts.append(message("render.inspect.compressed", lang, count=listing.compressed))
    if listing.ptx_isa:
        versions = join_items(sorted(set(listing.ptx_isa.values())), lang)
        parts.append(message("render.inspect.ptx-isa", lang, versions=versions))
    relocatable = [s for s in listing.sections if s == "__nv_relfatbin"]
    if relocatable:
        parts.append(message("render.inspect.rdc", lang))
    if report.error is not None:
        parts.append(message("render.inspect.error", lang, code=report.error.code))
    return join_items(parts, lang)


def file_errors(reports: Sequence[BinaryReport], lang: str = "en") -> list[str]:
    """One line per file that could not be read whole, as other commands' errors are: its code, path, message
    and hint (control characters escaped, so that each stays one line)."""
    from cudaresolve.text.catalogue import format_text, message, shown

    lines = []
    for report in reports:
        if report.error is None:
            continue
        error = report.error
        line = message("render.inspect.error-code", lang, code=error.code, path=shown(report.path, lang),
                       error=format_text(error.text, lang))
        if error.hint is not None:
            line += message("render.inspect.hint", lang, hint=format_text(error.hint, lang))
        lines.append("".join(c if c.isprintable() else repr(c)[1:-1] for c in line))
    return lines


def render_abi(abi: AbiCheck, console: Console, *, lang: str = "en") -> None:
    """The ABI check: each extension module whose import would fail, with its fixes, then what was checked."""
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text, message

    fix_word = message("render.fix", lang)
    for finding in abi.findings:
        console.print(f"[red]✗ {escape(finding.code)}[/]: {escape(format_text(finding.text, lang))}")
        for fix in finding.fixes:
            console.print(f"    [cyan]{fix_word}[/]: {escape(format_text(fix, lang))}")
    if abi.extensions and abi.torch_found:
        line = message("render.inspect.abi-checked", lang, count=abi.extensions, torch=abi.torch or "?",
                       findings=len(abi.findings))
        console.print(escape(line))
    elif abi.extensions:
        note = message("render.inspect.abi-no-torch", lang, count=abi.extensions)
        console.print(f"[yellow]{message('word.note', lang)}[/]: {escape(note)}")


def render_inspect(
    reports: Sequence[BinaryReport], console: Console, *, lang: str = "en", abi: AbiCheck | None = None,
) -> None:
    """A table of files, then one line per AOTInductor model and any notes, then the ABI check."""
    if reports:
        _render_reports(reports, console, lang)
    else:
        from cudaresolve.text.catalogue import message

        console.print(message("render.inspect.nothing", lang))
    if abi is not None:
        render_abi(abi, console, lang=lang)


def _render_reports(reports: Sequence[BinaryReport], console: Console, lang: str) -> None:
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text, message

    _print_table(reports[:MAX_ROWS], console, lang)
    if len(reports) > MAX_ROWS:
        console.print(escape(message("render.inspect.more-files", lang, count=len(reports) - MAX_ROWS)))
    errors = file_errors(reports, lang)
    for line in errors[:MAX_ROWS]:  # whole, unwrapped, with its hint (the JSON's "error" object)
        console.print(f"[red]{escape(line)}[/]", soft_wrap=True)
    if len(errors) > MAX_ROWS:
        console.print(escape(message("render.inspect.more-errors", lang, count=len(errors) - MAX_ROWS)))
    note_word = message("word.note", lang)
    for report in reports:
        if report.package is not None:
            for model in report.package.models:
                cc = model.compute_capability
                kernels = " ".join(model.sass + model.ptx) or message("render.inspect.no-kernels", lang)
                line = message("render.inspect.model-built" if cc else "render.inspect.model", lang,
                               path=report.path, model=model.name,
                               device=model.device or message("render.inspect.unknown-device", lang),
                               cc=str(cc) if cc else None, kernels=kernels)
                console.print(escape(line))
        for note in report.listing.notes if report.listing else ():
            console.print(f"[yellow]{note_word}[/]: {escape(report.path)}: {escape(format_text(note, lang))}")


def _print_table(reports: Sequence[BinaryReport], console: Console, lang: str) -> None:
    """One row per file of ``reports`` (at most ``MAX_ROWS``: the caller cuts them), fitted to the console."""
    from rich.markup import escape
    from rich.table import Table

    from cudaresolve.render.fit import fold_path, print_fitted
    from cudaresolve.text.catalogue import message, shown

    table = Table(box=None, pad_edge=False, header_style="bold")
    columns = (message("render.inspect.file", lang), "SASS", "PTX", "LTO", message("render.inspect.details", lang))
    # Target names (sm_90a, compute_120) stay whole: each list column is as wide as its longest name;
    # the details wrap at spaces in at least _DETAILS columns; the path takes the rest and is broken
    # only after a '/', never inside a name.
    lists = [[*(r.sass for r in reports)], [*(r.ptx for r in reports)], [*(r.lto for r in reports)]]
    widths = [max([len(columns[i + 1]), 1, *(len(t) for names in lists[i] for t in names)]) for i in range(3)]
    whole = [max([w, *(len(" ".join(names)) for names in lists[i])]) for i, w in enumerate(widths)]
    if max(len(r.path) for r in reports) + sum(whole) + 2 * _DETAILS + 8 <= console.width:
        widths = whole  # room for every list on one line
    room = console.width - sum(widths) - _DETAILS - 2 * (len(columns) - 1)
    name = max(len(part) for r in reports for part in r.path.split("/"))  # a file name is never cut if it fits
    path_width = min(max(len(r.path) for r in reports), max(_MIN_PATH, room, min(name, console.width // 2)))
    for i, column in enumerate(columns):
        table.add_column(column, no_wrap=i == 0, width=path_width if i == 0 else (widths[i - 1] if i < 4 else None))
    for report in reports:
        table.add_row(
            escape(shown(fold_path(report.path, path_width))),
            " ".join(report.sass) or "-",
            " ".join(report.ptx) or "-",
            " ".join(report.lto) or "-",
            escape(format_details(report, lang)),
            style="red" if report.error else None,
        )
    print_fitted(console, table)
