"""What kind of requirement a ``Need`` is, and which identifiers a backtrack's causes name: the facts
``provider.get_preference`` and ``narrow_requirement_selection`` rank by. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from resolvelib.resolvers import RequirementInformation

    from cudaresolve.resolve.catalog import Candidate, Need

__all__ = ["cause_names", "cause_parents", "is_capped", "is_exact", "restrictive"]


def is_exact(need: Need) -> bool:
    """An exact pin: ``==`` without a wildcard, or ``===`` (pip's "pinned"), or a named variant."""
    if need.variant is not None:
        return True
    return any(s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*")) for s in need.specifier)


def restrictive(need: Need) -> bool:
    """Whether ``need`` narrows its identifier at all (a bare ``torch`` from flashinfer never conflicts)."""
    return need.variant is not None or bool(need.specifier)


def is_capped(need: Need) -> bool:
    """An upper bound of any kind (pip's "upper bounded"): the newest release may be ruled out."""
    return any(s.operator in ("<", "<=", "==", "~=", "===") for s in need.specifier)


def cause_parents(causes: Iterable[RequirementInformation[Need, Candidate]]) -> frozenset[str]:
    """The packages whose restrictive requirements a backtrack names (torchaudio for ``torch==2.11.0``)."""
    return frozenset(i.parent.name for i in causes if i.parent is not None and restrictive(i.requirement))


def cause_names(causes: Iterable[RequirementInformation[Need, Candidate]]) -> frozenset[str]:
    """The identifiers a backtrack involves: each restrictive requirement's name and its parent's name."""
    names: set[str] = set()
    for info in causes:
        if not restrictive(info.requirement):
            continue
        names.add(info.requirement.name)
        if info.parent is not None:
            names.add(info.parent.name)
    return frozenset(names)
