"""vLLM: the release whose exact torch pin and CUDA major the driver runs.

Each [[vllm]] row pins torch as the PyPI wheel's METADATA does and builds on that torch's PyPI
variant. Driver 570 runs CUDA 12.8 at most: the newest vLLM on a cu128 torch; driver 580 runs CUDA
13.0: the newest vLLM of all. The CLI test serves tiny wheels with the real file names and
Requires-Dist on 127.0.0.1 and locks both boxes from the same index.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex
from packaging.version import Version

from cudaresolve.db.cudamajor import major_of
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
from test_cuda_major import PROJECTS, TorchSource
from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.target.model import Target


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


def h100(db: CompatDB, driver: str, platform: str = "manylinux_2_35_x86_64") -> Target:  # glibc 2.35: Ubuntu 22.04
    return build_target(TargetOptions(gpus=("H100",), driver=driver, python="3.12", platform=platform), db)


def test_every_row_pins_torch_and_builds_on_its_pypi_variant(db: CompatDB) -> None:
    torch = {r.version: r for r in db.packages("torch")}
    for release in db.packages("vllm"):
        (pin,) = [r for r in release.requires if r.name == "torch"]
        (version,) = [Version(s.version) for s in pin.specifier]
        assert {b.variant for b in release.builds} == {torch[version].pypi_variant}, release.version  # per platform
        assert sorted(p for b in release.builds for p in b.platforms) == sorted(release.platforms), release.version


@pytest.mark.parametrize(
    ("driver", "platform", "vllm", "torch", "major"),
    [
        ("570.86.10", "manylinux_2_35_x86_64", "0.19.1", "2.10.0", 12),
        ("580.65.06", "manylinux_2_35_x86_64", "0.33.0", "2.14.0", 13),
        ("570.86.10", "linux_x86_64", "0.11.2", "2.9.0", 12),  # glibc 2.28 assumed: 0.12-0.19 need 2.31
    ],
)
def test_the_release_whose_torch_and_cuda_major_the_driver_runs(
    db: CompatDB, driver: str, platform: str, vllm: str, torch: str, major: int
) -> None:
    solution = solve(["vllm"], db, h100(db, driver, platform), source=TorchSource(db, PROJECTS)).solution
    pins = {p.name: p.version for p in solution.packages}
    assert (pins["vllm"], pins["torch"]) == (vllm, torch)
    assert {major_of(db.cuda_majors, n, v) for n, v in pins.items()} - {None} == {major}


@pytest.mark.parametrize(
    ("gpu", "driver", "platform", "vllm", "torch"),
    [
        # R575 runs CUDA 12.8 at most: the newest vLLM on a cu128 torch, whose aarch64 build is the PyTorch index's
        ("GB200", "575.57.08", "manylinux_2_35_aarch64", "0.19.1", "2.10.0+cu128"),
        ("GH200", "575.57.08", "linux_aarch64", "0.11.2", "2.9.0+cu128"),  # glibc 2.28 assumed: 0.12-0.19 need 2.31
        ("GH200", "580.65.06", "manylinux_2_35_aarch64", "0.33.0", "2.14.0"),  # PyPI's aarch64 torch is CUDA 13
    ],
)
def test_an_arm_server_locks_vllms_aarch64_build(
    db: CompatDB, gpu: str, driver: str, platform: str, vllm: str, torch: str
) -> None:
    target = build_target(TargetOptions(gpus=(gpu,), driver=driver, python="3.12", platform=platform), db)
    solution = solve(["vllm"], db, target, source=TorchSource(db, PROJECTS)).solution
    pins = {p.name: p.version for p in solution.packages}
    assert (pins["vllm"], pins["torch"]) == (vllm, torch)


def test_a_pinned_vllm_the_driver_cannot_run_names_the_driver(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as caught:
        solve(["vllm==0.33.0"], db, h100(db, "535.104.05"), source=TorchSource(db, PROJECTS))
    assert caught.value.findings[0].code == "driver-too-old"


def _index(root: Path) -> LocalIndex:
    """PyPI's side for two vLLM releases, every wheel under its real name with its real pins."""
    index = LocalIndex(root)
    abi3 = "cp38-abi3-manylinux_2_31_x86_64"
    cp312 = "cp312-cp312-manylinux_2_28_x86_64"
    index.add("pypi", "vllm", "0.19.1", tag=abi3, requires_python="<3.14,>=3.10", requires=[
        "torch==2.10.0", "torchaudio==2.10.0", "torchvision==0.25.0", "flashinfer-python==0.6.6",
        "flashinfer-cubin==0.6.6"])  # fmt: skip
    index.add("pypi", "vllm", "0.33.0", tag="cp38-abi3-manylinux_2_28_x86_64", requires_python="<3.15,>=3.11",
              requires=["torch==2.14.0", "torchaudio==2.11.0", "torchvision==0.29.0",
                        "flashinfer-python==0.7.2.post1"])  # fmt: skip
    index.add("pypi", "torch", "2.10.0", tag=cp312, requires=[
        'nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"'])
    toolkit = 'cuda-toolkit[cudart]==13.0.3; platform_system == "Linux"'
    index.add("pypi", "torch", "2.14.0", tag=cp312, requires=[toolkit])
    index.add("pypi", "cuda-toolkit", "13.0.3", tag="py2.py3-none-any",
              requires=["nvidia-cuda-runtime==13.0.96.*; (sys_platform == 'linux') and extra == 'cudart'"])
    index.add("pypi", "nvidia-cuda-runtime", "13.0.96", tag="py3-none-manylinux_2_27_x86_64")
    index.add("pypi", "nvidia-cuda-runtime-cu12", "12.8.90", tag="py3-none-manylinux_2_27_x86_64")
    for name, version, torch in (("torchaudio", "2.10.0", "==2.10.0"), ("torchvision", "0.25.0", "==2.10.0"),
                                 ("torchaudio", "2.11.0", ""), ("torchvision", "0.29.0", ">=2.14.0")):
        index.add("pypi", name, version, tag=cp312, requires=[f"torch{torch}"] if torch else [])
    index.add("pypi", "flashinfer-python", "0.6.6", requires=["torch"])
    index.add("pypi", "flashinfer-python", "0.7.2.post1", requires=["torch"])
    index.add("pypi", "flashinfer-cubin", "0.6.6")
    return index


