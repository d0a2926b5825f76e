"""Findings of a failed resolution on tests/fixtures/compat-mini.toml: exact messages, most basic cause first."""

# ruff: noqa: RUF001  (the Chinese messages use full-width punctuation on purpose)

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib.resolvers import RequirementInformation

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need, build_catalog, satisfies
from cudaresolve.resolve.explain import HOST_CODES, explain_need, explain_resolution, request_conflicts
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"
PASCAL = "NVIDIA GeForce GTX 1080 Ti"
PASCAL_SM61 = f"has no code for sm_61 ({PASCAL}, compute capability 6.1)"
DRIVER_TOO_OLD = (
    "CUDA 12.1 wheels (cu121) need driver 525.60.13 at least (530.30.02 for full compatibility);"
    " this host has 470.129.06"
)


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(MINI)


def catalog_for(db: CompatDB, cc: str, driver: str, name: str = "GPU") -> Catalog:
    target = Target(gpus=(Gpu(name=name, cc=parse_cc(cc)),), driver=parse_driver(driver), python="3.11")
    return build_catalog(db, target)


def need(name: str, spec: str = "", *, parent: str | None = None) -> Need:
    return Need(name=name, specifier=SpecifierSet(spec), parent=parent)


def test_host_problems_come_first_then_requests(db: CompatDB) -> None:
    catalog = catalog_for(db, "6.1", "470.129.06", PASCAL)
    requests = [need("numpyy"), need("torch", "==2.8.0"), need("fbgemm-gpu"), Need(name=CUDA, variant="cu121")]
    findings = explain_resolution(catalog, requests)
    assert [(f.code, f.package, f.required, f.found) for f in findings] == [
        ("driver-too-old", None, "525.60.13", "470.129.06"),
        ("sm-not-covered", "torch", "sm_61", "sm_80"),
        ("sm-not-covered", "fbgemm-gpu", "sm_61", "sm_70 sm_80"),
        ("no-such-version", "numpyy", "any version", "none (known packages: fbgemm-gpu, torch, torchrec)"),
    ]
    assert [f.message for f in findings] == [
        DRIVER_TOO_OLD,
        f"torch 2.8.0 (cu121) {PASCAL_SM61}; it carries sm_80",
        # both fbgemm-gpu builds lack sm_61: one finding stands for them, the first (cu118) one
        f"fbgemm-gpu 1.2.0 (cu118) {PASCAL_SM61}; it carries sm_70 sm_80",
        "numpyy has no release any version; the newest known release is none"
        " (known packages: fbgemm-gpu, torch, torchrec)",
    ]
    assert {f.code for f in findings[:3]} <= set(HOST_CODES)


def test_the_same_findings_in_chinese(db: CompatDB) -> None:
    catalog = catalog_for(db, "6.1", "470.129.06", PASCAL)
    findings = explain_resolution(catalog, [need("torch", "==2.8.0"), Need(name=CUDA, variant="cu121")])
    assert [format_text(f.text, "zh") for f in findings] == [
        "CUDA 12.1 的 wheel（cu121）至少需要驱动 525.60.13（完全兼容需要 530.30.02）；本机驱动为 470.129.06",
        f"torch 2.8.0（cu121）没有 sm_61 的代码（{PASCAL}，计算能力 6.1）；它只包含 sm_80",
    ]


def test_conflicting_pair_names_both_sides(db: CompatDB) -> None:
    catalog = catalog_for(db, "8.0", "535.104.05")
    (torchrec,) = catalog.for_name("torchrec")
    other = Candidate(name="xformers", version=Version("0.0.30"), variant=None, index_url="https://pypi.org/simple")
    causes = [
        RequirementInformation(need("torch", "==2.7.*", parent="torchrec 1.2.0"), torchrec),
        RequirementInformation(need("torch", "==2.8.0", parent="xformers 0.0.30"), other),
    ]
    findings = explain_resolution(catalog, [need("torchrec"), need("torch")], causes)
    assert [(f.code, f.package, f.required, f.found, f.message) for f in findings] == [
        (
            "pin-conflict",
            "torchrec",
            "torch==2.7.*",
            "torch==2.8.0",
            "torchrec 1.2.0 requires torch==2.7.*, but torch==2.8.0 is chosen",
        ),
        (
            "pin-conflict",
            "xformers",
            "torch==2.8.0",
            "torch==2.7.*",
            "xformers 0.0.30 requires torch==2.8.0, but torch==2.7.* is chosen",
        ),
    ]


