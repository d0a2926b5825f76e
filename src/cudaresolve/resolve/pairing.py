"""Which database candidates can stand beside every database package the user asked for. Pure.

The database pairs releases exactly (torchaudio 2.11.0 needs torch 2.11.0, each build needs its
variant). A torch build that no requested torchaudio build accepts cannot be in any answer that
holds torchaudio, yet resolvelib, which decides torch first, would pin it, read its metadata and
walk every torchaudio build of every variant before it learns that. ``Companions`` answers, from
the catalog alone, whether a candidate has, for each other requested database package, at least
one candidate of it (meeting the user's requirements, on a variant the target runs) that both
sides' database needs allow: no set is lost by leaving out a candidate that fails this.

A requested package's source build (``db.prebuilt.SDIST``: flash-attn's sdist, built on the target)
stands beside nothing while one of its wheels can stand beside every requested package: the sdist
is the way out only where no wheel fits (``offered``).

Cost: per (candidate, requested package), one pass over that package's candidates of the same
variant, memoised; ``offered`` once per requested package, without recursion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.db.prebuilt import SDIST
from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need, satisfies

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Companions"]


class Companions:
    """The requested database packages of one solve, and which candidates they leave room for."""

    def __init__(self, catalog: Catalog, needs: Sequence[Need]) -> None:
        self._catalog = catalog
        wanted: dict[str, list[Need]] = {}
        for need in needs:
            if need.name in catalog.known and need.name != CUDA:
                wanted.setdefault(need.name, []).append(need)
        self._direct = frozenset(n.name for n in needs if n.url)  # a direct reference's one file: not judged
        self._wanted = {k: v for k, v in wanted.items() if k not in self._direct}
        self._members: dict[str, dict[str | None, tuple[Candidate, ...]]] = {}
        self._memo: dict[tuple[Candidate, str], bool] = {}
        self._wheels: dict[str, bool] = {}  # name -> whether a wheel of it fits (``offered``)
        self._meeting: dict[tuple[str, str, str | None], frozenset[int]] = {}  # what a need asks -> ``_meeting_of``
        self._held: dict[int, tuple[Need, frozenset[int]]] = {}  # id(need) -> (need, ``_meeting_of``)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._wanted)

    def members(self, name: str, variant: str | None) -> tuple[Candidate, ...]:
        """The candidates of the requested package ``name`` that meet the user's needs on it and run on the
        target, on ``variant`` or on none (pure wheels); every variant's when ``variant`` is None."""
        by_variant = self._members.get(name)
        if by_variant is None:
            runnable = self._catalog.runnable
            needs = self._wanted.get(name, [])
            grouped: dict[str | None, list[Candidate]] = {}
            for candidate in self._catalog.for_name(name):
                if candidate.variant is not None and candidate.variant not in runnable:
                    continue
                if all(satisfies(n, candidate) for n in needs):
                    grouped.setdefault(candidate.variant, []).append(candidate)
            by_variant = self._members[name] = {k: tuple(v) for k, v in grouped.items()}
        if variant is None:
            return tuple(c for group in by_variant.values() for c in group)
        return (*by_variant.get(variant, ()), *by_variant.get(None, ()))

    def fits(self, candidate: Candidate) -> bool:
        """Whether every other requested database package has a candidate that can stand beside ``candidate``
        (a source build: and no wheel of its package does, ``offered``)."""
        if not self.offered(candidate):
            return False
        return all(self.meets(candidate, name) for name in self._wanted if name != candidate.name)

    def offered(self, candidate: Candidate) -> bool:
        """False for a source build of a requested package one of whose wheels fits the requests (module
        docstring); a package asked about while its own answer is being found counts as having one."""
        if candidate.build is None or candidate.build.channel != SDIST or candidate.name not in self._wanted:
            return True
        name = candidate.name
        if name not in self._wheels:
            wheels = (c for c in self.members(name, None) if c.build is None or c.build.channel != SDIST)
            self._wheels[name] = any(self._pairs_with_all(c) for c in wheels)
        return not self._wheels[name]

    def _pairs_with_all(self, wheel: Candidate) -> bool:
        """Whether ``wheel`` pairs with some candidate of every other requested package, a source build among
        them: not through ``offered``, so that no answer depends on another package's answer being found
        (several source-only packages asked together would otherwise read each other half-done)."""
        others = (n for n in self._wanted if n != wheel.name)
        return all(any(self._together(wheel, m) for m in self.members(n, wheel.variant)) for n in others)

    def _together(self, one: Candidate, other: Candidate) -> bool:
        """``paired``, and each need the two place on a third database package (both extensions on torch) met by
        one candidate of it: mmcv's torch 2.4 wheel and pyg-lib's torch 2.8 wheel pair with nothing in common."""
        if not paired(one, other):
            return False
        theirs: dict[str, list[Need]] = {}
        for need in other.dependencies:
            if need.name not in (CUDA, one.name) and need.name in self._catalog.known:
                theirs.setdefault(need.name, []).append(need)
        for need in one.dependencies:
            for mine in theirs.get(need.name, ()) if need.name != other.name else ():
                if not (need.constraint and mine.constraint) and not self._joint(need, mine):  # two rows that only
                    return False  # narrow a third package are both met by its absence
        return True

    def _joint(self, one: Need, other: Need) -> bool:
        """Whether one candidate of their package meets both needs."""
        return not self._meeting_of(one).isdisjoint(self._meeting_of(other))

    def _meeting_of(self, need: Need) -> frozenset[int]:
        """The positions in ``for_name(need.name)`` of the candidates meeting ``need``: memoised per ``Need``
        object (held, so that its id is not reused) and on what it asks, each version tested once (the builds of
        one version share the verdict; ``<cuda>``'s test reads the variant too)."""
        held = self._held.get(id(need))
        if held is not None and held[0] is need:
            return held[1]
        key = (need.name, str(need.specifier), need.variant)
        found = self._meeting.get(key)
        if found is None:
            verdicts: dict[tuple[str, str | None], bool] = {}
            kept: list[int] = []
            for at, choice in enumerate(self._catalog.for_name(need.name)):
                # by the version's spelling: ``===`` tells 2.0 from 2.0.0, which are equal versions
                version = (str(choice.version), choice.variant if need.name == CUDA else None)
                verdict = verdicts.get(version) if need.variant is None or choice.variant == need.variant else False
                if verdict is None:
                    verdict = verdicts[version] = satisfies(need, choice)
                if verdict:
                    kept.append(at)
            found = self._meeting[key] = frozenset(kept)
        self._held[id(need)] = (need, found)
        return found

    def meets(self, candidate: Candidate, name: str) -> bool:
        """Whether some requested candidate of ``name`` and ``candidate`` accept each other."""
        key = (candidate, name)
        found = self._memo.get(key)
        if found is None:
            members = self.members(name, candidate.variant)
            found = self._memo[key] = any(self._together(candidate, m) and self.offered(m) for m in members)
        return found


def paired(one: Candidate, other: Candidate) -> bool:
    """Whether two candidates of different packages may be in one set, by the database alone: one variant at
    most, and each one's needs on the other met."""
    if one.variant is not None and other.variant is not None and one.variant != other.variant:
        return False
    if any(n.name == other.name and not satisfies(n, other) for n in one.dependencies):
        return False
    return not any(n.name == one.name and not satisfies(n, one) for n in other.dependencies)
