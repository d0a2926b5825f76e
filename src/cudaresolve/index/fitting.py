"""Which file of each release installs on the target, and the release it makes. Pure.

A wheel ranks by its best tag for the target (``target.environment.tag_priority``), an sdist after
every wheel of its release (pip and uv prefer a wheel), a yanked file after everything else; a file
whose ``Requires-Python`` leaves the target's Python out, or cannot be read, does not install.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import TYPE_CHECKING, Final

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from cudaresolve.core.ondemand import MadeOnRead
from cudaresolve.resolve.model import FileKind
from cudaresolve.resolve.source import Artifact, IndexRelease
from cudaresolve.target.environment import tag_priority

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

    from packaging.tags import Tag
    from packaging.version import Version

    from cudaresolve.index.simple import IndexFile, Keep

__all__ = [
    "LazyReleases", "best_files", "file_rank", "index_release", "names_filter", "python_fits", "tag_filter",
]  # fmt: skip

#: Ranks of files within one release, after any wheel tag's (``file_rank``): an sdist, then anything yanked.
_SDIST_RANK: Final = 10**5
_YANKED_RANK: Final = 10**6
_VERDICTS: Final = 4096  # tag sets a name filter remembers (``tag_filter``): more than any page repeats


@lru_cache(maxsize=4096)
def python_fits(requires_python: str, python: str) -> bool | None:
    """Whether ``Requires-Python`` admits ``python`` (X.Y.Z); None when it is no specifier. Parsed once per
    distinct string: a few hundred strings stand behind the files of a large lock's every page."""
    try:
        return SpecifierSet(requires_python).contains(python, prereleases=True)
    except InvalidSpecifier:
        return None


def file_rank(file: IndexFile, tags: tuple[Tag, ...], python: str) -> int | None:
    """The file's rank for the target (lower is better), None when it does not install there: a wheel by its
    best tag, an sdist after every wheel. ``python``: the target's full version (``3.11.0``)."""
    if file.requires_python and python_fits(file.requires_python, python) is False:
        return None  # one that is no specifier is ignored, as pip ignores it on a link
    if file.sdist:
        return _SDIST_RANK
    return tag_priority(file.tags, tags)


def best_files(
    files: Iterable[IndexFile], tags: tuple[Tag, ...], python: str, *, exclude_newer: datetime | None = None
) -> dict[Version, tuple[IndexFile, bool]]:
    """Per version: the best file that installs on the target (a wheel, else the sdist), and whether every such
    file is yanked. Equal ranks: the first file name in sort order. ``exclude_newer`` (``--exclude-newer``, uv's
    rule): a file uploaded after it is not seen; one whose index states no upload time is kept (PEP 700 makes
    it optional)."""
    best: dict[Version, tuple[int, IndexFile]] = {}
    live: set[Version] = set()
    for file in files:
        if exclude_newer is not None and file.upload_time is not None and file.upload_time > exclude_newer:
            continue
        rank = file_rank(file, tags, python)
        if rank is None:
            continue
        if not file.yanked:
            live.add(file.version)
        seen = best.get(file.version)
        key = (rank + (_YANKED_RANK if file.yanked else 0), file.filename)
        if seen is None or key < (seen[0], seen[1].filename):
            best[file.version] = (key[0], file)
    return {v: (f, v not in live) for v, (_, f) in best.items()}


def index_release(project: str, version: Version, index: str, file: IndexFile, *, yanked: bool) -> IndexRelease:
    """The solver's view of ``file`` as the release ``version`` of ``project`` on ``index``."""
    artifact = Artifact(
        filename=file.filename,
        url=file.url,
        sha256=file.sha256,
        size=file.size,
        requires_python=file.requires_python,
        upload_time=file.upload_time.isoformat() if file.upload_time else None,
        kind=FileKind.SDIST if file.sdist else FileKind.WHEEL,
    )
    return IndexRelease(name=str(project), version=version, index_url=index, artifact=artifact, yanked=yanked)


class LazyReleases(MadeOnRead[IndexRelease]):
    """The releases of one page, newest first (``best_files``' versions, sorted), each made when first read
    (``core.ondemand``). A lock reads a few of a page's hundreds of versions: made at once, the releases of a
    190-package lock's pages were a tenth of its process's time. ``version`` and ``yanked`` read a release's
    version and flag without making it."""

    __slots__ = ("_best",)

    def __init__(self, project: str, index: str, best: Sequence[tuple[Version, tuple[IndexFile, bool]]]) -> None:
        super().__init__(len(best), partial(_release_at, project, index, best))
        self._best = best

    def version(self, index: int) -> Version:
        return self._best[index][0]

    def yanked(self, index: int) -> bool:
        return self._best[index][1][1]


def _release_at(
    project: str, index: str, best: Sequence[tuple[Version, tuple[IndexFile, bool]]], at: int
) -> IndexRelease:
    version, (file, yanked) = best[at]
    return index_release(project, version, index, file, yanked=yanked)


def tag_filter(tags: tuple[Tag, ...]) -> Keep:
    """A test on file names, cheap enough for every file of every page: a wheel only when one of the tags its
    name compresses (``cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64``) is among ``tags``; any other
    file is kept for the page parser to judge. Parsing a wheel's name (its version and tag objects) costs far
    more than the test, and most files of a large page (numpy's thousands) never fit one target."""
    return names_filter(frozenset(str(t) for t in tags))


def names_filter(wanted: frozenset[str]) -> Keep:
    """``tag_filter`` of the tags spelled ``wanted`` (``cp311-cp311-manylinux_2_28_x86_64``): what the page
    fetcher's child (``page_fetcher``) is sent, and filters by, as the filter's ``tags``."""
    import hashlib

    verdicts: dict[str, bool] = {}  # by a name's last three parts: a page repeats a few hundred of them

    def keep(filename: str) -> bool:
        if not filename.endswith(".whl"):
            return True
        stem = filename[:-4]
        if stem.count("-") < 4:
            return True  # not a wheel name: the parser refuses it
        triple = stem.rsplit("-", 3)
        last = f"{triple[1]}-{triple[2]}-{triple[3]}"
        verdict = verdicts.get(last)
        if verdict is None:
            py, abi, plat = triple[1].lower(), triple[2].lower(), triple[3].lower()
            verdict = any(
                f"{x}-{y}-{z}" in wanted for x in py.split(".") for y in abi.split(".") for z in plat.split(".")
            )  # fmt: skip
            if len(verdicts) < _VERDICTS:
                verdicts[last] = verdict
        return verdict

    digest = hashlib.sha256("\n".join(sorted(wanted)).encode()).hexdigest()[:16]
    keep.key = f"tags:{digest}"  # type: ignore[attr-defined]  # what it keeps (``parsed_cache``)
    keep.tags = wanted  # type: ignore[attr-defined]  # what it is made from (``names_filter``)
    return keep
