"""Resolve requests against the compat database for one target into a ``Solution``. Pure.

``solve`` parses the requests, builds the catalog, runs resolvelib with ``CatalogProvider``, then, since the first
torch pinned fixes the variant, searches the other variants whose best case could beat that answer (``order``: newest
torch, full driver, SASS, the requests, verified rows), and turns the best pins into locked packages plus the warnings
a user must see (minor-version compatibility, PTX JIT only, an unknown driver, an unverified build, a source build).
A failure becomes ``NoSolution`` whose findings come from ``explain``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.core.platforms import canonical_name
from cudaresolve.core.versions import specifier_or_none
from cudaresolve.db.database import CompatDB, DriverSupport
from cudaresolve.errors import IndexUnavailable, NoSolution
from cudaresolve.resolve import DEFAULT_PRERELEASE
from cudaresolve.resolve.ahead import build_chain
from cudaresolve.resolve.assumed import assumed_system_notices
from cudaresolve.resolve.catalog import ABSENT, CUDA, CUDNN, Candidate, Catalog, Need, build_catalog
from cudaresolve.resolve.cudamajor import runtime_warnings
from cudaresolve.resolve.direct import direct_candidate
from cudaresolve.resolve.explain import explain_resolution, request_conflicts
from cudaresolve.resolve.model import FileKind, LockedPackage, Solution
from cudaresolve.resolve.needs import held_pins, parse_constraints, parse_requests, skipped_requests
from cudaresolve.resolve.order import SetKey, anchor_floor, best_case, ranked_names, release_of, set_key, unverified
from cudaresolve.resolve.pairing import Companions
from cudaresolve.resolve.prebuilt import source_builds
from cudaresolve.resolve.sources import on_variant_index
from cudaresolve.target.environment import marker_environment
from cudaresolve.text.findings import Finding, Notice, warning
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.resolve.source import IndexRelease, PackageSource
    from cudaresolve.target.model import Target

__all__ = ["Resolved", "parse_constraints", "parse_requests", "reachable", "skipped_requests", "solve", "solve_catalog"]

_MAX_ROUNDS: Final = 5000


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """The solver's raw answer: the solution and the pins behind it (for ``why-not``)."""

    solution: Solution
    pins: Mapping[str, Candidate]
    catalog: Catalog


def solve(
    requests: Sequence[str],
    db: CompatDB,
    target: Target,
    *,
    source: PackageSource | None = None,
    catalog: Catalog | None = None,
    constraints: Sequence[str] = (),
    gpu_source: str = "auto",
    preferences: Mapping[str, str] | None = None,
    prerelease: str = DEFAULT_PRERELEASE,
) -> Resolved:
    """Resolve PEP 508 ``requests`` for ``target``; raises ``NoSolution`` with ordered findings.

    Without a ``source`` only the database's packages can be resolved (the embedded answer); with
    one, every package and dependency is (the whole environment), and the source's
    ``IndexUnavailable`` passes through when some listing or metadata cannot be had. ``catalog``:
    one built for ``target`` before (``build_catalog(..., lazy=True)``), shared by several solves; else one is
    built with ``gpu_source`` (``sources.GPU_SOURCES``). ``constraints``: ``-c`` lines, which narrow the
    versions of packages the set needs anyway.

    A direct reference (``name @ URL``, only with a ``source``: its file is read) pins ``name`` to that file
    for every requirement on it, the user's and the dependencies' (``direct.direct_candidate``).

    ``preferences`` (a previous lock's pins) are kept where they fit, as uv keeps them: an index package's release
    is tried first; the database's packages are first searched held to their builds (``_held_first``)."""
    environment = marker_environment(target)
    needs = parse_requests(requests, environment, direct=source is not None)
    limits = parse_constraints(constraints, environment)
    if catalog is None:
        names = None if source is not None else reachable(db, [n.name for n in needs])
        catalog = build_catalog(db, target, names, lazy=source is not None, gpu_source=gpu_source)
    if source is None:
        held = held_pins(preferences or {}, db.package_names, needs, ())
        return _held_first(lambda limit: solve_catalog(needs, db, catalog, constraints=limit), held, limits)
    direct: dict[str, Candidate] = {}
    for need in needs:
        if need.url and need.name not in direct:
            direct[need.name] = direct_candidate(catalog, source.direct_release(need.name, need.url))
    needs = [_pinned(n, direct[n.name]) if n.name in direct else n for n in needs]
    companions = Companions(catalog, needs)
    # the walk ahead reads what the solver will: each request with its extras, a database package's builds in turn
    source.prefetch(_requirements(needs), builds=partial(build_chain, catalog, companions))
    return _held_first(
        lambda limit: solve_catalog(
            needs, db, catalog, source=source, environment=environment, constraints=limit, direct=direct,
            companions=companions, preferences=preferences, prerelease=prerelease,
        ),
        held_pins(preferences or {}, db.package_names, needs, direct),
        limits,
    )  # fmt: skip


