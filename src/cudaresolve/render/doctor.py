"""Human view of ``cudaresolve doctor``: per package its coverage of each GPU, then problems and fixes. Output.

    target: NVIDIA A100 (8.0), NVIDIA GeForce RTX 3090 (8.6); driver 535.104.05
    torch 2.7.1+cu118  cu118  8.0 sass  8.6 sass
        torch/lib/libtorch_cuda.so  sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90
    fbgemm-gpu 1.1.0+cu118  cu118  8.0 sass  8.6 none
      ✗ sm-not-covered: fbgemm-gpu 1.1.0+cu118 (cu118) has no code for sm_86 ...
          fix: ...
    doctor --run with .venv/bin/python, one child per package and GPU:     (--run only)
      ✓ torch on GPU 0 (NVIDIA H100 80GB HBM3): pass in 4.1 s
      ✗ xformers on GPU 0 (NVIDIA H100 80GB HBM3): FAIL in 3.2 s
          RuntimeError: CUDA error: no kernel image is available for execution on the device
          cause: ...
          fix: ...
    1 problem(s), 0 warning(s)              (or: ok)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from cudaresolve.core.archs import ComputeCapability, Coverage
    from cudaresolve.doctor.report import DoctorReport, Problem, RuntimeCheck
    from cudaresolve.doctor.smoke import RunReport
    from cudaresolve.target.model import Target

__all__ = ["format_coverage", "format_target", "render_doctor", "render_runs", "short_path"]

_COLOURS = {"sass": "green", "ptx-jit": "yellow", "none": "red"}


def format_target(target: Target, lang: str = "en") -> str:
    """``target: NVIDIA A100 (8.0), RTX 3090 (8.6); driver 535.104.05``."""
    from cudaresolve.text.catalogue import join_items, message, parenthesize

    if not target.gpus:
        return message("render.doctor.cpu-target", lang)
    names = dict.fromkeys(parenthesize(g.name, str(g.cc), lang) for g in target.gpus)
    driver = str(target.driver) if target.driver else message("word.driver-unknown", lang)
    return message("render.doctor.target", lang, gpus=join_items(names, lang), driver=driver)


def format_coverage(pairs: Sequence[tuple[ComputeCapability, Coverage]], *, markup: bool = False) -> str:
    """``8.0 sass  8.6 none`` (coloured when ``markup``)."""
    parts = []
    for cc, cov in pairs:
        word = cov.value
        parts.append(f"{cc} [{_COLOURS[word]}]{word}[/]" if markup else f"{cc} {word}")
    return "  ".join(parts)


def short_path(path: str, roots: Sequence[str]) -> str:
    """``path`` relative to the site-packages folder that holds it, else unchanged."""
    for root in roots:
        prefix = root.rstrip(os.sep) + os.sep
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def _support_word(check: RuntimeCheck, lang: str) -> str:
    from cudaresolve.text.catalogue import message

    if check.support is None:
        return message("word.support-unchecked", lang)
    words = {"full": "word.support-full", "minor": "word.support-minor", "none": "word.support-none"}
    return message(words[check.support.value], lang)


def _render_problems(problems: Sequence[Problem], console: Console, lang: str, indent: str) -> None:
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text, message

    fix_word = message("render.fix", lang)
    for problem in problems:
        mark, colour = ("✗", "red") if problem.is_error else ("!", "yellow")
        console.print(f"{indent}[{colour}]{mark} {escape(problem.code)}[/]: {escape(format_text(problem.text, lang))}")
        for fix in problem.fixes:
            console.print(f"{indent}    [cyan]{fix_word}[/]: {escape(format_text(fix, lang))}")


#: With more distinct compute capabilities than this, coverage shares one column (80 columns).
_CC_COLUMNS = 4


def _render_packages(report: DoctorReport, console: Console, lang: str, *, verbose: bool) -> None:
    """One row per package: name, version, variant and its code for each GPU (``sass``, ``ptx-jit``,
    ``none``), one column per compute capability; with ``verbose`` a table of its libraries below."""
    from rich.markup import escape
    from rich.table import Table

    from cudaresolve.render.fit import fold_path, print_fitted
    from cudaresolve.text.catalogue import message, shown

    ccs = list(dict.fromkeys(cc for pkg in report.packages for cc, _ in pkg.coverage))
    split = 0 < len(ccs) <= _CC_COLUMNS
    table = Table(box=None, pad_edge=False, header_style="bold")
    for key in ("render.solution.package", "render.solution.version", "render.doctor.column.variant"):
        table.add_column(message(key, lang), no_wrap=True)
    for cc in ccs if split else []:
        table.add_column(str(cc), no_wrap=True)
    if not split:
        table.add_column(message("render.doctor.column.coverage", lang))
    for pkg in report.packages:
        variant = pkg.variant or message("word.unknown-variant", lang)
        if not pkg.libraries:
            cells = [message("word.no-gpu-code", lang)] + [""] * (len(ccs) - 1 if split else 0)
        elif split:
            found = dict(pkg.coverage)
            cells = [f"[{_COLOURS[found[cc].value]}]{found[cc].value}[/]" if cc in found else "-" for cc in ccs]
        else:
            cells = [format_coverage(pkg.coverage, markup=True)]
        table.add_row(f"[bold]{escape(shown(pkg.name))}[/]", escape(shown(pkg.version)), escape(shown(variant)), *cells)
    print_fitted(console, table)
    if not verbose or not any(pkg.libraries for pkg in report.packages):
        return
    width = max(20, console.width // 2)
    libraries = Table(box=None, pad_edge=False, header_style="bold")
    libraries.add_column(message("render.doctor.column.library", lang), no_wrap=True)
    libraries.add_column(message("render.doctor.column.code", lang))
    for pkg in report.packages:
        for lib in pkg.libraries:
            archs = " ".join((*lib.sass, *lib.ptx)) or "-"
            path = fold_path(short_path(lib.path, report.paths), width)
            libraries.add_row(escape(shown(path)), f"[dim]{escape(archs)}[/]")
    print_fitted(console, libraries)


def render_doctor(report: DoctorReport, console: Console, *, lang: str = "en", verbose: bool = True) -> None:
    """The whole report; ``verbose`` also lists each package's libraries."""
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text, join_items, message

    console.print(escape(format_target(report.target, lang)))
    if report.paths:
        console.print(escape(message("render.doctor.site-packages", lang, paths=join_items(report.paths, lang))))
    if not report.packages:
        console.print(escape(message("render.doctor.no-packages", lang)))
    note_word = message("word.note", lang)
    if report.packages:
        _render_packages(report, console, lang, verbose=verbose)
    for pkg in report.packages:
        _render_problems(pkg.problems, console, lang, "  ")
        for note in pkg.notes:
            console.print(f"  [yellow]{note_word}[/]: {escape(format_text(note, lang))}")
    for check in report.runtimes:
        console.print(escape(message("render.doctor.runtime", lang, name=check.name, version=check.version,
                                     cuda=str(check.cuda), support=_support_word(check, lang))))
    for pt2 in report.pt2:
        devices = join_items(pt2.devices, lang) if pt2.devices else "?"
        console.print(escape(message("render.doctor.pt2", lang, path=pt2.path, devices=devices)))
        _render_problems(pt2.problems, console, lang, "  ")
    if report.problems:
        console.print(message("render.doctor.environment", lang))
        _render_problems(report.problems, console, lang, "  ")
    for note in report.notes:
        console.print(f"[yellow]{note_word}[/]: {escape(format_text(note, lang))}")
    if report.run is not None:
        render_runs(report.run, console, lang=lang)
    problems = report.all_problems
    errors = sum(p.is_error for p in problems)
    warnings = len(problems) - errors
    errors += report.run.failed if report.run is not None else 0  # each failed run counts as a problem
    if errors:
        verdict, colour = message("render.doctor.not-ok", lang, errors=errors, warnings=warnings), "red"
    elif warnings:
        verdict, colour = message("render.doctor.ok-warnings", lang, warnings=warnings), "green"
    else:
        verdict, colour = message("render.doctor.ok", lang), "green"
    console.print(f"[bold {colour}]{escape(verdict)}[/]")


