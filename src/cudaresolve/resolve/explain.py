"""Findings for a failed resolution, most basic cause first; never prints. Pure.

Order (pip's ``get_installation_error``, made typed): (1) host problems: the driver does not
know a GPU (reported even when no request names a variant), no variant fits the driver, a GPU's
SM is missing from every build, the GPU is below a package's minimum; (2) a single request
nothing can satisfy (Python, platform, version); (3) a requested package every release of which
conflicts with another request, named by its newest release and the requirement that pins it,
e.g. "torchaudio 2.11.0 requires torch==2.11.0, but torch>=2.12 was requested"
(``request_conflicts``: the real cause, whichever package the search tried last); (4) conflicting
pairs from the resolver's causes, e.g. "torchrec 1.2.0 requires fbgemm-gpu==1.2.*; every
fbgemm-gpu 1.2 build is ruled out", only when (3) found nothing; among them, a release passed over
because its metadata's ``Requires-Python`` leaves the target's Python out (a ``<python>`` need).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.resolve.binding import (
    WAY_OUT_CODES,
    adds_way_out,
    finding_adds_way_out,
    of_releases,
    pin_fitting,
    runnable,
)
from cudaresolve.resolve.catalog import BUILD, CUDA, METADATA, PYTHON, Catalog, Need, Rejection, satisfies
from cudaresolve.resolve.cudamajor import is_major_need, mixed
from cudaresolve.resolve.needs import passed_over
from cudaresolve.resolve.oldgpu import too_old
from cudaresolve.resolve.source import Unlisted
from cudaresolve.resolve.wheelpages import missing_pages
from cudaresolve.text.findings import reason
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from packaging.specifiers import SpecifierSet
    from resolvelib.resolvers import RequirementInformation

    from cudaresolve.db.database import CompatDB
    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.text.findings import Finding

__all__ = ["HOST_CODES", "explain_need", "explain_resolution", "request_conflicts"]

#: Reason codes that describe the machine rather than the request; they are reported first.
HOST_CODES: Final = (
    "gpu-too-old",
    "no-gpu",
    "jetson-not-served",
    "jetson-needs-cuda",
    "driver-unsupported-gpu",
    "driver-too-old",
    "sm-not-covered",
    "sm-below-minimum",
)
_BOX_CODES: Final = ("driver-unsupported-gpu",)
_SM_CODES: Final = ("sm-not-covered", "sm-below-minimum")
_REQUEST_CODES: Final = (  # a Python no release serves comes before a system some releases need (vllm on 3.15)
    "cpu-build-on-gpu",
    "os-not-served",
    "no-wheel-for-python", "requires-python",
    "platform-too-old", "no-wheel-page",
    "sdist-unusable", "no-wheel-for-platform", "variant-not-published",
    "no-such-version", "constraint-excludes", "yanked-only", "pre-release-only",
)
_LAST_CODES: Final = ("request-conflict", "cuda-major-mixed", "cudnn-major-mixed", "pin-conflict", "no-common-set")
_ORDER: Final = {code: i for i, code in enumerate((*HOST_CODES, *_REQUEST_CODES, *_LAST_CODES))}


def _matching_rejections(catalog: Catalog, need: Need) -> list[Rejection]:
    return [r for r in catalog.rejected(need.name) if satisfies(need, r)]


def _summarise(rejections: Iterable[Rejection]) -> list[Finding]:
    """One finding per (code, package, required), keeping the first (newest) message and merging ``found``."""
    merged: dict[tuple[str, str | None, str | None], Finding] = {}
    for rejection in rejections:
        f = rejection.finding
        key = (f.code, f.package, f.required)
        merged.setdefault(key, f)
    return sorted(merged.values(), key=lambda f: _ORDER.get(f.code, 99))


def explain_need(
    catalog: Catalog,
    need: Need,
    index: Mapping[str, Sequence[Candidate]] | None = None,
    constraints: Mapping[str, SpecifierSet] | None = None,
    db: CompatDB | None = None,
) -> list[Finding]:
    """Why nothing in the catalog (or, for packages beyond the database, the ``index`` releases the
    solver saw for the target, as pip takes them under the ``-c`` ``constraints``) satisfies ``need``;
    empty when something does. With ``db``, only the binding rejections are named (``binding``)."""
    spec = str(need.specifier) or "any version"
    cpu_build = (need.name == CUDA and need.variant == "cpu") or any(s.version.endswith("+cpu") for s in need.specifier)
    if cpu_build and not catalog.target.is_cpu:  # a GPU target takes CUDA builds; --cpu declares a CPU target
        gpus = ", ".join(g.name for g in catalog.target.gpus)
        package, shown = (None, "cpu") if need.name == CUDA else (need.name, f"{need.name}{need.specifier}")
        return [reason("cpu-build-on-gpu", package=package, required=shown, found=gpus)]
    if need.name not in catalog.known and index is not None and need.name in index:
        releases = index[need.name]
        fitting = [c for c in releases if satisfies(need, c)]
        if fitting:
            return _passed_over(need, fitting, (constraints or {}).get(need.name))
        if need.parent is not None and releases and all(c.channel == "direct" for c in releases):
            return []  # a URL the user gave pins it: this requirement conflicts with that pin (pin-conflict)
        newest = max((c.version for c in releases), default=None)
        target = catalog.target
        if isinstance(releases, Unlisted):  # the index has no such project: a mistyped name, most often
            said = Text.of("resolve.not-on-index", package=need.name, index=releases.index_url)
            return [replace(reason("no-such-version", package=need.name, required=spec, found="none"), text=said)]
        if newest is None:  # no release at all has a file for the target: the versions asked are beside the point
            said = Text.of("resolve.no-file-for-target", package=need.name, python=target.python,
                           platform=target.platform)  # fmt: skip
            return [replace(reason("no-such-version", package=need.name, required=spec, found="none"), text=said)]
        seen = f"{newest} (CPython {target.python}, {target.platform})"
        return [reason("no-such-version", package=need.name, required=spec, found=seen)]
    if index is not None and need.name not in catalog.known:
        return []  # beyond the database and never read: the search ended before it (another name's findings say why)
    if any(satisfies(need, c) for c in catalog.for_name(need.name)):
        return []
    if need.name == CUDA and not catalog.rejected(CUDA):
        return []  # a variant the target runs: the findings of the packages on it say why they do not fit
    if need.name not in catalog.known:
        known = ", ".join(sorted(n for n in catalog.known if n != CUDA))
        return [reason("no-such-version", package=need.name, required=spec, found=f"none (known packages: {known})")]
    matching = _matching_rejections(catalog, need)
    if db is not None and need.parent is not None and matching and not runnable(catalog, matching, strict=True):
        # a pairing's every build is on a variant the driver cannot run: the builds of the package it
        # can run, and their hardware reasons, are what no pairing gets past (the driver finding says the rest)
        wider = [r for r in catalog.rejected(need.name) if r.finding.code in HOST_CODES]
        matching = runnable(catalog, wider, strict=True) or matching
    found = _summarise(_binding(db, catalog, matching))
    if found:
        return found
    elsewhere = _pinned_build_elsewhere(db, need, catalog.target.platform) if db is not None else None
    if elsewhere is not None:
        return [elsewhere]
    held = sorted(r.version for r in db.packages(need.name)) if db is not None else []
    if held and not any(need.specifier.contains(v, prereleases=True) for v in held):  # index releases may exist
        said = Text.of("resolve.not-in-database", package=need.name, required=spec, oldest=str(held[0]),
                       newest=str(held[-1]))
        return [replace(reason("no-such-version", package=need.name, required=spec, found=str(held[-1])), text=said)]
    newest = max((c.version for c in catalog.for_name(need.name)), default=None)
    return [reason("no-such-version", package=need.name, required=spec, found=str(newest or "none"))]


def _said(requirement: str) -> str | Text:
    """A requirement as a finding says it: the CUDA variant the solver's ``<cuda>==cu126`` stands for in words."""
    variant = requirement.removeprefix(f"{CUDA}==")
    return Text.of("resolve.cuda-variant", variant=variant) if variant != requirement else requirement


