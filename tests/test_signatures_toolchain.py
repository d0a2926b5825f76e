"""explain-error on a compiler that does not know a GPU architecture, as users posted it.

nvcc's "Unsupported gpu architecture 'compute_XX'" is a toolkit older than the architecture (compute_120 before
CUDA 12.8), one newer than its last toolkit (compute_35 after CUDA 11.8), or a malformed list (compute_N); ptxas'
"Value 'sm_XX' is not defined for option 'gpu-name'" is Triton's bundled ptxas older than the GPU. Which toolkits
compile what is the database's ``nvcc-sm``, never the code's.
"""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import copy

import pytest

from cudaresolve.core.archs import parse_cc
from cudaresolve.db.database import CompatDB
from cudaresolve.errorlog.explain import explain_matches
from cudaresolve.errorlog.signatures import match_errors
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text
from test_signatures import _DB, BLOCK_SPARSE_15, FASTDEPLOY_2024, MLCOMMONS_826, TRT_DEMOS_554, ZONOS_184

# https://github.com/thu-ml/TurboDiffusion/issues/80 (an A10 building a wheel whose list names compute_120a)
TURBODIFFUSION_80 = """-gencode arch=compute_120a,code=sm_120a -gencode arch=compute_90,code=sm_90 -gencode arch=compute_89,code=sm_89
      nvcc fatal   : Unsupported gpu architecture 'compute_120a'"""  # noqa: E501


@pytest.fixture(scope="module")
def db() -> CompatDB:
    data = copy.deepcopy(_DB)
    for row in data["cuda"]:  # CUDA 11.x compiles sm_35 (deprecated), 12.0 dropped it (compat-facts, nvcc targets)
        if row["version"].startswith("11."):
            row["nvcc-sm"] = ["sm_35", *row["nvcc-sm"]]
    return CompatDB.from_dict(data)


def _target(name: str, cc: str) -> Target:
    return Target(gpus=(Gpu(name=name, cc=parse_cc(cc)),), source="flags")


def _explain(text: str, target: Target | None, db: CompatDB | None, lang: str = "en") -> tuple[str, list[str]]:
    (e,) = explain_matches(match_errors(text), target, db)
    return format_text(e.cause, lang), [format_text(f, lang) for f in e.fixes]


LEAVE_OUT = ("Leave {arch} out of the build's architecture list (TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES or "
             "-gencode flags) unless a GPU it runs on needs it.")
ONLY = ("Build only for this machine's GPUs: TORCH_CUDA_ARCH_LIST=\"{arch_list}\" (for a CMake build, "
        "CMAKE_CUDA_ARCHITECTURES; for a Makefile, its -gencode flags).")


def test_an_architecture_newer_than_the_toolkit(db: CompatDB) -> None:
    cause, fixes = _explain(BLOCK_SPARSE_15, None, db)
    assert cause == ("The CUDA compiler (nvcc) that ran this build is too old for compute_120: CUDA 12.8 is the first "
                     "toolkit that compiles it.")
    assert fixes == [LEAVE_OUT.format(arch="compute_120"),
                     "Build with CUDA toolkit 12.8 or newer: install it and point CUDA_HOME (and PATH) at it."]


def test_on_the_gpu_that_needs_it_the_toolkit_must_be_newer(db: CompatDB) -> None:
    _, fixes = _explain(BLOCK_SPARSE_15, _target("NVIDIA GeForce RTX 5090", "12.0"), db)
    assert fixes == [ONLY.format(arch_list="12.0"),
                     "Build with CUDA toolkit 12.8 or newer: install it and point CUDA_HOME (and PATH) at it."]


def test_on_a_gpu_that_does_not_need_it_the_list_is_the_fix(db: CompatDB) -> None:
    """TurboDiffusion's list names compute_120a; the A10 (8.6) it was built on needs none of it: no toolkit advice."""
    cause, fixes = _explain(TURBODIFFUSION_80, _target("NVIDIA A10", "8.6"), db)
    assert "compute_120a: CUDA 12.8 is the first toolkit" in cause
    assert fixes == [ONLY.format(arch_list="8.6")]


def test_an_architecture_the_toolkit_dropped(db: CompatDB) -> None:
    cause, fixes = _explain(FASTDEPLOY_2024, None, db)
    assert cause == ("The CUDA compiler (nvcc) that ran this build no longer compiles compute_35: CUDA 11.8 is the "
                     "last toolkit that does.")
    assert fixes == [LEAVE_OUT.format(arch="compute_35"),
                     "Build with CUDA toolkit 11.8 or older: install it and point CUDA_HOME (and PATH) at it."]


def test_a_malformed_list_is_not_blamed_on_the_toolkit(db: CompatDB) -> None:
    cause, fixes = _explain(TRT_DEMOS_554, None, db)
    assert cause == ("'compute_N' is not a GPU architecture: the architecture list given to the build "
                     "(TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES or -gencode flags) is empty or malformed.")
    assert fixes == ["Set the architecture list explicitly to the GPUs the build runs on, e.g. "
                     "TORCH_CUDA_ARCH_LIST=\"8.6\" for an RTX 3090 ('cudaresolve detect' shows them)."]


def test_without_a_database_the_architecture_is_still_named() -> None:
    cause, _ = _explain(BLOCK_SPARSE_15, None, None)
    assert cause == "The CUDA compiler (nvcc) that ran this build does not know compute_120."


@pytest.mark.parametrize(("text", "sm", "cuda"), [(ZONOS_184, "sm_120", "12.8"), (MLCOMMONS_826, "sm_100", "12.8")])
def test_tritons_ptxas_older_than_the_gpu(db: CompatDB, text: str, sm: str, cuda: str) -> None:
    cause, fixes = _explain(text, None, db)
    assert cause == (f"The PTX assembler (ptxas) that ran is older than this GPU's architecture {sm}: only the ptxas "
                     f"of CUDA {cuda} or newer knows it. Triton bundles its own ptxas, so an older Triton fails on a "
                     "newer GPU.")
    assert fixes[:2] == [
        "Upgrade Triton (with the torch it is paired with): newer releases bundle a ptxas that knows newer GPUs.",
        f"Or point Triton at the ptxas of an installed CUDA {cuda} or newer toolkit: "
        "TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas.",
    ]
    assert fixes[2].startswith("Run the model without torch.compile")


def test_ptxas_without_triton_asks_for_a_toolkit(db: CompatDB) -> None:
    cause, fixes = _explain("ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'", None, db)
    assert "Triton" not in cause
    assert fixes == ["Build with CUDA toolkit 12.8 or newer: install it and point CUDA_HOME (and PATH) at it."]


def test_in_chinese(db: CompatDB) -> None:
    cause, fixes = _explain(FASTDEPLOY_2024, None, db, "zh")
    assert cause == "执行这次构建的 CUDA 编译器（nvcc）已不再支持 compute_35：CUDA 11.8 是最后一个能编译它的工具包。"
    assert fixes[1] == "用 CUDA 工具包 11.8 或更旧版本构建：安装它，并让 CUDA_HOME（和 PATH）指向它。"
