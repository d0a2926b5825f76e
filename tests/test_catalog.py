"""The catalog on tests/fixtures/compat-mini.toml: which builds become candidates, in what order, and why not."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudaresolve.core.archs import Coverage, parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, DriverSupport, load_compat
from cudaresolve.resolve.catalog import CUDA, CUDNN, Candidate, Catalog, Need, build_catalog, satisfies
from cudaresolve.target.model import Gpu, Target

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"
PASCAL = "NVIDIA GeForce GTX 1080 Ti"


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(MINI)


def host(cc: str, driver: str | None, name: str = "GPU") -> Target:
    gpu = Gpu(name=name, cc=parse_cc(cc))
    return Target(gpus=(gpu,), driver=parse_driver(driver) if driver else None, python="3.11")


def listed(catalog: Catalog, name: str) -> list[tuple[str, str | None, DriverSupport, Coverage]]:
    return [(str(c), c.variant, c.driver_support, c.coverage) for c in catalog.for_name(name)]


def rejected(catalog: Catalog) -> list[tuple[str, str, str | None, str, str]]:
    return [(r.name, str(r.version), r.variant, r.finding.code, r.finding.message) for r in catalog.rejections]


def test_new_driver_runs_every_variant_newest_first(db: CompatDB) -> None:
    catalog = build_catalog(db, host("8.0", "535.104.05"))
    assert listed(catalog, CUDA) == [
        ("cu121", "cu121", DriverSupport.FULL, Coverage.SASS),
        ("cu118", "cu118", DriverSupport.FULL, Coverage.SASS),
    ]
    assert listed(catalog, "torch") == [
        ("torch 2.8.0+cu121", "cu121", DriverSupport.FULL, Coverage.SASS),
        ("torch 2.7.1+cu121", "cu121", DriverSupport.FULL, Coverage.SASS),
        ("torch 2.7.1+cu118", "cu118", DriverSupport.FULL, Coverage.SASS),
    ]
    assert catalog.rejections == ()
    assert catalog.known == frozenset({CUDA, "torch", "fbgemm-gpu", "torchrec"})


def test_old_driver_keeps_only_minor_compatible_variant_and_says_why(db: CompatDB) -> None:
    catalog = build_catalog(db, host("8.0", "470.129.06"))
    assert listed(catalog, CUDA) == [("cu118", "cu118", DriverSupport.MINOR, Coverage.SASS)]
    # builds stay candidates; the <cuda> dependency is what rules cu121 out in the solver
    assert [(c.variant, c.driver_support) for c in catalog.for_name("torch")] == [
        ("cu121", DriverSupport.NONE),
        ("cu121", DriverSupport.NONE),
        ("cu118", DriverSupport.MINOR),
    ]
    assert rejected(catalog) == [
        (
            CUDA,
            "12.1",
            "cu121",
            "driver-too-old",
            "CUDA 12.1 wheels (cu121) need driver 525.60.13 at least (530.30.02 for full compatibility);"
            " this host has 470.129.06",
        )
    ]
    (rejection,) = catalog.rejected(CUDA)
    assert (rejection.finding.required, rejection.finding.found) == ("525.60.13", "470.129.06")


def test_pascal_loses_builds_without_sm61_code(db: CompatDB) -> None:
    catalog = build_catalog(db, host("6.1", "535.104.05", PASCAL))
    assert [str(c.version) for c in catalog.for_name("torch")] == ["2.7.1+cu121", "2.7.1+cu118"]
    assert catalog.for_name("fbgemm-gpu") == ()
    assert [(name, version, variant, code) for name, version, variant, code, _ in rejected(catalog)] == [
        ("torch", "2.8.0+cu121", "cu121", "sm-not-covered"),
        ("fbgemm-gpu", "1.2.0+cu118", "cu118", "sm-not-covered"),
        ("fbgemm-gpu", "1.2.0+cu121", "cu121", "sm-not-covered"),
    ]
    assert catalog.rejected("torch")[0].finding.message == (
        f"torch 2.8.0 (cu121) has no code for sm_61 ({PASCAL}, compute capability 6.1); it carries sm_80"
    )


def test_cpu_target_gets_cpu_builds_and_pure_packages(db: CompatDB) -> None:
    catalog = build_catalog(db, Target(python="3.11"))
    assert listed(catalog, CUDA) == [("cpu", "cpu", DriverSupport.FULL, Coverage.SASS)]
    assert [str(c.version) for c in catalog.for_name("torch")] == ["2.7.1+cpu"]
    assert [(str(c.version), c.variant, c.channel) for c in catalog.for_name("torchrec")] == [("1.2.0", None, "pypi")]
    gpu_only = [v.name for v in db.variants if v.cuda is not None]
    assert [(n, var, code) for n, _, var, code, _ in rejected(catalog) if n == CUDA] == [
        (CUDA, v, "no-gpu") for v in gpu_only  # a CUDA variant on a CPU target: said, not left unknown
    ]
    assert [(n, v, var, code, msg) for n, v, var, code, msg in rejected(catalog) if n != CUDA] == [
        (
            "torch",
            "2.8.0",
            "cpu",
            "variant-not-published",
            "torch 2.8.0 was not published for cpu; it exists for cu121",
        ),
        (
            "fbgemm-gpu",
            "1.2.0",
            "cpu",
            "variant-not-published",
            "fbgemm-gpu 1.2.0 was not published for cpu; it exists for cu118, cu121",
        ),
    ]


def test_python_without_wheels_rejects_every_build(db: CompatDB) -> None:
    target = Target(gpus=(Gpu(name="GPU", cc=parse_cc("8.0")),), driver=parse_driver("535.104.05"), python="3.13")
    catalog = build_catalog(db, target, ["torch"])
    assert catalog.for_name("torch") == ()
    assert {r.finding.code for r in catalog.rejections} == {"no-wheel-for-python"}
    assert catalog.rejections[0].finding.message == (
        "torch 2.8.0 has no wheel for Python 3.13; it has wheels for Python 3.11"
    )
    assert set(catalog.candidates) == {CUDA, CUDNN, "torch"}  # only the names asked for (and the virtual ones)


def test_dependencies_carry_the_variant_and_the_parent(db: CompatDB) -> None:
    catalog = build_catalog(db, host("8.0", "535.104.05"))
    fbgemm = catalog.for_name("fbgemm-gpu")[0]
    assert str(fbgemm.version) == "1.2.0+cu121"
    assert [(str(n), n.parent) for n in fbgemm.dependencies] == [
        ("torch==2.7.*", "fbgemm-gpu 1.2.0"),
        ("<cuda>==cu121", "fbgemm-gpu 1.2.0"),
    ]
    (torchrec,) = catalog.for_name("torchrec")
    assert [str(n) for n in torchrec.dependencies] == ["fbgemm-gpu==1.2.*", "torch==2.7.*"]


def test_satisfies_checks_name_variant_and_version(db: CompatDB) -> None:
    catalog = build_catalog(db, host("8.0", "470.129.06"))
    torch_121, _, torch_118 = catalog.for_name("torch")
    assert satisfies(Need(name="torch", specifier=SpecifierSet("==2.7.*")), torch_118)
    assert not satisfies(Need(name="torch", specifier=SpecifierSet("==2.7.*")), torch_121)  # 2.8.0+cu121
    assert satisfies(Need(name="torch", specifier=SpecifierSet("==2.8.0+cu121")), torch_121)
    assert not satisfies(Need(name="fbgemm-gpu"), torch_118)
    cu118 = catalog.for_name(CUDA)[0]
    assert satisfies(Need(name=CUDA, variant="cu118"), cu118)
    assert not satisfies(Need(name=CUDA, variant="cu121"), cu118)
    (rejection,) = catalog.rejections
    assert satisfies(Need(name=CUDA, variant="cu121"), rejection)
    assert not satisfies(Need(name=CUDA, variant="cu118"), rejection)


def test_candidate_rank_and_text() -> None:
    full = Candidate(name="torch", version=Version("2.7.1+cu118"), variant="cu118", index_url="u")
    minor = Candidate(
        name="torch",
        version=Version("2.7.1+cu118"),
        variant="cu118",
        index_url="u",
        driver_support=DriverSupport.MINOR,
        coverage=Coverage.PTX_JIT,
        channel="pypi",
    )
    assert (full.rank, minor.rank) == ((0, 0, 0), (1, 1, 0))  # the channel is the catalog's gpu_source's call
    assert str(full) == "torch 2.7.1+cu118"
    assert str(Candidate(name=CUDA, version=Version("11.8"), variant="cu118", index_url="u")) == "cu118"
    assert str(Need(name=CUDA, variant="cu118")) == "<cuda>==cu118"


def test_verified_builds_rank_before_unverified_ones_of_the_same_release_and_variant() -> None:
    """torch 2.13.0 on cu130: the PyTorch-index rows are ``verified = false``, the PyPI row is not."""
    db = load_compat()
    gpu = Gpu(name="NVIDIA H100 80GB HBM3", cc=parse_cc("9.0"), datacenter=True)
    catalog = build_catalog(db, Target(gpus=(gpu,), driver=parse_driver("580.65.06")), ["torch"])
    builds = [c for c in catalog.for_name("torch") if c.release is not None and str(c.release.version) == "2.13.0"]
    cu130 = [c for c in builds if c.variant == "cu130"]
    assert [c.build.verified for c in cu130 if c.build is not None] == [True, False]
    assert cu130[0].channel == "pypi" and cu130[0].rank < cu130[1].rank
