"""The indexes as the solver's ``PackageSource``: listings and metadata for one target. Does I/O through IndexClient.

One index per package: a package the database places (a variant build) is read from its build's
index; every other package from the default index, or from the index ``[tool.cudaresolve]``
maps it to. A listing is fetched when the solver first meets a package and kept for the run;
metadata only for the releases the solver pins. Releases are filtered for the target: wheels
whose tags install there (best tag first), else the release's sdist (its PKG-INFO is its metadata
when static, PEP 643: ``index.sdist``), whose ``Requires-Python`` admits the target's Python. The
page's ``Requires-Python`` may be missing (a mirror that drops it), so the core metadata's, read for
a release the solver pins, has the last word (``python_excluded``), as in pip and uv.
Any failure (offline cache miss, index down, bad metadata) is ``IndexUnavailable`` naming the
package, which the lock flow turns into an incomplete answer; an sdist whose dependencies are
dynamic is built for its metadata through its build backend (``build_metadata``), as pip and uv do, when
the run allows builds; when it may not be built (``--no-build``) or its build fails, the release is unusable
(``unusable``): the solver passes it over for another, as it does a release whose Python does not fit, and a
warning names it. The walk ahead never builds: only a release the solver really tries is built.
"""

from __future__ import annotations

import re
import threading
from functools import partial
from typing import TYPE_CHECKING, Final

from packaging.utils import canonicalize_name as canonical_name

from cudaresolve.errors import BadMetadata, DynamicMetadata, IndexUnavailable
from cudaresolve.index.fitting import LazyReleases, best_files, index_release, python_fits
from cudaresolve.index.flat import read_listing
from cudaresolve.index.metadata import cached_core_metadata, fetch_core_metadata
from cudaresolve.index.simple import HINT, canonical_project
from cudaresolve.index.walk import WalkAhead
from cudaresolve.resolve.source import Unlisted, Unusable
from cudaresolve.text.findings import warning
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

    from packaging.requirements import Requirement
    from packaging.tags import Tag
    from packaging.version import Version

    from cudaresolve.index.build_metadata import BuildPolicy
    from cudaresolve.index.client import IndexClient, ProjectPage
    from cudaresolve.index.metadata import CoreMetadata
    from cudaresolve.index.simple import IndexFile
    from cudaresolve.resolve.source import Builds, IndexRelease
    from cudaresolve.text.findings import Notice

__all__ = ["IndexSource"]

#: The notices of a release passed over for another: said when the set holds another release of that package.
_PASSED_OVER: Final = frozenset({"sdist-unusable", "metadata-unusable"})
#: An extra a ``Requires-Dist`` marker tests, as ``str(Marker)`` writes it (values in double quotes).
_EXTRA_IN_MARKER: Final = re.compile(r'extra == "([^"]*)"|"([^"]*)" == extra')


