"""The walk ahead of the solver: listings and metadata read in threads before the solver asks for them. Does I/O
through the ``IndexSource`` it walks for.

``prefetch`` walks, in threads and without waiting, from each name or requirement to its newest release (the
newest a requirement allows): its listing and its metadata, then the same for what that release requires on the
target (markers evaluated, with the requirement's extras), as far as ``_PREFETCH_LIMIT`` walks, as uv does. A
database package (the source's ``skip``) is walked only along ``builds``: the builds the solver will try for a
requirement, best first (``resolve.ahead``), of which the first its index lists is read, as the solver passes
over a build its index cannot give. ``builds`` reads the solver's catalog, so it runs only on the thread that
calls ``prefetch``: a database package the walk's own threads meet waits for that thread, at its next ``prefetch``
or while it waits on a page or metadata file another thread reads (``holding``).

A package whose releases the solver reads one after another (it is backtracking over them: boto3 beside an old
botocore, hundreds of releases) has the metadata of its next older wheels read ahead too, ``_BATCH`` at a time
once the solver has read ``_BATCH_AFTER`` of them (``solver_read``), as uv's batch prefetch does.

The solver goes on meanwhile and waits only for the page or metadata file it asks for (one fetch each, whoever
asks first: the source's gates). A guess that was wrong costs a request or two; a page the walk alone asked for
and could not have is reported only once the solver asks for it too (``IndexSource._page``'s ``quiet``). What
the cache holds fresh is left to the solver, which reads it when it gets there: a warm run starts no thread.
"""

from __future__ import annotations

import contextlib
import threading
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Final, Protocol

from packaging.specifiers import SpecifierSet

from cudaresolve.errors import CudaResolveError, IndexUnavailable
from cudaresolve.index.simple import canonical_project
from cudaresolve.index.tasks import TaskPool
from cudaresolve.resolve.source import MarkerVerdicts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    from packaging.requirements import Requirement

    from cudaresolve.index.build_metadata import BuildPolicy
    from cudaresolve.index.client import IndexClient
    from cudaresolve.resolve.source import Builds, IndexRelease

__all__ = ["WalkAhead", "Walked"]

#: Threads that fetch ahead of the solver, and how many names they may walk (bounds on work, not facts).
_PREFETCH_THREADS: Final = 16
_PREFETCH_LIMIT: Final = 500
#: After the solver read this many releases of one package, the metadata of its next ``_BATCH`` older wheels is
#: read ahead (a bound on work, not a fact).
_BATCH_AFTER: Final = 3
_BATCH: Final = 50
#: How often the solver's thread, waiting on a gate, looks for database packages the walk met (a bound on delay).
_WAKE_SECONDS: Final = 0.01


class Walked(Protocol):
    """What the walk reads through: ``index.source.IndexSource`` (its gates, memos and kept failures)."""

    @property
    def _client(self) -> IndexClient: ...

    def index_for(self, name: str, *, quiet: bool = False) -> str: ...

    def _settled(self, index: str, name: str) -> bool: ...

    def _page(self, index: str, name: str, *, quiet: bool = False) -> object: ...

    def _releases_of(self, name: str, *, quiet: bool) -> Sequence[IndexRelease]: ...

    def _build_release(self, name: str, version: str, index_url: str, *, quiet: bool) -> IndexRelease | None: ...

    def _requires_of(self, release: IndexRelease, build: BuildPolicy | None) -> Sequence[Requirement]: ...

    def _cached_requires(self, release: IndexRelease) -> bool: ...


