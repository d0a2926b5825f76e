"""``why-not``: every reason a variant, build or requirement cannot be used here, and what works instead. Pure.

A SPEC is a variant (``cu121``), a pinned build (``torch==2.5.1+cu121``) or a requirement
(``xformers``, ``fbgemm-gpu==1.0.0``).  The answer lists all reasons (driver, each GPU's SM,
Python, platform, pairings), each with the number required and the number found, and the ways
out: another variant or version that resolves, a driver upgrade to the lowest driver that makes
the request resolve (a CUDA's minor-version floor or full minimum, or the lowest driver that knows
every GPU), the ``cuda-compat`` forward-compatibility package on data-center GPUs, a package's
CPU-only build (``[packages.cpu-package]``), a source build with the exact ``TORCH_CUDA_ARCH_LIST``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudaresolve.core.variants import is_variant
from cudaresolve.db.database import CompatDB, CudaRelease, DriverSupport
from cudaresolve.errors import InvalidInput, NoSolution
from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need, Rejection, build_catalog, satisfies
from cudaresolve.resolve.explain import explain_resolution
from cudaresolve.resolve.gpudriver import GpuDriverVerdict, unsupported_gpus, way_out
from cudaresolve.resolve.solve import parse_constraints, parse_requests, solve_catalog
from cudaresolve.resolve.ways import Alternative, cpu_packages, source_build, unpublished
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cudaresolve.core.versions import CudaVersion, DriverVersion
    from cudaresolve.resolve.model import Solution
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Finding

__all__ = ["Alternative", "WhyNot", "why_not"]

@dataclass(frozen=True, slots=True, kw_only=True)
class WhyNot:
    spec: str
    possible: bool
    reasons: tuple[Finding, ...]
    alternatives: tuple[Alternative, ...]
    solution: Solution | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "spec": self.spec,
            "possible": self.possible,
            "reasons": [r.to_dict() for r in self.reasons],
            "alternatives": [a.to_dict() for a in self.alternatives],
        }
        if self.solution is not None:
            data["solution"] = self.solution.to_dict()
        return data


def why_not(
    spec: str, context: Sequence[str], db: CompatDB, target: Target, *, constraints: Sequence[str] = ()
) -> WhyNot:
    """Answer ``cudaresolve why-not SPEC [REQ ...] [-c FILE]`` for ``target``; ``constraints`` (``-c``
    lines) narrow every attempt, the ways out included."""
    from cudaresolve.target.environment import marker_environment

    catalog = build_catalog(db, target)
    limits = parse_constraints(constraints, marker_environment(target))
    text = spec.strip()
    if is_variant(text.lower()):  # a variant is a local version label, and PEP 440 reads those in any case
        text = text.lower()
        if db.variant(text) is None:
            known = tuple(v.name for v in db.variants)
            raise InvalidInput(
                Text.of("resolve.unknown-variant", variant=repr(text)),
                hint=Text.of("resolve.unknown-variant.hint", known=known),
            )
        needs = _in_db(parse_requests(list(context)), db) if context else []
        needs = needs or parse_requests([db.anchor])  # no database package asked: the variant is judged by the anchor
        return _answer(text, [*needs, Need(name=CUDA, variant=text)], text, db, catalog, limits)
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise InvalidInput(Text.of("resolve.bad-spec", spec=repr(spec)), hint=Text("resolve.bad-spec.hint")) from exc
    if req.marker is not None and not req.marker.evaluate({**marker_environment(target), "extra": ""}):
        raise InvalidInput(  # lock leaves such a requirement out (``requirement-skipped``): no answer to give
            Text.of("resolve.why-not-marker-false", spec=text, marker=str(req.marker)),
            hint=Text.of("resolve.why-not-marker-false.hint", package=req.name),
        )
    if req.url:  # lock judges a direct reference before anything else: the same refusals here
        from cudaresolve.resolve.direct import parse_direct

        parse_direct(req.name, req.url)
        parse_requests([text])  # why-not reads no file: a wheel URL is refused with its own coded error
    first = Need.from_requirement(req)
    if first.name not in db.package_names:  # lock takes it from the index: the database gives no verdict on it
        raise InvalidInput(Text.of("resolve.why-not-outside-db", package=first.name, known=tuple(db.package_names)),
                           hint=Text.of("resolve.why-not-outside-db.hint", package=first.name))
    variant = _variant_of(req, db)
    needs = [first, *_in_db(parse_requests(list(context)), db)] if context else [first]
    if variant is not None:
        needs.append(Need(name=CUDA, variant=variant))
    return _answer(text, needs, variant, db, catalog, limits)


def _in_db(needs: Sequence[Need], db: CompatDB) -> list[Need]:
    """The needs on the database's packages: the others are the index's to answer, at lock time."""
    return [n for n in needs if n.name in db.package_names or n.name == CUDA]


def _variant_of(req: Requirement, db: CompatDB) -> str | None:
    """The variant named by a pin's local version: ``torch==2.5.1+cu121`` (or ``+CU121``: PEP 440 local labels
    are read in lower case) -> ``cu121``; None for a label that is no variant the database knows (``+cu121.post1``,
    ``+cu999``): the pin itself is then the reason, as lock finds it, not a CUDA release that does not exist."""
    for spec in req.specifier:
        if spec.operator in ("==", "===") and "+" in spec.version:
            local = spec.version.split("+", 1)[1].lower()
            return local if db.variant(local) is not None else None
    return None


def _answer(
    spec: str,
    needs: list[Need],
    variant: str | None,
    db: CompatDB,
    catalog: Catalog,
    limits: Mapping[str, SpecifierSet],
) -> WhyNot:
    try:
        resolved = solve_catalog(needs, db, catalog, constraints=limits)
    except NoSolution as exc:
        # a search that ended on the variants one by one may carry no finding: explain the requests themselves
        findings = exc.findings or explain_resolution(catalog, needs, db=db)
        reasons = _all_reasons(needs, variant, findings, catalog, db)
        alternatives = _alternatives(needs, variant, reasons, db, catalog, limits)
        return WhyNot(spec=spec, possible=False, reasons=tuple(reasons), alternatives=tuple(alternatives))
    return WhyNot(spec=spec, possible=True, reasons=(), alternatives=(), solution=resolved.solution)


def _all_reasons(
    needs: Sequence[Need], variant: str | None, findings: Sequence[Finding], catalog: Catalog, db: CompatDB
) -> list[Finding]:
    """The solver's findings plus every reason of what was asked, not only the first; for a named variant, findings
    about other variants are left out (a build of another variant "requires <cuda>==cu128" only because cu121 was
    asked for), and one reason shared by several releases is said once (``_grouped``)."""
    reasons = [f for f in findings if variant is None or not _other_variant(f, variant)]
    reasons += unpublished([_without_local(n) for n in needs], variant, db)  # torch==2.9.0+cu118 too
    too_old = {f.package for f in reasons if f.code == "gpu-too-old"}  # says it of every build that fits
    added = _rejections_asked(needs, variant, catalog)
    reasons += [r.finding for r in added if not (r.finding.code == "sm-not-covered" and r.name in too_old)]
    return _grouped(list(dict.fromkeys(reasons)))


def _rejections_asked(needs: Sequence[Need], variant: str | None, catalog: Catalog) -> list[Rejection]:
    """The target's rejections of what was asked, in the versions asked: a named variant's own and its builds'
    (``torch==2.9.0+cu126`` is not answered with cu126's torch 2.6.0 to 2.14.1); for an exact pin
    (``torch==2.15.0``) the pinned release's and its variants', so Python and driver are said beside the GPU."""
    wanted = [_without_local(n) for n in needs if n.name != CUDA]
    for need in wanted:
        catalog.for_name(need.name)  # a lazy catalog records a package's rejections when it builds it

    def asked(choice: Rejection | Candidate, pool: Sequence[Need]) -> bool:
        return any(satisfies(n, choice) for n in pool)

    if variant is not None:
        return [r for r in catalog.rejections if r.variant == variant and (r.name == CUDA or asked(r, wanted))]
    pinned = [n for n in wanted if any(s.operator in ("==", "===") and "*" not in s.version for s in n.specifier)]
    own = [r for r in catalog.rejections if asked(r, pinned)]
    variants = {r.variant for r in own} | {c.variant for n in pinned for c in catalog.for_name(n.name) if asked(c, [n])}
    return own + [r for r in catalog.rejections if r.name == CUDA and r.variant in variants - {None}]


def _other_variant(finding: Finding, variant: str) -> bool:
    if finding.variant is not None:
        return finding.variant != variant
    required = finding.required or ""
    return required.startswith(f"{CUDA}==") and required != f"{CUDA}=={variant}"


def _grouped(reasons: list[Finding]) -> list[Finding]:
    """Findings that differ only in the release's version (twelve torch releases without sm_120
    for cu121) become one, whose ``version`` field names the range and the count."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for finding in reasons:
        fields = tuple((k, v) for k, v in finding.text.fields if k != "version")
        same = (finding.code, finding.package, finding.variant, finding.required, finding.found)
        key: tuple[object, ...] = (*same, finding.text.key, fields)
        groups.setdefault(key, []).append(finding)
    out: list[Finding] = []
    for members in groups.values():
        versions = [v for f in members if isinstance(v := f.text.get("version"), str)]
        if len(members) < 2 or len(versions) != len(members):
            out.extend(members)
            continue
        ordered = sorted(versions, key=_version_key)
        span = Text.of("resolve.release-range", first=ordered[0], last=ordered[-1], count=len(ordered))
        head = members[0]
        fields = tuple((k, span if k == "version" else v) for k, v in head.text.fields)
        out.append(replace(head, text=Text(head.text.key, fields)))
    return out