def _held_first(
    run: Callable[[Mapping[str, SpecifierSet]], Resolved],
    held: Mapping[str, SpecifierSet],
    limits: Mapping[str, SpecifierSet],
) -> Resolved:
    """``run`` with the previous lock's builds held (``held``) first; when that set fails, searched freely."""
    if held:
        try:
            return run({**held, **limits})
        except NoSolution:
            pass
    return run(limits)


def _pinned(need: Need, candidate: Candidate) -> Need:
    """``need`` narrowed to the direct reference's version (a ``pkg>=2`` given too still has its say)."""
    return replace(need, specifier=need.specifier & SpecifierSet(f"=={candidate.version}"))


def _requirements(needs: Sequence[Need]) -> list[Requirement]:
    """``needs`` as PEP 508 requirements (name, extras, specifier), for the walk ahead; direct references left out,
    and any need that is no PEP 508 requirement (``<cuda>``)."""
    out = []
    for need in needs:
        if need.url:
            continue
        with contextlib.suppress(InvalidRequirement):
            out.append(Requirement(str(need)))
    return out


def reachable(db: CompatDB, names: Sequence[str]) -> list[str]:
    """``names`` and every package the database says they may require or constrain, transitively."""
    seen: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        for release in db.packages(name):
            reqs = (*release.requires, *release.constrains, *(r for b in release.builds for r in b.requires))
            todo.extend(canonical_name(r.name) for r in reqs if canonical_name(r.name) not in seen)
    return seen