def _pinned_build_elsewhere(db: CompatDB, need: Need, platform: str) -> Finding | None:
    """For a pin of a build by its local version (``torch==2.14.1+cu126``) that the database has, but for other
    platforms only: that build's platform finding. The catalog records none, since another build of the release
    serves the platform (``platforms.other_platform``), and the pin had fallen through to "no such version"."""
    for spec in need.specifier:
        public, plus, local = spec.version.partition("+")
        if spec.operator not in ("==", "===") or not plus:
            continue
        for release in db.packages(need.name):
            if str(release.version) != public:
                continue
            for build in release.builds:
                if build.local == f"+{local}" and not {"any", platform} & set(build.platforms):
                    return reason("no-wheel-for-platform", package=need.name, version=spec.version,
                                  required=", ".join(build.platforms), found=platform)  # fmt: skip
    return None


def _passed_over(need: Need, fitting: Sequence[Candidate], limit: SpecifierSet | None) -> list[Finding]:
    """Why index releases that fit ``need`` by version are still not taken: a ``-c`` constraint rules them
    all out, or pip's rules pass every one over (all yanked, all pre-releases); empty when one is taken."""
    spec = str(need.specifier) or "any version"
    shown = ", ".join(str(v) for v in sorted({c.version for c in fitting}, reverse=True)[:5])
    if limit is not None:
        allowed = [c for c in fitting if limit.contains(c.version, prereleases=True)]
        if not allowed:
            return [reason("constraint-excludes", package=need.name, required=spec, found=shown, constraint=str(limit))]
        fitting = allowed
    why = {passed_over([need], c, limit=limit) for c in fitting}
    if None in why:
        return []
    kind = "pre-release" if "pre-release" in why else "yanked"  # a live pre-release before a yanked file
    versions = sorted({c.version for c in fitting if passed_over([need], c, limit=limit) == kind}, reverse=True)
    found = ", ".join(str(v) for v in versions[:5])
    return [reason(f"{kind}-only", package=need.name, required=spec, found=found, example=str(versions[0]))]


