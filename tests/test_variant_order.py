"""The solver's order across variants (issue 10), on the shipped database.

The first torch resolvelib pins fixes the variant; ``solve`` must still find the newest torch any
variant gives for the whole set (``why-not`` and ``lock`` agree), rank full driver support, SASS,
the user's requests and verified rows after it, and warn when a row marked ``verified = false``
is used. The property test draws targets from the database (one to four GPUs, drivers of every
branch the database names, Python versions, platforms) and checks every pick against every contract.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudaresolve.cli import main
from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, DriverSupport, load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.catalog import CUDA, Candidate
from cudaresolve.resolve.gpudriver import unsupported_gpus
from cudaresolve.resolve.order import release_of
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text

if TYPE_CHECKING:
    from pathlib import Path

DB = load_compat()
PLATFORMS = ("linux_x86_64", "linux_aarch64", "win_amd64")
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--offline", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"])
    return code, json.loads(capsys.readouterr().out)


def versions(result: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["version"] for p in result["packages"]}


@pytest.mark.usefixtures("in_tmp")
def test_a_companion_without_the_first_variant_moves_the_set_to_another_variant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """GB200 on 575.51.03 runs cu129 fully; xformers' cu129 builds stop at 0.0.32 (torch 2.8.0), while cu128
    carries torch 2.11.0 with xformers 0.0.35. Before: cu129 and torch 2.8.0, three releases older."""
    code, result = cli(capsys, "lock", "torch", "xformers", "--gpu", "GB200", "--driver", "575.51.03")
    assert code == 0
    assert result["variant"] == "cu128"
    # xformers 0.0.35's PyPI wheel is its cu128 build: taken from PyPI (--gpu-source auto), under its plain version
    assert versions(result) == {"torch": "2.11.0+cu128", "xformers": "0.0.35"}
    # why-not agrees: the newer torch is possible, and what lock picked
    code, answer = cli(capsys, "why-not", "torch==2.11.0", "xformers", "--gpu", "GB200", "--driver", "575.51.03")
    assert answer["possible"] is True
    assert answer["solution"]["variant"] == "cu128"
    code, answer = cli(capsys, "why-not", "torch==2.12.0", "xformers", "--gpu", "GB200", "--driver", "575.51.03")
    assert answer["possible"] is False


def test_torch_alone_keeps_the_full_driver_variant_when_it_gives_the_same_torch() -> None:
    target = Target(gpus=(gpu("GB200"),), driver=parse_driver("575.51.03"))
    solution = solve(["torch"], DB, target).solution
    assert (solution.variant, [p.version for p in solution.packages]) == ("cu128", ["2.11.0+cu128"])


def test_an_unverified_build_is_used_with_its_own_warning() -> None:
    """torch 2.15.0's only build this driver runs is cu130, a row marked ``verified = false``."""
    target = Target(gpus=(gpu("H100 SXM"),), driver=parse_driver("580.65.06"))
    resolved = solve(["torch"], DB, target)
    assert [p.version for p in resolved.solution.packages] == ["2.15.0+cu130"]
    assert resolved.pins["torch"].build is not None and not resolved.pins["torch"].build.verified
    (notice,) = [w for w in resolved.solution.warnings if w.code == "unverified-build"]
    assert notice.message.startswith("torch 2.15.0 (cu130) comes from a database row marked verified = false")
    assert "verified = false" in format_text(notice.text, "zh")


def test_verified_builds_bring_no_warning() -> None:
    target = Target(gpus=(gpu("GB200"),), driver=parse_driver("575.51.03"))
    warnings = solve(["torch", "xformers"], DB, target).solution.warnings
    assert "unverified-build" not in [w.code for w in warnings]


def gpu(name: str) -> Gpu:
    model = DB.find_gpu(name)
    assert model is not None, name
    return Gpu(name=model.name, cc=model.cc, datacenter=model.datacenter, tegra=model.tegra)


def drivers(db: CompatDB, platform: str) -> list[str]:
    """A driver of every branch the database names for ``platform``: full and minor-version floors, GPU floors."""
    found = {str(r.min_driver(platform)) for r in db.cuda} | {str(r.minor_compat_driver(platform)) for r in db.cuda}
    found |= {str(r.min_driver) for r in db.driver_gpus}
    found.discard("None")
    return sorted(found, key=lambda d: parse_driver(d).parts)


@st.composite
def targets(draw: st.DrawFn) -> Target:
    platform = draw(st.sampled_from(PLATFORMS))
    models = draw(st.lists(st.sampled_from(DB.gpus), min_size=1, max_size=4))
    gpus = tuple(Gpu(name=m.name, cc=m.cc, datacenter=m.datacenter, tegra=m.tegra) for m in models)
    driver = parse_driver(draw(st.sampled_from(drivers(DB, platform))))
    return Target(gpus=gpus, driver=driver, platform=platform, python=draw(st.sampled_from(PYTHONS)))


