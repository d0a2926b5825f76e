"""Which PTX of a library the target's driver cannot JIT-compile: its PTX ISA is newer than the driver's CUDA. Pure.

A driver JIT-compiles PTX only up to the PTX ISA of its own CUDA release (``db.ptx_isa``); newer PTX fails
to load with ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``. The ISA of each PTX target is the one its fatbin entry
header carries (``FatbinListing.ptx_isa``), equal to the PTX text's ``.version``, compressed or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudaresolve.db.ptx_isa import parse_isa, ptx_jit

if TYPE_CHECKING:
    from cudaresolve.binaries.report import BinaryReport
    from cudaresolve.core.versions import CudaVersion, DriverVersion
    from cudaresolve.db.database import CompatDB
    from cudaresolve.target.model import Target

__all__ = ["StalePtx", "stale_ptx"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StalePtx:
    """PTX ``name`` at PTX ISA ``isa`` needs CUDA ``cuda``, which a driver fully supports from ``driver``."""

    name: str  # "compute_80"
    isa: str  # "9.0"
    cuda: CudaVersion
    driver: DriverVersion

    def to_dict(self) -> dict[str, str]:
        return {"ptx": self.name, "ptx_isa": self.isa, "cuda": str(self.cuda), "min_driver": str(self.driver)}


def stale_ptx(report: BinaryReport, db: CompatDB, target: Target) -> tuple[StalePtx, ...]:
    """The PTX targets of ``report`` that ``target.driver`` is known to be too old to JIT-compile."""
    if target.driver is None or report.listing is None:
        return ()
    found = []
    for name, isa in report.listing.ptx_isa.items():
        parsed = parse_isa(isa)
        jit = ptx_jit(db.ptx_isa, db.cuda, parsed, target.driver, target.platform) if parsed is not None else None
        if jit is not None and not jit.ok and jit.cuda is not None and jit.driver is not None:
            found.append(StalePtx(name=name, isa=isa, cuda=jit.cuda, driver=jit.driver))
    return tuple(found)
