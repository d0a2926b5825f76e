"""A failure's headline names the binding constraint: brute force over every build agrees.

For a failed request, the first finding names one constraint (the GPU's SM, the Python, the
platform, the driver, the OS, the user's pins). Over the database's builds of the package it
names, every build that satisfies all the *other* constraints must break the named one: the
named constraint really excludes every candidate the others leave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.core.platforms import platform_os
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import DriverSupport, load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.gpudriver import unsupported_gpus
from cudaresolve.resolve.platforms import below_floor
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.model import Gpu, Target

if TYPE_CHECKING:
    from cudaresolve.db.database import Build, PackageRelease
    from cudaresolve.text.findings import Finding

DB = load_compat()
PLATFORMS = ("linux_x86_64", "linux_aarch64", "win_amd64")
#: packages whose findings are checked (pure packages like torchrec fail through these)
CHECKED = ("torch", "torchvision", "torchaudio", "xformers", "fbgemm-gpu", "flashinfer-python")
#: what a finding that is not the headline may name: only a way out (another Python or platform) is worth it
WAY_OUT = {"no-wheel-for-python": "python", "requires-python": "python", "no-wheel-for-platform": "platform",
           "platform-too-old": "floor"}
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
PACKAGES = ("torch", "torchvision", "torchaudio", "xformers", "fbgemm-gpu", "torchrec", "flashinfer-python")
GLIBCS = (None, "2.17", "2.27", "2.28", "2.34")
DRIVERS = ("418.40.04", "450.80.02", "470.82.01", "525.60.13", "535.104.05", "570.26", "580.65.06", "595.45.04")
#: what each headline code names
NAMED = {
    "gpu-too-old": "sm",
    "sm-not-covered": "sm",
    "sm-below-minimum": "sm",
    "no-wheel-for-python": "python",
    "no-wheel-for-platform": "platform",
    "platform-too-old": "floor",
    "os-not-served": "os",
    "driver-too-old": "driver",
    "request-conflict": "pin",
}


def _torch_fits(release: PackageRelease, build: Build, torch_pin: SpecifierSet | None) -> bool:
    if torch_pin is None:
        return True
    for req in (*release.requires, *build.requires):  # flashinfer's AOT builds pin torch per build
        if req.name == "torch" and not any(
            req.specifier.contains(t.version, prereleases=True) and torch_pin.contains(t.version, prereleases=True)
            for t in DB.packages("torch")
        ):
            return False
    return True


def _broken(target: Target, release: PackageRelease, build: Build, spec: SpecifierSet, torch_pin: SpecifierSet | None
            ) -> set[str]:
    """The constraints ``build`` of ``release`` breaks on ``target`` under the user's requests."""
    out = set()
    if not spec.contains(release.version, prereleases=True) or not _torch_fits(release, build, torch_pin):
        out.add("pin")
    if platform_os(target.platform) not in (DB.operating_systems(release.name) or (platform_os(target.platform),)):
        out.add("os")
    if target.platform not in build.platforms and "any" not in build.platforms:
        out.add("platform")
    if below_floor(DB, target, release, build) is not None:
        out.add("floor")
    if target.python not in release.python:
        out.add("python")
    info = DB.variant(build.variant)
    assert info is not None and info.cuda is not None and target.driver is not None
    support = DB.driver_support(info.cuda, target.driver, target.platform)
    if support is DriverSupport.NONE:
        out.add("driver")
    jit = support is DriverSupport.FULL
    if any(coverage(build.archs, g.cc, tegra=g.tegra, ptx_jit_ok=jit) is Coverage.NONE for g in target.gpus) or (
        release.min_sm is not None and any(g.cc < release.min_sm for g in target.gpus)
    ):
        out.add("sm")
    return out


def _check(headline: Finding, target: Target, spec: SpecifierSet, torch_pin: SpecifierSet | None) -> None:
    named = NAMED.get(headline.code)
    if named is None or headline.package not in CHECKED:
        return
    own = spec if headline.package != "torch" or torch_pin is None else torch_pin
    pin = None if headline.package == "torch" else torch_pin
    for release in DB.packages(headline.package):
        for build in release.builds:
            if build.variant == "cpu":
                continue
            broken = _broken(target, release, build, own, pin)
            if named == "pin":  # a request conflict: by the pins alone, nothing of the package fits
                assert "pin" in broken, (headline.message, str(release.version), build.variant)
            elif not broken - {named}:  # it satisfies every other constraint: the named one must exclude it
                assert named in broken, (headline.message, str(release.version), build.variant, sorted(broken))


def _check_way_out(finding: Finding, target: Target, asked: set[str]) -> None:
    """A finding after the headline that names the Python or the platform of a package the user did not ask
    for must offer a way out: some build of the release it names breaks nothing else on this target (another
    Python or platform would take it). A package asked for is the user's own request, always worth naming."""
    named = WAY_OUT.get(finding.code)
    if named is None or finding.package not in CHECKED or finding.package in asked:
        return
    version = (finding.text.get("version") or "")
    release = next((r for r in DB.packages(finding.package) if str(r.version) == str(version).split("+")[0]), None)
    if release is None or not release.builds:
        return
    easy = {"python", "platform", "floor"}
    assert any(not _broken(target, release, b, SpecifierSet(), None) - easy
               for b in release.builds if b.variant != "cpu"), finding.message


