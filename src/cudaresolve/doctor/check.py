"""Check an installed environment against a target: GPU code, torch pairings, CUDA runtime, arch lists. Pure.

``diagnose(env, target, db)`` takes what ``environment.py`` read from disk (distributions, their
binaries' SASS/PTX lists, the ``nvidia-cuda-runtime*`` packages) and returns a ``DoctorReport``:

* per package, each GPU's coverage (``archs.coverage``: SASS, PTX JIT or none; PTX whose ISA is newer than the
  driver's CUDA is none, ``ptxjit``) and the problems ``sm-not-covered``, ``ptx-jit-only`` (a warning),
  ``sm-below-minimum`` (the database's ``min-sm``) and ``abi-mismatch`` (built for another torch, per the
  database's ``requires``, or from another CUDA major than torch);
* per CUDA runtime package, the driver's support (``driver-too-old``, or the
  ``minor-version-compat`` warning);
* ``TORCH_CUDA_ARCH_LIST``/``FLASHINFER_CUDA_ARCH_LIST`` that leave out a GPU (``arch-list-excludes-gpu``), since
  extensions built or JIT-compiled here follow them (xformers#1045; flashinfer: ``flashinfer/jit/core.py``);
* AOTInductor ``.pt2`` packages checked by ``binaries.aoti_check.check_package``.

A package's coverage of a GPU is that of its weakest library with GPU code: any library without
code for the GPU fails with "no kernel image" once its kernels launch. Libraries holding only
arch- or family-specific code (``sm_90a``, ``sm_100f``) are hardware-specific kernel sets
dispatched on those GPUs alone, so they decide nothing while the package has other libraries.
Every sentence is a ``Text`` (a key of ``text/<lang>/*.toml``), so the report can be shown in any language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from cudaresolve.advice.releases import releases_fix, releases_with_sass
from cudaresolve.advice.variants import best_variant, variant_fix
from cudaresolve.core.archs import ComputeCapability, Coverage, coverage, format_arch_list, parse_arch, parse_arch_list
from cudaresolve.core.variants import is_variant, parse_variant
from cudaresolve.db.database import DriverSupport
from cudaresolve.db.toolkits import toolkit_compiles
from cudaresolve.doctor.pt2 import check_pt2
from cudaresolve.doctor.ptxjit import stale_ptx
from cudaresolve.doctor.report import (
    DoctorReport,
    LibraryCheck,
    PackageCheck,
    Problem,
    RuntimeCheck,
    RuntimePackage,
)
from cudaresolve.errors import InvalidArch
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from packaging.requirements import Requirement

    from cudaresolve.binaries.report import BinaryReport
    from cudaresolve.db.database import Build, CompatDB, PackageRelease
    from cudaresolve.doctor.report import Environment, InstalledPackage
    from cudaresolve.target.model import Target

__all__ = ["ARCH_LIST_VARIABLES", "diagnose"]

#: Read by torch.utils.cpp_extension (and so by every source build) and by flashinfer's JIT.
ARCH_LIST_VARIABLES: Final = ("TORCH_CUDA_ARCH_LIST", "FLASHINFER_CUDA_ARCH_LIST")
_RANK: Final = {Coverage.NONE: 0, Coverage.PTX_JIT: 1, Coverage.SASS: 2}
_FULL: Final = DriverSupport.FULL


# -- the checks -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Group:
    """The target's GPUs of one compute capability."""

    cc: ComputeCapability
    names: tuple[str, ...]
    tegra: bool


def _groups(target: Target) -> tuple[_Group, ...]:
    return tuple(
        _Group(cc, tuple(dict.fromkeys(g.name for g in target.gpus if g.cc == cc)),
               any(g.tegra for g in target.gpus if g.cc == cc))
        for cc in target.ccs
    )


def _gpu_flags(target: Target) -> str:
    flags = [f"--gpu {cc}" for cc in target.ccs]
    return " ".join(flags + ([f"--driver {target.driver}"] if target.driver else []))