def _version_key(text: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(text))
    except ValueError:
        return (1, text)


def _alternatives(
    needs: Sequence[Need], variant: str | None, reasons: Sequence[Finding], db: CompatDB, catalog: Catalog,
    limits: Mapping[str, SpecifierSet],
) -> list[Alternative]:
    target = catalog.target
    out: list[Alternative] = []
    real = [n for n in needs if n.name != CUDA]
    # another variant with the user's pins kept (``torch==2.5.1+cu121`` keeps ``torch==2.5.1``), or
    # for a requirement another release of it with the other requirements kept; only when nothing
    # fits that way, the same with every pin loosened
    if variant is not None:
        kept = [_without_local(n) for n in real]
        loose = [Need(name=n.name, parent=n.parent, extras=n.extras) if "+" in str(n.specifier) else n for n in real]
        others = [info.name for info in db.variants if info.name != variant]
        rounds = [[(v, [*pins, Need(name=CUDA, variant=v)]) for v in others] for pins in (kept, loose)]
        limit = 3
    else:
        head = Need(name=real[0].name, extras=real[0].extras)
        rest = real[1:]
        rounds = [[("", [head, *rest])], [("", [head, *(Need(name=n.name, extras=n.extras) for n in rest)])]]
        limit = 1
    for attempts in dict.fromkeys(tuple((label, tuple(a)) for label, a in r) for r in rounds):
        out = _working(attempts, {n.name for n in real}, db, catalog, limit, limits)
        if out:
            break
    codes = {r.code for r in reasons}
    if "jetson-not-served" in codes:
        url = db.jetson_wheels or "JetPack"
        out = [Alternative.make("jetson-wheels", "resolve.jetson-not-served.hint", code="jetson-not-served", url=url)]
    out.extend(_driver_alternatives(needs, variant, codes, db, catalog, limits))
    out.extend(cpu_packages(reasons, db))
    out.extend(source_build(needs, variant, reasons, db, target))
    return out