def render_runs(run: RunReport, console: Console, *, lang: str = "en") -> None:
    """``doctor --run``: one line per (package, GPU), and under a failure its error, cause and fixes."""
    from rich.markup import escape

    from cudaresolve.text.catalogue import format_text, join_items, message

    if not run.gpus:
        no_gpu = message("render.doctor.run.no-gpu", lang)
        console.print(f"[yellow]{escape(no_gpu)}[/]")
        return
    console.print(escape(message("render.doctor.run.header", lang, python=run.python)))
    if not run.runs:
        console.print("  " + escape(message("render.doctor.run.nothing", lang)))
    cause_word, fix_word = message("render.cause", lang), message("render.fix", lang)
    for item in run.runs:
        verdict = message("render.doctor.run.pass" if item.ok else "render.doctor.run.fail", lang)
        line = message("render.doctor.run.line", lang, package=item.package, index=item.gpu.index,
                       gpu=item.gpu.name, verdict=verdict, seconds=f"{item.seconds:.1f}")
        mark = "[green]✓[/]" if item.ok else "[red]✗[/]"
        console.print(f"  {mark} {escape(line)}")
        if item.note is not None:
            console.print(f"      [yellow]{escape(format_text(item.note, lang))}[/]")
        if item.error is not None:
            for text_line in format_text(item.error, lang).strip().splitlines()[-_ERROR_LINES:]:
                console.print(f"      [dim]{escape(text_line)}[/]")
        for explanation in item.explanations:
            console.print(f"      [cyan]{cause_word}[/]: {escape(format_text(explanation.cause, lang))}")
            for fix in explanation.fixes:
                console.print(f"      [cyan]{fix_word}[/]: {escape(format_text(fix, lang))}")
    if run.untested:
        console.print("  " + escape(message("render.doctor.run.untested", lang, names=join_items(run.untested, lang))))


#: The last lines of a failed run's error text that the human view shows (JSON has all of it).
_ERROR_LINES = 4
