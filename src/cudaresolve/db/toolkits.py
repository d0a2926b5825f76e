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

__all__ = ["sass_targets", "toolkit_compiles"]


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
