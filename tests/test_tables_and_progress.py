"""Tables that fit 80 columns with names whole, and the progress display's choices."""

from __future__ import annotations

import io
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text as RichText

from cudaresolve.binaries.inspect import inspect_file
from cudaresolve.core.progress import Event, listening, report
from cudaresolve.db.database import load_compat
from cudaresolve.render.db import render_summary
from cudaresolve.render.explain_findings import render_solution
from cudaresolve.render.fit import fold_path, plain_table
from cudaresolve.render.inspect import render_inspect
from cudaresolve.render.output import Output
from cudaresolve.render.progress import LineLog, LiveCounts, format_bytes, listener_for
from cudaresolve.resolve.model import LockedPackage, Solution
from cudaresolve.target.model import Target

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"


def _console(width: int = 80) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=width, color_system=None, soft_wrap=True), buffer


def test_fold_path_breaks_only_after_a_separator() -> None:
    path = "/opt/conda/envs/training/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"
    lines = fold_path(path, 30).splitlines()
    assert "".join(lines) == path
    assert all(len(line) <= 30 for line in lines)
    assert all(line.endswith("/") for line in lines[:-1])
    assert fold_path("short", 30) == "short"
    assert fold_path("x" * 50, 20).splitlines() == ["x" * 20, "x" * 20, "x" * 10]  # no separator: cut


def test_db_show_fits_80_columns_with_every_name_whole() -> None:
    db = load_compat()
    console, buffer = _console()
    render_summary(db, console)
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    names = [row.name for row in db.summary().packages]
    assert "flashinfer-jit-cache" in names
    for name in names:  # each name starts a row of both tables, whole
        assert sum(line.split()[0] == name for line in lines if line.split()) == 2, name
    variants = [line for line in lines if line.startswith("torch ")][1]
    assert "cu118" in variants.split()


def test_inspect_folds_long_paths_at_separators(tmp_path: Path) -> None:
    deep = tmp_path / "a_rather_long_environment_name" / "lib" / "python3.11" / "site-packages" / "fbgemm_gpu"
    deep.mkdir(parents=True)
    shutil.copy(FIXTURES / "multi.so", deep / "fbgemm_gpu_experimental_gen_ai_py.so")
    report_ = inspect_file(deep / "fbgemm_gpu_experimental_gen_ai_py.so")
    console, buffer = _console()
    render_inspect([report_], console)
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for part in str(deep / "fbgemm_gpu_experimental_gen_ai_py.so").strip("/").split("/"):
        assert part in text, part  # every folder name whole
    for name in (*report_.sass, *report_.ptx):
        assert name in text.split(), name  # target names whole


def test_lock_table_fits_80_columns() -> None:
    index = "https://mirror.internal.example.com/artifactory/api/pypi/pytorch-remote/whl/cu128"
    packages = (
        LockedPackage(name="flashinfer-jit-cache", version="0.7.2.post1+cu128", index=index),
        LockedPackage(name="torch", version="2.11.0+cu128", index=index),
    )
    solution = Solution(target=Target(), variant="cu128", index_url=index, packages=packages)
    console, buffer = _console()
    render_solution(solution, console)
    rows = buffer.getvalue().splitlines()[1:]
    assert max(len(line) for line in rows) <= 80
    assert rows[1].split()[:2] == ["flashinfer-jit-cache", "0.7.2.post1+cu128"]
    torch = next(i for i, line in enumerate(rows) if line.startswith("torch "))
    assert "".join(line.split()[-1] for line in rows[1:torch]) == index  # folded after each '/', whole
    assert all(line.split()[-1].endswith("/") for line in rows[1 : torch - 1])


def _plain(text: str) -> bool:
    return text.isprintable() and all(cell_len(ch) > 0 for ch in text)


_CELL = st.text(alphabet=st.sampled_from("abz-./:+0179软件ü \t\x7f\x85\u200d\u0301"), max_size=14)
_ROW = st.tuples(_CELL, _CELL, st.lists(_CELL, min_size=1, max_size=3).map("\n".join))