def solve_catalog(
    needs: Sequence[Need],
    db: CompatDB,
    catalog: Catalog,
    *,
    source: PackageSource | None = None,
    environment: Mapping[str, str] | None = None,
    constraints: Mapping[str, SpecifierSet] | None = None,
    direct: Mapping[str, Candidate] | None = None,
    companions: Companions | None = None,
    preferences: Mapping[str, str] | None = None,
    prerelease: str = DEFAULT_PRERELEASE,
) -> Resolved:
    """Resolve ``needs`` over a prebuilt catalog (``why-not`` reuses one catalog for many tries); ``direct``:
    the one candidate of each package a direct reference pins; ``companions``: ``Companions(catalog, needs)``,
    when the caller made it already.

    A requested package every release of which conflicts with another request fails before the
    search (``request_conflicts``: it stops at the first release that fits, so a good request costs
    one look per package); the search itself could only find that after trying every build.
    """
    from resolvelib.resolvers import ResolutionImpossible, ResolutionTooDeep

    if request_conflicts(catalog, needs):  # no search can succeed: say why at once (cheap when none)
        raise _no_solution(explain_resolution(catalog, needs, constraints=constraints, db=db))
    search = _Search(
        needs=needs,
        db=db,
        catalog=catalog,
        source=source,
        environment=environment,
        constraints=constraints or {},
        direct=direct or {},
        companions=companions,
        preferences=preferences or {},
        prerelease=prerelease,
    )
    unreadable: IndexUnavailable | None = None
    pins: dict[str, Candidate] | None = None
    too_deep: ResolutionTooDeep | None = None
    # a CPU target has one variant: a build whose index cannot be read can only be dodged (deepspeed backtracked
    # through a hundred sdists to one that needs no torch), so the search ends at once (the lock retries on PyPI)
    stop = catalog.target.is_cpu
    try:
        try:
            pins = search.run(needs, stop_unreadable=stop)
        except ResolutionImpossible:
            if search.companions is None:
                raise
            # the pairings leave no set out but change a failing search's causes: search again without them
            pins = search.run(needs, paired=False, stop_unreadable=stop)
    except ResolutionImpossible as exc:
        if not search.unreadable:
            seen = search.index_candidates if source is not None else None  # None: no index was asked
            raise _no_solution(explain_resolution(catalog, needs, list(exc.causes), seen, constraints, db=db)) from exc
        # some builds' index could not be read: the variants are searched one by one below, for a set from PyPI
        unreadable = _binding_failure(search)
    except ResolutionTooDeep as exc:  # over every variant at once: one variant at a time may still end (jax[cuda12])
        too_deep = exc
    # A set with no GPU package, found while some builds' index could not be read, may only have dodged them: the
    # PyTorch index down, accelerate backtracked to 0.0.1, which needs no torch. The variants' sets are searched
    # instead; with none, the index's failure stands (a CPU target's lock then takes PyPI's builds: ``lock.flow``).
    dodged = search.unreadable[0] if pins is not None and search.unreadable and CUDA not in pins else None
    unreadable = unreadable or dodged
    best = _best_over_variants(search, None if pins is None or dodged else pins)
    if best is None and too_deep is not None:
        raise NoSolution(Text("resolve.too-deep"), hint=Text("resolve.too-deep.hint")) from too_deep
    if best is None:  # only once some index could not be read: no set from the others, so that failure is the cause
        assert unreadable is not None  # a set found and not dodged is the first of the best ones
        raise unreadable
    solution = _solution(best, db, catalog.target, source, catalog.gpu_source)
    return Resolved(solution=solution, pins=best, catalog=catalog)


@dataclass(slots=True, kw_only=True)
class _Search:
    """One resolvelib run per call, over the same catalog and source (``run``)."""

    needs: Sequence[Need]
    db: CompatDB
    catalog: Catalog
    source: PackageSource | None
    environment: Mapping[str, str] | None
    constraints: Mapping[str, SpecifierSet] = field(default_factory=dict)
    direct: Mapping[str, Candidate] = field(default_factory=dict)
    index_candidates: Mapping[str, Sequence[Candidate]] = field(default_factory=dict)
    unreadable: list[IndexUnavailable] = field(default_factory=list)  # the provider's, for the last run
    failed: list[tuple[str, IndexUnavailable]] = field(default_factory=list)  # every run's, by package left bare
    blamed: set[str] = field(default_factory=set)  # the packages every failed run's causes name
    companions: Companions | None = None  # made from ``needs`` on the first run, shared by the later ones
    preferences: Mapping[str, str] = field(default_factory=dict)  # name -> version to try first (a previous lock)
    prerelease: str = DEFAULT_PRERELEASE  # --prerelease (``provider.CatalogProvider._allowed``)

    def __post_init__(self) -> None:
        if self.companions is None:
            self.companions = Companions(self.catalog, self.needs)

    def run(self, needs: Sequence[Need], *, paired: bool = True, stop_unreadable: bool = False) -> dict[str, Candidate]:
        """One search for ``needs``; ``paired``: over the builds the pairings leave; ``stop_unreadable``: provider's."""
        from resolvelib import BaseReporter, ResolutionImpossible

        from cudaresolve.resolve.connected import connected_pins
        from cudaresolve.resolve.provider import CatalogProvider
        from cudaresolve.resolve.resolution import PinCheckedResolution

        provider = CatalogProvider(
            self.catalog,
            anchor=self.db.anchor,
            user_pinned={n.name for n in self.needs if any(s.operator in ("==", "===") for s in n.specifier)},
            user_requested={n.key for n in self.needs},
            source=self.source,
            environment=self.environment,
            constraints=self.constraints,
            direct=self.direct,
            companions=self.companions if paired else None,
            preferences=self.preferences,
            prerelease=self.prerelease,
            stop_unreadable=stop_unreadable,
        )
        self.index_candidates = provider.index_candidates
        self.unreadable = provider.unreadable
        resolution = PinCheckedResolution[Need, Candidate, str](provider, BaseReporter())
        try:
            pins = connected_pins(resolution.resolve(needs, max_rounds=_MAX_ROUNDS), hide=CUDNN)  # see ``connected``
        except ResolutionImpossible as exc:
            self.blamed.update(cause.requirement.name for cause in exc.causes)
            raise
        finally:
            self.failed += zip(provider.unreadable_names, provider.unreadable, strict=True)
        return {key: pin for key, pin in pins.items() if pin.channel != ABSENT}  # a name only constrained: not in it


