"""The message catalogue: complete in both languages, same fields, exact reason texts; picking the language."""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudaresolve.text.catalogue import (
    catalogue,
    format_text,
    join_groups,
    join_items,
    join_sentences,
    message,
    parenthesize,
    placeholders,
)
from cudaresolve.text.langs import pick_lang
from cudaresolve.text.model import Text

# The reason codes listed in the README, plus the minor-version-compatibility warning.
DESIGN_REASON_CODES = (
    "gpu-too-old",
    "no-gpu",
    "jetson-not-served",
    "jetson-needs-cuda",
    "driver-unsupported-gpu",
    "driver-too-old",
    "sm-not-covered",
    "sm-below-minimum",
    "ptx-jit-only",
    "cpu-build-on-gpu",
    "os-not-served",
    "platform-too-old",
    "no-wheel-for-python",
    "requires-python",
    "no-wheel-page",
    "sdist-unusable",
    "metadata-unusable",
    "no-wheel-for-platform",
    "variant-not-published",
    "pin-conflict",
    "request-conflict",
    "unknown-gpu",
    "no-such-version",
    "abi-mismatch",
    "forward-compat-available",
    "minor-version-compat",
    "constraint-excludes",
    "yanked-only",
    "pre-release-only",
    "no-common-set",
    "missing-cuda-library",
    "cuda-major-mixed",
    "cudnn-major-mixed",
)
_SRC = Path(__file__).resolve().parents[1] / "src" / "cudaresolve"
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_both_languages_hold_the_same_keys_each_with_words() -> None:
    en, zh = catalogue("en"), catalogue("zh")
    assert set(en) == set(zh)
    assert [k for k in en if not en[k].strip() or not zh[k].strip()] == []


def test_every_template_takes_the_same_fields_in_both_languages() -> None:
    differ = {k: (placeholders(k, "en"), placeholders(k, "zh")) for k in catalogue("en")
              if placeholders(k, "en") != placeholders(k, "zh")}
    assert differ == {}


def test_chinese_is_a_translation_not_a_copy() -> None:
    en, zh = catalogue("en"), catalogue("zh")
    copies = [k for k in en if zh[k] == en[k] and _CJK.search(en[k]) is None and _has_words(en[k])]
    assert copies == []
    assert [k for k in zh if _has_words(en[k]) and not _CJK.search(zh[k])] == []


def _has_words(template: str) -> bool:
    """A template with English words outside its fields (``{package} {version}`` has none)."""
    return re.search(r"[a-z]{3,}", re.sub(r"\{[^}]*\}", "", template)) is not None


def test_one_reason_key_per_design_code() -> None:
    assert {k.removeprefix("reason.") for k in catalogue("en") if k.startswith("reason.")} == set(DESIGN_REASON_CODES)


def test_every_key_is_used_in_the_source_and_every_used_key_exists() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in _SRC.rglob("*.py"))
    prefixes = "|".join(sorted({re.escape(k.split(".")[0]) for k in catalogue("en")}))
    used = set(re.findall(rf'"((?:{prefixes})\.[a-z0-9.-]+)"', source))
    reasons = {k for k in catalogue("en") if k.startswith("reason.")}  # built as f"reason.{code}"
    assert used - set(catalogue("en")) == set()
    assert set(catalogue("en")) - reasons - used == set()


