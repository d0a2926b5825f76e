"""explain-error on the import failures of compiled extensions, as users posted them.

The rule is by class, not by package: an ``undefined symbol`` of torch's C++ API in any extension
module means "built against another torch"; the package is read from the module's path and named
as the database names it. Missing ``libcudart.so.N`` is a CUDA major mismatch, missing
``libcudnn*.so.N`` a cuDNN one, ``CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH`` two cuDNN copies.
"""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import copy

import pytest

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB
from cudaresolve.errorlog.explain import explain_matches
from cudaresolve.errorlog.signatures import match_errors, module_of
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text
from test_doctor import DB_DATA

# https://github.com/Dao-AILab/flash-attention/issues/931
FLASH_931 = "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
# https://github.com/Dao-AILab/flash-attention/issues/1691
FLASH_1691 = (
    '    import flash_attn_2_cuda as flash_attn_gpu\nImportError: /data/user/qxiao183/xqf/miniconda3/envs/quanllm/lib/'
    "python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
)
# https://github.com/rusty1s/pytorch_scatter/issues/462
SCATTER_462 = (
    "    self._handle = _dlopen(self._name, mode)\nOSError: /usr/local/lib/python3.10/dist-packages/torch_scatter/"
    "_version_cuda.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb"
)
# https://github.com/LMMMEng/OverLoCK/issues/17 (mmcv-full 1.7.2 beside another torch)
MMCV_17 = (
    "ImportError: /opt/conda/envs/MC/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined "
    "symbol: _ZN2at4_ops10zeros_like4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_6LayoutEEENS6_INS5_"
    "6DeviceEEENS6_IbEENS6_INS5_12MemoryFormatEEE"
)
# https://github.com/open-mmlab/mmcv/issues/596 (the symbol as posted is cut short: the cause is told without it)
MMCV_596 = (
    "ImportError: /usr/local/lib/python3.6/dist-packages/mmcv/_ext.cpython-36m-x86_64-linux-gnu.so: undefined "
    "symbol: _ZN2at5emptyEN3c108ArrayRefIlEERKNS0_13TensorOptionsENS0_8optionalINS0_12MemoryFormatEE"
)
# https://github.com/open-mmlab/mmcv/issues/1636 (the user's own function, not torch's: another cause)
MMCV_1636 = ("_ext.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
             "_Z30pyramid_deformable_im2col_cudaN2at6TensorES0_iiiiiiiiiiiiiffiiS0_")
# https://github.com/rusty1s/pytorch_scatter/issues/234 (a C++ runtime symbol: an old libstdc++, not torch)
SCATTER_234 = ("OSError: */_version.so: undefined symbol: "
               "_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEC1Ev")
# https://github.com/vllm-project/vllm/issues/52300
VLLM_52300 = "ImportError: libcudart.so.13: cannot open shared object file: No such file or directory"
# https://github.com/SYSTRAN/faster-whisper/issues/516 (CTranslate2 built for cuDNN 8 beside torch's cuDNN 9)
WHISPER_516 = ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open "
               "shared object file: No such file or directory")
# CTranslate2 4.5 beside a torch with cuDNN 8 (the form of https://github.com/SYSTRAN/faster-whisper/issues/1080)
WHISPER_1080 = ("Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, "
                "libcudnn_ops.so}")
# https://github.com/pytorch/pytorch/issues/185512
TORCH_185512 = "RuntimeError: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"


@pytest.fixture(scope="module")
def db() -> CompatDB:
    data = copy.deepcopy(DB_DATA)
    data["packages"]["tables"] += ["flash-attn", "torch-scatter", "mmcv", "torch-sparse"]
    return CompatDB.from_dict(data)


def explain(text: str, db: CompatDB | None, target: Target | None = None, lang: str = "en"
            ) -> list[tuple[str, str, list[str]]]:
    return [(e.code, format_text(e.cause, lang), [format_text(f, lang) for f in e.fixes])
            for e in explain_matches(match_errors(text), target, db)]


@pytest.mark.parametrize(("text", "library", "package", "symbol"), [
    (FLASH_931, "flash_attn_2_cuda", "flash-attn", "c10::cuda::SetDevice(int)"),
    (FLASH_1691, "flash_attn_2_cuda", "flash-attn", "c10::Error::Error(c10::SourceLocation, "
     "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)"),
    (SCATTER_462, "torch_scatter", "torch-scatter", "torch::jit::parseSchemaOrName(std::string const&, bool)"),
    (MMCV_17, "mmcv", "mmcv", "at::_ops::zeros_like::call(at::Tensor const&, c10::optional<c10::ScalarType>, "
     "c10::optional<c10::Layout>, c10::optional<c10::Device>, c10::optional<bool>, "
     "c10::optional<c10::MemoryFormat>)"),
    # the same class beyond the examples: another PyG page package
    ("OSError: /home/u/.venv/lib/python3.11/site-packages/torch_sparse/_convert_cuda.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev", "torch_sparse", "torch-sparse", "c10::RegisterOperators::~RegisterOperators()"),
])
def test_an_undefined_torch_symbol_in_any_extension_is_an_abi_mismatch(
    text: str, library: str, package: str, symbol: str, db: CompatDB,
) -> None:
    (match,) = match_errors(text)
    assert (match.code, match.fields["library"]) == ("abi-mismatch", library)
    ((code, cause, fixes),) = explain(text, db)
    assert code == "abi-mismatch"
    assert cause == (f"{package} is a compiled extension built against another torch than the one installed: it "
                     f"needs {symbol} ({match.fields['symbol']}), which this torch does not export.")
    assert fixes == [
        f"Install the {package} build made for your torch (the same torch release, CUDA variant and C++ ABI): "
        f"'cudaresolve lock torch {package}' picks a matching pair where one is published.",
        "Run 'cudaresolve doctor' in that environment: it reads each extension module and names the torch symbols "
        "it needs that the installed torch does not export.",
    ]


