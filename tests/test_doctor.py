"""doctor on fake environments: dist-info and real fatbin fixtures placed where the wheels put them."""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import copy
import json
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from cudaresolve.binaries.fatbin import FatbinEntry, FatbinListing
from cudaresolve.binaries.report import BinaryReport
from cudaresolve.core.archs import ComputeCapability, Coverage
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.db.database import CompatDB, DriverSupport
from cudaresolve.doctor.check import diagnose
from cudaresolve.doctor.environment import (
    check_environment,
    find_site_packages,
    parse_local_variant,
    parse_runtime_cuda,
    parse_torch_version_py,
    read_environment,
    read_pt2,
)
from cudaresolve.doctor.report import DoctorReport, Environment, InstalledPackage, Problem
from cudaresolve.errors import InvalidInput
from cudaresolve.render import plain
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text as words

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
URL = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/"


def _cuda(version: str, full: str, floor: str) -> dict[str, Any]:
    return {"version": version, "min-driver-linux": full, "minor-compat-driver-linux": floor,
            "nvcc-sm": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"], "source": URL}


def _variant(name: str, cuda: str) -> dict[str, Any]:
    return {"name": name, "cuda": cuda, "index-url": f"https://download.pytorch.org/whl/{name}", "source": "s"}


# A small database: fbgemm-gpu 1.X pairs with torch 2.(X+5), torchrec X.Y with fbgemm-gpu X.Y.
DB_DATA: dict[str, Any] = {
    "schema-version": 1,
    "index": {"default": "https://pypi.org/simple", "pytorch-root": "https://download.pytorch.org/whl",
              "allowed-hosts": ["download.pytorch.org", "pypi.org", "flashinfer.ai"], "source": "s"},
    "packages": {"tables": ["torch", "torchvision", "torchaudio", "fbgemm-gpu", "torchrec", "xformers", "flashinfer",
                            "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"],
                 "anchor": "torch", "source": "s"},
    "cuda": [_cuda("13.0", "580.65.06", "580.65.06"), _cuda("12.6", "560.28.03", "525.60.13"),
             _cuda("12.1", "530.30.02", "525.60.13"), _cuda("11.8", "520.61.05", "450.80.02")],
    "gpu": [{"name": "NVIDIA A100", "aliases": ["A100-SXM4-80GB"], "cc": "8.0", "arch": "Ampere",
             "datacenter": True, "source": "s"},
            {"name": "NVIDIA GeForce RTX 3090", "aliases": ["RTX 3090"], "cc": "8.6", "arch": "Ampere",
             "datacenter": False, "source": "s"}],
    "variant": [_variant("cu130", "13.0"), _variant("cu126", "12.6"), _variant("cu121", "12.1"),
                _variant("cu118", "11.8")],
    "torch": [
        {"version": "2.7.1", "python": ["3.11"], "pypi-variant": "cu126", "source": "s", "build": [
            {"variant": "cu126", "channel": "pypi", "sass": ["sm_80", "sm_90"]},
            {"variant": "cu118", "sass": ["sm_80", "sm_90"]}]},
        {"version": "2.6.0", "python": ["3.11"], "source": "s", "build": [{"variant": "cu118", "sass": ["sm_80"]}]},
    ],
    "fbgemm-gpu": [
        {"version": "1.2.0", "python": ["3.11"], "requires": ["torch==2.7.*"], "pypi-variant": "cu126", "source": "s",
         "build": [{"variant": "cu126", "channel": "pypi", "sass": ["sm_80", "sm_90a"]},
                   {"variant": "cu118", "sass": ["sm_70", "sm_80", "sm_90"]}]},
        {"version": "1.1.0", "python": ["3.11"], "requires": ["torch==2.6.*"], "source": "s",
         "build": [{"variant": "cu118", "sass": ["sm_70", "sm_80"]}]},
    ],
    "torchrec": [
        {"version": "1.2.0", "python": ["3.11"], "requires": ["fbgemm-gpu==1.2.*", "torch==2.7.*"], "source": "s"},
        {"version": "1.1.0", "python": ["3.11"], "requires": ["fbgemm-gpu==1.1.*", "torch==2.6.*"], "source": "s"},
    ],
    "flashinfer": [
        {"version": "0.2.0", "python": ["3.11"], "min-sm": "7.5", "source": "s", "build": [
            {"variant": "cu118", "index-url": "https://flashinfer.ai/whl/cu118/torch2.7/", "local": "+cu118torch2.7",
             "sass": ["sm_75", "sm_80"], "requires": ["torch==2.7.*"]},
            {"variant": "cu118", "index-url": "https://flashinfer.ai/whl/cu118/torch2.6/", "local": "+cu118torch2.6",
             "sass": ["sm_75", "sm_80"], "requires": ["torch==2.6.*"]}]},
    ],
    "xformers": [
        {"version": "0.0.31", "python": ["3.11"], "requires": ["torch==2.7.1"], "min-sm": "7.5", "source": "s",
         "build": [{"variant": "cu126", "channel": "pypi", "sass": ["sm_75", "sm_80"], "ptx": ["compute_80"]}]},
    ],
}
KINDS = tuple(DB_DATA["packages"]["tables"])

A100 = Gpu(name="NVIDIA A100", cc=ComputeCapability(8, 0), datacenter=True)
RTX3090 = Gpu(name="NVIDIA GeForce RTX 3090", cc=ComputeCapability(8, 6))


@pytest.fixture
def db() -> CompatDB:
    return CompatDB.from_dict(copy.deepcopy(DB_DATA))


def make_target(*gpus: Gpu, driver: str | None = "535.104.05") -> Target:
    return Target(gpus=gpus, driver=parse_driver(driver) if driver else None, platform="linux_x86_64",
                  python="3.11")


def make_dist(site: Path, name: str, version: str, files: dict[str, str | Path] | None = None) -> Path:
    """A dist-info (METADATA, RECORD) and its files, as pip would leave them in ``site``."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    rows = []
    for rel, source in (files or {}).items():
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(source, Path):
            shutil.copyfile(source, dest)
        else:
            dest.write_text(source)
        rows.append(f"{rel},,")
    rows += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return info


def torch_files(lib: str = "uncompressed.so", cuda: str = "'12.6'") -> dict[str, str | Path]:
    """torch's layout: the CUDA code in torch/lib/libtorch_cuda.so, the build facts in torch/version.py."""
    return {
        "torch/__init__.py": "raise SystemExit('the doctor must not import torch')\n",
        "torch/version.py": f"__version__ = '2.7.1'\ndebug = False\ncuda: Optional[str] = {cuda}\n"
                            "git_version = 'e2d141dbde55'\nhip: Optional[str] = None\n",
        "torch/lib/libtorch_cuda.so": FIXTURES / lib,
        "torch/lib/libc10.so": FIXTURES / "nogpu.so",
    }


def codes(problems: tuple[Problem, ...]) -> list[tuple[str, str | None, str | None]]:
    return [(p.code, p.required, p.found) for p in problems]


def package(report: DoctorReport, name: str) -> Any:
    return next(p for p in report.packages if p.name == name)


# -- the "done" case: a library without code for a GPU, and fbgemm-gpu built for another torch --


def test_library_without_code_for_a_gpu_and_fbgemm_built_for_another_torch(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    make_dist(tmp_path, "fbgemm-gpu", "1.1.0+cu118", {"fbgemm_gpu/__init__.py": "",
                                                       "fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "rdc.so"})
    make_dist(tmp_path, "nvidia-cuda-runtime-cu11", "11.8.89")
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100, RTX3090), db)

    torch = package(report, "torch")
    assert (torch.version, torch.variant, torch.sass, torch.ptx) == (
        "2.7.1+cu118", "cu118", ("sm_80",), ("compute_80",))
    assert [(lib.path, lib.coverage) for lib in torch.libraries] == [
        (str(tmp_path / "torch/lib/libtorch_cuda.so"),
         ((ComputeCapability(8, 0), Coverage.SASS), (ComputeCapability(8, 6), Coverage.SASS))),
    ]
    assert torch.problems == ()

    fbgemm = package(report, "fbgemm-gpu")
    assert (fbgemm.variant, fbgemm.sass, fbgemm.ptx) == ("cu118", ("sm_86",), ())
    assert fbgemm.coverage == ((ComputeCapability(8, 0), Coverage.NONE), (ComputeCapability(8, 6), Coverage.SASS))
    assert codes(fbgemm.problems) == [("sm-not-covered", "8.0", "sm_86"),
                                      ("abi-mismatch", "torch 2.6.*", "torch 2.7.1+cu118")]
    missing, mismatch = fbgemm.problems
    assert words(missing.text) == ("fbgemm-gpu 1.1.0+cu118 (cu118) has no code for sm_80 (NVIDIA A100, compute "
                                 "capability 8.0); it carries sm_86")
    assert missing.libraries == (str(tmp_path / "fbgemm_gpu/fbgemm_gpu_py.so"),)
    assert [words(f) for f in missing.fixes] == [
        "fbgemm-gpu releases with native code for sm_80, sm_86: 1.2.0 (cu118, cu126); 1.1.0 (cu118).",
        "Run 'cudaresolve lock fbgemm-gpu --gpu 8.0 --gpu 8.6 --driver 535.104.05' to pick builds with native "
        "code for every GPU here, then 'cudaresolve install' to install them.",
        'Build fbgemm-gpu from source with TORCH_CUDA_ARCH_LIST="8.0;8.6" so that it carries code for these GPUs.',
    ]
    assert words(mismatch.text) == (
        "fbgemm-gpu 1.1.0+cu118 was built for torch 2.6.*, but torch 2.7.1+cu118 is installed")
    assert [words(f) for f in mismatch.fixes] == [
        "Install fbgemm-gpu==1.2.0, the fbgemm-gpu release paired with torch 2.7.1+cu118.",
        "Alternatively install torch 2.6.*, the version that fbgemm-gpu 1.1.0+cu118 is paired with.",
        "Install torch and fbgemm-gpu together: cudaresolve install torch fbgemm-gpu (with the other GPU packages "
        "you use) takes a matching set from one index, PyPI or "
        "https://download.pytorch.org/whl/<variant>, whichever serves "
        "it and answers.",
    ]
    assert [(r.name, r.cuda, r.support) for r in report.runtimes] == [
        ("nvidia-cuda-runtime-cu11", CudaVersion(11, 8), DriverSupport.FULL)]
    assert report.problems == ()
    assert report.ok is False


def test_all_ok_environment(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1", torch_files())  # PyPI: the variant is in torch/version.py
    make_dist(tmp_path, "fbgemm-gpu", "1.2.0", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "compress-size.so"})
    make_dist(tmp_path, "torchrec", "1.2.0", {"torchrec/__init__.py": ""})
    make_dist(tmp_path, "nvidia-cuda-runtime-cu12", "12.6.77")
    make_dist(tmp_path, "nvidia-cublas-cu12", "12.6.4.1")
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100, RTX3090, driver="560.35.03"), db,
                      environ={"TORCH_CUDA_ARCH_LIST": "8.0;8.6"})
    assert [(p.name, p.version, p.variant, p.problems, p.notes) for p in report.packages] == [
        ("torch", "2.7.1", "cu126", (), ()),
        ("fbgemm-gpu", "1.2.0", "cu126", (), ()),  # PyPI's variant for 1.2.0, per the database
        ("torchrec", "1.2.0", None, (), ()),
    ]
    assert package(report, "torchrec").coverage == ()
    assert [(r.name, r.support) for r in report.runtimes] == [("nvidia-cuda-runtime-cu12", DriverSupport.FULL)]
    assert report.cuda_packages == (("nvidia-cublas-cu12", "12.6.4.1"), ("nvidia-cuda-runtime-cu12", "12.6.77"))
    assert report.all_problems == ()
    assert report.ok is True
    assert "torch" not in sys.modules  # its fake __init__.py would have raised SystemExit


