"""The requested packages' pairings (``resolve.pairing``): the same answers, with less searched and read.

``Companions`` leaves out database builds that no set holding every requested database package can
use, and tightens the bound that decides which other variants are searched. It is an optimisation
only: every test compares a solve with it against the same solve without it (``Companions``
replaced by nothing), on the shipped database.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.version import Version

import cudaresolve.resolve.solve as solve_module
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.catalog import CUDA, Candidate, Need, build_catalog
from cudaresolve.resolve.needs import parse_requests
from cudaresolve.resolve.order import best_case, ranked_names, release_of, set_key
from cudaresolve.resolve.pairing import Companions, paired
from cudaresolve.resolve.solve import solve, solve_catalog
from cudaresolve.target.environment import marker_environment
from cudaresolve.target.model import Gpu, Target
from test_source_solve import DictSource

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from packaging.requirements import Requirement

    from cudaresolve.resolve.source import IndexRelease

DB = load_compat()
GPU_PACKAGES = ("torch", "torchvision", "torchaudio", "fbgemm-gpu", "torchrec", "xformers", "flashinfer-python")
PLATFORMS = ("linux_x86_64", "linux_aarch64", "win_amd64")


def gpu(name: str) -> Gpu:
    model = next(g for g in DB.gpus if g.name == name)
    return Gpu(name=model.name, cc=model.cc, datacenter=model.datacenter, tegra=model.tegra)


def h100(driver: str = "580.65.06") -> Target:
    return Target(gpus=(gpu("NVIDIA H100"),), driver=parse_driver(driver), python="3.11", platform="linux_x86_64")


@contextmanager
def without_pairing() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solve_module, "Companions", lambda catalog, needs: None)
        yield


def answer(requests: Sequence[str], target: Target, **kw: Any) -> object:
    """The pins (name -> version, variant, index), or the failure's finding codes."""
    try:
        pins = solve(requests, DB, target, **kw).pins
    except NoSolution as e:
        return ("no-solution", [f.code for f in e.findings])
    return {name: (str(c.version), c.variant, c.index_url) for name, c in pins.items()}


def drivers(platform: str) -> list[str]:
    found = {str(r.min_driver(platform)) for r in DB.cuda} | {str(r.minor_compat_driver(platform)) for r in DB.cuda}
    found |= {str(r.min_driver) for r in DB.driver_gpus}
    found.discard("None")
    return sorted(found)


@st.composite
def requests_and_targets(draw: st.DrawFn) -> tuple[list[str], Target]:
    platform = draw(st.sampled_from(PLATFORMS))
    models = draw(st.lists(st.sampled_from([g for g in DB.gpus if not g.tegra]), min_size=1, max_size=2))
    gpus = tuple(Gpu(name=m.name, cc=m.cc, datacenter=m.datacenter, tegra=m.tegra) for m in models)
    driver = parse_driver(draw(st.sampled_from(drivers(platform)[-12:])))  # the newer branches: most cases solve
    python = draw(st.sampled_from(("3.10", "3.11", "3.12")))
    names = draw(st.lists(st.sampled_from(GPU_PACKAGES), min_size=1, max_size=4, unique=True))
    requests = list(names)
    if draw(st.booleans()):  # one of them capped or pinned at a release the database knows
        index = draw(st.integers(0, len(names) - 1))
        releases = [str(r.version) for r in DB.packages(names[index])]
        operator = draw(st.sampled_from(("==", "<=", "<")))
        requests[index] = f"{names[index]}{operator}{draw(st.sampled_from(releases))}"
    return requests, Target(gpus=gpus, driver=driver, python=python, platform=platform)


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=requests_and_targets())
def test_the_pairings_never_change_an_answer_or_a_failure(case: tuple[list[str], Target]) -> None:
    requests, target = case
    found = answer(requests, target)
    with without_pairing():
        assert answer(requests, target) == found


class ListedSource(DictSource):
    """No project of its own: every database build is listed (on the index asked), with no requirements; records
    the builds listed and the metadata read."""

    def __init__(self) -> None:
        super().__init__({})
        self.metadata: list[tuple[str, Version]] = []
        self.listed: list[tuple[str, str, str]] = []

    def build_release(self, name: str, version: str, index_url: str) -> IndexRelease | None:
        self.listed.append((name, version, index_url))
        return replace(self._release(name, version, False), index_url=index_url)

    def requires(self, release: IndexRelease) -> Sequence[Requirement]:
        self.metadata.append((release.name, release.version))
        return []