def _binding_failure(search: _Search) -> IndexUnavailable:
    """The first index failure, of every run so far, that left a package a failed run's causes name without a build
    (torch-scatter's wheel page, not a torch build passed over for PyPI's); else the last run's first."""
    return next((failure for name, failure in search.failed if name in search.blamed), search.unreadable[0])


def _best_over_variants(search: _Search, first: dict[str, Candidate] | None) -> dict[str, Candidate] | None:
    """The best set over every variant the target runs (``order``'s rule), starting from resolvelib's ``first``
    answer (None when it found none, or its set only dodged builds whose index could not be read).

    Of sets that rank equal, the one on the variant that comes first in the catalog's order is kept, whichever
    search found it. Cost: one more search per variant whose best case (``best_case``) beats the best set so far,
    or equals it on an earlier variant; it holds the anchor at or above the best set's (``anchor_floor``) and ends
    once its variant's index cannot be read. A variant named by the request is never searched past."""
    from resolvelib.resolvers import ResolutionImpossible, ResolutionTooDeep

    needs, catalog, anchor = search.needs, search.catalog, search.db.anchor
    if any(n.name == CUDA for n in needs) or (first is not None and CUDA not in first):
        return first
    if first is not None and not any(n in catalog.known for n in first if n not in (CUDA, CUDNN)):
        return first  # no build of the database: the variant is the major its libraries chose (jax[cuda12])
    requested = ranked_names(needs, catalog, anchor)
    order = {v.variant: i for i, v in enumerate(catalog.for_name(CUDA))}

    def rank(key: SetKey, variant: str | None) -> tuple[SetKey, int]:  # equal keys: the catalog's earlier variant
        return key, -order.get(variant, len(order))

    best = first
    best_rank = rank(set_key(first, anchor, requested), first[CUDA].variant) if first is not None else None
    has_anchor = first is None or anchor in first
    tried = first[CUDA].variant if first is not None else None
    bounds = []
    for v in catalog.for_name(CUDA):
        if v.variant == tried:
            continue
        bound = best_case(v, needs, catalog, anchor, requested, has_anchor=has_anchor, companions=search.companions)
        if bound is not None:  # None: no set on ``v`` holds every requested package
            bounds.append((rank(bound, v.variant), v))
    bounds.sort(key=lambda b: b[0], reverse=True)
    for ceiling, variant in bounds:
        if best_rank is not None and ceiling <= best_rank:
            break  # sorted: no later variant can beat the best set either
        try:
            pins = search.run([*needs, *anchor_floor(best, anchor), Need(name=CUDA, variant=variant.variant)],
                              stop_unreadable=True)
        except (ResolutionImpossible, ResolutionTooDeep, IndexUnavailable):
            continue  # IndexUnavailable: this variant's index cannot be read; the sets found stand
        found = rank(set_key(pins, anchor, requested), variant.variant)
        if best_rank is None or found > best_rank:
            best, best_rank = pins, found
    return best


def _no_solution(findings: Sequence[Finding]) -> NoSolution:
    first = findings[0].text if findings else Text("resolve.nothing-to-explain")
    hint = Text("render.no-solution-hint")
    if findings and findings[0].code == "jetson-not-served":
        hint = Text.of("resolve.jetson-not-served.hint", url=findings[0].text.get("url"))
    return NoSolution(Text.of("render.no-solution", first=first), findings=findings, hint=hint)


