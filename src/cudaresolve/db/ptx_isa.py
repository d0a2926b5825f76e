"""The ``[[ptx-isa]]`` rows: which CUDA toolkit first writes each PTX ISA version, and whether a driver JITs it. Pure.

A driver JIT-compiles PTX only up to the PTX ISA of its own CUDA release: newer PTX fails to load with
``CUDA_ERROR_UNSUPPORTED_PTX_VERSION`` ("the provided PTX was compiled with an unsupported toolchain").
``ptx_jit`` answers, from a database's rows, for one PTX ISA version and one driver, the CUDA release that
PTX needs (the first ``[[cuda]]`` row at or above the toolkit of that ISA: NVIDIA's table names CUDA 12.7 for
PTX ISA 8.6, a release never published) and whether the driver fully supports it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.core.versions import CudaVersion, parse_cuda_version
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from cudaresolve.core.versions import DriverVersion
    from cudaresolve.db.fields import Collector
    from cudaresolve.db.rows import CudaRelease

__all__ = ["PtxIsa", "PtxJit", "check_ptx_isa", "parse_isa", "ptx_jit", "read_ptx_isa"]

_KEYS: Final = {"isa", "cuda", "source", "verified", "note"}
_ISA: Final = re.compile(r"^([0-9]{1,2})\.([0-9]{1,2})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class PtxIsa:
    """One row: the PTX ISA version ``isa`` is written by the CUDA ``cuda`` toolkit's nvcc."""

    isa: tuple[int, int]
    cuda: CudaVersion
    source: str
    verified: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class PtxJit:
    """Whether a driver JIT-compiles PTX of one ISA: ``cuda`` is the release that PTX needs, ``driver``
    the lowest driver that fully supports it; ``ok`` False only when the driver is known to be older."""

    ok: bool
    cuda: CudaVersion | None = None
    driver: DriverVersion | None = None


def parse_isa(text: str) -> tuple[int, int] | None:
    """``"9.0"`` -> ``(9, 0)``; anything else -> None."""
    match = _ISA.match(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def read_ptx_isa(c: Collector, row: Mapping[str, Any], path: str) -> PtxIsa | None:
    c.keys(row, _KEYS, path)
    raw = c.get(row, "isa", str, path, required=True)
    isa = parse_isa(raw) if raw is not None else None
    if raw is not None and isa is None:
        c.add(f"{path}.isa", Text.of("db.bad-choice", expected=("'MAJOR.MINOR'",), found=repr(raw[:40])))
    cuda = c.parse(f"{path}.cuda", parse_cuda_version, c.get(row, "cuda", str, path, required=True))
    source = c.source(row, path)
    if isa is None or cuda is None:
        return None
    return PtxIsa(isa=isa, cuda=cuda, source=source, verified=c.verified(row, path))


def check_ptx_isa(c: Collector, rows: Sequence[PtxIsa]) -> None:
    """Newest first, each ISA once, and a newer ISA never from an older toolkit."""
    for i, (newer, older) in enumerate(itertools.pairwise(rows)):
        if older.isa == newer.isa:
            c.add(f"ptx-isa[{i + 1}].isa", Text.of("db.duplicate-value", key="isa", value=_isa(older.isa)))
        elif older.isa > newer.isa or older.cuda > newer.cuda:
            c.add(f"ptx-isa[{i + 1}]", Text.of("db.order", later=_isa(older.isa), earlier=_isa(newer.isa)))


def _isa(isa: tuple[int, int]) -> str:
    return f"{isa[0]}.{isa[1]}"


def ptx_jit(
    rows: Sequence[PtxIsa], cuda: Sequence[CudaRelease], isa: tuple[int, int], driver: DriverVersion | None,
    platform: str,
) -> PtxJit:
    """Whether ``driver`` JIT-compiles PTX of ISA ``isa`` (module docstring), by a database's ``ptx_isa`` and ``cuda``.

    An ISA newer than every row needs at least the release after the newest row's toolkit; one between rows,
    at least the toolkit of the row below it. Undecided (no row, no driver, no such release) counts as ``ok``.
    """
    known = sorted(rows, key=lambda r: r.isa)
    below = [r for r in known if r.isa <= isa]
    if driver is None or not below:
        return PtxJit(ok=True)
    floor = below[-1].cuda
    newer = isa > known[-1].isa
    release = min((r for r in cuda if (r.version > floor if newer else r.version >= floor)),
                  key=lambda r: r.version, default=None)
    if release is None:
        return PtxJit(ok=True)
    required = release.min_driver(platform)
    return PtxJit(ok=driver >= required, cuda=release.version, driver=required)