class IndexSource:
    """``resolve.source.PackageSource`` over real indexes (``client``) and the on-disk cache."""

    def __init__(
        self,
        client: IndexClient,
        *,
        default_index: str,
        tags: tuple[Tag, ...],
        python: str,
        package_indexes: Mapping[str, str] | None = None,
        environment: Mapping[str, str] | None = None,
        skip: Iterable[str] = (),
        platform: str = "",
        build: BuildPolicy | None = None,
        extra_indexes: Iterable[str] = (),
        find_links: Iterable[str] = (),
        exclude_newer: datetime | None = None,
    ) -> None:
        """``environment``: the target's markers (for ``prefetch``); ``skip``: names ``prefetch`` leaves
        alone (the database's packages, whose builds come from their variants' indexes); ``platform``: the
        target's platform key, for messages; ``build``: whether and how an sdist with dynamic metadata is
        built for it (None: never)."""
        self._build = build
        self._newer = exclude_newer  # --exclude-newer: files uploaded after it are not seen (uv's rule)
        self._extra = tuple(i.rstrip("/") for i in extra_indexes)  # asked in order before the default index
        self._links = frozenset(i.rstrip("/") for i in find_links)  # of those, pages of links (``index.flat``)
        self._first: dict[str, str] = {}  # project -> the index it comes from (first-index rule)
        self._unusable: dict[tuple[str, str, str], Unusable] = {}  # releases whose metadata cannot be had
        self._client = client
        self._ahead = WalkAhead(self, skip=skip, environment=environment or {})
        self._default = default_index.rstrip("/")
        self._tags = tags
        self._python = python if python.count(".") >= 2 else f"{python}.0"
        self._indexes = {canonical_project(k): v.rstrip("/") for k, v in (package_indexes or {}).items()}
        self._cache = client.cache  # the policy's: pages and metadata kept between runs
        self._pages: dict[tuple[str, str], ProjectPage] = {}
        self._files: dict[tuple[str, str, str], IndexFile] = {}  # (index, name, version) -> chosen file
        self._requires: dict[tuple[str, str, str], tuple[Requirement, ...]] = {}
        self._requires_python: dict[tuple[str, str, str], str] = {}  # the metadata's, where it states one
        self._extras: dict[tuple[str, str, str], tuple[str, ...]] = {}  # the metadata's Provides-Extra
        self._best: dict[tuple[str, str], dict[Version, tuple[IndexFile, bool]]] = {}
        self._releases: dict[tuple[str, str], Sequence[IndexRelease]] = {}  # (index, project) -> newest first
        self._lock = threading.Lock()
        self._gates: dict[tuple[str, ...], threading.Lock] = {}  # one fetch per page or metadata file
        self._errors: dict[tuple[str, str], IndexUnavailable] = {}
        self._unreported: dict[tuple[str, str], Text] = {}  # failed pages only the walk asked for: their reasons
        self._failed: dict[str, tuple[Text, list[str]]] = {}  # index -> (first reason, projects)
        self._missing: dict[str, tuple[Text, list[str]]] = {}  # the same, offline: pages the cache lacks
        self._stale: dict[str, tuple[Text, float | None, list[str]]] = {}
        self._refused: dict[str, list[tuple[str, str]]] = {}
        self._platform = platform
        self._direct: dict[str, IndexRelease] = {}  # URL -> the release a direct reference pins
        self._direct_notices: list[Notice] = []
        self._metadata_notices: dict[tuple[str, str, str], Notice] = {}  # one per release, in the solver's order

    def notices(self, *, passed_over: Iterable[str] = (), pinned: Mapping[str, str] | None = None) -> list[Notice]:
        """What the user must hear about the listings: failures, stale copies, refused links (one per index).
        ``passed_over``: indexes whose failure the caller reports another way (nothing locked came from them);
        ``pinned``: name -> version of the set chosen, when there is one: a release's metadata notice counts
        only for a pinned release (a passed-over sdist, for a package the set holds)."""
        from cudaresolve.index.client import listing_notices

        skip = {i.rstrip("/") for i in passed_over}
        failed = {index: why for index, why in self._failed.items() if index not in skip}
        metadata = [
            notice for (_, name, version), notice in self._metadata_notices.items()
            if pinned is None or pinned.get(name) == version or (notice.code in _PASSED_OVER and name in pinned)
        ]  # fmt: skip
        return [*listing_notices(failed, self._stale, self._refused), *self._direct_notices, *metadata]

    def failures(self) -> dict[str, Text]:
        """The indexes a page of which could not be fetched in this run (offline: was not in the cache), each
        with the first reason."""
        with self._lock:
            return {index: why for index, (why, _) in (*self._missing.items(), *self._failed.items())}

    def index_for(self, name: str, *, quiet: bool = False) -> str:
        """``package-index``'s entry, else the first extra index or find-links page listing ``name`` (uv's rule).
        ``quiet``: asked for the walk's guess (``_page``)."""
        project = canonical_project(name)
        pinned = self._indexes.get(project)
        if pinned is not None or not self._extra:
            return pinned or self._default
        found = self._first.get(project)
        if found is None:
            listed = (i for i in self._extra if self._page(i, project, quiet=quiet).found)
            found = self._first[project] = next(listed, self._default)
        return found

    def prefetch(self, names: Iterable[str | Requirement], *, builds: Builds | None = None) -> None:
        """Walk ahead of the solver, in threads, without waiting (``index.walk``)."""
        self._ahead.prefetch(names, builds=builds)

    def prefetch_pages(self, pages: Iterable[tuple[str, str]]) -> None:
        """Fetch these listings ((index, name) each) on the walk's threads, without waiting (``index.walk``)."""
        self._ahead.prefetch_pages(pages)

    def close(self, *, abandon: bool = False) -> None:
        """Wait for the walk ahead to end (every request it started; the set it reads does not depend on
        timing), then stop its threads. ``abandon`` (Ctrl-C): start nothing more, drop what waits in the
        queue and return at once."""
        self._ahead.close(abandon=abandon)

    def _page(self, index: str, name: str, *, quiet: bool = False) -> ProjectPage:
        """One listing per run: fetched once even when threads ask together, and a failure is kept, so
        a failing index is never asked twice for the same page. ``quiet``: the walk's guess, whose failure is
        reported (``failures``, ``notices``) only once the solver asks for the page too."""
        key = (index.rstrip("/"), str(canonical_project(name)))
        page = self._pages.get(key)
        if page is not None:
            return page
        with self._lock:
            gate = self._gates.setdefault(key, threading.Lock())
        with self._ahead.holding(gate):
            page = self._pages.get(key)
            if page is not None:
                return page
            failed = self._errors.get(key)
            if failed is not None:
                self._report(key, quiet)
                raise IndexUnavailable(failed.text, hint=failed.hint_text)
            try:
                page = read_listing(self._client, self._links, *key)  # a page of links, else a project page
            except IndexUnavailable as e:
                error = IndexUnavailable(
                    Text.of("index.package-unavailable", package=key[1], reason=e.text), hint=e.hint_text or HINT
                )
                with self._lock:
                    self._errors[key], self._unreported[key] = error, e.text
                self._report(key, quiet)
                raise error from e
            with self._lock:
                self._pages[key] = page
                if page.refused:
                    self._refused.setdefault(key[0], []).extend(page.refused)
                if page.source == "stale-cache":
                    reason = page.error or Text("index.network-error")
                    self._stale.setdefault(key[0], (reason, page.fetched_at, []))[2].append(key[1])
        return page

    def _settled(self, index: str, name: str) -> bool:
        """Whether the page of ``name`` on ``index`` was read or failed in this run (``index`` without its ``/``)."""
        key = (index, str(canonical_project(name)))
        return key in self._pages or key in self._errors

    def _report(self, key: tuple[str, str], quiet: bool) -> None:
        """Count the failed page ``key`` among its index's failures, once, unless ``quiet``. Offline, a cache miss
        is what the user asked for: no notice of a failing index, but it may have cost a better set, which the
        lock must say (``failures``)."""
        with self._lock:
            reason = None if quiet else self._unreported.pop(key, None)
            if reason is not None:
                where = self._missing if self._client.offline else self._failed
                where.setdefault(key[0], (reason, []))[1].append(key[1])

    def _best_files(self, page: ProjectPage) -> dict[Version, tuple[IndexFile, bool]]:
        """Per version: the best fitting file (a wheel, else the sdist), and whether every fitting file is yanked
        (once per page)."""
        key = (page.index_url, str(page.project))
        found = self._best.get(key)
        if found is None:
            found = self._best[key] = best_files(page.files, self._tags, self._python, exclude_newer=self._newer)
        return found

    def releases(self, name: str) -> Sequence[IndexRelease]:
        return self._releases_of(name, quiet=False)

    def _releases_of(self, name: str, *, quiet: bool) -> Sequence[IndexRelease]:
        index = self.index_for(name, quiet=quiet)
        page = self._page(index, name, quiet=quiet)
        out = self._releases.get(key := (index, str(page.project)))  # once per page: the solver and walk re-ask
        if out is None:
            best = sorted(self._best_files(page).items(), reverse=True)
            out = self._releases[key] = LazyReleases(page.project, index, best) if page.found else Unlisted(index)
        return out

    def _file_of(self, key: tuple[str, str, str]) -> IndexFile | None:
        """The file of the release ``key`` (index, project, version) that ``releases`` or ``build_release`` gave: the
        best file of that version on its page, as read this run."""
        file = self._files.get(key)
        if file is None:
            from packaging.version import InvalidVersion, Version

            page = self._pages.get((key[0].rstrip("/"), key[1]))  # ``_page``'s key
            best = self._best_files(page) if page is not None else None
            try:
                found = best.get(Version(key[2])) if best is not None else None
            except InvalidVersion:
                found = None
            if found is not None:
                file = self._files[key] = found[0]
        return file

    def build_release(self, name: str, version: str, index_url: str) -> IndexRelease | None:
        return self._build_release(name, version, index_url, quiet=False)

    def _build_release(self, name: str, version: str, index_url: str, *, quiet: bool) -> IndexRelease | None:
        index = index_url.rstrip("/")
        page = self._page(index, name, quiet=quiet)
        key = (index, str(page.project), version)
        file = self._files.get(key)
        if file is None:
            for candidate_version, (found, _) in self._best_files(page).items():
                if str(candidate_version) == version:
                    file = found
                    self._files[key] = file
        if file is None:
            return None
        return index_release(page.project, file.version, index, file, yanked=file.yanked)

    def direct_release(self, name: str, url: str) -> IndexRelease:
        """The wheel ``name @ url`` names (``index.direct.direct_release``), read once per run."""
        from cudaresolve.index.direct import direct_release

        found = self._direct.get(url)
        if found is not None:
            return found
        release, requires, notice = direct_release(
            self._client, self._cache, name, url, tags=self._tags, python=self._python, platform=self._platform,
            build=self._build,
        )
        self._requires[("", release.name, str(release.version))] = requires
        self._direct_notices.extend([notice] if notice is not None else [])
        self._direct[url] = release
        return release

    def _fits_python(self, requires_python: str) -> bool | None:
        """Whether ``Requires-Python`` admits the target's Python; None when it cannot be read."""
        return python_fits(requires_python, self._python)

    def python_excluded(self, release: IndexRelease) -> str | None:
        """The ``Requires-Python`` of ``release``'s core metadata when it leaves the target's Python out, else
        None (reads the metadata, as ``requires`` does). One that is no specifier is ignored with a warning, as
        pip does and as a direct reference's is (``_fits_python``). A direct reference was judged when read."""
        self.requires(release)
        key = (release.index_url, release.name, str(release.version))
        required = self._requires_python.get(key)
        if required is None:
            return None
        fits = self._fits_python(required)
        if fits is None and key not in self._metadata_notices:
            self._metadata_notices[key] = warning(
                "invalid-requires-python", "lock.invalid-requires-python", package=release.name,
                version=str(release.version), file=release.artifact.filename, required=required[:200],
            )  # fmt: skip
        return required if fits is False else None

    def requires(self, release: IndexRelease) -> Sequence[Requirement]:
        found = self._requires_of(release, self._build)
        releases = self._releases.get((release.index_url, release.name))
        if releases is not None:  # the solver backtracking over a package's releases: the next ones read ahead
            self._ahead.solver_read(releases, release)
        return found

    def unusable(self, release: IndexRelease) -> Unusable | None:
        """Why ``release``'s metadata cannot be had (an sdist that may not or could not be built), else None."""
        self.requires(release)
        return self._unusable.get((release.index_url, release.name, str(release.version)))

    def _requires_of(self, release: IndexRelease, build: BuildPolicy | None) -> Sequence[Requirement]:
        """The requirements, read once per release whoever asks first; ``build``: None for the walk ahead, which
        never builds (a dynamic sdist raises there, and the solver asks again)."""
        key = (release.index_url, release.name, str(release.version))
        found = self._requires.get(key)
        if found is not None:
            return found
        with self._lock:
            gate = self._gates.setdefault(("metadata", *key), threading.Lock())
        with self._ahead.holding(gate):  # one read per release, whether the walk or the solver asks first
            return self._read_requires(key, release, build)

    def _read_requires(
        self, key: tuple[str, str, str], release: IndexRelease, build: BuildPolicy | None
    ) -> Sequence[Requirement]:
        found = self._requires.get(key)
        if found is not None:
            return found
        if key in self._unusable:
            return ()
        file = self._file_of(key)
        if file is None:  # releases()/build_release() always record it first
            raise IndexUnavailable(
                Text.of("index.package-unavailable", package=release.name, reason=release.artifact.url), hint=HINT
            )
        twin = partial(self._twin, key, file) if file.sdist else None
        try:
            return self._keep(key, fetch_core_metadata(self._client, self._cache, file, build=build, twin=twin))
        except (DynamicMetadata, BadMetadata) as e:  # BadMetadata: read, but malformed or another project's
            if isinstance(e, DynamicMetadata) and build is None and self._build is not None:
                raise  # the walk's guess: the solver asks again, and may build it
            # passed over for another release, as pip and uv do
            self._unusable[key] = Unusable(why=e.text, malformed=isinstance(e, BadMetadata))
            code = "sdist-unusable" if isinstance(e, DynamicMetadata) else "metadata-unusable"
            self._metadata_notices[key] = warning(
                code, "lock.sdist-unusable", package=release.name, version=str(release.version), reason=e.text
            )
            return ()
        except IndexUnavailable as e:
            raise IndexUnavailable(
                Text.of("index.package-unavailable", package=f"{release.name} {release.version}", reason=e.text),
                hint=e.hint_text or HINT,
            ) from e

    def _twin(self, key: tuple[str, str, str], sdist: IndexFile) -> IndexFile | None:
        """A wheel of the release ``key`` for another target, whose metadata stands for that of its sdist when the
        sdist's is not static (uv's rule); one not yanked, with a PEP 658 file, first. None when the page lists
        none (under ``--exclude-newer`` as the other files are) or cannot be read again."""
        page = self._pages.get((key[0].rstrip("/"), key[1]))  # ``_page``'s key
        if page is None or not page.found:
            return None
        try:
            files = self._client.every_wheel(page)
        except IndexUnavailable:
            return None
        newer = self._newer
        wheels = [f for f in files if f.version == sdist.version and not f.sdist
                  and (newer is None or f.upload_time is None or f.upload_time <= newer)]  # fmt: skip
        return min(wheels, key=lambda f: (f.yanked, not f.core_metadata, f.filename), default=None)

    def _keep(self, key: tuple[str, str, str], meta: CoreMetadata) -> Sequence[Requirement]:
        if meta.built:
            self._metadata_notices[key] = warning(
                "sdist-metadata-built", "lock.sdist-metadata-built", package=key[1], version=key[2],
                file=self._files[key].filename, python=self._python,  # recorded by ``_file_of``
            )  # fmt: skip
        if meta.requires_python:
            self._requires_python[key] = meta.requires_python
        self._extras[key] = meta.provides_extra
        self._requires[key] = meta.requires_dist
        return meta.requires_dist

    def extras_missing(self, release: IndexRelease, extras: Iterable[str]) -> list[str]:
        """Which of ``extras`` the metadata of ``release``, once read, neither names in ``Provides-Extra`` nor uses
        in a ``Requires-Dist`` marker (PEP 685's names); [] before its metadata is read."""
        key = (release.index_url, release.name, str(release.version))
        if key not in self._requires:
            return []
        markers = " ".join(str(r.marker) for r in self._requires[key] if r.marker is not None)
        named = {*self._extras.get(key, ()), *(a or b for a, b in _EXTRA_IN_MARKER.findall(markers))}
        provided = {canonical_name(e) for e in named}
        return sorted(e for e in extras if canonical_name(e) not in provided)

    def _cached_requires(self, release: IndexRelease) -> bool:
        """Whether ``release``'s metadata is at hand without a request (kept, or read now from the cache)."""
        key = (release.index_url, release.name, str(release.version))
        file = self._file_of(key)
        if key in self._requires or file is None:
            return key in self._requires
        with self._lock:
            gate = self._gates.setdefault(("metadata", *key), threading.Lock())
        if not gate.acquire(blocking=False):  # a thread is reading it
            return False
        try:
            if key not in self._requires:
                meta = cached_core_metadata(self._cache, file, build=self._build)
                if meta is None:
                    return False
                self._keep(key, meta)
            return True
        finally:
            gate.release()