def request_conflicts(catalog: Catalog, requests: Sequence[Need]) -> list[Finding]:
    """Requested packages none of whose candidates fits the other requests. Cost: O(candidates x dependencies).

    A candidate of a requested package P is ruled out when one of its dependencies, together with
    the user's own request for that name, leaves no candidate in the catalog (torchaudio 2.11.0
    needs torch==2.11.0; torch>=2.12 was requested). When every candidate of P that meets P's own
    request is ruled out, no search can succeed, and the finding names P's newest candidate and the
    requirement that pins it. The ``<cuda>`` variant is left to the host findings.
    """
    asked: dict[str, list[Need]] = {}
    for need in requests:
        asked.setdefault(need.name, []).append(need)
    fits: dict[tuple[str, str | None, str], bool] = {}

    def fits_request(dep: Need) -> bool:
        """Whether the request on ``dep``'s name leaves ``dep`` a candidate; also when ``dep`` has none of its own
        (torchrec 1.9.2's torch==2.14.* on a Python torch 2.14 has no wheel for): then the target, not the
        request, rules it out, and other findings say so."""
        key = (dep.name, dep.variant, str(dep.specifier))
        if key not in fits:
            own = [c for c in catalog.for_name(dep.name) if satisfies(dep, c)]
            fits[key] = not own or any(all(satisfies(n, c) for n in asked[dep.name]) for c in own)
        return fits[key]

    out: list[Finding] = []
    for name, own in asked.items():
        if name == CUDA:
            continue
        blame: tuple[Candidate, Need] | None = None
        for candidate in catalog.for_name(name):
            if not all(satisfies(n, candidate) for n in own):
                continue
            clash = next(
                (
                    d
                    for d in candidate.dependencies
                    if d.name in asked and d.name not in (name, CUDA) and not fits_request(d)
                ),
                None,
            )
            if clash is None:
                blame = None
                break
            blame = blame or (candidate, clash)
        if blame is not None:
            candidate, clash = blame
            release = candidate.release.version if candidate.release is not None else candidate.version
            out.append(
                reason(
                    "request-conflict",
                    package=name,
                    version=str(release),
                    required=str(clash),
                    found=", ".join(str(n) for n in asked[clash.name]),
                )
            )
    return out