def diagnose(
    env: Environment, target: Target, db: CompatDB, *,
    environ: Mapping[str, str] | None = None, pt2: Sequence[BinaryReport] = (),
) -> DoctorReport:
    """Every check of the module docstring, for ``env`` on ``target``."""
    groups = _groups(target)
    installed = {p.name: p for p in env.packages}
    packages = tuple(_check_package(p, installed, groups, target, db, env.python) for p in env.packages)
    runtimes, problems, notes = _check_runtimes(env, target, db)
    problems += _check_arch_lists(environ or {}, groups, target)
    problems += [] if pt2 else _check_missing(env, db)
    problems += [Problem(code="damaged-dist", text=Text.of("doctor.damaged-dist", path=path, error=error),
                         fixes=(Text("doctor.damaged-dist.fix"),)) for path, error in env.damaged]
    return DoctorReport(
        target=target, paths=env.paths, packages=packages, runtimes=runtimes, cuda_packages=env.cuda_packages,
        pt2=tuple(check_pt2(r, target) for r in pt2), problems=tuple(problems), notes=tuple(notes),
    )


def _release(db: CompatDB, name: str, version: str) -> PackageRelease | None:
    try:
        public = Version(Version(version).public)
    except InvalidVersion:
        return None
    return next((r for r in db.packages(name) if r.version == public), None)


def _local(version: str) -> str:
    try:
        return Version(version).local or ""
    except InvalidVersion:
        return ""


def _build(release: PackageRelease | None, version: str) -> Build | None:
    if release is None:
        return None
    local = _local(version)
    want = f"+{local}" if local else ""
    return next((b for b in release.builds if b.local == want), None)


def _sorted_names(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(names), key=lambda n: (parse_arch(n)[0], n)))


def _library(
    report: BinaryReport, groups: Sequence[_Group], jit: bool, tegra: frozenset[ComputeCapability],
    target: Target, db: CompatDB,
) -> LibraryCheck:
    """``jit``: whether the driver may compile the library's PTX (it fully supports its CUDA: the solver's rule);
    ``tegra``: the Jetson parts' compute capabilities, whose SASS a desktop GPU does not run (NVIDIA: "the binary
    compatibility between desktop and Tegra is not supported": an sm_87 cubin is no code for an 8.9 RTX 4090).
    PTX whose ISA is newer than the driver's CUDA (``ptxjit``) is no code for any GPU either."""
    stale = stale_ptx(report, db, target)
    archs = tuple(a for a in report.archs if not (a.ptx and any(s.name == a.name for s in stale)))

    def reach(g: _Group) -> Coverage:
        usable = archs if g.tegra else [a for a in archs if a.ptx or a.cc not in tegra]
        return coverage(usable, g.cc, tegra=g.tegra, ptx_jit_ok=jit)

    return LibraryCheck(
        path=report.path, sass=report.sass, ptx=report.ptx, has_code=bool(report.archs),
        coverage=tuple((g.cc, reach(g)) for g in groups) if report.archs else (),
        arch_specific=bool(report.archs) and all(a.suffix for a in report.archs), stale_ptx=stale,
    )