def test_a_release_no_requested_companion_pairs_with_is_never_read() -> None:
    """torch and fbgemm-gpu for an H100: the newest torch release pairs with no fbgemm-gpu release (1.9.0 pins
    torch 2.14.*). Without the pairings the search pins it first (and reads its metadata) and lists fbgemm-gpu's
    builds of other variants; with them, no torch newer than the answer is read, and fewer builds are listed.
    (torchaudio served here until its 2.11.0 row took torch>=2.11.0, as its wheel behaves.)"""
    requests = ["torch", "fbgemm-gpu"]
    with_pairs, plain = ListedSource(), ListedSource()
    picked = solve(requests, DB, h100(), source=with_pairs).pins
    with without_pairing():
        assert solve(requests, DB, h100(), source=plain).pins == picked
    torch = release_of(picked["torch"])
    newest_torch = max(r.version for r in DB.packages("torch"))
    assert newest_torch > torch  # the case has newer torch releases to pass over
    assert [v for n, v in with_pairs.metadata if n == "torch" and Version(v.public) > torch] == []
    assert [v for n, v in plain.metadata if n == "torch" and Version(v.public) > torch] != []
    assert len(with_pairs.listed) < len(plain.listed)


def test_the_variant_bound_counts_a_companion_only_at_a_release_that_pairs_with_the_anchor() -> None:
    """After the first answer, a variant is searched only when its bound beats that answer. Each requested
    package's newest release on a variant, on its own, beats the answer's companions; paired with the bound's
    torch release it does not: the first search's answer stands, with no other variant searched."""
    requests = ["torch", "torchvision", "torchaudio", "fbgemm-gpu"]  # fbgemm-gpu keeps torch below 2.15
    runs: list[int] = []
    original = solve_module._Search.run

    def counted(self: Any, needs: Any, **options: Any) -> Any:
        runs.append(1)
        return original(self, needs, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solve_module._Search, "run", counted)
        picked = solve(requests, DB, h100()).pins
        with_pairs, runs[:] = len(runs), []
        with without_pairing():
            assert solve(requests, DB, h100()).pins == picked
        plain = len(runs)
    assert with_pairs == 1 < plain


def test_a_variant_where_a_requested_package_has_no_build_has_no_bound() -> None:
    target = h100()
    catalog = build_catalog(DB, target)
    needs = parse_requests(["torch", "torchaudio"], marker_environment(target))
    companions = Companions(catalog, needs)
    requested = ranked_names(needs, catalog, DB.anchor)
    for variant in catalog.for_name(CUDA):
        bound = best_case(variant, needs, catalog, DB.anchor, requested, has_anchor=True, companions=companions)
        room = all(any(map(companions.fits, companions.members(n, variant.variant))) for n in ("torch", "torchaudio"))
        assert (bound is None) == (not room), variant.variant
        if bound is not None:  # the bound's torchaudio release pairs with a torch build of the bound's release
            audio = next(
                c for c in companions.members("torchaudio", variant.variant) if release_of(c) == bound[3][0]
            )
            tops = [c for c in companions.members("torch", variant.variant) if release_of(c) == bound[0]]
            assert any(paired(audio, t) for t in tops)


def test_a_build_fits_only_beside_a_build_of_its_own_variant() -> None:
    target = h100()
    catalog = build_catalog(DB, target)
    companions = Companions(catalog, parse_requests(["torch", "torchaudio"], marker_environment(target)))
    for torch in catalog.for_name("torch"):
        if torch.variant is None or torch.variant not in catalog.runnable:
            continue
        expected = any(
            a.variant == torch.variant and all(n.specifier.contains(torch.version, prereleases=True)
                                               for n in a.dependencies if n.name == "torch")
            for a in catalog.for_name("torchaudio")
        )  # fmt: skip
        assert companions.fits(torch) == expected, (str(torch.version), torch.variant)


def best_by_brute_force(requests: list[str], target: Target) -> tuple[object, str | None]:
    """The rule's best set, found by solving on every variant the target runs: (its key, its variant), the
    catalog's first variant among equal keys; (None, None) when no variant has a set."""
    catalog = build_catalog(DB, target)
    needs = parse_requests(requests, marker_environment(target))
    requested = ranked_names(needs, catalog, DB.anchor)
    best: tuple[object, str | None] = (None, None)
    for variant in catalog.for_name(CUDA):  # the catalog's order: the first of equal keys stays
        try:
            pins = solve_catalog([*needs, Need(name=CUDA, variant=variant.variant)], DB, catalog).pins
        except NoSolution:
            continue
        key = set_key(pins, DB.anchor, requested)
        if best[0] is None or key > best[0]:  # type: ignore[operator]
            best = (key, variant.variant)
    return best


