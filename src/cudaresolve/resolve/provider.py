"""The resolvelib provider: thin, delegating to a prebuilt ``Catalog`` and, beyond it, a ``PackageSource``. Pure.

How these classes relate: ``solve`` builds a ``Catalog`` (every candidate the target can use, best first) and hands
it to ``CatalogProvider``; resolvelib asks the provider which identifier to pin next (``get_preference``), what may
be pinned (``find_matches``) and what a pin brings along (``get_dependencies``). A ``Need`` is our requirement type;
``<cuda>`` is a virtual identifier whose single pinned candidate is the variant of the whole set. Packages the
database does not know come from the ``PackageSource`` (their index's listing and metadata), asked lazily: a listing
when a package first appears, a metadata file only for a candidate being pinned. An identifier with extras
(``transformers[torch]``) is pinned with its base (pip's scheme): its candidate depends on exactly the base release
plus the optional requirements its extras select. A package a direct reference pins (``direct``) has that one
candidate, whoever requires it; a dependency that names a URL itself must name the user's (uv's rule), else it is an
error. A release whose metadata's ``Requires-Python`` leaves the target out depends on ``<python>``, which has no
candidate (pip's ``RequiresPythonRequirement``): the solver moves on to an older release; so does one depending on
``<build>`` (an sdist not built) or ``<metadata>`` (metadata that cannot be used).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Final

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import AbstractProvider

from cudaresolve.core.ondemand import MadeOnRead
from cudaresolve.errors import IndexUnavailable
from cudaresolve.resolve import DEFAULT_PRERELEASE
from cudaresolve.resolve.ahead import build_chain, with_next
from cudaresolve.resolve.catalog import ABSENT, BUILD, CUDA, CUDNN, METADATA, PYTHON, Candidate, Catalog, Need
from cudaresolve.resolve.causes import cause_names, cause_parents, is_capped, is_exact
from cudaresolve.resolve.cudamajor import major_needs
from cudaresolve.resolve.direct import check_dependency_url
from cudaresolve.resolve.matches import MatchCache, preferred_first
from cudaresolve.resolve.needs import IF_NECESSARY, passed_over
from cudaresolve.resolve.prebuilt import is_prebuilt, prebuilt_release
from cudaresolve.resolve.source import MarkerVerdicts, Unlisted, split_key
from cudaresolve.resolve.sources import on_variant_index

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from resolvelib.resolvers import RequirementInformation
    from resolvelib.structs import Matches

    from cudaresolve.resolve.pairing import Companions
    from cudaresolve.resolve.source import IndexRelease, PackageSource

__all__ = ["CatalogProvider", "Preference", "cause_names", "cause_parents"]

#: How many builds' listings are read together when the solver asks for one (``_look_ahead``).
_LOOK_AHEAD: Final = 4

#: Each field False sorts first; see ``CatalogProvider.get_preference``.
Preference = tuple[bool, bool, bool, bool, bool, bool, bool, str]


class CatalogProvider(AbstractProvider[Need, Candidate, str]):
    """Answers resolvelib's questions from the catalog and the source; all I/O is the source's.

    Requirement checks and candidate lists are memoised in a ``MatchCache`` (``self.matches``),
    so a long backtrack costs dictionary lookups, not specifier checks.
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        anchor: str,
        user_pinned: Iterable[str] = (),
        user_requested: Iterable[str] = (),
        source: PackageSource | None = None,
        environment: Mapping[str, str] | None = None,
        constraints: Mapping[str, SpecifierSet] | None = None,
        direct: Mapping[str, Candidate] | None = None,
        companions: Companions | None = None,
        preferences: Mapping[str, str] | None = None,
        prerelease: str = DEFAULT_PRERELEASE,
        stop_unreadable: bool = False,
    ):
        """``companions``: the requested database packages, whose pairings leave out the database's builds that
        no set holding them can use (``pairing``); ``preferences``: name -> version whose release is tried first
        (a previous lock's pin, kept while it fits); ``stop_unreadable``: end the search with ``IndexUnavailable``
        as soon as an identifier has no candidate because its index cannot be read, instead of backtracking
        around it (a search held to one variant whose index is down can only fail, and slowly)."""
        self.stop_unreadable = stop_unreadable
        self.preferences = dict(preferences or {})
        self.prerelease = prerelease  # ``--prerelease``: one of ``needs.PRERELEASE_MODES``
        self.catalog = catalog
        self.companions = companions
        self.direct = dict(direct or {})  # name -> the one candidate a direct reference leaves it
        self.anchor = anchor
        self.user_pinned = frozenset(user_pinned)
        self.user_requested = frozenset(user_requested)
        self.source = source
        self.environment = dict(environment or {})
        self._verdicts = MarkerVerdicts(self.environment)
        self.constraints = dict(constraints or {})  # -c lines: they narrow a name's candidates, never add one
        self.matches = MatchCache(catalog, base=self._base)
        self._index_candidates: dict[str, Sequence[Candidate]] = {}
        self._extras_bases: dict[str, Sequence[Candidate]] = {}
        self._paired: dict[str, tuple[Candidate, ...]] = {}
        self._absents: dict[str, Candidate] = {}
        self._dependencies: dict[Candidate, tuple[Need, ...]] = {}
        self._builds: dict[tuple[str, str, str], IndexRelease | None] = {}
        self._variant_index: str | None = None  # the pinned ``<cuda>``'s index, seen in get_preference
        #: Index failures that left an identifier without any build (``_listed``); the solve raises the first
        #: when the search fails, so the lock falls back to the database's answer, and otherwise lets the
        #: sets from the indexes that answered stand (a PyPI set when the PyTorch index is down).
        self.unreadable: list[IndexUnavailable] = []
        self.unreadable_names: list[str] = []  # the package each of ``unreadable`` left without a build

    def identify(self, requirement_or_candidate: Need | Candidate) -> str:
        return requirement_or_candidate.key

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
        chosen = narrowed or names
        if len(chosen) > 1:  # resolvelib ranks them next: what get_preference notes, noted here for a kept rank
            self._seen(resolutions)
        return chosen

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
        2. names only ``constrains`` rows ask about last: a pin may yet require them;
        3. identifiers named by the last backtrack's causes (``cause_names``), as pip does;
        4. exact pins (``==`` without ``*``, ``===``, a variant) from the user or any pinned package:
           one candidate left, and a conflict shows at once (a ``constrains`` row's pin does not count);
        5. the anchor (``packages.anchor`` in compat.toml: torch), so that the newest torch that fits
           is chosen before its companions;
        6. packages the user capped (``<``, ``<=``, ``==``, ``~=``, ``===``: ``xformers<0.0.30``), whose
           newest allowed release then decides the older torch at once, instead of after a search;
        7. other packages the user asked for, before dependencies;
        8. the name, for a stable order.

        A function of the identifier's requirements and ``backtrack_causes`` alone, so that it may be kept per
        criterion and causes (``resolution.PinCheckedResolution``): the pins it notes (``_seen``) are noted by
        ``narrow_requirement_selection`` too, which resolvelib asks first in every round that ranks names.
        """
        self._seen(resolutions)
        infos = [i for i in information.get(identifier, ()) if not i.requirement.constraint]
        pinned = identifier in self.user_pinned or any(is_exact(info.requirement) for info in infos)
        capped = any(is_capped(info.requirement) for info in infos if info.parent is None)
        return (
            identifier != CUDA,
            not infos and identifier in information,  # only ``constrains`` rows ask about it: last, it may be needed
            identifier not in cause_names(backtrack_causes),
            not pinned,
            identifier != self.anchor,
            not capped,
            identifier not in self.user_requested,
            identifier,
        )

    def _seen(self, resolutions: Mapping[str, Candidate]) -> None:
        """Note the pinned ``<cuda>``'s index."""
        cuda = resolutions.get(CUDA)
        if cuda is not None:
            self._variant_index = cuda.index_url

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Need]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> Matches[Candidate]:
        """Candidates for ``identifier`` meeting every requirement, best first.

        Cost: a dictionary lookup when the same question was asked before; otherwise a lazy sequence
        that tests candidates, each check memoised, only as far as the resolver reads. With a source,
        index releases follow pip (a yanked file only when a requirement pins it with ``==``/``===``,
        PEP 592; a pre-release only when a specifier names one) and the database's builds must be
        listed on their index (``_listed``).
        """
        needs = list(requirements[identifier])
        if needs and all(n.constraint for n in needs):  # only ``constrains`` rows ask about it: the set goes without it
            absent = self._absent(identifier)
            return [] if absent in incompatibilities[identifier] else [absent]
        found: Sequence[Candidate] = self.matches.matches(identifier, needs, incompatibilities[identifier])
        name, _ = split_key(identifier)
        limit = self.constraints.get(name)
        if limit is not None and name != CUDA:
            found = [c for c in found if limit.contains(c.version, prereleases=True)]
        if self.source is None or name in (CUDA, CUDNN, PYTHON, BUILD, METADATA) or name in self.direct:
            return found  # a direct reference's file was read and judged already: no listing, no pre-release rule
        if name not in self.catalog.known:
            return partial(self._allowed, found, needs, limit)  # lazy: read only as far as resolvelib goes
        return partial(self._listed, found)  # a factory: resolvelib would list a plain iterator at once

    def _absent(self, identifier: str) -> Candidate:
        """The one candidate of a name that only ``constrains`` rows ask about (``catalog.ABSENT``), one object per
        name, so that resolvelib's and the match cache's identity checks hold."""
        found = self._absents.get(identifier)
        if found is None:
            name, extras = split_key(identifier)
            found = self._absents[identifier] = Candidate(
                name=name, version=Version("0"), variant=None, index_url="", channel=ABSENT, extras=extras
            )
        return found

    def _allowed(
        self, found: Iterable[Candidate], needs: Sequence[Need], limit: SpecifierSet | None = None
    ) -> Iterator[Candidate]:
        """Index releases as pip and uv take them (``needs.passed_over``); a passed-over pre-release still, under
        ``--prerelease if-necessary(-or-explicit)``, when no final release is left."""
        held: list[Candidate] = []
        final = False
        for c in found:
            why = passed_over(needs, c, self.prerelease, limit)
            if why == "pre-release":
                held.append(c)
            elif why is None:
                final = True
                yield c
        if not final and self.prerelease in IF_NECESSARY:
            yield from held

    def _listed(self, matches: Iterable[Candidate]) -> Iterator[Candidate]:
        """The database's builds that the index really lists (a mirror may lack some), asked lazily:
        resolvelib takes candidates one by one, so only the pages of builds it tries are fetched.
        When the index lists none of them, they come anyway, unlisted: the set is then the database's
        answer, locked without a file (a ``wheel-not-listed`` warning), never a silent failure. A build
        whose index cannot be read is passed over (the source reports the index); when no index of
        any build can be read, the identifier has no candidate here and the failure is kept
        (``unreadable``) for the solve to raise if the search fails."""
        runnable = self.catalog.runnable
        unlisted = []
        listed = 0
        failure: IndexUnavailable | None = None
        for candidate, coming in with_next(matches, _LOOK_AHEAD):
            if candidate.variant is not None and candidate.variant not in runnable:
                yield candidate  # fails on its ``<cuda>`` need without any page fetched
                continue
            self._look_ahead((candidate, *coming))
            try:
                release = None if self._on_variant_index(candidate) else self._build(candidate)
            except IndexUnavailable as e:
                failure = failure or e
                continue
            if release is not None or self._on_variant_index(candidate):
                listed += 1  # a pure wheel on the variant's index is checked when pinned; a prebuilt one keeps its file
                yield replace(candidate, source=release) if is_prebuilt(candidate) else candidate
            else:
                unlisted.append(candidate)
        if not listed and failure is not None and not unlisted:
            if self.stop_unreadable:
                raise failure
            self.unreadable.append(failure)
            self.unreadable_names.append(candidate.name)
            return
        if not listed:
            yield from unlisted

    def _look_ahead(self, candidates: Sequence[Candidate]) -> None:
        """Before the page of ``candidates[0]`` is read, have the source read the pages of the next few builds
        with it, in parallel: when the solver passes over a build, the next one's page is there already."""
        assert self.source is not None
        runnable = self.catalog.runnable
        pages = [
            (c.index_url, c.name)
            for c in candidates
            if (c.variant is None or c.variant in runnable) and not self._on_variant_index(c)
        ]
        if len(pages) > 1:
            self.source.prefetch_pages(pages)

    def _on_variant_index(self, candidate: Candidate) -> bool:
        """A pure wheel taken from the pinned variant's index (``catalog.on_variant_index``)."""
        return on_variant_index(candidate.release, self.catalog.gpu_source)

    def _build(self, candidate: Candidate) -> IndexRelease | None:
        assert self.source is not None
        if is_prebuilt(candidate):  # a release asset, or the user's copy of it (``resolve.prebuilt``)
            key = (candidate.name, str(candidate.version), (candidate.build.url if candidate.build else None) or "")
            if key not in self._builds:
                self._builds[key] = prebuilt_release(self.source, candidate, self.catalog.target.python)
            return self._builds[key]
        index = candidate.index_url
        if self._on_variant_index(candidate) and self._variant_index:
            index = self._variant_index  # one pure wheel on every variant index: read it where the set comes from
        key = (candidate.name, str(candidate.version), index)
        if key not in self._builds:
            self._builds[key] = self.source.build_release(*key)
        return self._builds[key]

    def _base(self, identifier: str) -> Sequence[Candidate]:
        """Every candidate of ``identifier``, best first, fixed for the solve (``MatchCache`` indexes it)."""
        name, extras = split_key(identifier)
        if not extras:
            return self._candidates(name)
        found = self._extras_bases.get(identifier)
        if found is None:
            plain = self._candidates(name)
            found = self._extras_bases[identifier] = MadeOnRead(len(plain), lambda i: replace(plain[i], extras=extras))
        return found

    def _candidates(self, name: str) -> Sequence[Candidate]:
        pinned = self.direct.get(name)
        if pinned is not None:
            if name not in self.catalog.known:
                self._index_candidates[name] = (pinned,)  # what explanations say the index offered
            return (pinned,)
        if name in (CUDA, CUDNN, PYTHON, BUILD, METADATA):
            return self.catalog.for_name(name)
        if name in self.catalog.known:
            return self._with_companions(name) if self.companions is not None else self.catalog.for_name(name)
        if self.source is None:
            return self.catalog.for_name(name)
        found = self._index_candidates.get(name)
        if found is None:
            releases = self.source.releases(name)
            if isinstance(releases, Unlisted):  # not on the index: kept as it is, for the explanation
                self._index_candidates[name] = releases
                return releases
            order = preferred_first(releases, self.preferences.get(name))  # the previous lock's release first

            def make(i: int) -> Candidate:
                r = releases[order[i] if order is not None else i]
                return Candidate(name=name, version=r.version, variant=None, index_url=r.index_url, channel="pypi",
                                 source=r)  # fmt: skip

            found = self._index_candidates[name] = MadeOnRead(len(releases), make)  # made as the solver reads them
        return found

    def _with_companions(self, name: str) -> tuple[Candidate, ...]:
        """The database's candidates of ``name`` that every requested database package leaves room for
        (``Companions.fits``); all of them when none is left, so that a failure is explained as before."""
        found = self._paired.get(name)
        if found is None:
            every = self.catalog.for_name(name)
            assert self.companions is not None
            found = self._paired[name] = tuple(c for c in every if self.companions.fits(c)) or every
        return found

    @property
    def index_candidates(self) -> Mapping[str, Sequence[Candidate]]:
        """The releases of packages beyond the database seen so far (for explanations)."""
        return self._index_candidates

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        """Name, version specifier (local versions allowed) and, for ``<cuda>``, the variant (``catalog.satisfies``).

        Cost: a dictionary lookup after the first time.
        """
        return self.matches.check(requirement, candidate)

    def get_dependencies(self, candidate: Candidate) -> Sequence[Need]:
        """The database's needs (pairings, ``<cuda>``) plus the release's own ``Requires-Dist`` for the target.

        Metadata is asked for once per candidate, only when resolvelib pins it."""
        found = self._dependencies.get(candidate)
        if found is None and candidate.channel == ABSENT:
            return ()
        if found is None:
            # no shortcut on a pin that "clashes" with another: resolvelib does not reject such a pin, it re-pins
            # the other name, so a build given only its database needs here would be locked without its metadata's
            found = self._compute_dependencies(candidate)
            self._dependencies[candidate] = found
        return found

    def _compute_dependencies(self, candidate: Candidate) -> tuple[Need, ...]:
        if candidate.extras:
            base = Need(
                name=candidate.name,
                specifier=SpecifierSet(f"=={candidate.version}"),
                variant=candidate.variant,
                parent=str(candidate),
            )
            return (base, *self._metadata_needs(candidate, candidate.extras, only_extras=True))
        if candidate.variant is not None and candidate.variant not in self.catalog.runnable:
            return candidate.dependencies  # its ``<cuda>`` need fails at once: no metadata to fetch for it
        needs = candidate.dependencies
        if self.source is None:  # offline: a row's need on a package the database does not model (einops) is the
            needs = tuple(n for n in needs if n.name in self.catalog.known)  # index's to read, as numpy is
        own = (*needs, *self._metadata_needs(candidate, frozenset()))
        return (*own, *major_needs(self.catalog, candidate))  # one CUDA major per environment (``cudamajor``)

    def _metadata_needs(self, candidate: Candidate, extras: frozenset[str], *, only_extras: bool = False) -> list[Need]:
        if self.source is None or candidate.name in (CUDA, CUDNN):
            return []
        release = candidate.source or self._build(candidate)
        if release is None:
            return []
        parent = f"{candidate.name} {candidate.version}"
        required = self.source.python_excluded(release)
        if required is not None:  # a need nothing meets: resolvelib passes this release over for an older one
            return [Need(name=PYTHON, specifier=SpecifierSet(required), parent=parent)]
        if (why := self.source.unusable(release)) is not None:  # malformed metadata, or an sdist not built
            return [Need(name=METADATA if why.malformed else BUILD, parent=parent)]
        lines = self.source.requires(release)
        selected = self._verdicts.added_by(lines, extras) if only_extras else self._verdicts.applying(lines, extras)
        needs = [Need.from_requirement(req, parent=parent) for req in selected]
        for req in selected:
            if req.url:
                check_dependency_url(self.direct, req, parent)
        # the walk ahead skips what it walked before (by name, specifier and extras): a release pinning other
        # versions of names already seen (torch 2.11's nvidia-* pins after 2.15's) gets those read in parallel too
        fresh = [req for req in selected if not req.url]
        if fresh:
            self.source.prefetch(fresh, builds=partial(build_chain, self.catalog, self.companions))
        return needs
