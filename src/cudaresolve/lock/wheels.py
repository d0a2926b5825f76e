"""Match a solution's pins to real wheel files from index listings: URL, sha256, file name. Pure.

The embedded data says what was published; an index listing (``index.Listings``) says under
which file name and hash.  ``attach_files`` fills those in for every pinned package whose index
was listed and leaves the others as they were.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from cudaresolve.core.platforms import normalize_platform
from cudaresolve.errors import InvalidInput
from cudaresolve.text.findings import Notice, warning

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from packaging.tags import Tag

    from cudaresolve.index.client import IndexFile, Listings
    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.resolve.model import LockedPackage, Solution
    from cudaresolve.resolve.source import IndexRelease
    from cudaresolve.target.model import Target

__all__ = ["attach_files", "extra_notices", "not_listed", "pick_file", "sdist_notices", "tag_fits"]


def not_listed(package: LockedPackage, target: Target, mirrors: Mapping[str, str]) -> Notice:
    """The ``wheel-not-listed`` warning for a package locked without a file; when its index is fetched
    through a mirror, the warning names the mirror and its URL (the mirror lacks it, or is laid out
    in a way we do not read), not the original index."""
    from cudaresolve.index.mirrors import apply_mirror

    if package.url and not package.sha256:  # listed, but the page gave no sha256 (a flat directory of wheels)
        return warning("wheel-not-listed", "lock.wheel-not-hashed", url=package.url, package=package.name)
    served = apply_mirror(package.index.rstrip("/"), mirrors)
    fields = {"package": package.name, "version": package.version, "python": target.python,
              "platform": target.platform}
    if served != package.index.rstrip("/"):
        return warning("wheel-not-listed", "lock.wheel-not-on-mirror", mirror=served, index=package.index, **fields)
    return warning("wheel-not-listed", "lock.wheel-not-listed", index=package.index, **fields)


def sdist_notices(solution: Solution) -> list[Notice]:
    """One ``sdist-build`` warning per package locked as a source distribution: installing it runs its build."""
    from cudaresolve.resolve.model import FileKind

    return [
        warning("sdist-build", "lock.sdist-build", package=p.name, version=p.version, file=p.filename or p.url or "")
        for p in solution.packages
        if p.kind is FileKind.SDIST
    ]


def extra_notices(
    pins: Iterable[Candidate], missing: Callable[[IndexRelease, Iterable[str]], list[str]]
) -> list[Notice]:
    """One ``extra-not-provided`` warning per locked index release asked for an extra its metadata does not define
    (``missing``: ``IndexSource.extras_missing``): uv's warning; pip's too. The release is locked without it."""
    out = []
    for candidate in pins:
        release = candidate.source
        if not candidate.extras or release is None:
            continue
        for extra in missing(release, candidate.extras):
            out.append(warning("extra-not-provided", "lock.extra-not-provided", package=candidate.name,
                               version=str(candidate.version), extra=extra))  # fmt: skip
    return out


def tag_fits(tag: Tag, target: Target) -> bool:
    """Whether a wheel tag installs on the target's CPython and platform."""
    short = target.python.replace(".", "")
    if tag.interpreter not in (f"cp{short}", "py3", f"py{short}"):
        return False
    if tag.abi not in (f"cp{short}", "abi3", "none"):
        return False
    if tag.platform == "any":
        return True
    try:
        return normalize_platform(tag.platform) == target.platform
    except InvalidInput:
        return False


def pick_file(files: Iterable[IndexFile], version: str, target: Target) -> IndexFile | None:
    """The wheel of exactly ``version`` (local tag included) that fits the target; CPython-specific first."""
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    fitting = [f for f in files if f.version == wanted and not f.yanked and any(tag_fits(t, target) for t in f.tags)]
    fitting.sort(key=lambda f: (all(t.interpreter.startswith("py") for t in f.tags), f.filename))
    return fitting[0] if fitting else None


def attach_files(solution: Solution, listings: Listings) -> tuple[Solution, list[Notice]]:
    """Fill in url/sha256/filename from listings; a listed index without the file gives a warning."""
    notices: list[Notice] = list(listings.notices)
    packages = []
    for package in solution.packages:
        files = listings.files(package.index, package.name)
        if files is None:
            packages.append(package)
            continue
        found = pick_file(files, package.version, solution.target)
        if found is None:
            page = listings.page(package.index, package.name)
            mirrors = {package.index: page.served_from} if page is not None and page.mirrored else {}
            notices.append(not_listed(package, solution.target, mirrors))
            packages.append(package)
            continue
        packages.append(
            replace(
                package,
                url=found.url,
                sha256=found.sha256,
                filename=found.filename,
                requires_python=found.requires_python,
                size=found.size,
                upload_time=found.upload_time.isoformat() if found.upload_time else None,
            )
        )
    return replace(solution, packages=tuple(packages)), notices