def test_sets_that_rank_equal_go_to_the_catalogs_first_variant_whatever_the_search_path() -> None:
    """fbgemm-gpu on a GeForce MX450 under minor-version compatibility: cu128 and cu126 give sets that rank equal.
    Which variant resolvelib's first search lands on depends on its path (and the pairings change the path): the
    set kept is the one on the catalog's first variant (the newer CUDA), with or without them."""
    target = Target(gpus=(gpu("NVIDIA GeForce MX450"),), driver=parse_driver("545.23.06"), python="3.13",
                    platform="linux_x86_64")  # fmt: skip
    _, variant = best_by_brute_force(["fbgemm-gpu"], target)
    found = answer(["fbgemm-gpu"], target)
    with without_pairing():
        assert answer(["fbgemm-gpu"], target) == found
    assert isinstance(found, dict) and found[CUDA][1] == variant


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=requests_and_targets())
def test_the_answer_is_the_rules_best_set_on_the_catalogs_first_variant(case: tuple[list[str], Target]) -> None:
    requests, target = case
    key, variant = best_by_brute_force(requests, target)
    try:
        resolved = solve(requests, DB, target)
    except NoSolution:
        assert key is None
        return
    pins = resolved.pins
    needs = parse_requests(requests, marker_environment(target))
    assert set_key(pins, DB.anchor, ranked_names(needs, resolved.catalog, DB.anchor)) == key
    assert pins[CUDA].variant == variant


def test_a_failure_is_explained_by_the_search_without_the_pairings() -> None:
    """torchrec and torch on a GB10, PyPI builds only: no set. The pairings leave fewer torch builds, so the failing
    search ends on other causes; the failure is explained from the search without them, with the same findings."""
    target = Target(gpus=(gpu("NVIDIA GB10"),), driver=parse_driver("580.65.06"), python="3.11",
                    platform="linux_x86_64")  # fmt: skip
    found = answer(["torchrec", "torch"], target, gpu_source="pypi")
    with without_pairing():
        assert answer(["torchrec", "torch"], target, gpu_source="pypi") == found
    # the Python finding of an old release whose builds have no GB10 code either is no way out: not named
    assert found == ("no-solution", ["sm-not-covered"])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_joint_needs_are_those_one_candidate_meets_together(platform: str) -> None:
    """``_joint`` (memoised per need, each version tested once) answers as the plain search does: some candidate
    of the package meets both needs. Checked on every pair of needs the shipped database's builds place on a third
    package (an extension's pin on torch), each also naming one of the package's variants."""
    from cudaresolve.resolve.catalog import satisfies

    target = replace(h100(), platform=platform)
    catalog = build_catalog(DB, target, GPU_PACKAGES)
    companions = Companions(catalog, [])
    needs: dict[str, list[Need]] = {}
    for name in GPU_PACKAGES:
        for candidate in catalog.for_name(name):
            for need in candidate.dependencies:
                if need.name != CUDA and need.name in catalog.known:
                    needs.setdefault(need.name, []).append(need)
    checked = 0
    for name, placed in needs.items():
        specifiers = list({str(n.specifier): n.specifier for n in placed}.values())[:12]
        variants = [None, *dict.fromkeys(c.variant for c in catalog.for_name(name))]  # a build's need names one
        distinct = [Need(name=name, specifier=s, variant=v) for s in specifiers for v in variants]
        for one in distinct:
            for other in distinct:
                plain = any(satisfies(one, c) and satisfies(other, c) for c in catalog.for_name(name))
                assert companions._joint(one, other) is plain, (str(one), one.variant, str(other), other.variant)
                checked += 1
    assert checked > 100


def test_joint_tells_equal_versions_apart_where_arbitrary_equality_does() -> None:
    """``===`` compares a version's spelling: 2.0 and 2.0.0 are equal versions, but only the second is ``===2.0.0``.
    The verdict shared by the builds of one version is kept per spelling, so no answer is borrowed across them."""
    from packaging.specifiers import SpecifierSet

    from cudaresolve.resolve.catalog import Catalog

    builds = tuple(Candidate(name="t", version=Version(v), variant=None, index_url="x") for v in ("2.0", "2.0.0"))
    catalog = Catalog(target=h100(), candidates={"t": builds}, rejections=[], known=frozenset({"t"}))
    spelled, any_new = Need(name="t", specifier=SpecifierSet("===2.0.0")), Need(name="t", specifier=SpecifierSet(">=1"))
    assert Companions(catalog, [])._joint(any_new, spelled) is True
    assert Companions(catalog, [])._joint(spelled, Need(name="t", specifier=SpecifierSet("<2.0.0"))) is False
