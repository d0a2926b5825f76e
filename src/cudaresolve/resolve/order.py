"""Which of several solved sets is best, and which variants could still give a better one. Pure.

resolvelib pins the first good torch build it reads, and that pin fixes the variant (``<cuda>``):
when a companion (xformers) has no build of that variant for the newest torch, the search steps
torch down inside the variant instead of trying the next one. ``solve`` therefore solves once as
before, then once per other variant whose best case could beat it (a bound read from the catalog,
no search), and keeps the best set by this rule:

1. the newest release of the anchor (``packages.anchor``: torch);
2. full driver compatibility over minor-version compatibility;
3. fewer builds that reach a GPU only through PTX JIT (SASS first);
4. the user's stated preferences: the newest releases of the packages they asked for, in order;
5. fewer builds from rows marked ``verified = false``.

Of sets equal by this rule, the one on the variant that comes first in the catalog's order (full driver
support first, then the newer CUDA) is kept, whichever search found it: the answer does not depend on the
path resolvelib took.
"""

from __future__ import annotations

from itertools import takewhile
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudaresolve.core.archs import Coverage
from cudaresolve.db.database import DriverSupport
from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need
from cudaresolve.resolve.pairing import paired

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from cudaresolve.resolve.pairing import Companions

__all__ = ["SetKey", "anchor_floor", "best_case", "ranked_names", "release_of", "set_key", "unverified"]

#: Larger is better: anchor release, full driver support, -PTX-JIT builds, requested releases, -unverified builds.
SetKey = tuple[Version, bool, int, tuple[Version, ...], int]

_ABSENT = Version("0")  # a set without the anchor ranks below every set with it


def release_of(candidate: Candidate) -> Version:
    """The release a candidate pins, without its local variant tag (``2.11.0+cu128`` -> ``2.11.0``)."""
    return candidate.release.version if candidate.release is not None else Version(candidate.version.public)


def unverified(candidate: Candidate) -> bool:
    """Whether the database marks this build, or its release, ``verified = false``."""
    if candidate.build is not None:
        return not candidate.build.verified
    return candidate.release is not None and not candidate.release.verified


def ranked_names(needs: Sequence[Need], catalog: Catalog, anchor: str) -> tuple[str, ...]:
    """The user's requested database packages, in request order, the anchor left out (it ranks first)."""
    return tuple(dict.fromkeys(n.name for n in needs if n.name in catalog.known and n.name not in (anchor, CUDA)))


def set_key(pins: Mapping[str, Candidate], anchor: str, requested: Sequence[str]) -> SetKey:
    """The rule's key of one solved set (see the module docstring); a larger key is a better set."""
    cuda = pins.get(CUDA)
    top = pins.get(anchor)
    builds = [c for name, c in pins.items() if name != CUDA]
    return (
        release_of(top) if top is not None else _ABSENT,
        cuda is None or cuda.driver_support is DriverSupport.FULL,
        -sum(c.coverage is Coverage.PTX_JIT for c in builds),
        tuple(release_of(pins[name]) if name in pins else _ABSENT for name in requested),
        -sum(unverified(c) for c in builds),
    )


def best_case(
    variant: Candidate,
    needs: Sequence[Need],
    catalog: Catalog,
    anchor: str,
    requested: Sequence[str],
    *,
    has_anchor: bool,
    companions: Companions | None = None,
) -> SetKey | None:
    """An upper bound of ``set_key`` over every set on ``variant`` (a ``<cuda>`` candidate), from the catalog alone;
    None when no set on it can hold every requested database package.

    With ``companions`` (the requested packages' pairings, ``pairing``) a candidate counts only when every
    other requested package has a build it can stand beside; a requested package is then counted only at a
    release that pairs with the bound's anchor release (every set with an older anchor ranks below the bound
    anyway). Without, each package's newest release on the variant counts on its own.

    Cost: one pass over the candidates of the anchor and of each requested package."""

    def usable(name: str) -> Iterator[Candidate]:  # newest release first
        wanted = [n for n in needs if n.name == name and n.name != CUDA]
        for candidate in catalog.for_name(name):
            if candidate.variant not in (variant.variant, None):
                continue
            if not all(n.specifier.contains(candidate.version, prereleases=True) for n in wanted):
                continue
            if companions is None or companions.fits(candidate):
                yield candidate

    if companions is not None and any(next(usable(name), None) is None for name in companions.names):
        return None
    anchors = usable(anchor) if has_anchor else iter(())
    top = next(anchors, None)
    tops = [] if top is None else [top, *takewhile(lambda c: release_of(c) == release_of(top), anchors)]

    def newest(name: str) -> Version:
        for candidate in usable(name):
            if companions is None or not tops or any(paired(candidate, a) for a in tops):
                return release_of(candidate)
        return _ABSENT

    return (
        release_of(top) if top is not None else _ABSENT,
        variant.driver_support is DriverSupport.FULL,
        0,
        tuple(newest(name) for name in requested),
        0,
    )


def anchor_floor(best: Mapping[str, Candidate] | None, anchor: str) -> list[Need]:
    """What a search for a better set than ``best`` may require: the anchor at ``best``'s release or newer, since
    ``set_key`` ranks every set with an older anchor below it. Without it, a search held to a variant whose newest
    anchor builds cannot be had (their index is down) walks back through every older anchor and every package
    that pairs with it, a search whose answer could only lose (an LLM stack on driver 550 ran for many minutes)."""
    top = best.get(anchor) if best is not None else None
    if top is None:
        return []
    return [Need(name=anchor, specifier=SpecifierSet(f">={release_of(top)}"), parent=f"{anchor} {release_of(top)}")]