def explain_resolution(
    catalog: Catalog,
    requests: Sequence[Need],
    causes: Sequence[RequirementInformation[Need, Candidate]] = (),
    index: Mapping[str, Sequence[Candidate]] | None = None,
    constraints: Mapping[str, SpecifierSet] | None = None,
    *,
    db: CompatDB | None = None,
) -> list[Finding]:
    """Findings for a resolution that failed with ``causes`` (resolvelib's ResolutionImpossible);
    ``index``: the releases of packages beyond the database that the solver saw (None: it read no index);
    ``constraints``: the ``-c`` lines it narrowed them by; ``db``: the database, which lets a GPU older than
    every fitting build of a request be named as the cause (``oldgpu``), instead of each build's missing SM."""
    findings: list[Finding] = []
    box = [r.finding for r in catalog.rejected(CUDA) if r.finding.code in _BOX_CODES][:1]
    findings.extend(box)  # a driver that does not know a GPU explains every failure, named or not
    for need in requests:
        findings.extend(explain_need(catalog, need, index, constraints, db))
    blamed = request_conflicts(catalog, requests)
    if db is not None:
        blamed = [g for f in blamed for g in _pinned_out(db, catalog, requests, f)]
    findings.extend(blamed)
    majors: list[Finding] = []
    for cause in () if blamed else causes:
        need, parent = cause.requirement, cause.parent
        if need.name == PYTHON:  # the release's metadata leaves the target's Python out (``provider``)
            if parent is not None:
                findings.append(
                    reason(
                        "requires-python",
                        package=parent.name,
                        version=str(parent.version),
                        required=str(need.specifier),
                        found=catalog.target.python,
                    )
                )
            continue
        if need.name in (BUILD, METADATA):  # an sdist not built, or metadata that cannot be used (``provider``)
            if parent is not None:
                code = "sdist-unusable" if need.name == BUILD else "metadata-unusable"
                findings.append(reason(code, package=parent.name, version=str(parent.version)))
            continue
        direct = explain_need(catalog, need, index, constraints, db)
        if direct:
            findings.extend(direct)
            continue
        if parent is None:
            continue
        if is_major_need(need):  # a release tied to another CUDA major than the set's (``cudamajor``)
            majors.extend(f for f in (mixed(need, parent, causes, catalog),) if f is not None)
            continue
        if need.name == CUDA and any(is_major_need(c.requirement) for c in causes):
            continue  # a build's variant against a major: the ``cuda-major-mixed`` findings say it
        others = sorted({str(c.requirement) for c in causes if c.requirement.name == need.name and not (
            c.parent is not None and c.parent.name == parent.name)} - {str(need)})  # not its own other releases'
        found = ", ".join(others) or "another requirement of the set"
        conflict = reason("pin-conflict", package=parent.name, version=str(parent.version), required=str(need),
                          found=found)  # fmt: skip
        if need.name == CUDA:  # the solver's <cuda>==cu126 in words, the JSON fields as they are
            variants = [o.removeprefix(f"{CUDA}==") for o in others]
            said = Text.of("resolve.cuda-variant", variant=", ".join(variants)) if variants else found
            conflict = replace(conflict, text=Text.of("reason.pin-conflict", package=parent.name, version=str(
                parent.version), required=_said(str(need)), found=said))
        findings.append(conflict)
    pinned = [str(c.parent) for c in causes if c.requirement.name == CUDA and c.requirement.variant and c.parent]
    findings.extend(sorted(majors, key=lambda f: not any(p in (f.found or "") for p in pinned)))  # against a build
    findings.extend(missing_pages(db, catalog, requests) if db is not None else [])  # torch without a wheel page
    if not findings:  # nothing above names a cause: say what was asked together, not a pin that is none
        limits = sorted((constraints or {}).items())
        asked = [str(n) for n in requests] + [f"{name}{spec} (-c)" for name, spec in limits]
        findings.append(reason("no-common-set", required=", ".join(asked)))
    if db is not None:
        findings = _binding_age(db, catalog, requests, findings)
        findings = _driver_binds(db, catalog, findings)
    if sum(f.code == "cpu-build-on-gpu" for f in findings) > 1:  # a +cpu pin says it; its variant need need not
        findings = [f for f in findings if f.code != "cpu-build-on-gpu" or f.package is not None]
    unique: dict[tuple[str, str | None, str | None], Finding] = {}
    for finding in findings:  # the newest release's finding stands for the older ones
        unique.setdefault((finding.code, finding.package, finding.required), finding)
    ranked = sorted(unique.values(), key=_rank)
    if db is None or not ranked:
        return ranked
    own = {n.name for n in requests if n.parent is None}  # the user's own request is always worth naming
    return [ranked[0], *(f for f in ranked[1:] if f.package in own or finding_adds_way_out(db, catalog, f))]


