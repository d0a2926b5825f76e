"""The resolvelib provider: thin, delegating to a prebuilt ``Catalog``. Pure.

How these classes relate: ``solve`` builds a ``Catalog`` (every candidate the target can use,
best first) and hands it to ``CatalogProvider``; resolvelib asks the provider which identifier
to pin next (``get_preference``), what may be pinned (``find_matches``) and what a pin brings
along (``get_dependencies``). A ``Need`` is our requirement type; ``<cuda>`` is a virtual
identifier whose single pinned candidate is the variant of the whole set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resolvelib import AbstractProvider

from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need, satisfies

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from resolvelib.resolvers import RequirementInformation

__all__ = ["CatalogProvider", "Preference"]

Preference = tuple[bool, bool, bool, bool, str]


class CatalogProvider(AbstractProvider[Need, Candidate, str]):
    """Answers resolvelib's questions from the catalog; never touches the network."""

    def __init__(
        self, catalog: Catalog, *, anchor: str, user_pinned: Iterable[str] = (), user_requested: Iterable[str] = ()
    ):
        self.catalog = catalog
        self.anchor = anchor
        self.user_pinned = frozenset(user_pinned)
        self.user_requested = frozenset(user_requested)

    def identify(self, requirement_or_candidate: Need | Candidate) -> str:
        return requirement_or_candidate.name

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Sequence[RequirementInformation[Need, Candidate]],
    ) -> Preference:
        """Which unpinned identifier to decide next: the smallest tuple wins. Cost: O(1).

        Order (each field False sorts first):
        1. virtual ``<cuda>`` first: once any GPU build is pinned it has one candidate left;
        2. packages the user pinned with ``==``;
        3. the anchor (``packages.anchor`` in compat.toml: torch), so that the newest torch that fits
           is chosen before its companions;
        4. other packages the user asked for, before dependencies;
        5. the name, for a stable order.
        """
        return (
            identifier != CUDA,
            identifier not in self.user_pinned,
            identifier != self.anchor,
            identifier not in self.user_requested,
            identifier,
        )

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Need]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> Iterable[Candidate]:
        """Candidates for ``identifier`` meeting every requirement, best first. Cost: one pass over them."""
        needs = list(requirements[identifier])
        bad = set(incompatibilities[identifier])
        return [
            c
            for c in self.catalog.for_name(identifier)
            if c not in bad and all(self.is_satisfied_by(n, c) for n in needs)
        ]

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        """Name, version specifier (local versions allowed) and, for ``<cuda>``, the variant (``catalog.satisfies``)."""
        return satisfies(requirement, candidate)

    def get_dependencies(self, candidate: Candidate) -> Sequence[Need]:
        return candidate.dependencies