@given(headers=st.tuples(_CELL, _CELL, _CELL), rows=st.lists(_ROW, max_size=6), width=st.integers(20, 90))
def test_plain_table_lays_out_what_rich_lays_out(headers: tuple[str, str, str], rows: list, width: int) -> None:
    """The lock table's fast layout gives rich's text for the same table, or None where rich would shrink it."""
    console, buffer = _console(width)
    table = Table(box=None, pad_edge=False)
    for header in headers:
        table.add_column(RichText(header), no_wrap=True)
    for row in rows:
        table.add_row(*(RichText(cell) for cell in row))
    console.print(table, soft_wrap=False)
    lines = plain_table(headers, rows, width)
    if lines is not None:
        assert "".join(f"{line}\n" for line in lines) == buffer.getvalue()
    elif not all(_plain(x) for x in (*headers, *(c.replace("\n", "") for r in rows for c in r))):
        pass  # a tab, a control, zero-width or combining character: left to rich
    elif any(len(c.split("\n")) > 1 and "" in c.split("\n") for r in rows for c in r):
        pass  # an empty line in a cell of several: left to rich
    else:
        assert sum(max(cell_len(x) for x in (h, *(r[i] for r in rows)) for x in x.split("\n")) for i, h in
                   enumerate(headers)) + 4 > width


def test_a_lock_table_reads_as_rich_lays_it_out() -> None:
    index = "https://mirror.internal.example.com/artifactory/api/pypi/pytorch-remote/whl/cu128"
    packages = tuple(LockedPackage(name=f"pkg-{i}", version=f"1.{i}", index=index) for i in range(40))
    solution = Solution(target=Target(), variant="cu128", index_url=index, packages=packages)
    console, buffer = _console()
    render_solution(solution, console)
    expected, table = _console(), Table(box=None, pad_edge=False)
    for header in ("package", "version", "index"):
        table.add_column(header, no_wrap=True)
    for p in packages:
        table.add_row(p.name, p.version, fold_path(index, 80 - 7 - 7 - 4))
    expected[0].print(table, soft_wrap=False)
    assert buffer.getvalue().splitlines()[1:] == expected[1].getvalue().splitlines()
    wide = (LockedPackage(name="n" * 70, version="1.0" + "0" * 12, index=index),)  # wider than 80: rich lays it out
    console, buffer = _console()
    render_solution(replace(solution, packages=wide), console)
    assert max(len(line) for line in buffer.getvalue().splitlines()[1:]) <= 80  # rich shrank it to fit
    assert "n" * 40 in buffer.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_which_display() -> None:
    pipe, terminal = io.StringIO(), _Terminal()
    assert listener_for(Output(), pipe) is None  # a file or a pipe: nothing
    assert isinstance(listener_for(Output(), terminal), LiveCounts)
    assert listener_for(Output(verbosity=-1), terminal) is None
    assert listener_for(Output(json=True), terminal) is None
    assert isinstance(listener_for(Output(verbosity=1), pipe), LineLog)  # -v was asked for: lines anywhere


def test_live_counts_and_lines() -> None:
    stream = _Terminal()
    live = listener_for(Output(), stream)
    assert isinstance(live, LiveCounts)
    with listening(live):
        report(Event(kind="page", label="https://pypi.org/simple/numpy/"))
        report(Event(kind="page-cached", label="https://pypi.org/simple/torch/"))
        report(Event(kind="metadata", label="https://files.example/numpy.whl.metadata"))
        report(Event(kind="bytes", amount=2_500_000))
        assert live.describe() == ("reading the indexes: 1 pages fetched, 1 from the cache, 1 metadata files, "
                                   "2.5 MB")
        report(Event(kind="pip-start", label="download", where="https://pypi.org/simple", step=1, steps=2))
    live.close()
    assert "pip download from https://pypi.org/simple (1/2)" in stream.getvalue()
    log = io.StringIO()
    lines = listener_for(Output(verbosity=1), log)
    assert lines is not None
    with listening(lines):
        report(Event(kind="page", label="https://pypi.org/simple/numpy/"))
        report(Event(kind="bytes", amount=10))
        report(Event(kind="pip-start", label="install", step=2, steps=2))
    assert log.getvalue().splitlines() == ["fetched https://pypi.org/simple/numpy/", "pip install (2/2)"]


@pytest.mark.parametrize(("amount", "text"), [(532, "532 B"), (12_400, "12.4 KB"), (3_100_000, "3.1 MB"),
                                              (7_000_000_000, "7.0 GB")])
def test_format_bytes(amount: int, text: str) -> None:
    assert format_bytes(amount) == text