def check_contracts(pins: dict[str, Candidate], target: Target) -> None:
    """driver<->runtime, driver<->GPU, SM coverage of every GPU, one variant, Python, platform, pairings."""
    cuda = pins.get(CUDA)
    assert cuda is not None and cuda.variant is not None
    info = DB.variant(cuda.variant)
    assert info is not None and info.cuda is not None
    assert target.driver is not None
    support = DB.driver_support(info.cuda, target.driver, target.platform)
    assert support is not DriverSupport.NONE
    assert support is cuda.driver_support
    assert unsupported_gpus(DB, target) is None
    for name, candidate in pins.items():
        release, build = candidate.release, candidate.build
        if name == CUDA or release is None:
            continue
        assert target.python in release.python
        assert target.platform in (build.platforms if build else release.platforms) or "any" in release.platforms
        if build is not None:
            assert build.variant == cuda.variant
            for g in target.gpus:
                reach = coverage(build.archs, g.cc, tegra=g.tegra, ptx_jit_ok=support is DriverSupport.FULL)
                assert reach is not Coverage.NONE, (name, candidate.version, g.name)
        if release.min_sm is not None:
            assert all(g.cc >= release.min_sm for g in target.gpus)
        for req in (*release.requires, *(build.requires if build else ())):
            if req.marker is None:
                assert req.name in pins, (name, str(req))
            if req.name in pins:
                assert req.specifier.contains(pins[req.name].version, prereleases=True), (name, str(req))
        for req in release.constrains:
            if req.name in pins:
                assert req.specifier.contains(pins[req.name].version, prereleases=True), (name, str(req))


TORCH = sorted(DB.packages("torch"), key=lambda r: r.version, reverse=True)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(target=targets(), companions=st.sampled_from([(), ("xformers",)]))
def test_lock_picks_the_newest_torch_why_not_allows_and_every_contract_holds(
    target: Target, companions: tuple[str, ...]
) -> None:
    try:
        resolved = solve(["torch", *companions], DB, target)
    except NoSolution:
        picked = None
    else:
        check_contracts(dict(resolved.pins), target)
        picked = release_of(resolved.pins["torch"])
    newer = [r.version for r in TORCH if picked is None or r.version > picked]
    if picked is None and unsupported_gpus(DB, target) is not None:
        newer = newer[:1]  # the driver does not know a GPU: nothing runs, whatever the release (one look says so)
    possible = [str(v) for v in newer if why_not(f"torch=={v}", list(companions), DB, target).possible]
    assert possible == [], (picked, possible)
    if picked is not None:
        assert why_not(f"torch=={picked}", list(companions), DB, target).possible


def test_the_issue_targets_across_xformers_releases() -> None:
    """The targets the issue names, with several xformers releases: no newer torch is possible than the pick."""
    xformers = [str(r.version) for r in DB.packages("xformers")]
    chosen = [x for x in xformers if x in ("0.0.35", "0.0.33.post2", "0.0.32.post2", "0.0.31.post1", "0.0.29.post3")]
    for name, driver in (
        ("RTX 5090", "570.26"),
        ("H100 SXM", "535.54.03"),
        ("A100 SXM4 80GB", "525.60.13"),
        ("Tesla T4", "470.42.01"),
        ("GB200", "575.51.03"),
    ):
        target = Target(gpus=(gpu(name),), driver=parse_driver(driver))
        for request in (["xformers"], *([f"xformers=={x}"] for x in chosen)):
            try:
                picked = release_of(solve(["torch", *request], DB, target).pins["torch"])
            except NoSolution:
                assert not why_not(request[0], ["torch"], DB, target).possible, (name, request)
                continue
            newer = [r.version for r in TORCH if r.version > picked]
            assert [v for v in newer if why_not(f"torch=={v}", request, DB, target).possible] == [], (name, request)


def test_a_verified_build_of_the_same_release_and_variant_is_taken_before_an_unverified_one() -> None:
    """torch 2.13.0 on cu130: the PyTorch-index rows are ``verified = false``, the PyPI row (cu130) is verified.
    Verification ranks only within one variant: the set stays on cu130, the newest CUDA the driver runs."""
    target = Target(gpus=(gpu("H100 SXM"),), driver=parse_driver("580.65.06"))
    resolved = solve(["torch==2.13.0", "xformers"], DB, target)
    assert resolved.solution.variant == "cu130"
    assert [(p.name, p.version, p.index) for p in resolved.solution.packages] == [
        ("torch", "2.13.0", "https://pypi.org/simple"),
        ("xformers", "0.0.35+cu130", "https://download.pytorch.org/whl/cu130"),
    ]
    assert "unverified-build" not in [w.code for w in resolved.solution.warnings]