def test_lock_from_a_local_index_on_570_and_on_580(tmp_path: Path) -> None:
    index = _index(tmp_path / "index")
    found = {}
    with index.serve() as base:
        for driver in ("570.86.10", "580.65.06"):
            cwd = tmp_path / driver
            cwd.mkdir()
            args = ["--gpu", "H100", "--driver", driver, "--python-version", "3.12", "--platform",
                    "manylinux_2_35_x86_64"]  # fmt: skip
            mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
            result = run_cli(["lock", "vllm", *args, mirror, "--gpu-source", "pypi", "--json"], cwd, tmp_path / "c")
            assert result.returncode == 0, result.stdout + result.stderr
            out = json.loads(result.stdout)
            assert out["complete"] is True
            found[driver] = {p["name"]: p["version"] for p in out["packages"]}
    assert found["570.86.10"]["vllm"] == "0.19.1" and found["570.86.10"]["torch"] == "2.10.0"
    assert "nvidia-cuda-runtime-cu12" in found["570.86.10"] and "cuda-toolkit" not in found["570.86.10"]
    assert found["580.65.06"]["vllm"] == "0.33.0" and found["580.65.06"]["torch"] == "2.14.0"
    assert found["580.65.06"]["nvidia-cuda-runtime"] == "13.0.96"
    assert "nvidia-cuda-runtime-cu12" not in found["580.65.06"]
