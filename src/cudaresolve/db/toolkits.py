"""Whether a source build for the GPUs here is a way out: some CUDA toolkit must compile SASS for every one. Pure.

``[[cuda]] nvcc-sm`` lists what each toolkit's nvcc targets: CUDA 13 dropped sm_50-sm_72, CUDA 12 never had
sm_35/sm_37, and sm_103 begins with CUDA 12.9. ``why-not`` asks of the variants of the builds it would replace;
``doctor``, ``explain-error`` and ``plan``, which do not know which toolkit a user would build with, of any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.db.database import CompatDB
    from cudaresolve.db.rows import CudaRelease

__all__ = ["sass_targets", "toolkit_compiles", "toolkit_gap"]


def sass_targets(release: CudaRelease) -> frozenset[ComputeCapability]:
    """The compute capabilities ``release``'s nvcc compiles SASS for (``nvcc-sm``, its PTX targets left out)."""
    return frozenset(a.cc for a in release.nvcc_sm if not a.ptx)


def toolkit_compiles(db: CompatDB, ccs: Sequence[ComputeCapability], variants: Iterable[str] | None = None) -> bool:
    """Whether the CUDA toolkit of one of ``variants`` (every toolkit the database knows when None) compiles SASS for
    every compute capability in ``ccs``."""
    if variants is None:
        releases = list(db.cuda)
    else:
        infos = (db.variant(name) for name in variants)
        releases = [r for i in infos if i is not None and i.cuda is not None if (r := db.cuda_release(i.cuda))]
    return any(set(ccs) <= sass_targets(r) for r in releases)


def toolkit_gap(db: CompatDB, ccs: Iterable[ComputeCapability]) -> tuple[CudaRelease | None, list[ComputeCapability]]:
    """When no CUDA toolkit compiles every one of ``ccs`` though each is compiled by some (sm_37 needs CUDA 11.x at
    most, sm_120 CUDA 12.8 at least): the toolkit that compiles the most of them, and those it leaves out; else
    (None, []), also when one of ``ccs`` is in no toolkit's list (the database does not say: no verdict)."""
    wanted = set(ccs)
    known = frozenset().union(*(sass_targets(r) for r in db.cuda))
    if not wanted or not wanted <= known or toolkit_compiles(db, sorted(wanted)):
        return None, []
    covered = [r for r in db.cuda if wanted & sass_targets(r)]
    best = max(covered, key=lambda r: len(wanted & sass_targets(r)), default=None)
    return best, sorted(wanted - sass_targets(best)) if best is not None else sorted(wanted)
