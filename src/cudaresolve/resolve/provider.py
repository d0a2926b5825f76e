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

from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need
from cudaresolve.resolve.matches import MatchCache

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from resolvelib.resolvers import RequirementInformation

__all__ = ["CatalogProvider", "Preference", "cause_names", "cause_parents"]

#: Each field False sorts first; see ``CatalogProvider.get_preference``.
Preference = tuple[bool, bool, bool, bool, bool, bool, str]


def _is_exact(need: Need) -> bool:
    """An exact pin: ``==`` without a wildcard, or ``===`` (pip's "pinned"), or a named variant."""
    if need.variant is not None:
        return True
    return any(s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*")) for s in need.specifier)


def _restrictive(need: Need) -> bool:
    """Whether ``need`` narrows its identifier at all (a bare ``torch`` from flashinfer never conflicts)."""
    return need.variant is not None or bool(need.specifier)


def _is_capped(need: Need) -> bool:
    """An upper bound of any kind (pip's "upper bounded"): the newest release may be ruled out."""
    return any(s.operator in ("<", "<=", "==", "~=", "===") for s in need.specifier)


def cause_parents(causes: Iterable[RequirementInformation[Need, Candidate]]) -> frozenset[str]:
    """The packages whose restrictive requirements a backtrack names (torchaudio for ``torch==2.11.0``)."""
    return frozenset(i.parent.name for i in causes if i.parent is not None and _restrictive(i.requirement))


def cause_names(causes: Iterable[RequirementInformation[Need, Candidate]]) -> frozenset[str]:
    """The identifiers a backtrack involves: each restrictive requirement's name and its parent's name."""
    names: set[str] = set()
    for info in causes:
        if not _restrictive(info.requirement):
            continue
        names.add(info.requirement.name)
        if info.parent is not None:
            names.add(info.parent.name)
    return frozenset(names)


class CatalogProvider(AbstractProvider[Need, Candidate, str]):
    """Answers resolvelib's questions from the catalog; never touches the network.

    Requirement checks and candidate lists are memoised in a ``MatchCache`` (``self.matches``),
    so a long backtrack costs dictionary lookups, not specifier checks.
    """

    def __init__(
        self, catalog: Catalog, *, anchor: str, user_pinned: Iterable[str] = (), user_requested: Iterable[str] = ()
    ):
        self.catalog = catalog
        self.anchor = anchor
        self.user_pinned = frozenset(user_pinned)
        self.user_requested = frozenset(user_requested)
        self.matches = MatchCache(catalog)

    def identify(self, requirement_or_candidate: Need | Candidate) -> str:
        return requirement_or_candidate.name

    def narrow_requirement_selection(
        self,
        identifiers: Iterable[str],
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Sequence[RequirementInformation[Need, Candidate]],
    ) -> Iterable[str]:
        """The identifiers worth ranking this round (pip's provider). Cost: O(identifiers + causes).

        ``<cuda>`` alone when it is open (one variant for the set, and cheap to check); else, after
        a backtrack, the packages whose requirements made the conflict (``cause_parents``: pinning
        torchaudio decides torch through its ``torch==2.11.0``, while pinning torch first would try
        every torch build against every torchaudio), then any identifier the conflict names
        (``cause_names``); else all of them. The resolver works on the conflict instead of
        re-pinning unrelated packages.
        """
        names = list(identifiers)
        if CUDA in names:
            return [CUDA]
        parents = cause_parents(backtrack_causes)
        narrowed = [n for n in names if n in parents]
        if not narrowed:
            involved = cause_names(backtrack_causes)
            narrowed = [n for n in names if n in involved]
        return narrowed or names

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Sequence[RequirementInformation[Need, Candidate]],
    ) -> Preference:
        """Which unpinned identifier to decide next: the smallest tuple wins. Cost: O(requirements on it).

        Order (each field False sorts first):
        1. virtual ``<cuda>`` first: once any GPU build is pinned it has one candidate left;
        2. identifiers named by the last backtrack's causes (``cause_names``), as pip does;
        3. exact pins (``==`` without ``*``, ``===``, a variant) from the user or any pinned package:
           one candidate left, and a conflict shows at once;
        4. the anchor (``packages.anchor`` in compat.toml: torch), so that the newest torch that fits
           is chosen before its companions;
        5. packages the user capped (``<``, ``<=``, ``==``, ``~=``, ``===``: ``xformers<0.0.30``), whose
           newest allowed release then decides the older torch at once, instead of after a search;
        6. other packages the user asked for, before dependencies;
        7. the name, for a stable order.
        """
        infos = list(information[identifier]) if identifier in information else []
        pinned = identifier in self.user_pinned or any(_is_exact(info.requirement) for info in infos)
        capped = any(_is_capped(info.requirement) for info in infos if info.parent is None)
        return (
            identifier != CUDA,
            identifier not in cause_names(backtrack_causes),
            not pinned,
            identifier != self.anchor,
            not capped,
            identifier not in self.user_requested,
            identifier,
        )

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Need]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> Iterable[Candidate]:
        """Candidates for ``identifier`` (``catalog.for_name``) meeting every requirement, best first.

        Cost: a dictionary lookup when the same question was asked before; otherwise a lazy sequence
        that tests candidates, each check memoised, only as far as the resolver reads.
        """
        return self.matches.matches(identifier, requirements[identifier], incompatibilities[identifier])

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        """Name, version specifier (local versions allowed) and, for ``<cuda>``, the variant (``catalog.satisfies``).

        Cost: a dictionary lookup after the first time.
        """
        return self.matches.check(requirement, candidate)

    def get_dependencies(self, candidate: Candidate) -> Sequence[Need]:
        return candidate.dependencies