def _check_package(
    pkg: InstalledPackage, installed: Mapping[str, InstalledPackage], groups: Sequence[_Group],
    target: Target, db: CompatDB, python: str | None,
) -> PackageCheck:
    release = _release(db, pkg.name, pkg.version)
    build = _build(release, pkg.version)
    variant = _effective_variant(pkg, release)
    cuda = (info := db.variant(variant)) and info.cuda if variant else None  # PTX of a newer CUDA than the driver's
    jit = not cuda or target.driver is None or db.driver_support(cuda, target.driver, target.platform) is _FULL
    tegra = frozenset(g.cc for g in db.gpus if g.tegra)
    libraries = tuple(_library(r, groups, jit, tegra, target, db) for r in pkg.libraries if r.error is None)
    with_code = [lib for lib in libraries if lib.has_code]
    general = [lib for lib in with_code if not lib.arch_specific]
    # the weakest general library decides; with only arch-specific ones, the best of them
    deciding, pick = (general, min) if general else (with_code, max)
    cover = tuple(
        (g.cc, pick((dict(lib.coverage)[g.cc] for lib in deciding), key=_RANK.__getitem__)) for g in groups
    ) if deciding else ()
    problems: list[Problem] = [
        Problem(code=r.error.code, text=Text.of("render.doctor.unreadable", path=r.path, error=r.error.text),
                package=pkg.name, libraries=(r.path,),
                fixes=(Text.of("fix.doctor-reinstall", package=pkg.name, version=pkg.version),))
        for r in pkg.libraries if r.error is not None
    ]
    shown_variant = variant or Text.of("word.unknown-variant")
    for g in groups:
        if release is not None and release.min_sm is not None and g.cc < release.min_sm:
            problems.append(Problem(
                code="sm-below-minimum", package=pkg.name, required=str(release.min_sm), found=str(g.cc),
                text=Text.of("reason.sm-below-minimum", package=pkg.name, version=pkg.version,
                              gpu=tuple(g.names), cc=g.cc, required=release.min_sm),
                fixes=(Text.of("fix.doctor-below-minimum", package=pkg.name, cc=g.cc, required=release.min_sm),),
            ))
            continue
        cov = dict(cover).get(g.cc)
        if cov is Coverage.NONE:
            lacking = [lib for lib in deciding if dict(lib.coverage)[g.cc] is Coverage.NONE]
            found = _sorted_names(n for lib in lacking for n in lib.sass) + _sorted_names(
                n for lib in lacking for n in lib.ptx)
            codes = [a for lib in lacking for n in lib.ptx for a in parse_arch(n)]
            jitted = any(coverage([a], g.cc, tegra=g.tegra) is not Coverage.NONE for a in codes)  # JIT it could
            key = "doctor.ptx-not-compiled" if jitted and not jit else "reason.sm-not-covered"  # PTX it cannot JIT
            stale = [s for lib in lacking for s in lib.stale_ptx if any(
                coverage([a], g.cc, tegra=g.tegra) is not Coverage.NONE for a in parse_arch(s.name))]
            text = Text.of(key, package=pkg.name, version=pkg.version, variant=shown_variant, sm=g.cc.sm,
                           gpu=tuple(g.names), cc=g.cc, found=found, driver=target.driver)
            if stale and key == "reason.sm-not-covered":  # PTX its ISA keeps from this driver's JIT
                new = max(stale, key=lambda s: s.cuda)
                text = Text.of("doctor.ptx-too-new", package=pkg.name, version=pkg.version, gpu=tuple(g.names),
                               sm=g.cc.sm, found=_sorted_names(s.name for s in stale), isa=new.isa, cuda=new.cuda,
                               required=new.driver, driver=target.driver)
            problems.append(Problem(
                code="sm-not-covered", package=pkg.name, required=str(g.cc), found=", ".join(found),
                libraries=tuple(lib.path for lib in lacking), text=text,
                fixes=_coverage_fixes(pkg.name, target, db, python) + ((Text("fix.upgrade-driver"),) if stale else ()),
            ))
        elif cov is Coverage.PTX_JIT:
            ptx = _sorted_names(n for lib in deciding for n in lib.ptx)
            problems.append(Problem(
                code="ptx-jit-only", severity="warning", package=pkg.name, required=str(g.cc), found=", ".join(ptx),
                text=Text.of("reason.ptx-jit-only", package=pkg.name, version=pkg.version, variant=shown_variant,
                              gpu=tuple(g.names), sm=g.cc.sm, found=ptx),
                fixes=(Text.of("fix.doctor-native-build", sms=g.cc.sm, package=pkg.name, gpus=_gpu_flags(target)),),
            ))
    if pkg.name == "torch" and variant == "cpu" and not with_code and groups:
        problems.append(Problem(
            code="sm-not-covered", package=pkg.name, found="cpu",
            text=Text.of("render.doctor.cpu-build", package=pkg.name, version=pkg.version,
                          gpu=tuple(n for g in groups for n in g.names)),
            fixes=(Text.of("fix.cuda-index", index_root=db.pytorch_index_root),),
        ))
    problems += _pairing_problems(pkg, release, build, installed, db)
    problems += _variant_problems(pkg, variant, release, bool(with_code), installed, db)
    notes = []
    if pkg.record_missing:
        notes.append(Text.of("render.doctor.no-record", package=pkg.name, version=pkg.version))
    if release is None and db.packages(pkg.name):
        notes.append(Text.of("render.doctor.not-in-db", package=pkg.name, version=pkg.version))
    return PackageCheck(
        name=pkg.name, version=pkg.version, variant=variant,
        sass=_sorted_names(n for lib in libraries for n in lib.sass),
        ptx=_sorted_names(n for lib in libraries for n in lib.ptx),
        coverage=cover, libraries=libraries, problems=tuple(problems), notes=tuple(notes),
    )