class WalkAhead:
    """The walk of one ``IndexSource``: ``skip``, names left to ``builds``; ``environment``, the target's markers."""

    def __init__(self, source: Walked, *, skip: Iterable[str], environment: Mapping[str, str]) -> None:
        self._source = source
        self._skip = frozenset(skip)
        self._verdicts = MarkerVerdicts(environment)  # its own: the solver's is the solver thread's
        self._walked: set[tuple[str, str]] = set()  # (project, specifier and extras, or chain) walked already
        self._met: list[Requirement] = []  # database packages the walk's threads met, for the solver's thread
        self._builds: tuple[int, Builds] | None = None  # (thread, builds) of the last ``prefetch`` given builds
        self._draining = False  # that thread is in ``_drain``: a wait inside it drains nothing more
        self._lock = threading.Lock()
        self._tasks = TaskPool(_PREFETCH_THREADS, "walk")
        self._reads: dict[tuple[str, str], set[int]] = {}  # (index, project) -> positions of the releases read
        self._batched: dict[tuple[str, str], int] = {}  # (index, project) -> the position read ahead up to

    def solver_read(self, releases: Sequence[IndexRelease], release: IndexRelease) -> None:
        """The solver read the metadata of ``release``, one of ``releases`` (its page's, newest first): from the
        ``_BATCH_AFTER``-th such read of one package on, the metadata of the next ``_BATCH`` older wheels that are
        neither yanked nor pre-releases is read: from the cache at once, else from the index on the walk's threads,
        without waiting (a warm run starts no thread)."""
        from cudaresolve.core.ondemand import MadeOnRead
        from cudaresolve.resolve.model import FileKind

        at = releases.ids.get(id(release)) if isinstance(releases, MadeOnRead) else None
        if at is None or self._source._client.offline:
            return
        key = (release.index_url, release.name)
        with self._lock:
            read = self._reads.setdefault(key, set())
            read.add(at)  # a release read again (``name[extra]`` and ``name`` ask for it apart) counts once
            start = max(at + 1, self._batched.get(key, 0))
            if len(read) < _BATCH_AFTER or start > at + _BATCH // 2:  # not backtracking, or far enough ahead
                return
            end = self._batched[key] = min(len(releases), start + _BATCH)
        for later in (releases[i] for i in range(start, end)):
            if later.yanked or later.version.is_prerelease or later.artifact.kind is not FileKind.WHEEL:
                continue
            if not self._source._cached_requires(later):  # what the cache holds is read here: no thread for it
                self._tasks.submit(self._quiet_requires, later)

    def _quiet_requires(self, release: IndexRelease) -> None:
        with contextlib.suppress(CudaResolveError):  # the solver meets it itself when it gets there
            self._source._requires_of(release, None)

    def prefetch(self, names: Iterable[str | Requirement], *, builds: Builds | None = None) -> None:
        """Walk from ``names`` (module docstring); ``builds``: the builds of a database package the solver tries."""
        if not self._source._client.offline:
            if builds is not None:
                self._builds = (threading.get_ident(), builds)
            with self._lock:
                met, self._met = self._met, []
            self._walk([*met, *names], builds)

    @contextmanager
    def holding(self, gate: threading.Lock) -> Iterator[None]:
        """``gate`` held for the block (a page or metadata file that one thread reads for all). While the solver's
        thread waits for it, that thread walks the database packages the walk's threads met, every
        ``_WAKE_SECONDS``: it would otherwise leave them to its next ``prefetch``, which a long wait delays (torch,
        met through ``transformers[torch]`` while the solver waits for other pages)."""
        given = self._builds
        if given is None or given[0] != threading.get_ident():
            gate.acquire()  # a walk thread, or no builds yet: nothing to work out while it waits
        elif not gate.acquire(blocking=False):
            while True:
                self._drain()
                if gate.acquire(timeout=_WAKE_SECONDS):
                    break
        try:
            yield
        finally:
            gate.release()

    def _drain(self) -> None:
        """What the walk's threads met, walked now along the last ``builds`` (``holding`` calls it only on the thread
        that gave them)."""
        given = self._builds
        if given is None or not self._met or self._draining:
            return
        with self._lock:
            met, self._met = self._met, []
        self._draining = True
        try:
            with contextlib.suppress(CudaResolveError):  # the solver meets it itself when it gets there
                self._walk(met, given[1])
        finally:
            self._draining = False

    def _walk(self, found: Iterable[str | Requirement], builds: Builds | None) -> None:
        """``builds``: None on the walk's threads, which leave a database package to ``prefetch``: they record it
        before they send the other names, so a ``prefetch`` after those names' requests finds it. The solver's
        thread sends the other names first: a database package's builds may first need its table read (tens of
        ms each)."""
        named = [(str(canonical_project(i if isinstance(i, str) else i.name)), i) for i in found]
        named.sort(key=lambda pair: (pair[0] in self._skip) == (builds is not None))
        for project, item in named:
            spec = SpecifierSet() if isinstance(item, str) else item.specifier
            extras = () if isinstance(item, str) else tuple(sorted(item.extras))
            if project in self._skip:
                if builds is None and not isinstance(item, str) and self._first_walk((project, repr(item))):
                    with self._lock:
                        self._met.append(item)
                chain = tuple(builds(item)) if builds is not None and not isinstance(item, str) else ()
                if chain and self._first_walk((project, repr((chain, extras)))) and not self._cached_chain(chain):
                    self._tasks.submit(self._walk_from, partial(self._first_listed, chain), extras)
                continue
            find = partial(self._newest, project, spec)
            # another pin of a name walked before is another release to read
            if self._first_walk((project, repr((str(spec), extras)))) and not self._cached_step(project, find):
                self._tasks.submit(self._walk_from, find, extras)

    def _first_walk(self, key: tuple[str, str]) -> bool:
        """Whether ``key`` was never walked before and the walk may go on (``_PREFETCH_LIMIT``)."""
        with self._lock:
            if key in self._walked or len(self._walked) >= _PREFETCH_LIMIT:
                return False
            self._walked.add(key)
            return True

    def _newest(self, name: str, spec: SpecifierSet) -> IndexRelease | None:
        found = (r for r in self._source._releases_of(name, quiet=True) if not (r.yanked or r.version.is_prerelease))
        return next((r for r in found if spec.contains(r.version)), None)

    def _first_listed(self, chain: Sequence[tuple[str, str, str]]) -> IndexRelease | None:
        """The first of ``chain``'s builds ((name, version, index) each) that its index lists, else None."""
        for build in chain:
            with contextlib.suppress(IndexUnavailable):
                if (release := self._source._build_release(*build, quiet=True)) is not None:
                    return release
        return None

    def _cached_chain(self, chain: Sequence[tuple[str, str, str]]) -> bool:
        """``_cached_step`` for ``_first_listed``: every listing up to the first that lists its build is fresh in
        the cache, and so is that build's metadata."""
        for name, version, index in chain:
            try:
                if self._needs_request(index, name):
                    return False
                release = self._source._build_release(name, version, index, quiet=True)
                if release is not None:
                    return self._source._cached_requires(release)
            except CudaResolveError:  # DynamicMetadata, a cached file that does not match: the walk's to meet
                return False
        return True

    def _cached_step(self, name: str, find: Callable[[], IndexRelease | None]) -> bool:
        """Whether a step of the walk would send no request: the listing of ``name`` is fresh in the cache, and
        so is the metadata of the release ``find`` picks there. The step is then left to the solver, which
        reads both when it gets there and walks on from its own pins (``prefetch`` of what each pinned release
        requires): a warm run starts no thread. In doubt (a fetch under way, a failure): False."""
        try:
            if self._needs_request(self._source.index_for(name, quiet=True), name):
                return False
            release = find()
            return release is None or self._source._cached_requires(release)
        except CudaResolveError:
            return False

    def _needs_request(self, index: str, name: str) -> bool:
        """Whether reading the listing of ``name`` on ``index`` would send a request: never for one this run read
        (or failed) already, whose cache entry need not be read again for it; else as the client says."""
        return not self._source._settled(index.rstrip("/"), name) and self._source._client.needs_request(index, name)

    def _walk_from(self, find: Callable[[], IndexRelease | None], extras: Sequence[str]) -> None:
        """Walk on from what the release ``find`` gives requires on the target, with ``extras``."""
        try:
            release = find()
            requires = self._source._requires_of(release, None) if release else ()
            found = self._verdicts.applying(requires, extras)
        except CudaResolveError:  # a guess that failed: the solver asks again, and then it counts
            return
        self._walk(found, None)

    def close(self, *, abandon: bool = False) -> None:
        """Wait for every task of the walk (``TaskPool.close``); ``abandon``: drop what waits and return at once."""
        self._tasks.close(abandon=abandon)

    def prefetch_pages(self, pages: Iterable[tuple[str, str]]) -> None:
        """Fetch these listings ((index, name) each) on the walk's threads, those not fetched yet, without
        waiting; a failure waits for the solver to ask (it is kept, as any page's)."""
        wanted = [
            p for p in dict.fromkeys((i.rstrip("/"), str(canonical_project(n))) for i, n in pages)
            if not self._source._settled(*p) and self._source._client.needs_request(*p)
        ]  # fmt: skip
        if self._source._client.offline or len(wanted) < 2:
            return
        for page in wanted:
            self._tasks.submit(self._quiet_page, *page)

    def _quiet_page(self, index: str, name: str) -> None:
        with contextlib.suppress(CudaResolveError):
            self._source._page(index, name, quiet=True)
