"""Which database builds the solver will try for a requirement, best first: what the walk ahead reads. Pure.

The walk ahead of the solver (``index.source``) reads a package's listing and its newest release's metadata
before the solver asks. A database package's builds come from the catalog, not from its listing's newest
release, so the walk is given this chain instead: the builds the solver would try in turn (on a variant the
driver runs, meeting the requirement, leaving room for the other requested database packages), of which the
walk reads the first its index lists, as the solver passes over a build whose index cannot give it (an index
down: the PyTorch index's build, then PyPI's twin).
"""

from __future__ import annotations

from collections import deque
from itertools import islice
from typing import TYPE_CHECKING, Final, TypeVar

from cudaresolve.resolve.catalog import CUDA, Need, satisfies

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from packaging.requirements import Requirement

    from cudaresolve.resolve.catalog import Catalog
    from cudaresolve.resolve.pairing import Companions

__all__ = ["build_chain", "with_next"]

T = TypeVar("T")

#: How many builds one chain offers the walk (a bound on its guesses, not a fact).
_CHAIN: Final = 8


def build_chain(catalog: Catalog, companions: Companions | None, req: Requirement) -> tuple[tuple[str, str, str], ...]:
    """The builds of ``req``'s database package the solver will try, best first, as (name, version, index);
    empty for a package the database does not know and for a direct reference."""
    need = Need.from_requirement(req)
    if need.name not in catalog.known or need.name == CUDA or req.url:
        return ()
    runnable = catalog.runnable
    fits = companions.fits if companions is not None else bool
    found = (
        c for c in catalog.for_name(need.name) if c.variant in runnable and satisfies(need, c) and c.build and fits(c)
    )
    return tuple((c.name, str(c.version), c.index_url) for c in islice(found, _CHAIN))


def with_next(items: Iterable[T], size: int) -> Iterator[tuple[T, tuple[T, ...]]]:
    """Each item with the ``size - 1`` after it, reading ``items`` only that far ahead (a lazy sequence stays lazy)."""
    it = iter(items)
    window = deque(islice(it, size))
    while window:
        current = window.popleft()
        window.extend(islice(it, size - 1 - len(window)))
        yield current, tuple(window)