def test_a_pin_conflict_names_what_other_packages_require_not_the_releases_tried_before(db: CompatDB) -> None:
    """``torch==2.5.1 xformers`` from PyPI listed, for each of 20 xformers releases, the torch pins of all the others
    as 'chosen' ("xformers 0.0.35 requires torch>=2.10, but torch==2.0.1, torch==2.1.0, ... is chosen"): a release
    never stands beside another of its own name, so only the other packages' requirements are what is chosen."""
    catalog = catalog_for(db, "8.0", "535.104.05")
    (torchrec,) = catalog.for_name("torchrec")
    newer = replace(torchrec, version=Version("1.3.0"))
    app = Candidate(name="app", version=Version("1.0"), variant=None, index_url="https://pypi.org/simple")
    causes = [
        RequirementInformation(need("torch", "==2.7.*", parent="torchrec 1.2.0"), torchrec),
        RequirementInformation(need("torch", "==2.7.1", parent="torchrec 1.3.0"), newer),
        RequirementInformation(need("torch", ">=2.8", parent="app 1.0"), app),
    ]
    findings = explain_resolution(catalog, [need("torchrec")], causes)
    assert sorted(f.message for f in findings if f.code == "pin-conflict") == [
        "app 1.0 requires torch>=2.8, but torch==2.7.*, torch==2.7.1 is chosen",
        "torchrec 1.2.0 requires torch==2.7.*, but torch>=2.8 is chosen",
        "torchrec 1.3.0 requires torch==2.7.1, but torch>=2.8 is chosen",
    ]


def test_a_request_that_rules_out_every_release_is_named_not_the_search_path(db: CompatDB) -> None:
    catalog = catalog_for(db, "8.0", "535.104.05")
    (torchrec,) = catalog.for_name("torchrec")
    causes = [  # whatever the search tried last, the request is the cause
        RequirementInformation(need("torch", "==2.7.*", parent="torchrec 1.2.0"), torchrec),
        RequirementInformation(need("torch", "==2.8.0"), None),
    ]
    findings = explain_resolution(catalog, [need("torchrec"), need("torch", "==2.8.0")], causes)
    assert [(f.code, f.package, f.required, f.found, f.message) for f in findings] == [
        (
            "request-conflict",
            "torchrec",
            "torch==2.7.*",
            "torch==2.8.0",
            "torchrec 1.2.0 requires torch==2.7.*, but torch==2.8.0 was requested;"
            " no other torchrec release fits that request either",
        )
    ]
    assert request_conflicts(catalog, [need("torchrec"), need("torch", "==2.7.1")]) == []
    assert request_conflicts(catalog, [need("torchrec"), need("torch")]) == []


def test_a_dependency_the_target_rules_out_is_no_request_conflict(db: CompatDB) -> None:
    """torchrec's torch pin leaves no candidate on this target whatever was asked: the request is not the cause."""
    catalog = catalog_for(db, "8.0", "535.104.05")
    (torchrec,) = catalog.for_name("torchrec")
    (pin,) = [d for d in torchrec.dependencies if d.name == "torch"]
    assert any(c for c in catalog.for_name("torch") if satisfies(pin, c))
    others = tuple(c for c in catalog.for_name("torch") if not satisfies(pin, c))
    gone = replace(catalog, candidates={"torchrec": (torchrec,), "torch": others})
    assert request_conflicts(gone, [need("torchrec"), need("torch")]) == []
    assert request_conflicts(gone, [need("torchrec"), need("torch", "==2.8.0")]) == []
    assert [f.code for f in request_conflicts(catalog, [need("torchrec"), need("torch", "==2.8.0")])] == [
        "request-conflict"]


def test_no_cause_found_still_gives_one_finding(db: CompatDB) -> None:
    catalog = catalog_for(db, "8.0", "535.104.05")
    (finding,) = explain_resolution(catalog, [need("torch")])
    assert (finding.code, finding.required) == ("no-common-set", "torch")
    assert finding.message == "no set of versions satisfies all of torch together"  # no "torch  requires torch"
    (limited,) = explain_resolution(catalog, [need("torch")], constraints={"torch": SpecifierSet("<2.5")})
    assert limited.message == "no set of versions satisfies all of torch, torch<2.5 (-c) together"


def test_explain_need(db: CompatDB) -> None:
    catalog = catalog_for(db, "8.0", "535.104.05")
    assert explain_need(catalog, need("torch", "==2.7.1")) == []
    (missing,) = explain_need(catalog, need("torch", "==9.9"))
    assert (missing.code, missing.message) == (
        "no-such-version",
        "torch has no release ==9.9; the newest known release is 2.8.0+cu121",
    )
    old = catalog_for(db, "8.0", "470.129.06")
    (driver,) = explain_need(old, Need(name=CUDA, variant="cu121"))
    assert (driver.code, driver.variant, driver.message) == ("driver-too-old", "cu121", DRIVER_TOO_OLD)
    assert explain_need(old, Need(name=CUDA, variant="cu118")) == []


def test_a_package_with_no_file_for_the_target_is_said_so_plainly(db: CompatDB) -> None:
    """Found by the real-project audit (``lock triton --cpu --python-platform aarch64-apple-darwin``): a package the
    index lists with no file for the target read "triton has no release any version; the newest known release is
    none: no wheel or sdist ...". The versions asked are beside the point: no release has a file for it."""
    catalog = catalog_for(db, "8.0", "535.104.05")
    for spec in ("", ">=3"):
        (finding,) = explain_need(catalog, need("triton", spec), index={"triton": []})
        assert (finding.code, finding.package, finding.found) == ("no-such-version", "triton", "none")
        assert finding.message == "triton has no release with a wheel or sdist for CPython 3.11 on linux_x86_64"
        zh = "triton 没有任何版本提供适用于 linux_x86_64 上 CPython 3.11 的 wheel 或 sdist"
        assert format_text(finding.text, "zh") == zh
