"""One CUDA major per environment: index releases tied to a CUDA major, and the finding when a set mixes. Pure.

A release that the database's ``[[cuda-major]]`` rows tie to a CUDA major (``nvidia-cublas-cu12``,
``nvidia-cuda-runtime`` 13.0.96, ``cuda-toolkit`` 13.0.3) depends on ``<cuda>`` of that major
(``<cuda>==12.*``, met by every variant of CUDA 12 and by ``cpu``, which ties none), exactly as a
database build depends on its variant: the solver then keeps one major for the whole set, picking
releases that agree, and a set that cannot agree fails with ``cuda-major-mixed`` (``mixed``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet

from cudaresolve.db.cudamajor import major_of
from cudaresolve.resolve.catalog import CUDA, Catalog, Need
from cudaresolve.text.findings import reason

if TYPE_CHECKING:
    from collections.abc import Sequence

    from resolvelib.resolvers import RequirementInformation

    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.text.findings import Finding

__all__ = ["is_major_need", "major_needs", "mixed"]


def major_needs(catalog: Catalog, candidate: Candidate) -> tuple[Need, ...]:
    """``<cuda>`` of the CUDA major ``candidate`` is tied to, for a release from an index (the database's own
    builds name their variant already); none when no row ties it."""
    if candidate.name == CUDA or candidate.name in catalog.known or not catalog.cuda_majors:
        return ()
    major = major_of(catalog.cuda_majors, candidate.name, candidate.version)
    if major is None:
        return ()
    parent = f"{candidate.name} {candidate.version}"
    return (Need(name=CUDA, specifier=SpecifierSet(f"=={major}.*"), parent=parent),)


def is_major_need(need: Need) -> bool:
    """Whether ``need`` is a CUDA-major need (``major_needs``), not a variant."""
    return need.name == CUDA and need.variant is None and bool(need.specifier)


def _major(need: Need) -> str:
    return str(next(iter(need.specifier)).version).removesuffix(".*")


def mixed(
    need: Need, parent: Candidate, causes: Sequence[RequirementInformation[Need, Candidate]], catalog: Catalog
) -> Finding:
    """The ``cuda-major-mixed`` finding for ``parent``, whose CUDA-major ``need`` the set's other CUDA needs
    (a variant a build pins, another major) leave out; ``found`` names them, e.g. ``13 (torch 2.9.0+cu130)``."""
    mine = _major(need)
    others: dict[str, list[str]] = {}
    for cause in causes:
        other = cause.requirement
        if other.name != CUDA or other is need:
            continue
        if other.variant is not None:
            versions = [c.version for c in catalog.for_name(CUDA) if c.variant == other.variant]
            versions += [r.version for r in catalog.rejected(CUDA) if r.variant == other.variant]
            major = str(versions[0].major) if versions else other.variant
        else:
            major = _major(other)
        if major == mine:
            continue
        who = str(cause.parent) if cause.parent is not None else "the request"
        others.setdefault(major, []).append(who)
    found = "; ".join(f"{m} ({', '.join(dict.fromkeys(w))})" for m, w in others.items()) or "another major"
    return reason(
        "cuda-major-mixed",
        package=parent.name,
        version=str(parent.version),
        required=mine,
        found=found,
        major=next(iter(others), "?"),
    )
