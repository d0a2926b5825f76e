"""Candidates for the solver, built from the compat database for one target, with typed rejections. Pure.

Every published build (release x variant x channel) becomes a ``Candidate`` unless the
target rules it out; each rule-out is kept as a ``Rejection`` with a stable reason code (the
``reason.*`` keys of ``text/en/reason.toml``), so that failures and ``why-not`` can cite the
numbers. Two virtual identifiers join the real packages: ``<cuda>``, whose candidates are the
variants this target's driver can run, and on which every GPU build depends (one variant for
the whole set falls out of the solver), and ``<python>``, which has no candidate: the target's
Python is filtered on here, and a release whose core metadata's ``Requires-Python`` leaves it out
depends on ``<python>`` (``provider``), so that the solver passes that release over, as pip does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.core.platforms import canonical_name
from cudaresolve.db.database import Build, CompatDB, DriverSupport, PackageRelease
from cudaresolve.resolve.gpudriver import unsupported_gpus
from cudaresolve.resolve.platforms import below_floor, jetson_not_served, on_source, os_not_served, other_platform
from cudaresolve.resolve.source import IndexRelease, extras_key
from cudaresolve.resolve.sources import cpu_from_pypi, sourced_builds
from cudaresolve.text.findings import reason

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from packaging.requirements import Requirement

    from cudaresolve.db.cudamajor import CudaMajorRule
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Finding

__all__ = ["ABSENT", "BUILD", "CUDA", "CUDNN", "METADATA", "PYTHON", "Candidate", "Catalog", "Need", "Rejection",
           "build_catalog", "release_candidates", "satisfies"]  # fmt: skip

#: The virtual identifier whose candidates are the variants the target can run.
CUDA: Final = "<cuda>"
#: The virtual identifier whose candidates are cuDNN majors (``cudamajor``: ``<cudnn>==9.*``); never locked.
CUDNN: Final = "<cudnn>"
#: The virtual identifier a release depends on when its metadata's Requires-Python excludes the target (no
#: candidate: pip's ``RequiresPythonRequirement`` against a Python that does not fit).
PYTHON: Final = "<python>"
#: The virtual identifier a release depends on when it has only an sdist whose metadata cannot be had (not to be
#: built, or its build failed): it has no candidate, so the solver passes the release over for another.
BUILD: Final = "<build>"
#: The same for a release whose metadata was read but cannot be used (``BadMetadata``), as pip and uv pass it over.
METADATA: Final = "<metadata>"
#: The channel of the one candidate of a name that only ``constrains`` rows ask about: the name not in the set.
ABSENT: Final = "<absent>"


@dataclass(frozen=True, slots=True, kw_only=True)
class Need:
    """A requirement inside the solver: a name, a version specifier, and optionally one variant."""

    name: str
    specifier: SpecifierSet = field(default_factory=SpecifierSet)
    variant: str | None = None
    parent: str | None = None  # "torchrec 1.2.0", for explanations; None for the user's own request
    extras: frozenset[str] = frozenset()
    url: str | None = None  # a direct reference's URL (``name @ URL``): the one file the name is pinned to
    #: A ``constrains`` row's: it narrows the name's candidates when something else requires the name, and is met
    #: by the name's absence (``ABSENT``) otherwise: it never brings the package in.
    constraint: bool = False

    def __str__(self) -> str:
        if self.name == CUDA:  # one variant, or a CUDA major (``cudamajor``: ``<cuda>==12.*``)
            return f"{CUDA}=={self.variant}" if self.variant or not self.specifier else f"{CUDA}{self.specifier}"
        return f"{self.key}{self.specifier}"

    @property
    def key(self) -> str:
        """The solver identifier: the name, with its extras (``transformers[torch]``)."""
        return extras_key(self.name, self.extras) if self.extras else self.name

    @classmethod
    def from_requirement(cls, req: Requirement, *, parent: str | None = None) -> Need:
        extras = frozenset(canonical_name(e) for e in req.extras)
        return cls(name=canonical_name(req.name), specifier=req.specifier, parent=parent, extras=extras)


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One installable choice: a build of a release, or a variant for ``<cuda>``."""

    name: str
    version: Version
    variant: str | None  # None for pure-Python wheels
    index_url: str
    channel: str = "index"
    release: PackageRelease | None = field(default=None, compare=False, repr=False)
    build: Build | None = field(default=None, compare=False, repr=False)
    dependencies: tuple[Need, ...] = field(default=(), compare=False)
    driver_support: DriverSupport = DriverSupport.FULL
    coverage: Coverage = Coverage.SASS  # the weakest coverage over the target's GPUs
    extras: frozenset[str] = frozenset()  # a ``name[extra]`` candidate: the release plus its optional needs
    source: IndexRelease | None = field(default=None, compare=False, repr=False)  # a release from an index

    def __str__(self) -> str:
        return self.variant or "" if self.name == CUDA else f"{self.key} {self.version}"

    @property
    def key(self) -> str:
        return extras_key(self.name, self.extras) if self.extras else self.name

    @property
    def rank(self) -> tuple[int, int, int]:
        """Lower is better: full driver support and SASS coverage (among equal versions), then, among
        builds of one version and variant, a verified row (``verified = false`` on the build or its
        release ranks after). The channel comes after these, by the catalog's ``gpu_source``."""
        verified = self.build.verified if self.build is not None else self.release is None or self.release.verified
        return (
            0 if self.driver_support is DriverSupport.FULL else 1,
            0 if self.coverage is Coverage.SASS else 1,
            0 if verified else 1,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejection:
    """A build the target cannot use, and why (a ``Finding`` with a stable reason code)."""

    name: str
    version: Version
    variant: str | None
    finding: Finding


def satisfies(need: Need, choice: Candidate | Rejection) -> bool:
    """Whether ``choice`` meets ``need``: same name, the variant when ``need`` names one, and the version
    specifier (local versions and pre-releases allowed); ``<cuda>`` is matched on its variant, or on its CUDA
    version when the need names a major instead (``cudamajor``: the ``cpu`` variant ties no major).

    The one test used by the provider (``is_satisfied_by``) and by the explanations of a failure.
    """
    if need.name != choice.name:
        return False
    if isinstance(choice, Candidate) and choice.channel == ABSENT:
        return need.constraint
    if need.variant is not None and choice.variant != need.variant:
        return False
    if need.name == CUDA and (need.variant is not None or choice.variant == "cpu"):
        return True
    return need.specifier.contains(choice.version, prereleases=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """Candidates per identifier (best first within a version) and the rejections behind them."""

    target: Target
    candidates: Mapping[str, tuple[Candidate, ...]]
    rejections: Sequence[Rejection]  # grows as a lazy catalog builds packages
    known: frozenset[str]
    gpu_source: str = "auto"  # one of GPU_SOURCES
    cuda_majors: tuple[CudaMajorRule, ...] = ()  # the database's [[cuda-major]] rows (``cudamajor``)
    _runnable: list[frozenset[str | None]] = field(default_factory=list, repr=False, compare=False)  # memo

    def for_name(self, name: str) -> tuple[Candidate, ...]:
        return self.candidates.get(name, ())

    @property
    def runnable(self) -> frozenset[str | None]:
        """The variants the target's driver can run (the ``<cuda>`` candidates, fixed when the catalog is
        built); computed once, since the solver asks for every build it looks at."""
        if not self._runnable:
            self._runnable.append(frozenset(c.variant for c in self.for_name(CUDA)))
        return self._runnable[0]

    def rejected(self, name: str) -> tuple[Rejection, ...]:
        return tuple(r for r in self.rejections if r.name == name)


def _cuda_candidates(db: CompatDB, target: Target, rejections: list[Rejection], gpu_source: str) -> list[Candidate]:
    """The variants the target can run: ``cpu`` for a CPU target (with PyPI as the only source, the CUDA variants of
    PyPI's wheels that run without a GPU: ``sources.cpu_from_pypi``), else the CUDA variants its driver runs."""
    out: list[Candidate] = []
    blocked = unsupported_gpus(db, target)  # a driver that does not know a GPU runs no variant on it
    for info in db.variants:
        if info.cuda is None:
            if target.is_cpu and info.name == "cpu":
                out.append(Candidate(name=CUDA, version=Version("0"), variant="cpu", index_url=info.index_url))
            continue
        if target.is_cpu:  # a CUDA build has nothing to run on: say so, rather than leave the variant unknown
            version = Version(str(info.cuda))
            if gpu_source == "pypi" and db.package_facts.runs_without_gpu:
                out.append(Candidate(name=CUDA, version=version, variant=info.name, index_url=db.default_index))
                continue
            finding = reason("no-gpu", variant=info.name, cuda=str(info.cuda))
            rejections.append(Rejection(name=CUDA, version=version, variant=info.name, finding=finding))
            continue
        jetson = jetson_not_served(db, target, info.name, str(info.cuda))  # before the driver: L4T's numbers
        if jetson is not None:
            rejections.append(Rejection(name=CUDA, version=Version(str(info.cuda)), variant=info.name, finding=jetson))
            continue
        if blocked is not None:
            version = Version(str(info.cuda))
            rejections.append(Rejection(name=CUDA, version=version, variant=info.name, finding=blocked.finding))
            continue
        support = DriverSupport.FULL
        if target.driver is not None:
            support = db.driver_support(info.cuda, target.driver, target.platform)
        if support is DriverSupport.NONE:
            release = db.cuda_release(info.cuda)
            floor = release.minor_compat_driver(target.platform) if release else None
            full = release.min_driver(target.platform) if release else None
            rejections.append(
                Rejection(
                    name=CUDA,
                    version=Version(str(info.cuda)),
                    variant=info.name,
                    finding=reason(
                        "driver-too-old",
                        variant=info.name,
                        required=str(floor),
                        found=str(target.driver),
                        cuda=str(info.cuda),
                        full=str(full),
                    ),
                )
            )
            continue
        out.append(
            Candidate(
                name=CUDA,
                version=Version(str(info.cuda)),
                variant=info.name,
                index_url=info.index_url,
                driver_support=support,
            )
        )
    return sorted(out, key=lambda c: (c.driver_support is not DriverSupport.FULL, -c.version.major, -c.version.minor))


def _check_build(
    db: CompatDB, target: Target, release: PackageRelease, build: Build | None
) -> tuple[Finding | None, DriverSupport, Coverage]:
    """Why ``build`` cannot serve ``target`` (a Finding), else its driver support and weakest coverage."""
    name, version = release.name, str(release.version)
    variant = build.variant if build else None
    jetson = jetson_not_served(db, target, variant, version, package=name)
    if jetson is not None:
        return jetson, DriverSupport.NONE, Coverage.NONE
    platforms = build.platforms if build else release.platforms
    if "any" not in platforms and target.platform not in platforms:
        finding = reason(
            "no-wheel-for-platform", package=name, version=version, required=", ".join(platforms), found=target.platform
        )
        return finding, DriverSupport.NONE, Coverage.NONE
    floor = below_floor(db, target, release, build)  # its wheel needs a newer macOS or glibc
    if floor is not None:
        return floor, DriverSupport.NONE, Coverage.NONE
    if target.python not in release.python:
        finding = reason(
            "no-wheel-for-python",
            package=name,
            version=version,
            required=", ".join(release.python),
            found=target.python,
        )
        return finding, DriverSupport.NONE, Coverage.NONE
    if release.min_sm is not None:
        if target.is_cpu:
            published = ", ".join(sorted({b.variant for b in release.builds})) or "CUDA GPUs only"
            finding = reason("variant-not-published", package=name, version=version, variant="cpu", required=published)
            return finding, DriverSupport.NONE, Coverage.NONE
        low = [g for g in target.gpus if g.cc < release.min_sm]
        if low:
            finding = reason(
                "sm-below-minimum",
                package=name,
                version=version,
                required=str(release.min_sm),
                gpu=low[0].name,
                cc=str(low[0].cc),
            )
            return finding, DriverSupport.NONE, Coverage.NONE
    if build is None or build.variant == "cpu":
        return None, DriverSupport.FULL, Coverage.SASS
    info = db.variant(build.variant)
    support = DriverSupport.FULL
    if info is not None and info.cuda is not None and target.driver is not None:
        support = db.driver_support(info.cuda, target.driver, target.platform)
    worst = Coverage.SASS
    for gpu in target.gpus:
        # Under minor-version compatibility the driver cannot JIT PTX newer than itself (NVIDIA's caveat).
        reach = coverage(build.archs, gpu.cc, tegra=gpu.tegra, ptx_jit_ok=support is DriverSupport.FULL)
        if reach is Coverage.NONE:
            finding = reason(
                "sm-not-covered",
                package=name,
                version=version,
                variant=variant,
                required=gpu.cc.sm,
                found=" ".join(a.name for a in build.archs) or "none",
                sm=gpu.cc.sm,
                gpu=gpu.name,
                cc=str(gpu.cc),
            )
            return finding, support, reach
        if reach is Coverage.PTX_JIT:
            worst = Coverage.PTX_JIT
    return None, support, worst


def _dependencies(release: PackageRelease, build: Build | None) -> tuple[Need, ...]:
    parent = f"{release.name} {release.version}"
    needs = [Need.from_requirement(r, parent=parent) for r in release.requires]
    needs += [replace(Need.from_requirement(r, parent=parent), constraint=True) for r in release.constrains]
    if build is not None:
        needs += [Need.from_requirement(r, parent=parent) for r in build.requires]
        needs.append(Need(name=CUDA, variant=build.variant, parent=parent))
    return tuple(needs)


def release_candidates(
    db: CompatDB, target: Target, release: PackageRelease, rejections: list[Rejection], gpu_source: str = "auto"
) -> Iterable[Candidate]:
    refused = os_not_served(db, target, release)  # FlashInfer: Linux only
    if refused is not None:
        rejections.append(Rejection(name=release.name, version=release.version, variant=None, finding=refused))
        return
    sourced = sourced_builds(db, release, gpu_source, target.platform) if release.builds else []
    builds: Sequence[Build | None] = sourced or (None,)
    if release.builds and not sourced:
        return  # every build is on a source the user excluded
    wanted = "cpu" if target.is_cpu else None
    pypi = target.is_cpu and cpu_from_pypi(db, release, gpu_source)  # PyPI's CUDA wheel may serve a CPU target
    fits = [b for b in builds if b is None or (b.variant == "cpu") == target.is_cpu or (pypi and b.channel == "pypi")]
    if sourced and not any(b is not None for b in fits):
        published = ", ".join(dict.fromkeys(b.variant for b in sourced))
        absent = reason("variant-not-published", package=release.name, version=str(release.version),
                        variant=wanted or "CUDA", required=published)  # fmt: skip
        rejections.append(Rejection(name=release.name, version=release.version, variant=wanted, finding=absent))
        return
    for build in builds:
        if build is not None and build not in fits:
            continue  # a GPU host gets CUDA builds, a CPU target the cpu build (or PyPI's: ``cpu_from_pypi``)
        if other_platform(build, fits, target.platform):
            continue  # another build of the release serves this platform: no reason to give
        finding, support, reach = _check_build(db, target, release, build)
        if finding is not None:
            finding = on_source(db, target, release, finding, gpu_source)  # name the index it is true of
        version = Version(f"{release.version}{build.local}" if build else str(release.version))
        if finding is not None:
            rejections.append(
                Rejection(name=release.name, version=version, variant=build.variant if build else None, finding=finding)
            )
            continue
        yield Candidate(
            name=release.name,
            version=version,
            variant=build.variant if build else None,
            index_url=build.index_url if build else (release.index_url or db.default_index),
            channel=build.channel if build else "pypi",
            release=release,
            build=build,
            dependencies=_dependencies(release, build),
            driver_support=support,
            coverage=reach,
        )


def _package_candidates(
    db: CompatDB, target: Target, name: str, rejections: list[Rejection], gpu_source: str = "auto"
) -> tuple[Candidate, ...]:
    found: list[Candidate] = []
    for release in db.packages(name):
        found.extend(release_candidates(db, target, release, rejections, gpu_source))
    pypi_first = gpu_source != "pytorch"

    def channel(c: Candidate) -> int:
        return int((c.channel == "pypi") != pypi_first)

    found.sort(key=lambda c: (c.rank[:2], _variant_age(c), c.rank[2:], channel(c)))  # verified, channel: in a variant
    found.sort(key=lambda c: c.release.version if c.release else c.version, reverse=True)  # stable
    return tuple(found)


class _OnDemand(Mapping[str, tuple[Candidate, ...]]):
    """A package's candidates built the first time it is asked for (a whole-environment solve meets
    the database's packages through index metadata, so which ones it needs is known only then)."""

    def __init__(self, db: CompatDB, target: Target, built: dict[str, tuple[Candidate, ...]],
                 rejections: list[Rejection], gpu_source: str):  # fmt: skip
        self._db, self._target, self._built, self._rejections = db, target, built, rejections
        self._gpu_source = gpu_source

    def __getitem__(self, name: str) -> tuple[Candidate, ...]:
        found = self._built.get(name)
        if found is None:
            if name not in self._db.package_names:
                raise KeyError(name)
            found = self._built[name] = _package_candidates(
                self._db, self._target, name, self._rejections, self._gpu_source
            )
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._built)

    def __len__(self) -> int:
        return len(self._built)


def build_catalog(
    db: CompatDB, target: Target, names: Iterable[str] | None = None, *, lazy: bool = False, gpu_source: str = "auto"
) -> Catalog:
    """Every candidate of every package in the database (or of ``names``) for ``target``; with ``lazy``,
    each package's candidates (and rejections) are built when first asked for. ``gpu_source`` (one of
    ``sources.GPU_SOURCES``) decides which channels' builds are candidates and which comes first."""
    rejections: list[Rejection] = []
    candidates: dict[str, tuple[Candidate, ...]] = {CUDA: tuple(_cuda_candidates(db, target, rejections, gpu_source)),
                                                    CUDNN: _CUDNN}  # fmt: skip
    known = frozenset(n for n in db.package_names) | {CUDA}
    if lazy:
        built = _OnDemand(db, target, candidates, rejections, gpu_source)
        return Catalog(target=target, candidates=built, rejections=rejections, known=known, gpu_source=gpu_source,
                       cuda_majors=db.cuda_majors)  # fmt: skip
    wanted = db.package_names if names is None else tuple(canonical_name(n) for n in names)
    for name in wanted:
        candidates[name] = _package_candidates(db, target, name, rejections, gpu_source)
    found = tuple(rejections)
    return Catalog(target=target, candidates=candidates, rejections=found, known=known, gpu_source=gpu_source,
                   cuda_majors=db.cuda_majors)  # fmt: skip


#: ``<cudnn>``'s candidates: every major a one- or two-digit ``==N.*`` need can name (one is met per need).
_CUDNN: Final = tuple(Candidate(name=CUDNN, version=Version(str(m)), variant=None, index_url="") for m in range(100))


def _variant_age(candidate: Candidate) -> tuple[int, str]:
    """Newer CUDA first among otherwise equal builds (cu128 before cu126)."""
    variant = candidate.variant or ""
    digits = "".join(ch for ch in variant if ch.isdigit())
    return (-int(digits) if digits else 0, variant)
