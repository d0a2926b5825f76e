"""The best variant a driver runs: the newest it runs fully, else the newest through minor-version compatibility. Pure.

``best_variant`` is the rule; ``variant_fix`` and ``variant_fixes`` are its sentences, used by
``doctor`` (a runtime the driver is too old for) and ``explain-error`` (driver insufficient,
CUDA unavailable, PTX from a newer toolchain).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.db.database import DriverSupport
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.core.versions import CudaVersion, DriverVersion
    from cudaresolve.db.database import CompatDB, VariantInfo
    from cudaresolve.target.model import Target

__all__ = ["VariantFit", "best_variant", "driver_cuda_max", "newest_variant", "variant_fix", "variant_fixes"]

_DEFAULT_PLATFORM = "linux_x86_64"


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantFit:
    """A variant and how the driver runs it: ``FULL`` or ``MINOR`` (minor-version compatibility)."""

    variant: VariantInfo
    support: DriverSupport


def newest_variant(variants: Iterable[VariantInfo]) -> VariantInfo | None:
    """The variant with the newest CUDA (``cpu`` and other variants without CUDA never count)."""
    with_cuda = [v for v in variants if v.cuda is not None]
    return max(with_cuda, key=lambda v: (v.cuda.major, v.cuda.minor) if v.cuda else (0, 0)) if with_cuda else None


def best_variant(
    db: CompatDB,
    *,
    cuda_max: CudaVersion | None,
    driver: DriverVersion | None,
    platform: str = _DEFAULT_PLATFORM,
    ccs: Sequence[ComputeCapability] = (),
    tegra: bool = False,
) -> VariantFit | None:
    """The newest variant whose CUDA is at most ``cuda_max`` (run fully), else the newest the driver runs
    through minor-version compatibility; ``None`` when neither exists. With the GPUs' ``ccs``, only a
    variant with some build of the anchor (torch) on ``platform`` that has code for every one of them counts
    (cu130 is no advice for a V100: its builds start at sm_75).

    Without the driver's version, a driver that runs CUDA ``cuda_max`` fully is at least that
    toolkit's minimum, which is enough to judge minor-version compatibility.
    """
    usable = [v for v in db.variants if v.cuda is not None and _has_code_for(db, v.name, ccs, platform, tegra)]
    if cuda_max is not None:
        full = newest_variant(v for v in usable if v.cuda is not None and v.cuda <= cuda_max)
        if full is not None:
            return VariantFit(variant=full, support=DriverSupport.FULL)
    floor = driver
    if floor is None and cuda_max is not None and (release := db.cuda_release(cuda_max)) is not None:
        floor = release.min_driver(platform)
    if floor is None:
        return None
    minor = newest_variant(
        v for v in usable if v.cuda and db.driver_support(v.cuda, floor, platform) is DriverSupport.MINOR
    )
    return VariantFit(variant=minor, support=DriverSupport.MINOR) if minor is not None else None


def _has_code_for(
    db: CompatDB, variant: str, ccs: Sequence[ComputeCapability], platform: str, tegra: bool
) -> bool:
    """Whether some anchor build of ``variant`` on ``platform`` runs on every GPU (SASS or PTX); True with no GPUs."""
    if not ccs:
        return True
    for release in db.packages(db.anchor):
        for build in release.builds:
            if build.variant != variant or build.withdrawn or not (
                "any" in build.platforms or platform in build.platforms
            ):
                continue
            if all(coverage(build.archs, cc, tegra=tegra) is not Coverage.NONE for cc in ccs):
                return True
    return False


def variant_fix(fit: VariantFit, packages: Sequence[str] = ()) -> Text:
    """"Install builds for cu118 …", saying when the driver runs them only through minor-version compatibility;
    with the installed GPU ``packages`` (doctor), the install command names every one of them, so that one
    run replaces the whole set and keeps each pairing (fbgemm-gpu and torchrec with torch)."""
    full = fit.support is DriverSupport.FULL
    fields: dict[str, object] = {"variant": fit.variant.name, "cuda": str(fit.variant.cuda),
                                 "index_url": fit.variant.index_url}
    if packages:
        key = "fix.use-variant-set" if full else "fix.use-variant-minor-set"
        return Text.of(key, packages=" ".join(packages), **fields)
    return Text.of("fix.use-variant" if full else "fix.use-variant-minor", **fields)


def driver_cuda_max(
    target: Target | None, db: CompatDB | None, found: CudaVersion | None = None
) -> tuple[CudaVersion | None, DriverVersion | None]:
    """The newest CUDA the driver runs fully (from the target, else ``found`` in a message), and the target's driver."""
    if target is not None and target.driver is not None:
        cuda = target.cuda_driver_max
        if cuda is None and db is not None:
            cuda = db.max_cuda_for_driver(target.driver, target.platform)
        return cuda, target.driver
    if target is not None and target.cuda_driver_max is not None:
        return target.cuda_driver_max, None
    return found, None


def variant_fixes(
    db: CompatDB | None,
    cuda_max: CudaVersion | None,
    driver: DriverVersion | None,
    platform: str = _DEFAULT_PLATFORM,
    ccs: Sequence[ComputeCapability] = (),
    tegra: bool = False,
) -> list[Text]:
    """The best variant as a fix (with code for the GPUs' ``ccs``); without a database, the newest CUDA to look
    for; with a driver no variant runs, say so; nothing when neither the driver nor its CUDA is known."""
    if db is None:
        return [Text.of("fix.use-cuda-max", cuda=str(cuda_max))] if cuda_max is not None else []
    fit = best_variant(db, cuda_max=cuda_max, driver=driver, platform=platform, ccs=ccs, tegra=tegra)
    if fit is not None:
        return [variant_fix(fit)]
    if driver is not None and ccs and best_variant(db, cuda_max=cuda_max, driver=driver, platform=platform):
        return [Text.of("fix.no-variant-for-gpus", driver=str(driver), sms=tuple(dict.fromkeys(c.sm for c in ccs)))]
    if driver is not None:
        return [Text.of("fix.no-variant", driver=str(driver))]
    return [Text.of("fix.use-cuda-max", cuda=str(cuda_max))] if cuda_max is not None else []
