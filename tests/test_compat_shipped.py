"""The shipped database: it validates fully, and the invariants the tool relies on hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import Version

from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.files import CACHE_MARK
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.db.cache import SUBDIR
from cudaresolve.db.database import load_compat

if TYPE_CHECKING:
    from pathlib import Path


def test_shipped_file_validates_completely() -> None:
    db = load_compat(validate=True)
    assert db.schema_version == 1
    assert len(db.gpus) >= 60


def test_trusted_cold_warm_and_validated_loads_agree(tmp_path: Path) -> None:
    cold = load_compat(cache_dir=tmp_path)  # parses the TOML and writes the cache entry
    (entry,) = (p for p in (tmp_path / SUBDIR).iterdir() if p.name != CACHE_MARK)
    warm = load_compat(cache_dir=tmp_path)  # reads the entry
    assert cold == warm == load_compat(validate=True, cache_dir=tmp_path)
    assert cold is not warm
    assert sorted(e.name for e in (tmp_path / SUBDIR).iterdir()) == sorted([entry.name, CACHE_MARK])
    assert warm.package_names == cold.package_kinds  # every table has rows, in the file's order
    # 298 + 36 vllm + 6 flash-attn + 37 sglang + 11 sgl-kernel + 10 sglang-kernel + 10 fbgemm-gpu-genai + 10 pages
    assert sum(len(warm.packages(kind)) for kind in warm.package_kinds) == 418


def test_facts_of_the_index_and_packages_tables() -> None:
    db = load_compat()
    assert db.default_index == "https://pypi.org/simple"
    assert db.pytorch_index_root == "https://download.pytorch.org/whl"
    assert db.anchor == "torch"
    assert db.package_kinds[:3] == ("torch", "torchvision", "torchaudio")
    assert all(v.index_url == f"{db.pytorch_index_root}/{v.name}" for v in db.variants)
    forward = db.forward_compat_for(12)
    assert forward is not None and forward.package_for(CudaVersion(12, 8)) == "cuda-compat-12-8"


def test_every_cuda_toolkit_from_11_0_to_13() -> None:
    versions = {r.version for r in load_compat().cuda}
    assert {CudaVersion(11, m) for m in range(9)} <= versions
    assert {CudaVersion(12, m) for m in (0, 1, 2, 3, 4, 5, 6, 8, 9)} <= versions
    assert CudaVersion(13, 0) in versions


def test_required_gpus_are_known_with_their_capability() -> None:
    db = load_compat()
    expected = {
        "GeForce GTX 1080 Ti": "6.1",
        "Tesla P100": "6.0",
        "V100": "7.0",
        "T4": "7.5",
        "RTX 2080": "7.5",
        "RTX 3090": "8.6",
        "RTX 4090": "8.9",
        "RTX 5090": "12.0",
        "A100": "8.0",
        "A800": "8.0",
        "A10": "8.6",
        "A30": "8.0",
        "A40": "8.6",
        "L4": "8.9",
        "L20": "8.9",
        "L40": "8.9",
        "L40S": "8.9",
        "H100": "9.0",
        "H800": "9.0",
        "H20": "9.0",
        "H200": "9.0",
        "GH200": "9.0",
        "B200": "10.0",
        "B300": "10.3",
        "GB200": "10.0",
        "RTX PRO 6000 Blackwell": "12.0",
        "Jetson AGX Orin": "8.7",
        "GB10": "12.1",
    }
    for name, cc in expected.items():
        gpu = db.find_gpu(name)
        assert gpu is not None, name
        assert str(gpu.cc) == cc, name
    assert db.find_gpu("A800").datacenter and not db.find_gpu("RTX 3090").datacenter
    assert db.find_gpu("Jetson AGX Orin").tegra


def test_minor_version_floors() -> None:
    db = load_compat()
    assert str(db.cuda_release(CudaVersion(11, 8)).minor_compat_driver_linux) == "450.80.02"
    assert str(db.cuda_release(CudaVersion(12, 1)).minor_compat_driver_linux) == "525.60.13"
    assert db.max_cuda_for_driver(parse_driver("470.129.06")) == CudaVersion(11, 4)


def test_torch_rows_cover_2_0_to_newest_with_sourced_builds() -> None:
    releases = load_compat().packages("torch")
    assert str(releases[-1].version) == "2.0.0"
    for release in releases:
        assert release.source
        for build in release.builds:
            assert build.source
            if build.variant != "cpu":
                assert build.sass or build.ptx


def test_xformers_pin_rule() -> None:
    for release in load_compat().packages("xformers"):
        torch = [r for r in release.requires if r.name == "torch"]
        assert torch, release.version
        if release.version.release <= (0, 0, 34):
            assert any(s.operator == "==" for s in torch[0].specifier), release.version
    newest = load_compat().packages("xformers")[0]
    assert newest.version >= Version("0.0.35")  # as versions: "0.0.4" > "0.0.35" as strings


def test_flashinfer_minimum_sm() -> None:
    db = load_compat()
    releases = db.packages("flashinfer-python")
    assert releases
    assert {r.min_sm for r in releases} == {ComputeCapability(7, 5)}  # every release states it
    assert db.min_sm("flashinfer-python") == ComputeCapability(7, 5)