def test_a_symbol_cut_short_gives_the_cause_without_it(db: CompatDB) -> None:
    ((code, cause, _),) = explain(MMCV_596, db)
    assert (code, cause) == ("abi-mismatch", "mmcv is a compiled extension built against another torch than the one "
                                             "installed, so its C++ symbols do not resolve.")


def test_without_the_package_in_the_database_the_module_is_named() -> None:
    ((_, cause, fixes),) = explain(SCATTER_462, None)
    assert cause.startswith("torch-scatter is a compiled extension built against another torch")
    assert "'cudaresolve lock torch torch-scatter'" in fixes[0]


def test_the_chinese_cause_names_the_symbol_too(db: CompatDB) -> None:
    ((_, cause, fixes),) = explain(FLASH_931, db, lang="zh")
    assert cause == ("flash-attn 是针对另一个 torch 版本编译的扩展，与当前安装的 torch 不匹配：它需要 "
                     "c10::cuda::SetDevice(int)（_ZN3c104cuda9SetDeviceEi），而这个 torch 没有导出该符号。")
    assert fixes[0].startswith("安装为你的 torch 构建的 flash-attn")


@pytest.mark.parametrize("text", [
    MMCV_1636, SCATTER_234,
    "/x/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    "libcudnn_cnn_infer.so.8: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    ".so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
])
def test_other_undefined_symbols_are_not_called_a_torch_mismatch(text: str) -> None:
    assert [m.code for m in match_errors(text)] == []


@pytest.mark.parametrize(("path", "module"), [
    ("/env/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", "flash_attn_2_cuda"),
    ("/env/lib/python3.11/site-packages/torch_scatter/_scatter_cuda.so", "torch_scatter"),
    ("/usr/lib/python3/dist-packages/fbgemm_gpu/fbgemm_gpu_py.so", "fbgemm_gpu"),
    ("/home/u/mmcv/mmcv/_ext.cpython-38-x86_64-linux-gnu.so", "mmcv"),
    ("fbgemm_gpu_config.so", "fbgemm_gpu_config"),
    ("_ext.so", "_ext"),
])
def test_module_of(path: str, module: str) -> None:
    assert module_of(path) == module


H100_580 = Target(gpus=(Gpu(name="NVIDIA H100", cc=parse_cc("9.0")),), driver=parse_driver("580.65.06"))


def test_libcudart_13_is_a_cuda_major_mismatch_with_the_torch_for_it(db: CompatDB) -> None:
    ((code, cause, fixes),) = explain(VLLM_52300, db, H100_580)
    assert code == "missing-cuda-library"
    assert cause.startswith("libcudart.so.13 is missing: a compiled package was built for CUDA 13")
    assert "Or install torch for cu130 (CUDA 13.0), a CUDA 13 build this driver runs: cudaresolve install torch " \
           "(with the GPU packages you use) takes it from PyPI or https://download.pytorch.org/whl/cu130, whichever " \
           "serves it and answers, and keeps each paired with torch" in fixes


@pytest.mark.parametrize(("text", "library", "major"), [
    (WHISPER_516, "libcudnn_ops_infer.so.8", "8"), (WHISPER_1080, "libcudnn_ops.so.9.1.0", "9")])
def test_a_missing_cudnn_is_a_cudnn_major_mismatch(text: str, library: str, major: str, db: CompatDB) -> None:
    (match,) = match_errors(text)
    assert (match.code, match.fields["library"], match.fields["major"]) == ("missing-cuda-library", library, major)
    ((_, cause, fixes),) = explain(text, db, H100_580)
    assert cause == (f"{library} is missing: a compiled package was built for cuDNN {major}, and no package in this "
                     f"environment provides cuDNN {major} (torch's cuDNN is another major version, or absent).")
    assert fixes[0].startswith("Install the build of the failing package made for your torch's cuDNN major version")
    assert not any("pip install torch --index-url" in fix for fix in fixes)  # a cuDNN major is no CUDA variant


def test_another_cuda_library_does_not_claim_its_soname_is_a_cuda_version(db: CompatDB) -> None:
    ((_, cause, _),) = explain("ImportError: libcufft.so.11: cannot open shared object file", db, H100_580)
    assert cause.startswith("libcufft.so.11 is missing: a compiled package needs this version of a CUDA library")


def test_cudnn_sublibrary_mismatch(db: CompatDB) -> None:
    assert explain(TORCH_185512, db) == [(
        "cudnn-version-mismatch",
        "cuDNN's sub-libraries were loaded from two different cuDNN releases: part from one copy (torch's "
        "nvidia-cudnn wheel) and part from another (a system cuDNN on the loader path, or a package built for "
        "another cuDNN).",
        ["Keep one cuDNN in the process: remove other cuDNN copies from LD_LIBRARY_PATH and the system loader path, "
         "and install the builds of every package made for your torch's cuDNN major version ('cudaresolve lock' "
         "picks them).",
         "Run 'cudaresolve doctor' in the failing environment: it checks each installed library against the GPUs "
         "and the driver."],
    )]
    assert explain(TORCH_185512, None, lang="zh")[0][1].startswith("cuDNN 的各个子库来自两个不同的 cuDNN 版本")