def test_a_dist_info_metadata_is_read_by_our_header_reader_not_the_email_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the adversarial hunt: a METADATA of 3,000,000 header lines (51 MB, within the 64 MiB bound) held
    doctor for three minutes: importlib's ``metadata`` runs the email parser over the whole file, again for each
    of Name, Version and Requires-Dist. A ``.dist-info`` is read once, by the header reader install uses."""
    import importlib.metadata

    from cudaresolve.binaries.linkage import check_environment

    make_dist(tmp_path, "torch", "2.7.1", torch_files())
    make_dist(tmp_path, "fbgemm-gpu", "1.2.0", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "compress-size.so"})

    def parsed(self: object) -> None:
        raise AssertionError("the email parser read a .dist-info METADATA")

    monkeypatch.setattr(importlib.metadata.Distribution, "metadata", property(parsed))
    environment = read_environment([tmp_path], KINDS)
    assert [(p.name, p.version) for p in environment.packages] == [("torch", "2.7.1"), ("fbgemm-gpu", "1.2.0")]
    assert environment.damaged == ()
    check_environment([tmp_path])


def test_torch_built_for_the_cpu_on_a_gpu_target(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1", {"torch/version.py": "cuda: Optional[str] = None\nhip = None\n",
                                           "torch/lib/libtorch_cpu.so": FIXTURES / "nogpu.so"})
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    torch = package(report, "torch")
    assert (torch.variant, torch.libraries, codes(torch.problems)) == ("cpu", (), [("sm-not-covered", None, "cpu")])
    assert words(torch.problems[0].text) == "torch 2.7.1 is a CPU-only build: it cannot use NVIDIA A100"


# -- torch pairings ---------------------------------------------------------------------------


def test_torchrec_paired_with_another_fbgemm(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    make_dist(tmp_path, "fbgemm-gpu", "1.2.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "uncompressed.so"})
    make_dist(tmp_path, "torchrec", "1.1.0")
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    torchrec = package(report, "torchrec")
    assert codes(torchrec.problems) == [("abi-mismatch", "fbgemm-gpu 1.1.*", "fbgemm-gpu 1.2.0+cu118"),
                                        ("abi-mismatch", "torch 2.6.*", "torch 2.7.1+cu118")]
    assert words(torchrec.problems[0].text) == ("torchrec 1.1.0 is paired with fbgemm-gpu 1.1.*, but fbgemm-gpu "
                                              "1.2.0+cu118 is installed")
    assert words(torchrec.problems[0].fixes[0]) == ("Install torchrec==1.2.0, the torchrec release paired with "
                                                      "fbgemm-gpu 1.2.0+cu118.")
    assert package(report, "fbgemm-gpu").problems == ()


def test_flashinfer_aot_wheel_built_for_another_torch_minor(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    make_dist(tmp_path, "flashinfer", "0.2.0+cu118torch2.6", {"flashinfer/_kernels.so": FIXTURES / "uncompressed.so"})
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    flashinfer = package(report, "flashinfer")
    assert (flashinfer.variant, codes(flashinfer.problems)) == (
        "cu118", [("abi-mismatch", "torch 2.6.*", "torch 2.7.1+cu118")])
    assert words(flashinfer.problems[0].fixes[0]) == (
        "Install flashinfer==0.2.0+cu118torch2.7, the flashinfer release paired with torch 2.7.1+cu118.")


def test_library_from_another_cuda_major_than_torch(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    make_dist(tmp_path, "fbgemm-gpu", "1.2.0", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "uncompressed.so"})
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    (problem,) = package(report, "fbgemm-gpu").problems
    assert (problem.code, problem.required, problem.found) == ("abi-mismatch", "torch cu126", "torch cu118")
    assert words(problem.text) == ("fbgemm-gpu 1.2.0 is a cu126 build, but torch 2.7.1+cu118 is a cu118 build; a "
                                 "compiled package must come from the same CUDA major version as torch")


def test_a_package_the_database_lacks_is_listed_with_a_note(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "fbgemm-gpu", "9.9.0", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "rdc.so"})
    report = diagnose(read_environment([tmp_path], KINDS), make_target(RTX3090), db)
    fbgemm = package(report, "fbgemm-gpu")
    assert (fbgemm.variant, fbgemm.problems) == (None, ())
    assert [words(n) for n in fbgemm.notes] == [
        "fbgemm-gpu 9.9.0 is not in the database: its pairing and minimum GPU were not checked"]
    report = diagnose(read_environment([tmp_path], KINDS), make_target(RTX3090, A100), db)
    (problem,) = package(report, "fbgemm-gpu").problems
    assert words(problem.text) == ("fbgemm-gpu 9.9.0 (variant unknown) has no code for sm_80 (NVIDIA A100, compute "
                                 "capability 8.0); it carries sm_86")
    assert words(problem.text, "zh") == ("fbgemm-gpu 9.9.0（变体未知）没有 sm_80 的代码（NVIDIA A100，计算能力 8.0）；"
                                     "它只包含 sm_86")


# -- GPUs: PTX only, below the minimum, arch-specific libraries ---------------------------------


def test_ptx_only_is_a_warning_and_still_ok(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    h100 = Gpu(name="NVIDIA H100", cc=ComputeCapability(9, 0), datacenter=True)
    report = diagnose(read_environment([tmp_path], KINDS), make_target(h100), db)
    (problem,) = package(report, "torch").problems
    assert (problem.code, problem.severity, problem.found) == ("ptx-jit-only", "warning", "compute_80")
    assert words(problem.text) == ("torch 2.7.1+cu118 (cu118) has no native code for NVIDIA H100 (sm_90); the driver "
                                 "will JIT-compile its PTX (compute_80), so the first start is slow")
    assert report.ok is True


def test_ptx_only_under_minor_version_compatibility_is_no_code_at_all(tmp_path: Path, db: CompatDB) -> None:
    """A driver that runs the build's CUDA only through minor-version compatibility cannot compile PTX from that
    newer toolkit (cudaErrorUnsupportedPtxVersion): the GPU has no usable code, as the solver says of such builds."""
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    h100 = Gpu(name="NVIDIA H100", cc=ComputeCapability(9, 0), datacenter=True)
    report = diagnose(read_environment([tmp_path], KINDS), make_target(h100, driver="470.129.06"), db)
    (problem,) = package(report, "torch").problems
    assert (problem.code, problem.severity) == ("sm-not-covered", "error")
    assert words(problem.text).startswith("torch 2.7.1+cu118 (cu118) reaches NVIDIA H100 (sm_90) only through PTX")
    assert "driver 470.129.06 cannot compile" in words(problem.text)
    assert report.ok is False


def test_gpu_below_the_package_minimum(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "xformers", "0.0.31", {"xformers/_C.so": FIXTURES / "uncompressed.so"})
    v100 = Gpu(name="Tesla V100", cc=ComputeCapability(7, 0), datacenter=True)
    report = diagnose(read_environment([tmp_path], KINDS), make_target(v100), db)
    (problem,) = package(report, "xformers").problems
    assert (problem.code, problem.required, problem.found) == ("sm-below-minimum", "7.5", "7.0")
    assert words(problem.text) == "xformers 0.0.31 supports compute capability 7.5 and newer; Tesla V100 is 7.0"


def _report(path: str, *archs: tuple[int, int, str, int]) -> BinaryReport:
    entries = tuple(FatbinEntry(section=".nv_fatbin", offset=i, kind=kind, sm=sm, suffix=suffix)
                    for i, (kind, sm, suffix, _) in enumerate(archs))
    return BinaryReport(path=path, listing=FatbinListing(format="elf", size=1, entries=entries))


def test_a_library_with_only_arch_specific_code_decides_nothing(db: CompatDB) -> None:
    main = _report("fbgemm_gpu/fbgemm_gpu_py.so", (2, 80, "", 0))
    hopper = _report("fbgemm_gpu/experimental/gen_ai.so", (2, 90, "a", 0))
    both = InstalledPackage(name="fbgemm-gpu", version="1.2.0", libraries=(main, hopper))
    env = Environment(paths=(), packages=(both,))
    report = diagnose(env, make_target(A100), db)
    fbgemm = package(report, "fbgemm-gpu")
    assert [(lib.path, lib.arch_specific, lib.coverage) for lib in fbgemm.libraries] == [
        ("fbgemm_gpu/fbgemm_gpu_py.so", False, ((ComputeCapability(8, 0), Coverage.SASS),)),
        ("fbgemm_gpu/experimental/gen_ai.so", True, ((ComputeCapability(8, 0), Coverage.NONE),)),
    ]
    assert (fbgemm.coverage, fbgemm.problems) == (((ComputeCapability(8, 0), Coverage.SASS),), ())
    alone = Environment(paths=(), packages=(InstalledPackage(name="fbgemm-gpu", version="1.2.0", libraries=(hopper,)),))
    assert codes(package(diagnose(alone, make_target(A100), db), "fbgemm-gpu").problems) == [
        ("sm-not-covered", "8.0", "sm_90a")]


def test_a_library_listed_in_record_but_missing_is_a_problem(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "fbgemm-gpu", "1.2.0", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "uncompressed.so"})
    (tmp_path / "fbgemm_gpu/fbgemm_gpu_py.so").unlink()
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    (problem,) = package(report, "fbgemm-gpu").problems
    assert (problem.code, words(problem.text)) == (
        "invalid-binary", f"cannot read {tmp_path / 'fbgemm_gpu/fbgemm_gpu_py.so'}: listed in RECORD but missing")
    assert words(problem.fixes[0]) == ("Reinstall it from the index it came from: pip install --force-reinstall "
                                         "--no-deps 'fbgemm-gpu==1.2.0'")


def test_a_package_without_record_gets_a_note(tmp_path: Path, db: CompatDB) -> None:
    (make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files()) / "RECORD").unlink()
    torch = package(diagnose(read_environment([tmp_path], KINDS), make_target(A100), db), "torch")
    assert (torch.libraries, [words(n) for n in torch.notes]) == (
        (), ["torch 2.7.1+cu118 has no RECORD, so its libraries could not be listed"])


# -- the CUDA runtime against the driver --------------------------------------------------------


def test_cuda_13_runtime_with_a_535_driver(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "nvidia-cuda-runtime-cu13", "13.0.48")
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    assert [(r.name, r.cuda, r.support) for r in report.runtimes] == [
        ("nvidia-cuda-runtime-cu13", CudaVersion(13, 0), DriverSupport.NONE)]
    (problem,) = report.problems
    assert (problem.code, problem.required, problem.found) == ("driver-too-old", "580.65.06", "535.104.05")
    assert words(problem.text) == ("CUDA 13.0 wheels (cu130) need driver 580.65.06 at least (580.65.06 for full "
                                 "compatibility); this host has 535.104.05")
    assert [words(f) for f in problem.fixes] == [  # cu121 runs too, but this database has no torch build for it
        "Install builds for cu118 (CUDA 11.8), the newest variant this driver fully supports: "
        "cudaresolve install torch (with the GPU packages you use) takes them from PyPI or "
        "https://download.pytorch.org/whl/cu118, whichever serves them and answers, and keeps each paired with torch",
        "Or upgrade the NVIDIA driver; nvidia-smi shows the newest CUDA version a driver supports.",
    ]
    assert report.ok is False


def test_minor_version_compatibility_is_a_warning(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "nvidia-cuda-runtime-cu12", "12.6.77")
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    assert [(p.code, p.severity) for p in report.problems] == [("minor-version-compat", "warning")]
    assert report.ok is True


def test_without_runtime_packages_torch_variant_is_checked(db: CompatDB) -> None:
    torch = InstalledPackage(name="torch", version="2.7.1+cu126", variant="cu126")
    report = diagnose(Environment(paths=(), packages=(torch,)), make_target(A100, driver="470.82.01"), db)
    assert [(r.name, r.cuda, r.support) for r in report.runtimes] == [
        ("torch", CudaVersion(12, 6), DriverSupport.NONE)]
    assert codes(report.problems) == [("driver-too-old", "525.60.13", "470.82.01"),
                                      ("cuda-runtime-missing", "cu126", None)]  # and no CUDA library at all


def test_an_unknown_driver_is_said_not_guessed(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "nvidia-cuda-runtime-cu13", "13.0.48")
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100, driver=None), db)
    assert ([r.support for r in report.runtimes], report.problems) == ([None], ())
    assert [words(n) for n in report.notes] == [
        "no driver version was given or detected, so the driver was not checked; pass --driver"]


# -- arch lists in the environment --------------------------------------------------------------

_CUBLAS_ONLY = Environment(paths=(), cuda_packages=(("nvidia-cublas-cu12", "12.6.4.1"),))  # not an empty env


def test_torch_cuda_arch_list_leaving_out_a_gpu(db: CompatDB) -> None:
    h100 = Gpu(name="NVIDIA H100", cc=ComputeCapability(9, 0), datacenter=True)
    env = _CUBLAS_ONLY
    report = diagnose(env, make_target(A100, RTX3090, h100), db,
                      environ={"TORCH_CUDA_ARCH_LIST": "8.0 8.6", "FLASHINFER_CUDA_ARCH_LIST": "9.0a"})
    assert codes(report.problems) == [("arch-list-excludes-gpu", "9.0", "8.0 8.6"),
                                      ("arch-list-excludes-gpu", "8.0", "9.0a"),
                                      ("arch-list-excludes-gpu", "8.6", "9.0a")]
    first = report.problems[0]
    assert words(first.text) == ('TORCH_CUDA_ARCH_LIST="8.0 8.6" leaves out NVIDIA H100 (compute capability 9.0): '
                               "extensions built or JIT-compiled in this environment get no code for it")
    assert [words(f) for f in first.fixes] == [
        'Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or set them to this machine\'s GPUs: '
        '"8.0;8.6;9.0".']
    assert report.ok is False


def test_arch_list_with_ptx_reaching_the_gpu_and_a_bad_arch_list(db: CompatDB) -> None:
    h100 = Gpu(name="NVIDIA H100", cc=ComputeCapability(9, 0), datacenter=True)
    assert diagnose(_CUBLAS_ONLY, make_target(h100), db,
                    environ={"TORCH_CUDA_ARCH_LIST": "8.0+PTX"}).problems == ()
    report = diagnose(_CUBLAS_ONLY, make_target(h100), db, environ={"TORCH_CUDA_ARCH_LIST": "9.x"})
    assert codes(report.problems) == [("invalid-arch-list", None, "9.x")]
    assert diagnose(_CUBLAS_ONLY, make_target(), db, environ={"TORCH_CUDA_ARCH_LIST": "5.0"}).ok


# -- AOTInductor packages ---------------------------------------------------------------------


def make_pt2(path: Path, device: str, cc: str) -> Path:
    meta = {"AOTI_DEVICE_KEY": device, "AOTI_COMPUTE_CAPABILITY": cc}
    base = f"{path.stem}/data/aotinductor/model"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{path.stem}/archive_format", "pt2")
        archive.writestr(f"{base}/cabc_metadata.json", json.dumps(meta))
        archive.write(FIXTURES / "nogpu.so", f"{base}/cabc.so")
        if device == "cuda":  # a Triton kernel: a bare sm_90a cubin
            archive.write(FIXTURES / "sm_90a.cubin", f"{base}/triton_poi_fused_0.cubin")
    return path


def test_pt2_packages_against_the_target(tmp_path: Path, db: CompatDB) -> None:
    cuda = read_pt2(make_pt2(tmp_path / "gpu.pt2", "cuda", "90"))
    cpu = read_pt2(make_pt2(tmp_path / "cpu.pt2", "cpu", ""))
    h100 = Gpu(name="NVIDIA H100", cc=ComputeCapability(9, 0))
    report = diagnose(Environment(paths=()), make_target(h100), db, pt2=[cuda, cpu])
    first = report.pt2[0]
    assert (first.devices, first.sass, first.problems) == (("cuda",), ("sm_90a",), ())
    (mismatch,) = report.pt2[1].problems
    assert (mismatch.code, mismatch.required, mismatch.found) == ("aoti-device-mismatch", "cpu", "cuda")
    assert words(mismatch.text) == (f"{tmp_path / 'cpu.pt2'} was compiled for cpu but would run on cuda; AOTInductor "
                                  "then fails with 'CUDA error: invalid argument'")
    on_cpu = diagnose(Environment(paths=()), make_target(), db, pt2=[cuda])
    assert codes(on_cpu.pt2[0].problems) == [("aoti-device-mismatch", "cuda", "cpu")]
    (other_gpu,) = diagnose(Environment(paths=()), make_target(A100), db, pt2=[cuda]).pt2[0].problems
    assert (other_gpu.code, other_gpu.required, other_gpu.found) == ("sm-not-covered", "8.0", "sm_90a")
    assert words(other_gpu.text) == (f"{tmp_path / 'gpu.pt2'} has kernels for sm_90a, none of which runs on a GPU of "
                                   "compute capability 8.0")
    with pytest.raises(InvalidInput, match="no such file"):
        read_pt2(tmp_path / "absent.pt2")


# -- report shape and language ------------------------------------------------------------------


def test_to_dict_follows_the_contract_and_speaks_chinese(tmp_path: Path, db: CompatDB) -> None:
    make_dist(tmp_path, "torch", "2.7.1+cu118", torch_files())
    make_dist(tmp_path, "fbgemm-gpu", "1.1.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "rdc.so"})
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    data = plain(report.to_dict())
    assert data["ok"] is False and data["target"] == make_target(A100).to_dict()
    fbgemm = data["packages"][1]
    assert {k: fbgemm[k] for k in ("name", "version", "variant", "sass", "ptx", "coverage")} == {
        "name": "fbgemm-gpu", "version": "1.1.0+cu118", "variant": "cu118", "sass": ["sm_86"], "ptx": [],
        "coverage": {"8.0": "none"}}
    assert [p["code"] for p in fbgemm["problems"]] == ["sm-not-covered", "abi-mismatch"]
    assert set(fbgemm["problems"][0]) == {"code", "message", "severity", "package", "required", "found",
                                          "libraries", "fixes"}
    assert data["fixes"][0] == "fbgemm-gpu releases with native code for sm_80: 1.2.0 (cu118, cu126); 1.1.0 (cu118)."
    zh = plain(report.to_dict(), "zh")["packages"][1]["problems"][1]["message"]
    assert zh == "fbgemm-gpu 1.1.0+cu118 是针对 torch 2.6.* 构建的，但当前安装的是 torch 2.7.1+cu118"


# -- reading the environment --------------------------------------------------------------------


@pytest.mark.parametrize(("version", "variant"), [
    ("2.7.1+cu118", "cu118"), ("0.2.0+cu124torch2.4", "cu124"), ("2.1.0+cpu.cxx11.abi", "cpu"),
    ("2.5.1+rocm6.2", "rocm6.2"), ("2.7.1", None), ("1.0.0+local", None), ("not a version", None),
])
def test_parse_local_variant(version: str, variant: str | None) -> None:
    assert parse_local_variant(version) == variant


@pytest.mark.parametrize(("source", "variant"), [
    ("cuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n", "cu126"),
    ('cuda = "11.8"\n', "cu118"),
    ("cuda: Optional[str] = None\nhip: Optional[str] = '6.2.41133-dd7f95766'\n", "rocm6.2"),
    ("cuda = None\nhip = None\n", "cpu"),
    ("__version__ = '2.7.1'\n", None),
])
def test_parse_torch_version_py(source: str, variant: str | None) -> None:
    assert parse_torch_version_py(source) == variant


@pytest.mark.parametrize(("name", "version", "cuda"), [
    ("nvidia-cuda-runtime-cu12", "12.6.77", CudaVersion(12, 6)),
    ("nvidia_cuda_runtime_cu11", "11.8.89", CudaVersion(11, 8)),
    ("nvidia-cuda-runtime", "13.0.96", CudaVersion(13, 0)),
    ("nvidia-cuda-runtime-cu13", "0.0.1", None),  # the deprecated placeholder
    ("nvidia-cuda-runtime-cu12", "11.8.89", None),
    ("nvidia-cublas-cu12", "12.6.4.1", None),
])
def test_parse_runtime_cuda(name: str, version: str, cuda: CudaVersion | None) -> None:
    assert parse_runtime_cuda(name, version) == cuda


def test_first_distribution_on_the_path_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "user", tmp_path / "site"
    make_dist(first, "torch", "2.7.1+cu126", torch_files())
    make_dist(second, "torch", "2.6.0+cu118", torch_files())
    env = read_environment([first, second], KINDS, python="3.11")
    assert [(p.name, p.version, p.variant) for p in env.packages] == [("torch", "2.7.1+cu126", "cu126")]
    assert (env.paths, env.python) == ((str(first), str(second)), "3.11")


def test_site_packages_of_another_interpreter(tmp_path: Path) -> None:
    paths, version = find_site_packages(sys.executable)
    assert version == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert any(Path(p).name == "site-packages" for p in paths)
    with pytest.raises(InvalidInput, match="cannot run"):
        find_site_packages(str(tmp_path / "no-python"))
    script = tmp_path / "fails"
    script.write_text("#!/bin/sh\necho broken >&2\nexit 3\n")
    script.chmod(0o755)
    with pytest.raises(InvalidInput, match=r"failed \(exit 3\): broken"):
        find_site_packages(str(script))


def test_check_environment_rejects_a_missing_site_packages_folder(tmp_path: Path, db: CompatDB) -> None:
    with pytest.raises(InvalidInput, match="not a directory"):
        check_environment(db, make_target(A100), site_packages=[str(tmp_path / "absent")])


# -- what is missing -----------------------------------------------------------------------------


def test_an_environment_without_gpu_packages_says_so(tmp_path: Path, db: CompatDB) -> None:
    report = diagnose(read_environment([tmp_path], KINDS), make_target(A100), db)
    assert codes(report.problems) == [("no-gpu-packages", None, None)]
    assert report.ok and report.problems[0].severity == "warning"  # ok, but not a bare "ok"
    assert "none of the GPU packages" in words(report.problems[0].text)


def test_cuda_torch_with_no_cuda_libraries_says_so(db: CompatDB) -> None:
    torch = InstalledPackage(name="torch", version="2.7.1+cu126", variant="cu126")
    report = diagnose(Environment(paths=(), packages=(torch,)), make_target(A100), db)
    assert ("cuda-runtime-missing", "cu126", None) in codes(report.problems)
    bundled = InstalledPackage(name="torch", version="2.7.1+cu126", variant="cu126", bundles_runtime=True)
    report = diagnose(Environment(paths=(), packages=(bundled,)), make_target(A100), db)
    assert "cuda-runtime-missing" not in [p.code for p in report.problems]
    cpu = InstalledPackage(name="torch", version="2.7.1+cpu", variant="cpu")
    assert diagnose(Environment(paths=(), packages=(cpu,)), make_target(), db).problems == ()


@pytest.mark.parametrize(
    ("installed", "driver", "code"),
    [
        # the example: a cu121 torch with its fbgemm-gpu/torchrec pair, run through minor-version compatibility
        ((("torch", "2.5.1+cu121", "cu121"), ("fbgemm-gpu", "1.0.0+cu121", "cu121"), ("torchrec", "1.0.0", None)),
         "525.60.13", "minor-version-compat"),
        # another of its class: a driver too old for the installed torch/xformers pair
        ((("torch", "2.7.1+cu126", "cu126"), ("xformers", "0.0.31", "cu126")), "470.82.01", "driver-too-old"),
    ],
)
def test_the_driver_fix_reinstalls_the_whole_set_through_cudaresolve(
    db: CompatDB, installed: tuple[tuple[str, str, str | None], ...], driver: str, code: str
) -> None:
    packages = tuple(InstalledPackage(name=n, version=v, variant=var) for n, v, var in installed)
    report = diagnose(Environment(paths=(), packages=packages), make_target(A100, driver=driver), db)
    (problem,) = [p for p in report.problems if p.code == code]
    fix = words(problem.fixes[0])
    names = " ".join(sorted((n for n, _, _ in installed if n in db.package_names), key=lambda n: (n != "torch", n)))
    assert f"cudaresolve install {names} takes them from PyPI or https://" in fix, fix
    assert "--index-url" not in fix and "pip install" not in fix  # no torch-only command that breaks a pairing
    assert names.count(" ") == len(installed) - 1, names  # every installed GPU package is named


def test_a_jetson_cubin_is_no_code_for_a_desktop_gpu() -> None:
    """NVIDIA: "the binary compatibility between desktop and Tegra is not supported". A library built for Jetson
    Orin (sm_87 SASS) was judged to run natively on an RTX 4090 (8.9) by the desktop rule (8.z, z >= 7); it has no
    code for it. Its PTX is still JIT-compiled, and a desktop cubin (sm_86) still reaches the 4090."""
    from cudaresolve.db.database import load_compat

    shipped = load_compat()
    rtx4090 = Gpu(name="NVIDIA GeForce RTX 4090", cc=ComputeCapability(8, 9))
    for archs, expected in (
        (((2, 87, "", 0),), Coverage.NONE),
        (((2, 87, "", 0), (1, 80, "", 0)), Coverage.PTX_JIT),
        (((2, 87, "", 0), (2, 86, "", 0)), Coverage.SASS),
    ):
        lib = _report("jetson/libkernels.so", *archs)
        env = Environment(paths=(), packages=(InstalledPackage(name="xformers", version="0.0.31", libraries=(lib,)),))
        report = diagnose(env, make_target(rtx4090, driver="570.86.16"), shipped)
        assert package(report, "xformers").coverage == ((ComputeCapability(8, 9), expected),), archs