def _coverage_fixes(name: str, target: Target, db: CompatDB, python: str | None) -> tuple[Text, ...]:
    """Published builds with native code for every GPU here, the lock command, a source build."""
    sms = tuple(cc.sm for cc in target.ccs)
    tegra = any(g.tegra for g in target.gpus)
    releases = releases_with_sass(
        db, name, target.ccs, tegra=tegra, python=python, platform=target.platform, driver=target.driver
    )
    fixes = [releases_fix(name, target.ccs, releases),
             Text.of("fix.doctor-lock", package=name, gpus=_gpu_flags(target))] if releases else [
             Text.of("fix.no-releases", package=name, sms=sms)]
    if toolkit_compiles(db, target.ccs):  # no toolkit has sm_20: no build from source either
        fixes.append(Text.of("fix.source-build", package=name, arch_list=format_arch_list(target.ccs)))
    return tuple(fixes)


def _spec_text(req: Requirement) -> str:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator == "==":
        return specs[0].version
    return str(req.specifier)


def _pairing_problems(
    pkg: InstalledPackage, release: PackageRelease | None, build: Build | None,
    installed: Mapping[str, InstalledPackage], db: CompatDB,
) -> list[Problem]:
    """``requires``/``constrains`` of the database row that the installed packages do not meet."""
    if release is None:
        return []
    problems = []
    for req in (*release.requires, *(build.requires if build else ()), *release.constrains):
        dep = installed.get(canonicalize_name(req.name))
        if dep is None or req.marker is not None or not req.specifier:
            continue
        try:
            if req.specifier.contains(Version(dep.version), prereleases=True):
                continue
        except InvalidVersion:
            continue
        required = _spec_text(req)
        key = "reason.abi-mismatch" if dep.name == "torch" else "render.doctor.pair-mismatch"
        fixes = [Text.of("fix.doctor-paired-dep", dep=dep.name, required=required, package=pkg.name,
                          version=pkg.version)]
        paired = _paired_release(db, pkg.name, dep)
        if paired is not None:
            fixes.insert(0, Text.of("fix.doctor-paired-release", spec=paired, package=pkg.name,
                                     dep=dep.name, found=dep.version))
        if dep.name == "torch":
            fixes.append(Text.of("fix.same-index", package=pkg.name, index_root=db.pytorch_index_root))
        problems.append(Problem(
            code="abi-mismatch", package=pkg.name, required=f"{dep.name} {required}", found=f"{dep.name} {dep.version}",
            text=Text.of(key, package=pkg.name, version=pkg.version, dep=dep.name, required=required,
                          found=dep.version),
            fixes=tuple(fixes),
        ))
    return problems


