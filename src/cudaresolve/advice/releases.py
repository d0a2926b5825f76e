"""The releases of a package that carry native code (SASS) for every GPU of a set, newest first. Pure.

``releases_with_sass`` is the rule; ``releases_fix`` and ``release_fixes`` are its sentences,
used by ``doctor`` (a package without code for a GPU) and ``explain-error`` (no kernel image,
a GPU torch does not support).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.db.database import DriverSupport
from cudaresolve.text.model import Text, groups, paren

if TYPE_CHECKING:
    from collections.abc import Sequence

    from packaging.version import Version

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.core.versions import DriverVersion
    from cudaresolve.db.database import CompatDB

__all__ = ["ReleaseWithSass", "release_fixes", "releases_fix", "releases_with_sass"]

#: How many releases a fix names: enough to choose from, short enough to read.
RELEASES_SHOWN: Final = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseWithSass:
    """A release and its variants (sorted) whose builds run natively on every GPU asked about."""

    version: Version
    variants: tuple[str, ...]


def releases_with_sass(
    db: CompatDB,
    package: str,
    ccs: Sequence[ComputeCapability],
    *,
    tegra: bool = False,
    python: str | None = None,
    platform: str | None = None,
    driver: DriverVersion | None = None,
    limit: int = RELEASES_SHOWN,
) -> tuple[ReleaseWithSass, ...]:
    """The newest ``limit`` releases of ``package`` with a build whose SASS runs on every capability in ``ccs``.

    ``python`` and ``platform``, when given, leave out releases without wheels for that Python
    and builds without wheels for that platform (``doctor`` knows the environment; a pasted
    error log does not); ``driver``, when known, leaves out builds of variants it cannot run: a
    fix must run on the machine it is offered to.
    """
    out: list[ReleaseWithSass] = []
    for release in db.packages(package):
        if python is not None and release.python and python not in release.python:
            continue
        variants = sorted(
            {
                b.variant
                for b in release.builds
                if (platform is None or {platform, "any"} & set(b.platforms))
                and (driver is None or _runs(db, b.variant, driver, platform or "linux_x86_64"))
                and all(coverage(b.sass, cc, tegra=tegra, ptx_jit_ok=False) is Coverage.SASS for cc in ccs)
            }
        )
        if variants:
            out.append(ReleaseWithSass(version=release.version, variants=tuple(variants)))
        if len(out) >= limit:
            break
    return tuple(out)


def _runs(db: CompatDB, variant: str, driver: DriverVersion, platform: str) -> bool:
    """Whether ``driver`` runs ``variant``'s CUDA runtime (fully or under minor-version compatibility)."""
    info = db.variant(variant)
    if info is None or info.cuda is None:
        return True  # cpu builds need no driver
    return db.driver_support(info.cuda, driver, platform) is not DriverSupport.NONE


def _sms(ccs: Sequence[ComputeCapability]) -> tuple[str, ...]:
    return tuple(cc.sm for cc in ccs)


def releases_fix(package: str, ccs: Sequence[ComputeCapability], releases: Sequence[ReleaseWithSass]) -> Text:
    """"torch releases with native code for sm_61: 2.8.0 (cu126); 2.7.1 (cu118, cu126).\""""
    named = groups(*(paren(str(r.version), Text.of("word.list", items=r.variants)) for r in releases))
    return Text.of("fix.releases", package=package, sms=_sms(ccs), releases=named)


def release_fixes(
    db: CompatDB,
    packages: Sequence[str],
    ccs: Sequence[ComputeCapability],
    *,
    tegra: bool = False,
    driver: DriverVersion | None = None,
    platform: str | None = None,
) -> list[Text]:
    """Per package the database has: the releases that run natively on ``ccs`` and ``driver``, or that none does."""
    fixes = []
    for package in packages if ccs else ():
        if releases := releases_with_sass(db, package, ccs, tegra=tegra, driver=driver, platform=platform):
            fixes.append(releases_fix(package, ccs, releases))
        elif db.packages(package):
            fixes.append(Text.of("fix.no-releases", package=package, sms=_sms(ccs)))
    return fixes
