"""The target's GPUs against its kernel driver: the ``driver-unsupported-gpu`` finding and its way out. Pure.

A driver that does not know a GPU runs no CUDA variant on it, whatever the CUDA version
(``cuda-compat`` replaces only the user-space driver). ``unsupported_gpus`` checks every GPU of
the target, detected or declared, against the ``[[driver-gpu]]`` rows and says, for the whole
box, the lowest driver that supports every GPU and the last branch that does; when an old GPU's
support ended before a newer GPU's began, no single driver supports both, and it says so.
``catalog`` rejects every CUDA variant with the finding; ``whynot`` adds ``way_out``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudaresolve.text.findings import reason
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.core.versions import DriverVersion
    from cudaresolve.db.database import CompatDB, GpuDriverCheck
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Finding

__all__ = ["GpuDriverVerdict", "unsupported_gpus", "way_out"]

CODE = "driver-unsupported-gpu"


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuDriverVerdict:
    """Why the target's driver cannot run its GPUs, and the range of drivers that could.

    ``floor``: the lowest driver that supports every GPU (None: no GPU names one); ``ceiling``:
    the last branch that supports every GPU (None: no GPU's support has ended); ``common``: some
    driver supports every GPU.
    """

    finding: Finding
    floor: DriverVersion | None
    ceiling: int | None
    common: bool
    gpus: tuple[str, ...]


def unsupported_gpus(db: CompatDB, target: Target) -> GpuDriverVerdict | None:
    """The verdict when ``target.driver`` does not support some GPU of the target; None when it does
    (or when there is no driver or no GPU to judge)."""
    driver = target.driver
    if driver is None or target.is_cpu:
        return None
    checks = [  # a GPU of a joined target (a fleet group) is judged against its own host's driver
        db.driver_supports_gpu(
            g.name, g.cc, g.driver or driver, datacenter=g.datacenter, tegra=g.tegra, platform=target.platform
        )
        for g in target.gpus
    ]
    if all(c.ok for c in checks):
        return None
    newest = max((c for c in checks if c.needed is not None), key=lambda c: c.needed or driver, default=None)
    oldest = min((c for c in checks if c.last_branch is not None), key=lambda c: c.last_branch or 0, default=None)
    floor = newest.needed if newest else None
    ceiling = oldest.last_branch if oldest else None
    stop = min((c.stop for c in checks if c.stop is not None), default=None)  # in the platform's numbering
    common = floor is None or stop is None or floor.branch < stop
    gpus = tuple(dict.fromkeys(c.gpu for c in checks))
    if not common and newest is not None and oldest is not None:
        detail = Text.of(
            "resolve.gpu-driver-none",
            old=oldest.gpu,
            old_arch=oldest.arch,
            last=ceiling,
            new=newest.gpu,
            new_arch=newest.arch,
            needed=floor,
        )
        finding = _finding(next(c for c in checks if not c.ok), driver, "none", detail)
    else:
        bad = next(c for c in checks if not c.ok and c.ended) if any(c.ended for c in checks) else None
        if bad is not None:
            key = "resolve.gpu-driver-ended" if floor is None else "resolve.gpu-driver-ended-from"
            detail = Text.of(key, last=ceiling, required=floor)
            finding = _finding(bad, driver, f"R{ceiling}", detail)
        else:
            bad = max((c for c in checks if not c.ok), key=lambda c: c.needed or driver)
            detail = Text.of("resolve.gpu-driver-needs", needed=bad.needed, required=floor)
            finding = _finding(bad, driver, str(floor), detail)
    return GpuDriverVerdict(finding=finding, floor=floor, ceiling=ceiling, common=common, gpus=gpus)


def _finding(check: GpuDriverCheck, driver: DriverVersion, required: str, detail: Text) -> Finding:
    return reason(CODE, required=required, found=str(driver), gpu=check.gpu, arch=check.arch, detail=detail)


def way_out(verdict: GpuDriverVerdict) -> tuple[str, Text]:
    """The one way out, as (spec, words): a driver upgrade, a driver of the last common branch, or
    separate machines when no single driver supports every GPU."""
    if not verdict.common:
        return "split-gpus", Text.of("alt.no-common-driver", gpus=verdict.gpus)
    if verdict.ceiling is not None:
        key = "alt.driver-branch-for-gpus" if verdict.floor is None else "alt.driver-branch-from-for-gpus"
        return f"driver R{verdict.ceiling}", Text.of(
            key, last=verdict.ceiling, required=verdict.floor, gpus=verdict.gpus
        )
    return f"driver>={verdict.floor}", Text.of("alt.driver-for-gpus", required=verdict.floor, gpus=verdict.gpus)