def _paired_release(db: CompatDB, name: str, dep: InstalledPackage) -> str | None:
    """``name==X.Y.Z`` (with the build's local tag where a build carries the pairing) of the newest
    release whose rows admit the installed ``dep``."""
    try:
        have = Version(dep.version)
    except InvalidVersion:
        return None
    for release in db.packages(name):
        options = [("", (*release.requires, *release.constrains))]
        options += [(b.local, (*release.requires, *b.requires)) for b in release.builds if b.requires]
        for local, reqs in options:
            on_dep = [r for r in reqs if canonicalize_name(r.name) == dep.name]
            if on_dep and all(r.specifier.contains(have, prereleases=True) for r in on_dep):
                return f"{name}=={release.version}{local}"
    return None


def _family(variant: str | None) -> str | None:
    """``cpu``, ``cuda12`` (any cu12x), ``rocm`` (``Variant.family``); another name as it is; None when unknown."""
    if variant is None:
        return None
    return parse_variant(variant).family if is_variant(variant) else variant


def _variant_problems(
    pkg: InstalledPackage, variant: str | None, release: PackageRelease | None, has_code: bool,
    installed: Mapping[str, InstalledPackage], db: CompatDB,
) -> list[Problem]:
    """A compiled package from another CUDA major (or cpu) than torch: its libraries do not load."""
    torch = installed.get("torch")
    if pkg.name == "torch" or torch is None or (release.pure if release else not has_code):
        return []
    torch_variant = _effective_variant(torch, _release(db, torch.name, torch.version))
    mine, theirs = _family(variant), _family(torch_variant)
    if mine is None or theirs is None or mine == theirs:
        return []
    return [Problem(
        code="abi-mismatch", package=pkg.name, required=f"torch {variant}", found=f"torch {torch_variant}",
        text=Text.of("render.doctor.variant-mismatch", package=pkg.name, version=pkg.version, variant=variant,
                      found=torch.version, torch_variant=torch_variant),
        fixes=(Text.of("fix.same-index", package=pkg.name, index_root=db.pytorch_index_root),),
    )]


def _effective_variant(pkg: InstalledPackage, release: PackageRelease | None) -> str | None:
    """What the files say, else the variant PyPI carries for a release installed without a local tag."""
    if pkg.variant or _local(pkg.version) or release is None or release.pure:
        return pkg.variant
    return release.pypi_variant


def _check_runtimes(env: Environment, target: Target, db: CompatDB) -> tuple[
        tuple[RuntimeCheck, ...], list[Problem], list[Text]]:
    """Each CUDA runtime of the environment (or torch's variant, when none is) against the driver."""
    runtimes = list(env.runtimes)
    torch = next((p for p in env.packages if p.name == "torch"), None)
    torch_variant = _effective_variant(torch, _release(db, torch.name, torch.version)) if torch else None
    info = db.variant(torch_variant) if torch_variant else None
    if not runtimes and torch is not None and info is not None and info.cuda is not None:
        runtimes.append(RuntimePackage(name="torch", version=torch.version, cuda=info.cuda))
    checks, problems, notes = [], [], []
    if runtimes and target.gpus and target.driver is None:
        notes.append(Text.of("warn.driver-unknown"))
    for rt in runtimes:
        release = db.cuda_release(rt.cuda)
        if release is None or target.driver is None or not target.gpus:
            if release is None:
                notes.append(Text.of("render.doctor.runtime-unknown", name=rt.name, version=rt.version, cuda=rt.cuda))
            checks.append(RuntimeCheck(name=rt.name, version=rt.version, cuda=rt.cuda, support=None))
            continue
        driver, platform = target.driver, target.platform
        support = db.driver_support(rt.cuda, driver, platform)
        checks.append(RuntimeCheck(name=rt.name, version=rt.version, cuda=rt.cuda, support=support))
        full = release.min_driver(platform)
        if support is DriverSupport.NONE:
            problems.append(Problem(
                code="driver-too-old", package=rt.name, required=str(release.minor_compat_driver(platform)),
                found=str(driver), fixes=_driver_fixes(target, db, env),
                text=Text.of("reason.driver-too-old", cuda=rt.cuda, variant=rt.cuda.tag,
                              required=release.minor_compat_driver(platform), full=full, found=driver),
            ))
        elif support is DriverSupport.MINOR:
            problems.append(Problem(
                code="minor-version-compat", severity="warning", package=rt.name, required=str(full),
                found=str(driver), fixes=_driver_fixes(target, db, env),
                text=Text.of("reason.minor-version-compat", variant=rt.cuda.tag, required=full, found=driver),
            ))
    return tuple(checks), problems, notes