REASONS = [
    (
        "gpu-too-old",
        {
            "gpu": "Tesla K80", "found": "sm_37", "cc": "3.7", "package": "torch", "required": "sm_50",
            "scope": Text.of("resolve.too-old-scope", request="torch==2.8.0"),
            "carried": Text.of("resolve.too-old-last", package="torch", sm="sm_37", version="2.7.1", variants="cu118"),
            "driver": Text.of("resolve.too-old-branch", last=470),
        },
        "Tesla K80 (sm_37, compute capability 3.7) is older than every torch build that fits torch==2.8.0: the oldest"
        " code they carry is sm_50; the last torch release with code for sm_37 is 2.7.1 (cu118); the R470 driver"
        " branch is the last that drives this GPU",
        "Tesla K80（sm_37，计算能力 3.7）比 torch 中符合 torch==2.8.0 的每个构建都旧：这些构建所带的最旧代码是"
        " sm_50；最后一个带有 sm_37 代码的 torch 版本是 2.7.1（cu118）；R470 驱动分支是最后一个支持此 GPU 的分支",
    ),
    (
        "no-gpu",
        {"variant": "cu121", "cuda": "12.1"},
        "CUDA 12.1 wheels (cu121) need an NVIDIA GPU; the target has none (a CPU target runs the cpu variant)",
        "CUDA 12.1 的 wheel（cu121）需要 NVIDIA GPU；目标机器没有 GPU（CPU 目标使用 cpu 变体）",
    ),
    (
        "jetson-not-served",
        {"package": "torch", "version": "2.9.0", "variant": "cu126", "found": "NVIDIA Jetson Orin"},
        "torch 2.9.0 (cu126): the CUDA wheels for aarch64 on PyPI and the PyTorch index are built for Arm servers"
        " (SBSA), not for Jetson (NVIDIA Jetson Orin); these indexes do not serve Jetson",
        "torch 2.9.0（cu126）：PyPI 和 PyTorch 索引上的 aarch64 CUDA wheel 是为 Arm 服务器（SBSA）构建的，"
        "不适用于 Jetson（NVIDIA Jetson Orin）；这些索引不提供 Jetson 的 wheel",
    ),
    (
        "jetson-needs-cuda",
        {"package": "torch", "version": "2.10.0", "variant": "cu128", "found": "NVIDIA Jetson AGX Thor",
         "cuda": "13.0"},
        "torch 2.10.0 (cu128): NVIDIA Jetson AGX Thor runs the Arm server (SBSA) CUDA wheels of PyPI and the PyTorch"
        " index only from CUDA 13.0 on, when NVIDIA made one Arm toolkit for both; this build is older",
        "torch 2.10.0（cu128）：NVIDIA Jetson AGX Thor 仅从 CUDA 13.0 起（NVIDIA 为两者提供同一套 Arm 工具包）才能运行"
        " PyPI 和 PyTorch 索引上为 Arm 服务器（SBSA）构建的 CUDA wheel；此构建更旧",
    ),
    (
        "driver-unsupported-gpu",
        {"gpu": "NVIDIA H100", "arch": "Hopper", "found": "450.80.02",
         "detail": Text.of("resolve.gpu-driver-needs", needed="520.61.05", required="520.61.05")},
        "driver 450.80.02 does not support NVIDIA H100 (Hopper): it needs driver 520.61.05 or newer;"
        " the lowest driver that supports every GPU here is 520.61.05",
        "驱动 450.80.02 不支持 NVIDIA H100（Hopper）：它需要驱动 520.61.05 或更新版本；"
        "支持本机所有 GPU 的最低驱动为 520.61.05",
    ),
    (
        "driver-too-old",
        {"cuda": "12.1", "variant": "cu121", "required": "525.60.13", "full": "530.30.02", "found": "470.129.06"},
        "CUDA 12.1 wheels (cu121) need driver 525.60.13 at least (530.30.02 for full compatibility);"
        " this host has 470.129.06",
        "CUDA 12.1 的 wheel（cu121）至少需要驱动 525.60.13（完全兼容需要 530.30.02）；本机驱动为 470.129.06",
    ),
    (
        "sm-not-covered",
        {
            "package": "fbgemm-gpu",
            "version": "1.0.0",
            "variant": "cu118",
            "sm": "sm_61",
            "gpu": "NVIDIA GeForce GTX 1080 Ti",
            "cc": "6.1",
            "found": "sm_70, sm_80",
        },
        "fbgemm-gpu 1.0.0 (cu118) has no code for sm_61 (NVIDIA GeForce GTX 1080 Ti, compute capability 6.1); "
        "it carries sm_70, sm_80",
        "fbgemm-gpu 1.0.0（cu118）没有 sm_61 的代码（NVIDIA GeForce GTX 1080 Ti，计算能力 6.1）；"
        "它只包含 sm_70, sm_80",
    ),
    (
        "sm-below-minimum",
        {"package": "flashinfer-python", "version": "0.6.17", "gpu": "Tesla V100", "cc": "7.0", "required": "7.5"},
        "flashinfer-python 0.6.17 supports compute capability 7.5 and newer; Tesla V100 is 7.0",
        "flashinfer-python 0.6.17 只支持计算能力 7.5 及以上的 GPU，Tesla V100 的计算能力为 7.0",
    ),
    (
        "ptx-jit-only",
        {
            "package": "xformers",
            "version": "0.0.30",
            "variant": "cu126",
            "gpu": "NVIDIA GeForce RTX 3090",
            "sm": "sm_86",
            "found": "compute_80",
        },
        "xformers 0.0.30 (cu126) has no native code for NVIDIA GeForce RTX 3090 (sm_86); the driver will "
        "JIT-compile its PTX (compute_80), so the first start is slow",
        "xformers 0.0.30（cu126）没有 NVIDIA GeForce RTX 3090（sm_86）的原生代码；驱动会即时编译其中的 PTX"
        "（compute_80），因此首次启动较慢",
    ),
    (
        "cpu-build-on-gpu",
        {"package": "torch", "required": "torch==2.9.0+cpu", "found": "NVIDIA A100"},
        "torch==2.9.0+cpu is a CPU build, and this target has a GPU (NVIDIA A100), which cudaresolve gives CUDA"
        " builds; declare a CPU target with --cpu to lock it",
        "torch==2.9.0+cpu 是 CPU 构建，而本目标有 GPU（NVIDIA A100），cudaresolve 为其选择 CUDA 构建；"
        "如需加锁 CPU 构建，请用 --cpu 声明 CPU 目标",
    ),
    (
        "os-not-served",
        {"package": "flashinfer-python", "version": "0.7.2", "required": "linux", "found": "win_amd64"},
        "flashinfer-python is published for linux only, not for win_amd64 (its install page and wheels)",
        "flashinfer-python 只为 linux 发布，不支持 win_amd64（见其安装页面与 wheel）",
    ),
    (
        "platform-too-old",
        {"package": "torch", "version": "2.15.0", "platform": "macosx_arm64", "required": "macOS 14.0",
         "found": "macOS 13.0", "example": "macosx_14_0_arm64"},
        "torch 2.15.0's wheel for macosx_arm64 needs macOS 14.0 or newer; the target has macOS 13.0 (a target that"
        " has it: --platform macosx_14_0_arm64)",
        "torch 2.15.0 的 macosx_arm64 wheel 需要 macOS 14.0 或更新；目标为 macOS 13.0（目标确有该版本时：--platform"
        " macosx_14_0_arm64）",
    ),
    (
        "no-wheel-for-python",
        {"package": "torch", "version": "2.4.1", "required": "3.8, 3.9, 3.10, 3.11, 3.12", "found": "3.13"},
        "torch 2.4.1 has no wheel for Python 3.13; it has wheels for Python 3.8, 3.9, 3.10, 3.11, 3.12",
        "torch 2.4.1 没有适用于 Python 3.13 的 wheel；它只为 Python 3.8, 3.9, 3.10, 3.11, 3.12 提供 wheel",
    ),
    (
        "requires-python",
        {"package": "demo", "version": "2.0", "required": ">=3.12", "found": "3.11"},
        "demo 2.0 declares Requires-Python >=3.12, which leaves out the target's Python 3.11;"
        " pip and uv would not install it",
        "demo 2.0 声明了 Requires-Python >=3.12，不包括目标的 Python 3.11；pip 和 uv 不会安装它",
    ),
    (
        "no-wheel-page",
        {"package": "pyg-lib", "required": "torch==2.4.*", "found": "2.8, 2.7, 2.6", "example": "2.8"},
        "pyg-lib publishes its CUDA wheels on one page per torch release, and none serves torch==2.4.* on a variant"
        " this machine runs; torch releases with a page: 2.8, 2.7, 2.6. Ask for one of them (e.g. torch==2.8.*),"
        " or, where PyPI carries its sdist, let it be built from source",
        "pyg-lib 的 CUDA wheel 按 torch 版本分页发布，没有一页适用于 torch==2.4.*（在本机可运行的变体上）；"
        "有页面的 torch 版本：2.8, 2.7, 2.6。请改用其中之一（例如 torch==2.8.*），"
        "或在 PyPI 有其源码包时允许从源码构建",
    ),
    (
        "sdist-unusable",
        {"package": "iopath", "version": "0.1.10"},
        "iopath 0.1.10 has only an sdist for this target, whose dependencies are known only by building it,"
        " and it was not built (--no-build) or its build failed",
        "iopath 0.1.10 在该目标上只有源码包，其依赖只有构建后才能知道，而它未被构建（--no-build）或构建失败",
    ),
    (
        "metadata-unusable",
        {"package": "lightning", "version": "1.8.3.post2"},
        "the core metadata of lightning 1.8.3.post2 cannot be used (a malformed field, or it describes another"
        " release); pip and uv pass such a release over",
        "lightning 1.8.3.post2 的核心元数据无法使用（字段格式错误，或描述的是另一个版本）；pip 和 uv 会跳过这样的版本",
    ),
    (
        "no-wheel-for-platform",
        {"package": "fbgemm-gpu", "version": "1.2.0", "required": "linux_x86_64", "found": "win_amd64"},
        "fbgemm-gpu 1.2.0 has no wheel for win_amd64; it is published for linux_x86_64",
        "fbgemm-gpu 1.2.0 没有适用于 win_amd64 平台的 wheel；它只发布了 linux_x86_64 平台的版本",
    ),
    (
        "variant-not-published",
        {"package": "fbgemm-gpu", "version": "1.8.0", "variant": "cu128", "required": "cu126, cu130"},
        "fbgemm-gpu 1.8.0 was not published for cu128; it exists for cu126, cu130",
        "fbgemm-gpu 1.8.0 没有发布 cu128 构建；已发布的构建有 cu126, cu130",
    ),
    (
        "pin-conflict",
        {"package": "torchrec", "version": "1.2.0", "required": "fbgemm-gpu==1.2.*", "found": "fbgemm-gpu 1.3.0"},
        "torchrec 1.2.0 requires fbgemm-gpu==1.2.*, but fbgemm-gpu 1.3.0 is chosen",
        "torchrec 1.2.0 要求 fbgemm-gpu==1.2.*，但已选定的是 fbgemm-gpu 1.3.0",
    ),
    (
        "request-conflict",
        {"package": "torchaudio", "version": "2.11.0", "required": "torch==2.11.0", "found": "torch>=2.12"},
        "torchaudio 2.11.0 requires torch==2.11.0, but torch>=2.12 was requested;"
        " no other torchaudio release fits that request either",
        "torchaudio 2.11.0 要求 torch==2.11.0，但请求的是 torch>=2.12；torchaudio 的其他版本也都不满足这一请求",
    ),
    (
        "unknown-gpu",
        {"gpu": "RTX 9999"},
        'the database does not know the GPU "RTX 9999"; give its compute capability instead, e.g. --gpu 8.6',
        "数据库中没有 GPU“RTX 9999”；请改为给出它的计算能力，例如 --gpu 8.6",
    ),
    (
        "no-such-version",
        {"package": "torch", "required": "2.99.0", "found": "2.14.0"},
        "torch has no release 2.99.0; the newest known release is 2.14.0",
        "torch 没有 2.99.0 这个版本；已知的最新版本是 2.14.0",
    ),
    (
        "abi-mismatch",
        {"package": "xformers", "version": "0.0.28.post3", "required": "2.5.1", "found": "2.6.0"},
        "xformers 0.0.28.post3 was built for torch 2.5.1, but torch 2.6.0 is installed",
        "xformers 0.0.28.post3 是针对 torch 2.5.1 构建的，但当前安装的是 torch 2.6.0",
    ),
    (
        "forward-compat-available",
        {"gpu": "NVIDIA A100-SXM4-80GB", "variant": "cu128", "required": "12.8", "found": "470.256.02"},
        "NVIDIA A100-SXM4-80GB is a data-center GPU: with the cuda-compat package, driver 470.256.02 can run "
        "CUDA 12.8 (cu128)",
        "NVIDIA A100-SXM4-80GB 是数据中心 GPU：安装 cuda-compat 软件包后，驱动 470.256.02 也能运行 CUDA 12.8（cu128）",
    ),
    (
        "minor-version-compat",
        {"variant": "cu128", "required": "570.26", "found": "535.104.05"},
        "driver 535.104.05 runs cu128 only through CUDA minor-version compatibility (full support needs 570.26); "
        "code that the driver must JIT-compile from PTX may fail",
        "驱动 535.104.05 只能借助 CUDA 小版本兼容性运行 cu128（完全支持需要 570.26）；"
        "需要驱动从 PTX 即时编译的代码可能会失败",
    ),
    (
        "constraint-excludes",
        {"package": "demo", "constraint": "<1", "required": ">=0.5", "found": "1.0"},
        "the constraint demo<1 (-c) rules out every demo release that fits >=0.5 (1.0)",
        "约束 demo<1（-c）排除了 demo 所有符合 >=0.5 的版本（1.0）",
    ),
    (
        "yanked-only",
        {"package": "demo", "required": "any version", "found": "1.1, 1.0", "example": "1.1"},
        "every demo release that fits any version is yanked (1.1, 1.0); pin one exactly (demo==1.1) to take it "
        "anyway (PEP 592), or ask for another version",
        "demo 所有符合 any version 的版本都已被撤回（1.1, 1.0）；如仍要使用，请精确固定其中一个（demo==1.1，PEP 592），"
        "或改用其他版本",
    ),
    (
        "pre-release-only",
        {"package": "demo", "required": ">=1", "found": "2.0rc1", "example": "2.0rc1"},
        "every demo release that fits >=1 is a pre-release (2.0rc1); name one in the requirement (demo>=2.0rc1) "
        "or pass --prerelease allow to allow it",
        "demo 所有符合 >=1 的版本都是预发布版本（2.0rc1）；请在需求中写明一个（demo>=2.0rc1）"
        "或传入 --prerelease allow 以允许它",
    ),
    (
        "no-common-set",
        {"required": "app, lib>=2"},
        "no set of versions satisfies all of app, lib>=2 together",
        "没有一组版本能同时满足 app, lib>=2",
    ),
    (
        "missing-cuda-library",
        {"package": "vllm 0.11.0", "path": "vllm/_C.abi3.so", "library": ("libcudart.so.13",)},
        "vllm 0.11.0: vllm/_C.abi3.so needs libcudart.so.13, which no package in this environment provides (nor its "
        "RUNPATH, LD_LIBRARY_PATH or a library torch loads); importing it fails with 'cannot open shared object file'",
        "vllm 0.11.0：vllm/_C.abi3.so 需要 libcudart.so.13，但当前环境中没有任何软件包提供它（它的 RUNPATH、"
        "LD_LIBRARY_PATH 和 torch 加载的库中也没有）；导入时会报 'cannot open shared object file'",
    ),
    (
        "cuda-major-mixed",
        {"package": "nvidia-cublas-cu12", "version": "12.8.4.1", "required": "12", "found": "13 (torch 2.11.0+cu130)",
         "major": "13"},
        "nvidia-cublas-cu12 12.8.4.1 carries CUDA 12 libraries, but the rest of the set is built for CUDA 13"
        " (torch 2.11.0+cu130); one environment holds one CUDA major. Ways out: a nvidia-cublas-cu12 release or name"
        " built for CUDA 13, builds of CUDA 12 for the rest (e.g. a torch ...+cu12x pin), or leaving nvidia-cublas-cu12"
        " out",
        "nvidia-cublas-cu12 12.8.4.1 带有 CUDA 12 的库，但集合中其余部分是为 CUDA 13 (torch 2.11.0+cu130) 构建的；"
        "一个环境只能有一个 CUDA 主版本。出路：选用为 CUDA 13 构建的 nvidia-cublas-cu12 版本或包名，"
        "让其余部分改用 CUDA 12 的构建（例如固定 torch ...+cu12x），或不安装 nvidia-cublas-cu12",
    ),
    (
        "cudnn-major-mixed",
        {"package": "onnxruntime-gpu", "version": "1.18.1", "required": "8", "found": "9 (nvidia-cudnn-cu12 9.1.0.70)",
         "major": "9"},
        "onnxruntime-gpu 1.18.1 is built for cuDNN 8, but the rest of the set uses cuDNN 9 (nvidia-cudnn-cu12"
        " 9.1.0.70); one environment loads one cuDNN major (a mix fails at run time with"
        " CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or a missing libcudnn.so.8). Ways out: a onnxruntime-gpu release"
        " built for cuDNN 9, a torch release whose nvidia-cudnn pin is cuDNN 8, or leaving onnxruntime-gpu out",
        "onnxruntime-gpu 1.18.1 是为 cuDNN 8 构建的，但集合中其余部分使用 cuDNN 9 (nvidia-cudnn-cu12 9.1.0.70)；"
        "一个环境只能加载一个 cuDNN 主版本（混用会在运行时报 CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH 或找不到"
        " libcudnn.so.8）。出路：选用为 cuDNN 9 构建的 onnxruntime-gpu 版本，选用其 nvidia-cudnn 固定为 cuDNN 8 的"
        " torch 版本，或不安装 onnxruntime-gpu",
    ),
]


