"""Memoised requirement checks and lazy candidate lists for the provider. Pure.

resolvelib asks the same questions many times: every round it re-checks each pin against every
requirement (``is_satisfied_by``), and every new requirement re-filters all candidates of its
identifier (``find_matches``).  ``MatchCache`` answers each (requirement, candidate) question once:
a verdict row per distinct requirement (name, variant, specifier), indexed by the candidate's
position in ``catalog.for_name(name)``, and a pair asked before (resolvelib's per-round re-check of
each pin) is one lookup keyed by the pair's identities.  ``find_matches`` results are ``LazyMatches`` sequences,
shared per (identifier, requirement set, incompatibilities), that test candidates only as far as
the resolver reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

from cudaresolve.core.ondemand import MadeOnRead
from cudaresolve.resolve.catalog import Candidate, Catalog, Need, satisfies

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from cudaresolve.resolve.source import IndexRelease

__all__ = ["LazyMatches", "MatchCache", "preferred_first"]

_RowKey = tuple[str, "str | None", "SpecifierSet"]


class LazyMatches(Sequence[Candidate]):
    """The candidates of one identifier meeting every requirement, best first, found on demand.

    ``bool()`` and iteration test only as many candidates as are read; the ones found are kept, so
    a second pass (resolvelib iterates a criterion's candidates again after backtracking) is free.
    ``len()`` and indexing finish the scan.
    """

    __slots__ = ("_bad", "_base", "_cache", "_cursor", "_found", "_needs")

    def __init__(self, cache: MatchCache, base: Sequence[Candidate], needs: Sequence[Need], bad: frozenset[int]):
        self._cache = cache
        self._base = base
        self._needs = needs
        self._bad = bad  # positions in ``base``
        self._found: list[Candidate] = []
        self._cursor = 0  # next position of ``base`` to test

    def _advance(self) -> bool:
        """Test candidates until one more match is found; False when the base is exhausted."""
        base, needs, bad, check = self._base, self._needs, self._bad, self._cache.check_at
        while self._cursor < len(base):
            pos = self._cursor
            self._cursor += 1
            if pos in bad:
                continue
            candidate = base[pos]
            if all(check(need, pos, candidate) for need in needs):
                self._found.append(candidate)
                return True
        return False

    def __iter__(self) -> Iterator[Candidate]:
        i = 0
        while i < len(self._found) or self._advance():
            yield self._found[i]
            i += 1

    def __bool__(self) -> bool:
        return bool(self._found) or self._advance()

    def __len__(self) -> int:
        while self._advance():
            pass
        return len(self._found)

    @overload
    def __getitem__(self, index: int) -> Candidate: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Candidate]: ...
    def __getitem__(self, index: int | slice) -> Candidate | Sequence[Candidate]:
        len(self)
        return self._found[index]

    def __repr__(self) -> str:
        return f"LazyMatches({list(self)!r})"


def preferred_first(releases: Sequence[IndexRelease], preferred: str | None) -> list[int] | None:
    """The positions of ``releases`` (newest first) with those of version ``preferred`` (the previous lock's,
    spelled as it spells it) moved first, the rest in their order (pip's); None when none moves. Reads a lazy
    sequence's versions (``version(i)``, as ``index.fitting.LazyReleases`` has) without making its releases."""
    from packaging.version import InvalidVersion, Version

    if preferred is None:
        return None
    try:
        wanted = Version(preferred)
    except InvalidVersion:
        return None  # no release's version is spelled so
    read = getattr(releases, "version", None)
    version_at: Callable[[int], Version] = read if callable(read) else (lambda i: releases[i].version)
    first = [i for i in range(len(releases)) if version_at(i) == wanted and str(version_at(i)) == preferred]
    if not first:
        return None
    moved = set(first)
    return first + [i for i in range(len(releases)) if i not in moved]


class MatchCache:
    """Verdicts of ``satisfies`` per (requirement, candidate), and ``find_matches`` lists per question.

    ``checks`` counts the specifier checks actually computed (a bound tests assert on).
    """

    def __init__(self, catalog: Catalog, *, base: Callable[[str], Sequence[Candidate]] | None = None):
        """``base`` gives every candidate of an identifier, best first (default ``catalog.for_name``); it must
        return the same sequence for the whole solve."""
        self.catalog = catalog
        self._base_for = base or catalog.for_name
        self.checks = 0
        self._bases: dict[str, Sequence[Candidate]] = {}
        self._positions: dict[str, dict[int, int]] = {}  # name -> id(candidate) -> position in its base
        self._equal: dict[str, dict[Candidate, int]] = {}
        self._rows: dict[_RowKey, dict[int, bool]] = {}
        self._by_id: dict[int, tuple[Need, dict[int, bool]]] = {}
        self._lists: dict[tuple[str, frozenset[int], frozenset[int]], LazyMatches] = {}
        #: ``check``'s answers by the identities of the pair asked, with the pair itself kept alive (so neither
        #: id is reused while its entry stands): resolvelib re-checks every unchanged pin each round.
        self._pairs: dict[tuple[int, int], tuple[Need, Candidate, bool]] = {}

    def base(self, name: str) -> Sequence[Candidate]:
        """The candidates of identifier ``name`` (``base``), asked once per identifier."""
        found = self._bases.get(name)
        if found is None:
            found = self._bases[name] = self._base_for(name)
            made = found.ids if isinstance(found, MadeOnRead) else None  # filled as its candidates are made
            self._positions[name] = made if made is not None else {id(c): i for i, c in enumerate(found)}
        return found

    def position(self, candidate: Candidate) -> int | None:
        """Where ``candidate`` sits in its identifier's base list (None for a candidate from elsewhere)."""
        key = candidate.key
        base = self.base(key)
        pos = self._positions[key].get(id(candidate))
        if pos is not None and base[pos] is candidate:
            return pos
        equal = self._equal.get(key)
        if equal is None:  # an equal copy, not the catalog's own object: match by value (rare)
            equal = self._equal[key] = {c: i for i, c in reversed(list(enumerate(base)))}
        return equal.get(candidate)

    def row(self, need: Need) -> dict[int, bool]:
        """The verdict row of ``need``: shared by every equal requirement, found by identity after the first time
        (hashing a ``SpecifierSet`` canonicalises every version in it, which costs more than the check)."""
        seen = self._by_id.get(id(need))
        if seen is not None and seen[0] is need:
            return seen[1]
        key = (need.key, need.variant, need.specifier)
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = {}
        self._by_id[id(need)] = (need, row)  # keeps ``need`` alive, so its id is not reused
        return row

    def check_at(self, need: Need, pos: int, candidate: Candidate) -> bool:
        """``satisfies(need, candidate)`` for the candidate at ``pos`` of its base list, computed once."""
        row = self.row(need)
        verdict = row.get(pos)
        if verdict is None:
            self.checks += 1
            verdict = row[pos] = satisfies(need, candidate)
        return verdict

    def check(self, need: Need, candidate: Candidate) -> bool:
        """``satisfies(need, candidate)``, memoised for catalog candidates; a pair asked before is one lookup."""
        pair = (id(need), id(candidate))
        seen = self._pairs.get(pair)
        if seen is not None and seen[0] is need and seen[1] is candidate:
            return seen[2]
        verdict = self._check(need, candidate)
        self._pairs[pair] = (need, candidate, verdict)
        return verdict

    def _check(self, need: Need, candidate: Candidate) -> bool:
        if need.key != candidate.key:
            return False
        pos = self.position(candidate)
        if pos is None:
            self.checks += 1
            return satisfies(need, candidate)
        return self.check_at(need, pos, candidate)

    def matches(self, name: str, needs: Iterable[Need], bad: Iterable[Candidate]) -> LazyMatches:
        """The lazy list of ``name``'s candidates meeting every need and not in ``bad``, shared per question."""
        base = self.base(name)
        unique: dict[int, Need] = {}
        for need in needs:
            unique.setdefault(id(self.row(need)), need)
        excluded: set[int] = set()
        where = self._positions[name]  # a backtracking search passes long ``bad`` lists on every call: look up fast
        for candidate in bad:
            pos = where.get(id(candidate))
            if pos is None or base[pos] is not candidate:
                pos = self.position(candidate)
            if pos is not None:
                excluded.add(pos)
        key = (name, frozenset(unique), frozenset(excluded))
        found = self._lists.get(key)
        if found is None:
            found = self._lists[key] = LazyMatches(self, base, tuple(unique.values()), key[2])
        return found