def _check_missing(env: Environment, db: CompatDB) -> list[Problem]:
    """What is absent: neither a GPU package nor a CUDA package at all, or a CUDA torch with no CUDA runtime beside it.

    Both are warnings with their own code, so the verdict names them instead of a bare "ok".
    """
    if not env.packages and not env.runtimes and not env.cuda_packages and not env.damaged:
        return [Problem(code="no-gpu-packages", severity="warning",
                        text=Text.of("doctor.no-gpu-packages", names=", ".join(db.package_kinds)))]
    torch = next((p for p in env.packages if p.name == "torch"), None)
    if torch is None or env.runtimes or env.cuda_packages or torch.bundles_runtime:
        return []
    variant = _effective_variant(torch, _release(db, torch.name, torch.version))
    info = db.variant(variant) if variant else None
    if info is None or info.cuda is None:
        return []
    return [Problem(code="cuda-runtime-missing", severity="warning", package="torch", required=variant,
                    text=Text.of("doctor.cuda-runtime-missing", version=torch.version, variant=variant))]


def _driver_fixes(target: Target, db: CompatDB, env: Environment) -> tuple[Text, ...]:
    """The best variant this driver runs (``advice.variants``), to install with every GPU package of the
    environment at once (torch first), else say that none does."""
    assert target.driver is not None
    cuda_max = db.max_cuda_for_driver(target.driver, target.platform)
    tegra = any(g.tegra for g in target.gpus)
    fit = best_variant(db, cuda_max=cuda_max, driver=target.driver, platform=target.platform, ccs=target.ccs,
                       tegra=tegra)
    if fit is None:
        return (Text.of("fix.no-variant", driver=target.driver),)
    names = sorted({p.name for p in env.packages if p.name in db.package_names}, key=lambda n: (n != db.anchor, n))
    return (variant_fix(fit, names), Text.of("fix.upgrade-driver"))


def _check_arch_lists(environ: Mapping[str, str], groups: Sequence[_Group], target: Target) -> list[Problem]:
    """An arch list in the environment that leaves out a GPU of the target."""
    problems = []
    fix = Text.of("fix.unset-arch-list-target", arch_list=format_arch_list(target.ccs))
    for var in ARCH_LIST_VARIABLES:
        value = environ.get(var, "").strip()
        if not value or not groups:
            continue
        try:
            archs = parse_arch_list(value)
        except InvalidArch as exc:
            problems.append(Problem(code="invalid-arch-list", package=var, found=value, fixes=(fix,),
                                    text=Text.of("render.doctor.arch-list-invalid", var=var, value=value,
                                                  error=exc.text)))
            continue
        for g in groups:
            if coverage(archs, g.cc, tegra=g.tegra) is Coverage.NONE:
                problems.append(Problem(
                    code="arch-list-excludes-gpu", package=var, required=str(g.cc), found=value, fixes=(fix,),
                    text=Text.of("render.doctor.arch-list-excludes", var=var, value=value, gpu=tuple(g.names),
                                  cc=g.cc),
                ))
    return problems