def _driver_alternatives(
    needs: Sequence[Need], variant: str | None, codes: set[str], db: CompatDB, catalog: Catalog,
    limits: Mapping[str, SpecifierSet],
) -> list[Alternative]:
    """A driver for the GPUs and the CUDA asked for, and the cuda-compat package, each offered only when that
    driver would really make the request resolve: a variant none of whose builds has code for a GPU here is
    not made possible by any driver (cu130 for a V100), and a GPU's own minimum is not enough for a CUDA that
    needs more (cu130 on an H100 wants 580, not the 520 Hopper needs)."""
    target = catalog.target
    if target.driver is None:
        return []
    real = [n for n in needs if n.name != CUDA]
    verdict = unsupported_gpus(db, target) if "driver-unsupported-gpu" in codes else None
    cuda_ways = _driver_ways_out(variant, needs, db, catalog, limits) if "driver-too-old" in codes or verdict else []
    cuda_floor = _cuda_floor(variant, real, db, catalog)
    if verdict is None:
        return cuda_ways  # each driver there makes the request resolve
    if not verdict.common:
        return [_gpu_driver_way(verdict)]
    if verdict.ceiling is not None:  # an old GPU: from the CUDA's driver up to its last branch, the lowest that runs
        for floor in dict.fromkeys((_cuda_floor(variant, real, db, catalog, minor=True), cuda_floor)):
            if floor is not None and floor.branch > verdict.ceiling:
                continue  # the CUDA asked for needs a newer branch than the old GPU's last
            low = floor if floor is not None and (verdict.floor is None or floor > verdict.floor) else verdict.floor
            if low is None or _runs_with(low, needs, db, catalog, limits):
                return [_gpu_driver_way(replace(verdict, floor=low))]
        return []
    needed = verdict.floor
    if cuda_floor is not None and (needed is None or cuda_floor > needed):
        if not _runs_with(cuda_floor, needs, db, catalog, limits):
            return []
        return [w for w in cuda_ways if w.code != "forward-compat-available"]  # no GPU-unknown driver runs compat
    if needed is None or not _runs_with(needed, needs, db, catalog, limits):
        return []
    return [_gpu_driver_way(verdict)]