def _rank(finding: Finding) -> tuple[int, tuple[int, ...]]:
    """Findings by their code's order; drivers too old for several variants, the least upgrade first
    (cu118's 450.80.02 before cu132's 580: the smallest change that could make the request run)."""
    least: tuple[int, ...] = ()
    if finding.code == "driver-too-old" and finding.required:
        least = tuple(int(p) for p in finding.required.split(".") if p.isdigit())
    return _ORDER.get(finding.code, 99), least


def _binding_age(db: CompatDB, catalog: Catalog, requests: Sequence[Need], findings: list[Finding]) -> list[Finding]:
    """A requested package whose every fitting build is older-coded than a GPU of the target: its
    ``gpu-too-old`` finding replaces the package's other findings (each build's missing SM, a
    platform or Python without builds), which no way out of theirs would mend."""
    asked = [n for n in requests if n.parent is None and n.name != CUDA]
    old = [f for need in asked if (f := too_old(db, catalog.target, need)) is not None]
    if not old:
        return findings
    names = {f.package for f in old}
    return [*old, *(f for f in findings if f.package not in names)]


def _driver_binds(db: CompatDB, catalog: Catalog, findings: list[Finding]) -> list[Finding]:
    """When the driver runs no variant at all, it is the binding constraint (a pure request such as torchrec
    reaches the variants only through a pairing): its ``driver-too-old`` findings lead. After them stays a
    finding about the package itself, and a missing SM only where no build of the package in the database
    has code for every GPU here (a driver upgrade alone would not do then); a build's other finding, or a
    Python or platform no build the driver runs would fix, names nothing a way out gets past."""
    target = catalog.target
    drivers = [r.finding for r in catalog.rejected(CUDA) if r.finding.code == "driver-too-old"]
    if target.is_cpu or catalog.runnable or not drivers:
        return findings

    def no_code_anywhere(name: str | None) -> bool:
        return name is not None and not any(
            all(coverage(b.archs, g.cc, tegra=g.tegra) is not Coverage.NONE for g in target.gpus)
            for r in db.packages(name) for b in r.builds if b.variant != "cpu")

    kept = [f for f in findings if (f.variant is None and f.code not in WAY_OUT_CODES)
            or (f.code in _SM_CODES and no_code_anywhere(f.package))]
    return [*drivers, *kept]


def _binding(db: CompatDB | None, catalog: Catalog, rejections: list[Rejection]) -> list[Rejection]:
    """The rejections worth naming (``binding``): builds the driver runs, and a Python or platform
    only where it is a way out; all of them when that filter would leave none."""
    if db is None:
        return rejections
    kept = runnable(catalog, rejections)
    useful = [r for r in kept if adds_way_out(db, catalog, r)]
    return useful or kept


def _pinned_out(db: CompatDB, catalog: Catalog, requests: Sequence[Need], finding: Finding) -> list[Finding]:
    """A ``request-conflict`` about a release the user's pins already ruled out, replaced by the
    reasons the releases those pins allow were rejected for (when none of them is a candidate)."""
    name = finding.package or ""
    fitting = pin_fitting(db, requests, name)
    if not fitting or any(c.release is not None and c.release.version in fitting for c in catalog.for_name(name)):
        return [finding]
    own = [n for n in requests if n.name == name]
    rejected = [r for r in of_releases(catalog.rejected(name), fitting) if all(satisfies(n, r) for n in own)]
    return _summarise(_binding(db, catalog, rejected)) or [finding]
