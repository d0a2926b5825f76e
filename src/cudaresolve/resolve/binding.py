"""The binding cause of a failure: which rejections the headline may name. Pure.

Among the builds that satisfy the user's constraints and the target's driver, the finding that
leads names the constraint that excludes them all; another finding stays only when it adds a way
out. So:

* ``runnable``: a build whose CUDA variant the driver cannot run is no reason of its own when
  builds the driver runs were rejected too (fbgemm-gpu 1.9.0's cu130 build on an R535 host: the
  cu12x builds' missing SM is the cause, the driver finding already says the rest);
* ``adds_way_out``: a release passed over for the target's Python or platform is worth naming
  only when one of its builds the driver runs carries code for every GPU of the target
  (otherwise another Python would not help);
* ``pin_fitting``: the releases of a requested package that the user's other requests allow, by
  version alone; when none of them is a candidate, their own rejections, not a conflict with a
  release the pin already ruled out, explain the failure (``xformers`` with ``torch==2.8.*`` on a
  GTX 1080 Ti: the releases for torch 2.8 carry no sm_61 code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from packaging.version import InvalidVersion, Version

from cudaresolve.core.archs import Coverage, coverage

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cudaresolve.db.database import CompatDB, PackageRelease
    from cudaresolve.resolve.catalog import Catalog, Need, Rejection
    from cudaresolve.text.findings import Finding

__all__ = ["WAY_OUT_CODES", "adds_way_out", "finding_adds_way_out", "of_releases", "pin_fitting", "runnable"]

#: Codes of a Python or platform a release was passed over for: named only where another one is a way out.
WAY_OUT_CODES: Final = ("no-wheel-for-python", "requires-python", "no-wheel-for-platform", "platform-too-old")


def runnable(catalog: Catalog, rejections: Iterable[Rejection], *, strict: bool = False) -> list[Rejection]:
    """``rejections`` without the builds of variants the driver cannot run, unless that leaves none
    (``strict``: then none)."""
    listed = list(rejections)
    kept = [r for r in listed if r.variant is None or r.variant == "cpu" or r.variant in catalog.runnable]
    return kept if kept or strict else listed


def _release(db: CompatDB, name: str, version: Version) -> PackageRelease | None:
    plain = Version(str(version).split("+")[0])
    return next((r for r in db.packages(name) if r.version == plain), None)


def adds_way_out(db: CompatDB, catalog: Catalog, rejection: Rejection) -> bool:
    """Whether naming ``rejection`` offers a way out (module docstring); True for every other code."""
    return _way_out(db, catalog, rejection.finding.code, rejection.name, rejection.version)


def finding_adds_way_out(db: CompatDB, catalog: Catalog, finding: Finding) -> bool:
    """``adds_way_out`` for a finding, by the package and release it names; True when it names none."""
    version = finding.text.get("version")
    if finding.package is None or not isinstance(version, str):
        return True
    try:
        parsed = Version(version)
    except InvalidVersion:
        return True
    return _way_out(db, catalog, finding.code, finding.package, parsed)


def _way_out(db: CompatDB, catalog: Catalog, code: str, name: str, version: Version) -> bool:
    if code not in WAY_OUT_CODES:
        return True
    target = catalog.target
    release = _release(db, name, version)
    if release is None or not release.builds or target.is_cpu:
        return True
    return any(
        b.variant in catalog.runnable and all(coverage(b.archs, g.cc, tegra=g.tegra) is not Coverage.NONE
                                              for g in target.gpus)
        for b in release.builds
        if b.variant != "cpu"
    )


def pin_fitting(db: CompatDB, requests: Sequence[Need], name: str) -> set[Version]:
    """Releases of ``name`` that its own requests and the other requests allow, by version alone."""
    asked: dict[str, list[Need]] = {}
    for need in requests:
        asked.setdefault(need.name, []).append(need)

    def allowed(dep_name: str, spec: object) -> bool:
        from packaging.specifiers import SpecifierSet

        wanted = [spec, *(n.specifier for n in asked[dep_name])]
        return any(
            all(isinstance(s, SpecifierSet) and s.contains(r.version, prereleases=True) for s in wanted)
            for r in db.packages(dep_name)
        )

    out: set[Version] = set()
    for release in db.packages(name):
        if not all(n.specifier.contains(release.version, prereleases=True) for n in asked.get(name, ())):
            continue
        deps = [r for r in release.requires if r.name in asked and r.name != name and db.packages(r.name)]
        if all(allowed(r.name, r.specifier) for r in deps):
            out.add(release.version)
    return out


def of_releases(rejections: Iterable[Rejection], versions: set[Version]) -> list[Rejection]:
    """The rejections of builds of ``versions`` (local tags ignored)."""
    return [r for r in rejections if Version(str(r.version).split("+")[0]) in versions]