def _gpu_driver_way(verdict: GpuDriverVerdict) -> Alternative:
    """The drivers that support every GPU here (``gpudriver.way_out``) as a way out."""
    spec, words = way_out(verdict)
    return Alternative(spec=spec, text=words, code="driver-unsupported-gpu")


def _cuda_floor(
    variant: str | None, real: Sequence[Need], db: CompatDB, catalog: Catalog, *, minor: bool = False
) -> DriverVersion | None:
    """The driver the CUDA asked for needs (the variant's; for a requirement, its lowest CUDA's) to run fully, or
    with ``minor`` through minor-version compatibility."""
    info = db.variant(variant) if variant else None
    release = db.cuda_release(info.cuda) if info is not None and info.cuda else None
    if release is None and variant is None:
        release = _lowest_cuda(real, db, catalog)
    if release is None:
        return None
    platform = catalog.target.platform
    return release.minor_compat_driver(platform) if minor else release.min_driver(platform)


def _runs_with(
    driver: DriverVersion, needs: Sequence[Need], db: CompatDB, catalog: Catalog, limits: Mapping[str, SpecifierSet]
) -> bool:
    """Whether ``needs`` resolve for this target with ``driver`` in place of its own (every GPU on it)."""
    return _solve_with(driver, needs, db, catalog, limits) is not None


def _solve_with(
    driver: DriverVersion, needs: Sequence[Need], db: CompatDB, catalog: Catalog, limits: Mapping[str, SpecifierSet]
) -> Solution | None:
    """The set ``needs`` resolve to for this target with ``driver`` in place of its own, else None."""
    target = catalog.target
    upgraded = replace(
        target, driver=driver, cuda_driver_max=None, gpus=tuple(replace(g, driver=None) for g in target.gpus)
    )
    try:
        return solve_catalog(needs, db, build_catalog(db, upgraded, gpu_source=catalog.gpu_source),
                             constraints=limits).solution
    except NoSolution:
        return None


def _working(
    attempts: Sequence[tuple[str, Sequence[Need]]],
    names: set[str],
    db: CompatDB,
    catalog: Catalog,
    limit: int,
    limits: Mapping[str, SpecifierSet],
) -> list[Alternative]:
    """The first ``limit`` attempts that resolve, each as an ``alt.works`` way out."""
    out: list[Alternative] = []
    for label, attempt in attempts:
        try:
            solution = solve_catalog(attempt, db, catalog, constraints=limits).solution
        except NoSolution:
            continue
        picked = tuple(f"{p.name} {p.version}" for p in solution.packages if p.name in names)
        spec = label or ", ".join(f"{p.name}=={p.version}" for p in solution.packages if p.name in names)
        out.append(Alternative.make(spec, "alt.works", spec=spec, picked=picked, index=solution.index_url))
        if len(out) >= limit:
            break
    return out


def _without_local(need: Need) -> Need:
    """The user's pin without its variant: ``torch==2.5.1+cu121`` becomes ``torch==2.5.1``."""
    if "+" not in str(need.specifier):
        return need
    specs = [f"{s.operator}{s.version.split('+', 1)[0]}" for s in need.specifier]
    return replace(need, specifier=SpecifierSet(",".join(specs)))


