"""``[[ptx-isa]]``: the rows read and checked, and which driver JIT-compiles PTX of an ISA (``db.ptx_isa``)."""

from __future__ import annotations

from typing import Any

import pytest

from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.db.ptx_isa import ptx_jit
from cudaresolve.errors import InvalidCompatData
from test_doctor import DB_DATA

ROWS = [{"isa": "9.0", "cuda": "13.0", "source": "s"}, {"isa": "8.6", "cuda": "12.5", "source": "s"},
        {"isa": "8.5", "cuda": "12.5", "source": "s"}]


def _db(rows: list[dict[str, Any]]) -> CompatDB:
    return CompatDB.from_dict(dict(DB_DATA, **{"ptx-isa": rows}))


@pytest.mark.parametrize(("isa", "driver", "ok", "cuda"), [
    ((9, 0), "535.104.05", False, "13.0"),  # nvcc 13.0's PTX on a CUDA 12.2 driver
    ((9, 0), "580.65.06", True, "13.0"),
    ((8, 5), "535.104.05", False, "12.6"),  # CUDA 12.5 has no row of its own here: the next release, 12.6
    ((8, 7), "535.104.05", False, "12.6"),  # between rows: at least the toolkit of the row below
    ((9, 1), "580.65.06", True, None),  # newer than every row, and no release after 13.0 to name: undecided
    ((7, 0), "450.80.02", True, None),  # older than every row: every driver here JITs it
])
def test_the_driver_jits_ptx_only_up_to_its_cuda(
    isa: tuple[int, int], driver: str, ok: bool, cuda: str | None,
) -> None:
    db = _db(ROWS)
    jit = ptx_jit(db.ptx_isa, db.cuda, isa, parse_driver(driver), "linux_x86_64")
    assert (jit.ok, str(jit.cuda) if jit.cuda else None) == (ok, cuda)


def test_an_isa_newer_than_every_row_needs_the_next_release() -> None:
    db = _db([{"isa": "8.5", "cuda": "12.1", "source": "s"}])
    jit = ptx_jit(db.ptx_isa, db.cuda, (8, 9), parse_driver("535.104.05"), "linux_x86_64")
    assert (jit.ok, jit.cuda, str(jit.driver)) == (False, CudaVersion(12, 6), "560.28.03")


def test_rows_out_of_order_or_twice_are_refused() -> None:
    with pytest.raises(InvalidCompatData) as err:
        _db([{"isa": "8.0", "cuda": "12.0", "source": "s"}, {"isa": "9.0", "cuda": "13.0", "source": "s"},
             {"isa": "9.0", "cuda": "13.0", "source": "s"}, {"isa": "x", "cuda": "13.0", "source": "s"}])
    assert [path for path, _ in err.value.problems] == ["ptx-isa[3].isa", "ptx-isa[1]", "ptx-isa[2].isa"]


def test_the_shipped_table(tmp_path: Any) -> None:
    db = load_compat(cache_dir=tmp_path)
    assert {f"{r.isa[0]}.{r.isa[1]}": str(r.cuda) for r in db.ptx_isa if r.isa >= (8, 6)} == {
        "9.1": "13.1", "9.0": "13.0", "8.8": "12.9", "8.7": "12.8", "8.6": "12.7"}
    # PTX ISA 8.6 names CUDA 12.7, never released: 12.8 is the first release that JITs it
    assert str(ptx_jit(db.ptx_isa, db.cuda, (8, 6), parse_driver("565.57.01"), "linux_x86_64").cuda) == "12.8"
