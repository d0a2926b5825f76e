"""SGLang: the release whose exact torch pin, kernel package and CUDA major the driver runs.

Each [[sglang]] row pins torch and its kernel package (sgl-kernel, then sglang-kernel) as the
wheel's METADATA does; each kernel row builds on the pinned torch's PyPI variant. Driver 570 runs
CUDA 12.8 at most: the newest sglang on a cu128 torch (0.5.10.post1, torch 2.9.1); driver 580 runs
CUDA 13.0: the newest of all, when the box's glibc meets its manylinux_2_34 wheel. The CLI test
serves tiny wheels under the real file names with the real Requires-Dist on 127.0.0.1.
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

KERNELS = ("sgl-kernel", "sglang-kernel")


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


def h100(db: CompatDB, driver: str, platform: str = "manylinux_2_35_x86_64", python: str = "3.12") -> Target:
    return build_target(TargetOptions(gpus=("H100",), driver=driver, python=python, platform=platform), db)


def test_every_row_pins_torch_and_a_kernel_built_on_that_torchs_pypi_variant(db: CompatDB) -> None:
    torch = {r.version: r for r in db.packages("torch")}
    kernels = {(k, r.version): r for k in KERNELS for r in db.packages(k)}
    assert len(db.packages("sglang")) >= 30 and len(kernels) >= 20
    for release in db.packages("sglang"):
        pins = {r.name: Version(next(iter(r.specifier)).version) for r in release.requires}
        (kernel,) = [n for n in pins if n in KERNELS]
        paired = kernels[(kernel, pins[kernel])]
        (kernel_torch,) = [Version(next(iter(r.specifier)).version) for r in paired.requires if r.name == "torch"]
        assert kernel_torch == pins["torch"], release.version  # the kernel is built against sglang's torch
        # one build per platform (linux_x86_64, linux_aarch64), each on the same CUDA major, so torch's PyPI variant
        assert {b.variant for b in paired.builds} == {torch[pins["torch"]].pypi_variant}, paired.version
        assert sorted(p for b in paired.builds for p in b.platforms) == sorted(paired.platforms), paired.version


@pytest.mark.parametrize(
    ("driver", "platform", "python", "sglang", "torch", "kernel", "major"),
    [
        ("570.86.10", "manylinux_2_35_x86_64", "3.12", "0.5.10.post1", "2.9.1", ("sglang-kernel", "0.4.1"), 12),
        ("580.65.06", "manylinux_2_35_x86_64", "3.12", "0.5.23", "2.14.1", ("sglang-kernel", "0.4.10"), 13),
        # glibc 2.28 assumed: the manylinux_2_34 wheels from 0.5.11 on do not install; the last pure wheel does
        ("580.65.06", "linux_x86_64", "3.12", "0.5.10.post1", "2.9.1", ("sglang-kernel", "0.4.1"), 12),
        ("580.65.06", "manylinux_2_35_x86_64", "3.10", "0.5.21", "2.13.0", ("sglang-kernel", "0.4.7"), 13),
    ],
)
def test_the_release_whose_torch_and_cuda_major_the_driver_runs(
    db: CompatDB, driver: str, platform: str, python: str, sglang: str, torch: str, kernel: tuple[str, str], major: int
) -> None:
    target = h100(db, driver, platform, python)
    solution = solve(["sglang"], db, target, source=TorchSource(db, PROJECTS)).solution
    pins = {p.name: p.version for p in solution.packages}
    assert (pins["sglang"], pins["torch"], pins[kernel[0]]) == (sglang, torch, kernel[1])
    assert {major_of(db.cuda_majors, n, v) for n, v in pins.items()} - {None} == {major}


@pytest.mark.parametrize(
    ("gpu", "platform", "sglang", "torch", "kernel"),
    [
        # PyPI's aarch64 torch 2.14.1 is a CUDA 13 build; sglang-kernel 0.4.10's aarch64 wheel has sm_90 and sm_100f
        ("GH200", "manylinux_2_35_aarch64", "0.5.23", "2.14.1", "0.4.10"),
        # glibc 2.28 assumed: the last pure sglang; sglang-kernel 0.4.1's aarch64 wheel is CUDA 12, on torch's cu128
        # aarch64 build from the PyTorch index (PyPI's aarch64 torch 2.9.1 is a CPU build)
        ("GB200", "linux_aarch64", "0.5.10.post1", "2.9.1+cu128", "0.4.1"),
    ],
)
def test_an_arm_server_locks_the_kernels_aarch64_build(
    db: CompatDB, gpu: str, platform: str, sglang: str, torch: str, kernel: str
) -> None:
    target = build_target(TargetOptions(gpus=(gpu,), driver="580.65.06", python="3.12", platform=platform), db)
    solution = solve(["sglang"], db, target, source=TorchSource(db, PROJECTS)).solution
    pins = {p.name: p.version for p in solution.packages}
    assert (pins["sglang"], pins["torch"], pins["sglang-kernel"]) == (sglang, torch, kernel)


def test_a_pinned_sglang_the_driver_cannot_run_names_the_driver(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as caught:
        solve(["sglang==0.5.23"], db, h100(db, "535.104.05"), source=TorchSource(db, PROJECTS))
    assert caught.value.findings[0].code == "driver-too-old"


def test_a_kernel_against_another_torch_is_refused(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as caught:
        solve(["sglang==0.5.23", "torch==2.13.0"], db, h100(db, "580.65.06"), source=TorchSource(db, PROJECTS))
    assert caught.value.findings[0].code in ("pin-conflict", "request-conflict")


def _index(root: Path) -> LocalIndex:
    """PyPI's side for two sglang releases, every wheel under its real name with its real pins."""
    index = LocalIndex(root)
    abi3 = "cp310-abi3-manylinux2014_x86_64"
    cp312 = "cp312-cp312-manylinux_2_28_x86_64"
    index.add("pypi", "sglang", "0.5.10.post1", requires_python=">=3.10", requires=[
        "cuda-python==12.9", "flashinfer_python==0.6.7.post3", "sglang-kernel==0.4.1", "torch==2.9.1"])  # fmt: skip
    index.add("pypi", "sglang", "0.5.23", tag="cp312-cp312-manylinux_2_34_x86_64", requires_python=">=3.11",
              requires=["cuda-python>=13.0", "flashinfer_python[cu13]==0.7.2", "sglang-kernel==0.4.10",
                        "torch==2.14.1"])  # fmt: skip
    index.add("pypi", "sglang-kernel", "0.4.1", tag=abi3, requires_python=">=3.10")
    index.add("pypi", "sglang-kernel", "0.4.10", tag=abi3, requires_python=">=3.10", requires=["torch==2.14.1"])
    index.add(
        "pypi",
        "torch",
        "2.9.1",
        tag=cp312,
        requires=['nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"'],
    )
    index.add(
        "pypi", "torch", "2.14.1", tag=cp312, requires=['cuda-toolkit[cudart]==13.0.3; platform_system == "Linux"']
    )
    index.add(
        "pypi",
        "cuda-toolkit",
        "13.0.3",
        tag="py2.py3-none-any",
        requires=["nvidia-cuda-runtime==13.0.96.*; (sys_platform == 'linux') and extra == 'cudart'"],
    )
    index.add("pypi", "nvidia-cuda-runtime", "13.0.96", tag="py3-none-manylinux_2_27_x86_64")
    index.add("pypi", "nvidia-cuda-runtime-cu12", "12.8.90", tag="py3-none-manylinux_2_27_x86_64")
    for version in ("12.9.0", "13.0.0"):
        index.add("pypi", "cuda-python", version)
    for version in ("0.6.7.post3", "0.7.2"):
        index.add("pypi", "flashinfer-python", version, requires=["torch"])
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
            result = run_cli(["lock", "sglang", *args, mirror, "--gpu-source", "pypi", "--json"], cwd, tmp_path / "c")
            assert result.returncode == 0, result.stdout + result.stderr
            out = json.loads(result.stdout)
            assert out["complete"] is True
            found[driver] = {p["name"]: p["version"] for p in out["packages"]}
    old, new = found["570.86.10"], found["580.65.06"]
    assert (old["sglang"], old["torch"], old["sglang-kernel"]) == ("0.5.10.post1", "2.9.1", "0.4.1")
    assert "nvidia-cuda-runtime-cu12" in old and "nvidia-cuda-runtime" not in old
    assert (new["sglang"], new["torch"], new["sglang-kernel"]) == ("0.5.23", "2.14.1", "0.4.10")
    assert new["nvidia-cuda-runtime"] == "13.0.96" and "nvidia-cuda-runtime-cu12" not in new