@st.composite
def cases(draw: st.DrawFn) -> tuple[Target, str, SpecifierSet, SpecifierSet | None]:
    platform = draw(st.sampled_from(PLATFORMS))
    model = draw(st.sampled_from([g for g in DB.gpus if not g.tegra]))
    gpu = Gpu(name=model.name, cc=model.cc, datacenter=model.datacenter, tegra=model.tegra)
    # a Linux target's glibc, when the user gave one, meets or misses the builds' platform floors
    glibc = draw(st.sampled_from(GLIBCS)) if platform.startswith("linux") else None
    target = Target(gpus=(gpu,), driver=parse_driver(draw(st.sampled_from(DRIVERS))), platform=platform,
                    python=draw(st.sampled_from(PYTHONS)), glibc=glibc)
    package = draw(st.sampled_from(PACKAGES))
    releases = DB.packages(package)
    spec = SpecifierSet(draw(st.sampled_from(["", *(f"=={r.version}" for r in releases)])))
    torch = draw(st.sampled_from([None, *(f"=={r.version}" for r in DB.packages("torch"))]))
    return target, package, spec, None if torch is None or package == "torch" else SpecifierSet(torch)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_every_headline_is_the_binding_constraint(case: tuple[Target, str, SpecifierSet, SpecifierSet | None]) -> None:
    target, package, spec, torch_pin = case
    if unsupported_gpus(DB, target) is not None:
        return  # the driver does not know the GPU: that box finding explains every failure
    requests = [f"{package}{spec}", *([f"torch{torch_pin}"] if torch_pin is not None else [])]
    try:
        solve(requests, DB, target)
    except NoSolution as exc:
        assert exc.findings
        _check(exc.findings[0], target, spec, torch_pin)
        for finding in exc.findings[1:]:
            _check_way_out(finding, target, {package, *(["torch"] if torch_pin is not None else [])})
    else:
        return
    # why-not on the same request agrees: not possible, and its first reason is the binding one too
    answer = why_not(f"{package}{spec}", [f"torch{torch_pin}"] if torch_pin is not None else [], DB, target)
    assert not answer.possible, requests
    if answer.reasons:
        _check(answer.reasons[0], target, spec, torch_pin)


def _findings(requests: list[str], gpu: str, driver: str) -> list[Finding]:
    from cudaresolve.target.build import resolve_gpu

    target = Target(gpus=(resolve_gpu(gpu, DB),), driver=parse_driver(driver), platform="linux_x86_64", python="3.11")
    try:
        solve(requests, DB, target)
    except NoSolution as exc:
        return list(exc.findings)
    raise AssertionError(f"{requests} resolved on {gpu}")


def test_a_pin_that_leaves_only_releases_without_code_for_the_gpu_says_so() -> None:
    # the example, and another pin and GPU of the same class
    for requests, gpu in ((["xformers", "torch==2.8.*"], "GTX 1080 Ti"), (["xformers", "torch==2.9.0"], "Tesla P100")):
        findings = _findings(requests, gpu, "580.65.06")
        assert findings[0].code in ("sm-not-covered", "sm-below-minimum"), findings[0].message
        assert findings[0].package == "xformers"
        assert all(f.code != "request-conflict" for f in findings), [f.message for f in findings]


def test_a_pairing_on_a_variant_the_driver_cannot_run_is_not_the_headline() -> None:
    for gpu in ("GTX 1080 Ti", "Tesla P100"):  # the example, and another Pascal part
        findings = _findings(["torchrec"], gpu, "535.104.05")
        head = findings[0]
        assert head.code == "sm-not-covered" and head.package == "fbgemm-gpu", head.message
        assert head.variant is not None and head.variant != "cu130"  # R535 cannot run cu130 anyway
        assert all(f.code not in ("no-wheel-for-python", "requires-python") for f in findings)


def test_a_driver_that_runs_no_variant_leads_for_a_pure_request() -> None:
    # torchrec reaches the variants only through fbgemm-gpu: R418 runs none of them, so the driver is the cause
    for gpu in ("TITAN RTX", "T4"):
        findings = _findings(["torchrec"], gpu, "418.40.04")
        assert {f.code for f in findings} == {"driver-too-old"}, [f.message for f in findings]
    # a GPU no fbgemm-gpu build has code for: after the driver, the missing SM says no upgrade alone will do
    for gpu in ("GTX 1080 Ti", "Tesla P100"):
        findings = _findings(["torchrec"], gpu, "418.40.04")
        assert findings[0].code == "driver-too-old", [f.message for f in findings]
        assert [f.code for f in findings if f.code != "driver-too-old"] == ["sm-not-covered"], findings


def test_a_python_finding_no_build_could_use_is_left_out() -> None:
    # GB10 (12.1): no fbgemm-gpu build has its code, so fbgemm-gpu 1.4.0's missing Python 3.14 wheel is no way out
    from cudaresolve.target.build import resolve_gpu

    target = Target(gpus=(resolve_gpu("GB10", DB),), driver=parse_driver("580.65.06"), platform="linux_x86_64",
                    python="3.14")
    try:
        solve(["torchrec"], DB, target)
    except NoSolution as exc:
        assert [f.code for f in exc.findings] == ["sm-not-covered"], [f.message for f in exc.findings]
    else:
        raise AssertionError("torchrec resolved on a GB10")
