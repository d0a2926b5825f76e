"""What a lock says when an index could not be read and the set came from elsewhere (PyPI). Pure.

A whole-environment lock passes over the builds whose index cannot be read (``resolve.provider``):
when the PyTorch index is down, the solver chooses among the sets PyPI (or its mirror) can supply.
``unreachable_set_notice`` then compares the locked set with the set the database alone would choose
for the same GPU packages; when they differ and the database's set needs an index that failed, one
``index-unreachable-pypi-set`` warning names that set, the index and the error. ``passed_over``
names the failed indexes the lock holds nothing from: their failure cost a better set at most,
never a hash, so the generic ``index-unavailable-fallback`` notice would be wrong for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import NoSolution
from cudaresolve.text.findings import warning
from cudaresolve.text.model import literal

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cudaresolve.db.database import CompatDB
    from cudaresolve.resolve.catalog import Catalog
    from cudaresolve.resolve.model import Solution
    from cudaresolve.text.findings import Notice
    from cudaresolve.text.model import Text

__all__ = ["passed_over", "unreachable_set_notice"]


def passed_over(solution: Solution, failures: Mapping[str, Text]) -> list[str]:
    """The failed indexes (``failures``: index -> reason) that no locked package comes from."""
    used = {p.index.rstrip("/") for p in solution.packages}
    return [index for index in failures if index.rstrip("/") not in used]


def _set_of(solution: Solution, names: frozenset[str]) -> dict[str, str]:
    """The database's packages of a solution, name -> release (local tag dropped: PyPI's 2.9.0 is 2.9.0+cu128)."""
    return {p.name: Version(p.version).public for p in solution.packages if p.name in names}


def _describe(solution: Solution, names: frozenset[str]) -> str:
    pins = ", ".join(f"{p.name} {p.version}" for p in solution.packages if p.name in names)
    return f"{pins} ({solution.variant})"


def unreachable_set_notice(
    solution: Solution, requirements: Sequence[str], db: CompatDB, catalog: Catalog, down: Mapping[str, Text]
) -> Notice | None:
    """The ``index-unreachable-pypi-set`` warning, when the database's own best set for the locked GPU packages
    (the user's requirements on them kept) differs from the locked one and needs an index in ``down``.

    Cost: one solve over the database (no I/O), only when an index failed."""
    from cudaresolve.resolve.solve import solve

    names = frozenset(db.package_names)
    chosen = _set_of(solution, names)
    if not down or not chosen:
        return None
    requests: list[str] = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonical_name(req.name) in names and not req.extras:
            requests.append(text)
    named = {canonical_name(Requirement(r).name) for r in requests}
    requests += [name for name in chosen if name not in named]
    try:
        best = solve(requests, db, catalog.target, catalog=catalog).solution
    except NoSolution:
        return None
    wanted = {p.name: Version(p.version).public for p in best.packages if p.name in names}
    if (best.variant, wanted) == (solution.variant, chosen):
        return None
    needed = {p.index.rstrip("/") for p in best.packages} | {best.index_url.rstrip("/")}
    index = next((i for i in down if i.rstrip("/") in needed), None)
    if index is None:
        return None
    return warning(
        "index-unreachable-pypi-set",
        "lock.pypi-set-instead",
        best=literal(_describe(best, names)),
        index=index,
        reason=down[index],
        chosen=literal(_describe(solution, names)),
        default=db.default_index,
    )