@pytest.mark.parametrize(("gpu", "sglang"), [("B200", "0.5.23"), ("RTX 5090", "0.5.23"), ("A100", "0.5.23")])
def test_the_kernels_common_ops_list_covers_blackwell(db: CompatDB, gpu: str, sglang: str) -> None:
    """The list is common_ops' (sm_100a/f, sm_120a ...), not flash_ops' FA3 list (sm_80 sm_86 sm_90a)."""
    target = build_target(
        TargetOptions(gpus=(gpu,), driver="580.65.06", python="3.12", platform="manylinux_2_35_x86_64"), db
    )
    pins = {
        p.name: p.version for p in solve(["sglang"], db, target, source=TorchSource(db, PROJECTS)).solution.packages
    }
    assert pins["sglang"] == sglang


def test_a_gpu_older_than_every_kernel_is_refused(db: CompatDB) -> None:
    target = build_target(TargetOptions(gpus=("V100",), driver="580.65.06", python="3.12",
                                        platform="manylinux_2_35_x86_64"), db)  # fmt: skip
    with pytest.raises(NoSolution) as caught:
        solve(["sglang"], db, target, source=TorchSource(db, PROJECTS))
    assert caught.value.findings[0].code in ("sm-not-covered", "gpu-too-old")
    assert {f.package for f in caught.value.findings} & set(KERNELS)
