"""A GPU older than every build of a requested package: the ``gpu-too-old`` finding. Pure.

When every GPU build of a package that fits the request lacks code for a GPU, and the GPU is
older than the oldest code those builds carry (a Tesla K80, sm_37, against torch 2.8's sm_50 and
up), nothing else about the request matters: no variant, driver or Python makes one of those
builds run there. The finding says so first, with what still works: the newest release of the
package whose builds carry code for the GPU (any release, not only those that fit the request),
or that none in the database does, and the last driver branch that still drives the GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.db.gpudriver import gpu_arch, match_row
from cudaresolve.text.findings import reason
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.db.database import Build, CompatDB, PackageRelease
    from cudaresolve.resolve.catalog import Need
    from cudaresolve.target.model import Gpu, Target
    from cudaresolve.text.findings import Finding

__all__ = ["CODE", "too_old"]

CODE = "gpu-too-old"


def _gpu_builds(release: PackageRelease, variant: str | None) -> list[Build]:
    return [b for b in release.builds if b.variant != "cpu" and (variant is None or b.variant == variant)]


def _runs(build: Build, cc: ComputeCapability) -> bool:
    return coverage(build.archs, cc, ptx_jit_ok=True) is not Coverage.NONE


def too_old(db: CompatDB, target: Target, need: Need) -> Finding | None:
    """The ``gpu-too-old`` finding for ``need`` on ``target``, else None (a CPU target, a package
    without GPU builds, or a GPU that some fitting build runs on or that is newer than their code)."""
    if target.is_cpu:
        return None
    releases = db.packages(need.name)
    fitting = [
        b
        for r in releases
        if need.specifier.contains(r.version, prereleases=True)
        for b in _gpu_builds(r, need.variant)
    ]
    if not fitting:
        return None
    oldest = min(a.cc for b in fitting for a in b.archs) if any(b.archs for b in fitting) else None
    for gpu in target.gpus:
        if gpu.tegra or oldest is None or gpu.cc >= oldest or any(_runs(b, gpu.cc) for b in fitting):
            continue
        return _finding(db, target, need, gpu, oldest, releases)
    return None


def _finding(
    db: CompatDB, target: Target, need: Need, gpu: Gpu, oldest: ComputeCapability, releases: tuple[PackageRelease, ...]
) -> Finding:
    name, sm = need.name, gpu.cc.sm
    last = next((r for r in releases if any(_runs(b, gpu.cc) for b in _gpu_builds(r, None))), None)
    if last is not None:
        variants = ", ".join(dict.fromkeys(b.variant for b in _gpu_builds(last, None) if _runs(b, gpu.cc)))
        carried = Text.of("resolve.too-old-last", package=name, sm=sm, version=str(last.version), variants=variants)
    else:
        first = releases[-1].version if releases else None
        carried = Text.of("resolve.too-old-none", package=name, sm=sm, oldest=f"{name} {first}")
    model = db.find_gpu(gpu.name)
    arch = gpu_arch(model, gpu.cc, db.gpus, db.driver_gpus)
    row = match_row(db.driver_gpus, arch, gpu.cc, gpu.datacenter, model) if arch is not None else None
    branch = row.last_branch if row is not None and target.platform.startswith(("linux", "win")) else None
    driver = Text.of("resolve.too-old-branch", last=branch) if branch is not None else Text("resolve.too-old-driver")
    scope = (
        Text.of("resolve.too-old-scope", request=f"{name}{need.specifier}")
        if str(need.specifier)
        else Text("resolve.too-old-all")
    )
    return reason(
        CODE,
        package=name,
        required=oldest.sm,
        found=sm,
        gpu=gpu.name,
        cc=str(gpu.cc),
        scope=scope,
        carried=carried,
        driver=driver,
    )
