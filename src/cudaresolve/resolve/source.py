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
from typing import TYPE_CHECKING, Any, Protocol

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
    "Artifact", "IndexRelease", "MarkerVerdicts", "PackageSource", "Unlisted", "Unusable", "extras_key", "split_key",
]  # fmt: skip


class Unlisted(tuple[Any, ...]):
    """No release at all, because the index does not list the project (its page answered 404): what
    ``PackageSource.releases`` gives then, and the provider's candidates of it, so that a failure says the name
    is not on ``index_url`` rather than that no release has a file for the target (a mistyped name, as uv says it)."""

    index_url: str

    def __new__(cls, index_url: str) -> Unlisted:
        made = super().__new__(cls)
        made.index_url = index_url
        return made


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
    """Which requirement lines apply on one target environment, each (marker, extra) evaluated once: the releases of
    a project share their parsed markers (``index.metadata``), and a backtracking solve asks about the same lines
    again and again."""

    __slots__ = ("_by_extra", "_environment", "_seen")

    def __init__(self, environment: Mapping[str, str]) -> None:
        self._environment = dict(environment)
        self._seen: dict[tuple[int, str], tuple[Marker, bool]] = {}  # (id(marker), extra) -> (marker, verdict)
        self._by_extra: dict[int, tuple[Sequence[Requirement], list[int], dict[str, list[int]]]] = {}  # _indexed

    def holds(self, marker: Marker, extra: str = "") -> bool:
        """``marker`` on the target with ``extra`` (``""``: none)."""
        seen = self._seen.get((id(marker), extra))
        if seen is not None and seen[0] is marker:  # the marker is kept alive here, so its id is not reused
            return seen[1]
        verdict = marker.evaluate({**self._environment, "extra": extra})
        self._seen[(id(marker), extra)] = (marker, verdict)
        return verdict

    def selected(self, req: Requirement, extras: Iterable[str] = (), *, only_extras: bool = False) -> bool:
        """Whether ``req`` applies on the target: its marker true with no extra or with one of ``extras``; with
        ``only_extras``, through one of ``extras`` but not without them (what ``name[extra]`` adds to ``name``)."""
        marker = req.marker
        if marker is None:
            return not only_extras
        plain = self.holds(marker)
        if not only_extras:
            return plain or any(self.holds(marker, e) for e in extras)
        return not plain and any(self.holds(marker, e) for e in extras)

    def added_by(self, lines: Sequence[Requirement], extras: Iterable[str]) -> list[Requirement]:
        """The ``lines`` (one release's, kept alive by its source) that ``extras`` add: ``selected(line, extras,
        only_extras=True)`` of each, in order. Only lines whose markers name one of ``extras``, or whose form
        says nothing sure, are evaluated: a marker that compares ``extra`` only by ``==`` and ``!=`` gives every
        extra it does not name the verdict of no extra, so adds nothing for it. A release with N extras that
        each require the next had N x N markers evaluated."""
        return [lines[at] for at in self._added(lines, extras)]

    def applying(self, lines: Sequence[Requirement], extras: Iterable[str] = ()) -> list[Requirement]:
        """The ``lines`` that apply with ``extras``: ``selected(line, extras)`` of each, in order (see ``added_by``)."""
        plain = self._indexed(lines)[1]
        if not extras:
            return [lines[at] for at in plain]
        return [lines[at] for at in sorted((*plain, *self._added(lines, extras)))]

    def _added(self, lines: Sequence[Requirement], extras: Iterable[str]) -> list[int]:
        by_extra = self._indexed(lines)[2]
        asked = (*(canonical_name(e) for e in extras), "*")
        chosen = sorted({at for extra in asked for at in by_extra.get(extra, ())})
        return [at for at in chosen if self.selected(lines[at], extras, only_extras=True)]

    def _indexed(self, lines: Sequence[Requirement]) -> tuple[Sequence[Requirement], list[int], dict[str, list[int]]]:
        """(``lines``, the positions of those that apply with no extra, extra -> the positions of those whose
        markers name it; ``"*"``: those that may hold for any extra), made once per list."""
        known = self._by_extra.get(id(lines))
        if known is None or known[0] is not lines:
            plain: list[int] = []
            by_extra: dict[str, list[int]] = {}
            for at, line in enumerate(lines):
                if self.selected(line):
                    plain.append(at)
                elif line.marker is not None:  # false with no extra: true with which? (a marker naming none: no)
                    named = _extras_named(line.marker)
                    for extra in ("*",) if named is None else named:
                        by_extra.setdefault(extra, []).append(at)
            known = self._by_extra[id(lines)] = (lines, plain, by_extra)
        return known


def _extras_named(marker: Marker) -> frozenset[str] | None:
    """The extras ``marker`` compares ``extra`` with, when it does so only by ``==`` and ``!=`` against a
    non-empty name; None when it compares ``extra`` otherwise (``in``, an empty name, ``extra == extra``), or its
    form is not packaging's (a private structure: read defensively)."""
    named: set[str] = set()
    todo: list[object] = [getattr(marker, "_markers", None)]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, tuple) and len(item) == 3:
            sides = [(type(node).__name__, getattr(node, "value", None)) for node in (item[0], item[2])]
            if ("Variable", "extra") not in sides:
                continue
            other = sides[1] if sides[0] == ("Variable", "extra") else sides[0]
            op = getattr(item[1], "value", None)
            if op not in ("==", "!=") or other[0] != "Value" or not isinstance(other[1], str) or not other[1]:
                return None
            named.add(canonical_name(other[1]))
        elif not isinstance(item, str):  # "and" / "or"
            return None
    return frozenset(named)
