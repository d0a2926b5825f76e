"""The ``no-wheel-page`` finding: a requested ``[[wheel-page]]`` package has no page for the torch asked. Pure.

PyG's extension packages and mmcv publish their CUDA wheels on one page per torch release and
variant (``db.pages``). When the user's torch requirement leaves out every torch minor that has a page
of a requested package on a variant the target runs, no wheel can be locked, whatever else the set
holds: the finding names the package, the torch asked and the torch minors that have a page (the way
out: ask for one of them), newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import Version

from cudaresolve.db.pages import PAGE, page_minors
from cudaresolve.text.findings import reason

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cudaresolve.db.database import CompatDB
    from cudaresolve.db.rows import PackageRelease
    from cudaresolve.resolve.catalog import Catalog, Need
    from cudaresolve.text.findings import Finding

__all__ = ["missing_pages"]


def _allows(need: Need, torch: Sequence[PackageRelease], minor: str) -> bool:
    """Whether ``need`` (the user's torch requirement) admits a torch release of ``minor``, any of its builds."""
    for release in torch:
        if f"{release.version.major}.{release.version.minor}" != minor:
            continue
        versions = [release.version, *(Version(f"{release.version}{b.local}") for b in release.builds if b.local)]
        if any(need.specifier.contains(v, prereleases=True) for v in versions):
            return True
    return False


def missing_pages(db: CompatDB, catalog: Catalog, requests: Sequence[Need]) -> list[Finding]:
    """One finding per requested page package whose pages all serve torch minors the user's torch request
    leaves out; none when torch is not constrained by the user."""
    asked = [n for n in requests if n.name == db.anchor and n.parent is None and n.specifier]
    if not asked:
        return []
    torch = db.packages(db.anchor)
    runnable = [v for v in catalog.runnable if v is not None]
    out: list[Finding] = []
    for need in requests:
        releases = [
            r for r in db.packages(need.name)
            if any(b.channel == PAGE for b in r.builds) and need.specifier.contains(r.version, prereleases=True)
        ]  # fmt: skip
        if need.parent is not None or not releases:
            continue
        minors = sorted({m for r in releases for m in page_minors(r, runnable)},
                        key=lambda m: tuple(int(p) for p in m.split(".")), reverse=True)  # fmt: skip
        if not any(all(_allows(t, torch, m) for t in asked) for m in minors):
            required = ",".join(str(t.specifier) for t in asked)
            out.append(reason("no-wheel-page", package=need.name, required=f"{db.anchor}{required}",
                              found=", ".join(minors) or "none", example=minors[0] if minors else "?"))  # fmt: skip
    return out
