"""The shared ways out on tests/fixtures/compat-mini.toml: the best variant for a driver, releases with native code."""

# ruff: noqa: RUF001  (the Chinese messages use full-width punctuation on purpose)

from __future__ import annotations

from pathlib import Path

import pytest

from cudaresolve.advice.releases import release_fixes, releases_fix, releases_with_sass
from cudaresolve.advice.variants import (
    VariantFit,
    best_variant,
    driver_cuda_max,
    newest_variant,
    variant_fix,
    variant_fixes,
)
from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.db.database import CompatDB, DriverSupport, load_compat
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"
SM80, SM61 = parse_cc("8.0"), parse_cc("6.1")
R470 = parse_driver("470.129.06")


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(MINI)


def fit(found: VariantFit | None) -> tuple[str, DriverSupport] | None:
    return (found.variant.name, found.support) if found is not None else None


# -- the best variant a driver runs -----------------------------------------------------------


def test_newest_variant_ignores_cpu(db: CompatDB) -> None:
    newest = newest_variant(db.variants)
    assert newest is not None and newest.name == "cu121"
    assert newest_variant(v for v in db.variants if v.name == "cpu") is None


def test_best_variant_full_then_minor_then_none(db: CompatDB) -> None:
    assert fit(best_variant(db, cuda_max=CudaVersion(12, 1), driver=None)) == ("cu121", DriverSupport.FULL)
    assert fit(best_variant(db, cuda_max=CudaVersion(12, 0), driver=None)) == ("cu118", DriverSupport.FULL)
    # driver 470 runs CUDA 11.4 fully: no variant that old, but cu118 through minor-version compatibility
    assert fit(best_variant(db, cuda_max=CudaVersion(11, 4), driver=R470)) == ("cu118", DriverSupport.MINOR)
    assert best_variant(db, cuda_max=None, driver=parse_driver("418.87.01")) is None
    assert best_variant(db, cuda_max=None, driver=None) is None


def test_variant_fix_in_both_languages(db: CompatDB) -> None:
    full = best_variant(db, cuda_max=CudaVersion(12, 1), driver=None)
    minor = best_variant(db, cuda_max=CudaVersion(11, 4), driver=R470)
    assert full is not None and minor is not None
    assert format_text(variant_fix(full)) == (
        "Install builds for cu121 (CUDA 12.1), the newest variant this driver fully supports:"
        " cudaresolve install torch (with the GPU packages you use) takes them from PyPI or"
        " https://download.pytorch.org/whl/cu121, whichever serves them and answers, and keeps each paired with torch"
    )
    assert format_text(variant_fix(minor), "zh") == (
        "安装 cu118（CUDA 11.8）构建；该驱动只能借助小版本兼容性运行它们，需要从 PTX 即时编译的代码可能失败："
        "cudaresolve install torch（连同所用的其他 GPU 包）会从 PyPI 或 https://download.pytorch.org/whl/cu118 "
        "中提供这些构建且能访问的那个安装它们，并让每个包与 torch 保持配对"
    )


def test_variant_fixes_without_database_or_variant(db: CompatDB) -> None:
    assert [format_text(t) for t in variant_fixes(None, CudaVersion(11, 4), None)] == [
        "Install builds made for CUDA 11.4 or older."
    ]
    assert [format_text(t) for t in variant_fixes(db, None, parse_driver("418.87.01"))] == [
        "No variant in the database runs on driver 418.87.01; upgrade the driver."
    ]
    assert variant_fixes(db, None, None) == []
    assert variant_fixes(None, None, None) == []


def test_driver_cuda_max_prefers_the_target(db: CompatDB) -> None:
    gpu = (Gpu(name="GPU", cc=SM80),)
    with_driver = Target(gpus=gpu, driver=parse_driver("535.104.05"))
    assert driver_cuda_max(with_driver, db) == (CudaVersion(12, 1), with_driver.driver)
    assert driver_cuda_max(with_driver, None) == (None, with_driver.driver)
    reported = Target(gpus=gpu, cuda_driver_max=CudaVersion(12, 4))
    assert driver_cuda_max(reported, db, CudaVersion(11, 0)) == (CudaVersion(12, 4), None)
    assert driver_cuda_max(None, db, CudaVersion(11, 4)) == (CudaVersion(11, 4), None)


# -- releases with native code ----------------------------------------------------------------


def releases(db: CompatDB, package: str, *ccs: object, **filters: object) -> list[tuple[str, tuple[str, ...]]]:
    found = releases_with_sass(db, package, ccs, **filters)  # type: ignore[arg-type]
    return [(str(r.version), r.variants) for r in found]


def test_releases_with_sass_newest_first(db: CompatDB) -> None:
    assert releases(db, "torch", SM80) == [("2.8.0", ("cu121",)), ("2.7.1", ("cu118", "cu121"))]
    # sm_60 code runs on a 6.1 GPU (same major, lower minor); torch 2.8.0 carries only sm_80
    assert releases(db, "torch", SM61) == [("2.7.1", ("cu118", "cu121"))]
    assert releases(db, "torch", SM80, SM61) == [("2.7.1", ("cu118", "cu121"))]
    assert releases(db, "torch", SM80, limit=1) == [("2.8.0", ("cu121",))]
    assert releases(db, "fbgemm-gpu", SM61) == []
    assert releases(db, "xformers", SM80) == []


def test_releases_with_sass_filters(db: CompatDB) -> None:
    assert releases(db, "torch", SM61, tegra=True) == []  # Tegra runs only an exact SM match
    assert releases(db, "torch", SM80, python="3.12") == []
    assert releases(db, "torch", SM80, python="3.11") == [("2.8.0", ("cu121",)), ("2.7.1", ("cu118", "cu121"))]
    assert releases(db, "torch", SM80, platform="win_amd64") == []
    assert releases(db, "torch", SM80, platform="linux_x86_64") == [
        ("2.8.0", ("cu121",)),
        ("2.7.1", ("cu118", "cu121")),
    ]


def test_releases_fix_in_both_languages(db: CompatDB) -> None:
    text = releases_fix("torch", [SM80], releases_with_sass(db, "torch", [SM80]))
    assert format_text(text) == "torch releases with native code for sm_80: 2.8.0 (cu121); 2.7.1 (cu118, cu121)."
    assert format_text(text, "zh") == "包含 sm_80 原生代码的 torch 版本：2.8.0（cu121）；2.7.1（cu118、cu121）。"


def test_release_fixes_per_package(db: CompatDB) -> None:
    fixes = release_fixes(db, ["fbgemm-gpu", "torch", "xformers"], [SM61])
    assert [format_text(t) for t in fixes] == [
        "No fbgemm-gpu wheel in the database has native code for sm_61.",
        "torch releases with native code for sm_61: 2.7.1 (cu118, cu121).",
    ]
    assert release_fixes(db, ["torch"], []) == []
