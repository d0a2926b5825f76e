"""What the solver needs from the indexes for packages beyond the database: releases, files, metadata. Pure.

The solver (``provider``) asks a ``PackageSource`` for the releases of a package the database does not
know, and for the ``Requires-Dist`` of any release it pins, the database's builds included (torch's
``nvidia-*`` libraries, triton, sympy ...), and whether that release's ``Requires-Python`` leaves the
target's Python out (``python_excluded``). The index layer implements it over HTTP and the cache
(``index.source``); tests pass a dict-backed one. A source that cannot answer (offline with a cold
cache, an index down) raises ``IndexUnavailable`` naming the package: the lock flow then falls back
to the database's answer and says the lock is incomplete.

``dependency_needs`` turns metadata requirements into solver ``Need``s for one target: markers are
evaluated with the target's environment, extras select the optional dependencies they name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from cudaresolve.core.platforms import canonical_name
from cudaresolve.resolve.model import FileKind

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.version import Version

    from cudaresolve.text.model import Text

    #: For a requirement on a database package: the builds the solver will try, best first, as (name, version,
    #: index) each (``resolve.ahead.build_chain``); empty when none.
    Builds = Callable[[Requirement], Sequence[tuple[str, str, str]]]

__all__ = [
    "Artifact", "IndexRelease", "MarkerVerdicts", "PackageSource", "Unusable", "applies", "extras_key", "split_key",
]  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """The one file a pinned release installs from: a wheel or sdist as its index lists it, or the wheel
    a direct reference names (``kind``)."""

    filename: str
    url: str
    sha256: str | None = None
    size: int | None = None
    requires_python: str | None = None
    upload_time: str | None = None
    kind: FileKind = FileKind.WHEEL


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexRelease:
    """One version of a package on its index, with the best file for the target."""

    name: str
    version: Version
    index_url: str
    artifact: Artifact
    yanked: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Unusable:
    """Why a listed release cannot be used: ``malformed`` when its metadata was read but is malformed or names
    another project, else it is an sdist whose metadata may not or could not be built."""

    why: Text
    malformed: bool


class PackageSource(Protocol):
    """The indexes as the solver sees them (implemented in ``index.source``)."""

    def index_for(self, name: str) -> str:
        """The one index ``name`` comes from when the database does not place it."""
        ...

    def releases(self, name: str) -> Sequence[IndexRelease]:
        """Every version of ``name`` with a file for the target (a wheel, else an sdist), newest first; () when
        the index lacks it."""
        ...

    def direct_release(self, name: str, url: str) -> IndexRelease:
        """The wheel a direct reference (``name @ url``) names, its hash checked and its metadata read
        (``requires`` then answers for it); raises for a file that does not fit the target."""
        ...

    def build_release(self, name: str, version: str, index_url: str) -> IndexRelease | None:
        """The file of a database build (``torch 2.7.1+cu118`` on its variant index); None when not listed."""
        ...

    def requires(self, release: IndexRelease) -> Sequence[Requirement]:
        """The ``Requires-Dist`` of ``release``'s core metadata (PEP 658 file, range read or download)."""
        ...

    def unusable(self, release: IndexRelease) -> Unusable | None:
        """Why ``release`` cannot be used although listed (an sdist whose metadata may not or could not be
        built): the solver passes it over for another release; None when it can be used."""
        ...

    def python_excluded(self, release: IndexRelease) -> str | None:
        """The ``Requires-Python`` of ``release``'s core metadata when it leaves the target's Python out (the
        solver then passes the release over, as pip and uv do); None when it admits it or states none."""
        ...

    def prefetch(self, names: Iterable[str | Requirement], *, builds: Builds | None = None) -> None:
        """A hint: the solver will soon ask about these packages, or these requirements (a source may fetch
        them at once); ``builds``: which builds of a database package it will try."""
        ...

    def prefetch_pages(self, pages: Iterable[tuple[str, str]]) -> None:
        """A hint: the solver may soon look for builds on these listings ((index, name) each)."""
        ...


def split_key(identifier: str) -> tuple[str, frozenset[str]]:
    """``"transformers[torch]"`` -> ``("transformers", {"torch"})``."""
    if not identifier.endswith("]") or "[" not in identifier:
        return identifier, frozenset()
    name, _, rest = identifier.partition("[")
    return name, frozenset(e for e in rest[:-1].split(",") if e)


def extras_key(name: str, extras: Iterable[str]) -> str:
    """The solver identifier of ``name`` with ``extras`` (sorted, canonical)."""
    chosen = sorted({canonical_name(e) for e in extras})
    return f"{name}[{','.join(chosen)}]" if chosen else name


class MarkerVerdicts:
    """``applies`` for one target environment, each (marker, extra) evaluated once: the releases of a project share
    their parsed markers (``index.metadata``), and a backtracking solve asks about the same lines again and again."""

    __slots__ = ("_environment", "_seen")

    def __init__(self, environment: Mapping[str, str]) -> None:
        self._environment = dict(environment)
        self._seen: dict[tuple[int, str], tuple[Marker, bool]] = {}  # (id(marker), extra) -> (marker, verdict)

    def holds(self, marker: Marker, extra: str = "") -> bool:
        """``marker`` on the target with ``extra`` (``""``: none)."""
        seen = self._seen.get((id(marker), extra))
        if seen is not None and seen[0] is marker:  # the marker is kept alive here, so its id is not reused
            return seen[1]
        verdict = marker.evaluate({**self._environment, "extra": extra})
        self._seen[(id(marker), extra)] = (marker, verdict)
        return verdict

    def selected(self, req: Requirement, extras: Iterable[str] = (), *, only_extras: bool = False) -> bool:
        """``applies(req, environment, extras)``; with ``only_extras``, whether ``req`` applies through one of
        ``extras`` but not without them (what ``name[extra]`` adds to ``name``)."""
        marker = req.marker
        if marker is None:
            return not only_extras
        plain = self.holds(marker)
        if not only_extras:
            return plain or any(self.holds(marker, e) for e in extras)
        return not plain and any(self.holds(marker, e) for e in extras)


def applies(req: Requirement, environment: Mapping[str, str], extras: Iterable[str] = ()) -> bool:
    """Whether ``req`` applies on the target: its marker is true with no extra, or with one of ``extras``."""
    if req.marker is None:
        return True
    for extra in ("", *extras):
        if req.marker.evaluate({**environment, "extra": extra}):
            return True
    return False