def _driver_ways_out(
    variant: str | None, needs: Sequence[Need], db: CompatDB, catalog: Catalog, limits: Mapping[str, SpecifierSet]
) -> list[Alternative]:
    """The least driver upgrade that makes ``needs`` resolve (``_least_driver``), labelled with that driver: the
    minor-version-compatibility floor when it is enough, else the full-compatibility minimum; then the
    cuda-compat package for the CUDA it runs, first, since it leaves the kernel driver as it is."""
    target = catalog.target
    assert target.driver is not None
    least = _least_driver(variant, needs, db, catalog, limits)
    if least is None:
        return []
    driver, release = least
    full, floor = release.min_driver(target.platform), release.minor_compat_driver(target.platform)
    if driver < full and driver.branch < full.branch:  # "580" before "580.65.06" is no other upgrade
        out = [Alternative.make(f"driver>={driver}", "alt.driver-upgrade-minor", floor=driver, full=full,
                                cuda=release.version, variant=release.version.tag)]
    else:
        out = [Alternative.make(f"driver>={full}", "alt.driver-upgrade", full=full, cuda=release.version,
                                floor=floor)]
    forward = db.forward_compat_for(release.version.major)
    datacenter = bool(target.gpus) and all(g.datacenter for g in target.gpus)
    if (
        forward is not None
        and datacenter
        and target.platform.startswith("linux")
        and target.driver.branch >= forward.min_driver_branch
        and db.driver_support(release.version, target.driver, target.platform) is DriverSupport.NONE
    ):
        out.insert(0, Alternative.make(
            forward.package_for(release.version),
            "reason.forward-compat-available",
            code="forward-compat-available",
            gpu=tuple(sorted({g.name for g in target.gpus})),
            variant=variant or release.version.tag,
            required=release.version,
            found=target.driver,
        ))
    return out


def _least_driver(
    variant: str | None, needs: Sequence[Need], db: CompatDB, catalog: Catalog, limits: Mapping[str, SpecifierSet]
) -> tuple[DriverVersion, CudaRelease] | None:
    """The lowest driver above the target's that makes ``needs`` resolve, and the CUDA release the set then
    runs. The drivers tried are the minor-version floors and full-compatibility minimums of the CUDA asked
    for (a variant's; for a requirement, every CUDA of the builds that meet it) and the lowest driver that
    knows every GPU here, lowest first."""
    target = catalog.target
    assert target.driver is not None
    info = db.variant(variant) if variant else None
    cudas = [info.cuda] if info is not None and info.cuda else _cudas_of(needs, db, catalog)
    if not cudas:  # pure packages asked for (torchrec): any CUDA their GPU dependencies may run
        cudas = [v.cuda for v in db.variants if v.cuda is not None]
    releases = [r for r in (db.cuda_release(c) for c in cudas) if r is not None]
    tried = {d for r in releases for d in (r.minor_compat_driver(target.platform), r.min_driver(target.platform))}
    verdict = unsupported_gpus(db, target)
    if verdict is not None and verdict.floor is not None:  # the lowest driver that knows every GPU here
        tried.add(verdict.floor)
    drivers = sorted(d for d in tried if d > target.driver)
    for driver in drivers:
        solution = _solve_with(driver, needs, db, catalog, limits)
        picked = db.variant(solution.variant) if solution is not None else None
        release = db.cuda_release(picked.cuda) if picked is not None and picked.cuda else None
        if release is not None:
            return driver, release
    return None


def _cudas_of(needs: Sequence[Need], db: CompatDB, catalog: Catalog) -> list[CudaVersion]:
    """The CUDA versions of the GPU builds that meet the requirements, the driver aside."""
    found: dict[CudaVersion, None] = {}
    for need in needs:
        for candidate in catalog.for_name(need.name) if need.name in catalog.known and need.name != CUDA else ():
            info = db.variant(candidate.variant) if candidate.variant else None
            if info is not None and info.cuda is not None and satisfies(need, candidate):
                found[info.cuda] = None
    return list(found)


def _lowest_cuda(real: Sequence[Need], db: CompatDB, catalog: Catalog) -> CudaRelease | None:
    """Of the CUDA builds that meet the requirements (the driver aside), the CUDA release whose
    full-compatibility driver is the lowest; else the newest CUDA release."""
    platform = catalog.target.platform
    found: list[CudaRelease] = []
    for need in real:
        for candidate in catalog.for_name(need.name) if need.name in catalog.known else ():
            info = db.variant(candidate.variant) if candidate.variant else None
            release = db.cuda_release(info.cuda) if info is not None and info.cuda else None
            if release is not None and satisfies(need, candidate):
                found.append(release)
    if found:
        return min(found, key=lambda r: (r.min_driver(platform), r.version))
    return max(db.cuda, key=lambda r: r.version) if db.cuda else None