def test_the_reason_table_covers_every_code() -> None:
    assert [row[0] for row in REASONS] == list(DESIGN_REASON_CODES)


@pytest.mark.parametrize(("code", "fields", "en", "zh"), REASONS, ids=[r[0] for r in REASONS])
def test_reason_messages_render_exactly(code: str, fields: dict[str, object], en: str, zh: str) -> None:
    assert message(f"reason.{code}", "en", **fields) == en
    assert message(f"reason.{code}", "zh", **fields) == zh


def test_message_defaults_to_english() -> None:
    assert message("render.fix") == "fix"


def test_unknown_key_missing_field_and_unknown_language() -> None:
    with pytest.raises(KeyError, match=r"no message 'reason\.nope'"):
        message("reason.nope")
    with pytest.raises(KeyError, match="found"):
        message("reason.driver-too-old", "en", cuda="12.8", variant="cu128", required="570.26", full="570.26")
    with pytest.raises(ValueError, match="unknown language: 'fr'"):
        message("render.fix", "fr")


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (None, {}, "en"),
        ("zh", {"LANG": "en_US.UTF-8"}, "zh"),
        ("EN", {"LANG": "zh_CN.UTF-8"}, "en"),
        (None, {"LANG": "zh_CN.UTF-8"}, "zh"),
        (None, {"LANG": "zh_TW.UTF-8"}, "zh"),
        (None, {"LANG": "de_DE.UTF-8"}, "en"),
        (None, {"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        (None, {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),
        (None, {"LC_ALL": "zh_SG.GB2312", "LC_MESSAGES": "en_GB.UTF-8"}, "zh"),
        (None, {"LC_ALL": "", "LANG": "zh_HK"}, "zh"),
    ],
)
def test_pick_lang(flag: str | None, env: dict[str, str], expected: str) -> None:
    assert pick_lang(flag, env) == expected