def _solution(
    pins: Mapping[str, Candidate],
    db: CompatDB,
    target: Target,
    source: PackageSource | None = None,
    catalog_source: str = "auto",
) -> Solution:
    cuda = pins.get(CUDA)
    variant = cuda.variant if cuda is not None and cuda.variant else "cpu"
    info = db.variant(variant)
    variant_index = cuda.index_url if cuda is not None else (info.index_url if info else db.default_index)
    builds = [c for n, c in pins.items() if n != CUDA and c.build is not None and not c.extras]
    # the index the set's GPU builds come from: PyPI (or its mirror) when every one of them does
    from_default = bool(builds) and all(c.index_url == db.default_index for c in builds)
    index_url = db.default_index if from_default else variant_index
    packages = []
    for name in sorted(pins):
        candidate = pins[name]
        if name == CUDA or candidate.extras:
            continue  # the variant is the solution's; ``name[extra]`` is pinned through ``name``
        index = candidate.index_url
        if on_variant_index(candidate.release, catalog_source):
            index = variant_index
        release = candidate.source
        if release is None and source is not None:
            release = source.build_release(name, str(candidate.version), index)
        packages.append(_locked(name, str(candidate.version), index, release))
    return Solution(
        target=target,
        variant=variant,
        index_url=index_url,
        packages=tuple(packages),
        warnings=(*_warnings(pins, db, target, variant), *assumed_system_notices(pins, db, target, catalog_source)),
    )


def _locked(name: str, version: str, index: str, release: IndexRelease | None) -> LockedPackage:
    if release is None:
        return LockedPackage(name=name, version=version, index=index)
    file = release.artifact
    return LockedPackage(
        name=name,
        version=version,
        index="" if file.kind in (FileKind.ARCHIVE, FileKind.DIRECTORY) else index,  # a direct one: from no index
        url=file.url,
        sha256=file.sha256,
        filename=file.filename,
        requires_python=specifier_or_none(file.requires_python),  # pip ignores one that is none, and so does a lock
        size=file.size if file.size is not None and 0 <= file.size < 1 << 63 else None,  # no lock reader takes more
        kind=file.kind,
        upload_time=file.upload_time,
    )


def _warnings(pins: Mapping[str, Candidate], db: CompatDB, target: Target, variant: str) -> list[Notice]:
    out: list[Notice] = []
    info = db.variant(variant)
    cuda = pins.get(CUDA)
    if target.gpus and target.driver is None:
        out.append(warning("driver-unknown", "warn.driver-unknown"))
    told = None
    if cuda is not None and cuda.driver_support is DriverSupport.MINOR and info is not None and info.cuda:
        release, told = db.cuda_release(info.cuda), info.cuda
        full = release.min_driver(target.platform) if release else "?"
        out.append(warning("minor-version-compat", variant=variant, required=full, found=target.driver))
    out += runtime_warnings(pins, db, target, told=told)  # a newer runtime an index release pulls in
    for name in sorted(pins):
        candidate = pins[name]
        build = candidate.build
        if name == CUDA or candidate.coverage is not Coverage.PTX_JIT or build is None:
            continue
        for gpu in target.gpus:
            if coverage(build.sass, gpu.cc, tegra=gpu.tegra) is Coverage.NONE:
                out.append(
                    warning(
                        "ptx-jit-only",
                        package=name,
                        version=str(candidate.release.version if candidate.release else candidate.version),
                        variant=candidate.variant,
                        gpu=gpu.name,
                        sm=gpu.cc.sm,
                        found=" ".join(a.name for a in build.ptx),
                    )
                )
    for name in sorted(pins):
        candidate = pins[name]
        if name != CUDA and unverified(candidate):
            out.append(
                warning(
                    "unverified-build",
                    "warn.unverified-build",
                    package=name,
                    version=str(release_of(candidate)),
                    variant=candidate.variant or "-",
                )
            )
    return [*out, *source_builds(pins, db.anchor, target)]  # a package built from its sdist (``prebuilt``)