def test_pick_lang_refuses_an_unknown_flag() -> None:
    with pytest.raises(ValueError, match="unknown language: 'fr'"):
        pick_lang("fr", {})


def test_joining_helpers_follow_the_language() -> None:
    assert join_items(["cu118", "cu126"], "en") == "cu118, cu126"
    assert join_items(["cu118", "cu126"], "zh") == "cu118、cu126"
    assert join_groups(["2.8.0 (cu126)", "2.7.1 (cu118)"], "en") == "2.8.0 (cu126); 2.7.1 (cu118)"
    assert join_groups(["a", "b"], "zh") == "a；b"
    assert join_sentences(["One.", "", "Two."], "en") == "One. Two."
    assert join_sentences(["一。", "二。"], "zh") == "一。二。"
    assert parenthesize("GTX 1080 Ti", "6.1", "en") == "GTX 1080 Ti (6.1)"
    assert parenthesize("GTX 1080 Ti", "6.1", "zh") == "GTX 1080 Ti（6.1）"


def test_a_fields_control_characters_are_shown_escaped_never_sent() -> None:
    """A value from input (a GPU name nvidia-smi gave, a lock's field) with an escape sequence, a bell or a carriage
    return reaches the terminal as its escape, in every message; newlines and tabs stay (a build's output)."""
    shown = format_text(Text.of("target.unknown-gpu", gpu="A\x1b[31mRED\x07\r\x9b"))
    assert shown == "unknown GPU: A\\x1b[31mRED\\x07\\r\\x9b"
    assert format_text(Text.of("target.unknown-gpu", gpu="two\nlines\tand tab")) == "unknown GPU: two\nlines\tand tab"


def test_a_field_of_thousands_of_characters_is_shown_by_its_ends() -> None:
    """Found by the hostile-input audit: a requirement of 60,000 characters was echoed whole, twice, by why-not (130
    KB on the terminal). A field longer than 2,000 characters shows its first 1,500 and last 300 and its length."""
    gpu = "A" * 1500 + "B" * 5000 + "C" * 300
    shown = format_text(Text.of("target.unknown-gpu", gpu=gpu))
    assert shown == f"unknown GPU: {'A' * 1500} … (6800 characters in all) … {'C' * 300}"
    assert "6800" in format_text(Text.of("target.unknown-gpu", gpu=gpu), "zh")
    whole = "x" * 2000
    assert format_text(Text.of("target.unknown-gpu", gpu=whole)) == f"unknown GPU: {whole}"


def test_why_not_of_a_huge_requirement_says_it_in_a_few_kilobytes(capsys: pytest.CaptureFixture[str]) -> None:
    from cudaresolve.cli import main

    main(["why-not", "torch==" + "1." * 30000 + "1", "--gpu", "H100"])
    out = capsys.readouterr()
    assert len(out.out) + len(out.err) < 10_000
