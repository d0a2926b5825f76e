"""The message catalogue in English and Chinese, and the choice of language. Pure.

Every user-facing sentence that explains a problem lives here once per language, as a
``str.format`` template with named fields. Keys:

* ``reason.<code>``: one per reason code of design section 4 (plus ``minor-version-compat``);
  the fields each template takes are in ``REASON_FIELDS``, so ``explain.py`` can fill them.
* ``sig.<code>.*``: causes of the error signatures (``signatures.py``).
* ``fix.*``: fixes, shared by several signatures.
* ``explain.*`` and ``render.*``: the explain-error command's own words.

Both catalogues are complete and take the same fields for each key (``tests/test_messages.py``).
"""

# The Chinese catalogue uses full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Final, Literal

from cudaresolve.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "LANGS",
    "MESSAGES",
    "REASON_FIELDS",
    "Lang",
    "join_groups",
    "join_items",
    "join_sentences",
    "message",
    "parenthesize",
    "pick_lang",
    "placeholders",
]

Lang = Literal["en", "zh"]
LANGS: Final[tuple[Lang, ...]] = ("en", "zh")

#: Fields each reason template takes: {package} {version} {variant} {required} {found} {gpu} {cc} {sm}.
REASON_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "driver-too-old": frozenset({"cuda", "variant", "required", "full", "found"}),
    "sm-not-covered": frozenset({"package", "version", "variant", "sm", "gpu", "cc", "found"}),
    "sm-below-minimum": frozenset({"package", "version", "gpu", "cc", "required"}),
    "ptx-jit-only": frozenset({"package", "version", "variant", "gpu", "sm", "found"}),
    "no-wheel-for-python": frozenset({"package", "version", "required", "found"}),
    "no-wheel-for-platform": frozenset({"package", "version", "required", "found"}),
    "variant-not-published": frozenset({"package", "version", "variant", "required"}),
    "pin-conflict": frozenset({"package", "version", "required", "found"}),
    "unknown-gpu": frozenset({"gpu"}),
    "no-such-version": frozenset({"package", "required", "found"}),
    "abi-mismatch": frozenset({"package", "version", "required", "found"}),
    "forward-compat-available": frozenset({"gpu", "variant", "required", "found"}),
    "minor-version-compat": frozenset({"variant", "required", "found"}),
}

_E = "en"
_Z = "zh"

MESSAGES: Final[Mapping[str, Mapping[str, str]]] = {
    # -- reason codes (design section 4); filled by explain.py -------------------------------
    "reason.driver-too-old": {
        _E: "CUDA {cuda} wheels ({variant}) need driver {required} at least ({full} for full compatibility);"
        " this host has {found}",
        _Z: "CUDA {cuda} 的 wheel（{variant}）至少需要驱动 {required}（完全兼容需要 {full}）；本机驱动为 {found}",
    },
    "reason.sm-not-covered": {
        _E: "{package} {version} ({variant}) has no code for {sm} ({gpu}, compute capability {cc}); it carries {found}",
        _Z: "{package} {version}（{variant}）没有 {sm} 的代码（{gpu}，计算能力 {cc}）；它只包含 {found}",
    },
    "reason.sm-below-minimum": {
        _E: "{package} {version} supports compute capability {required} and newer; {gpu} is {cc}",
        _Z: "{package} {version} 只支持计算能力 {required} 及以上的 GPU，{gpu} 的计算能力为 {cc}",
    },
    "reason.ptx-jit-only": {
        _E: "{package} {version} ({variant}) has no native code for {gpu} ({sm}); the driver will JIT-compile "
        "its PTX ({found}), so the first start is slow",
        _Z: "{package} {version}（{variant}）没有 {gpu}（{sm}）的原生代码；驱动会即时编译其中的 PTX（{found}），"
        "因此首次启动较慢",
    },
    "reason.no-wheel-for-python": {
        _E: "{package} {version} has no wheel for Python {found}; it has wheels for Python {required}",
        _Z: "{package} {version} 没有适用于 Python {found} 的 wheel；它只为 Python {required} 提供 wheel",
    },
    "reason.no-wheel-for-platform": {
        _E: "{package} {version} has no wheel for {found}; it is published for {required}",
        _Z: "{package} {version} 没有适用于 {found} 平台的 wheel；它只发布了 {required} 平台的版本",
    },
    "reason.variant-not-published": {
        _E: "{package} {version} was not published for {variant}; it exists for {required}",
        _Z: "{package} {version} 没有发布 {variant} 构建；已发布的构建有 {required}",
    },
    "reason.pin-conflict": {
        _E: "{package} {version} requires {required}, but {found} is chosen",
        _Z: "{package} {version} 要求 {required}，但已选定的是 {found}",
    },
    "reason.unknown-gpu": {
        _E: 'the database does not know the GPU "{gpu}"; give its compute capability instead, e.g. --gpu 8.6',
        _Z: "数据库中没有 GPU“{gpu}”；请改为给出它的计算能力，例如 --gpu 8.6",
    },
    "reason.no-such-version": {
        _E: "{package} has no release {required}; the newest known release is {found}",
        _Z: "{package} 没有 {required} 这个版本；已知的最新版本是 {found}",
    },
    "reason.abi-mismatch": {
        _E: "{package} {version} was built for torch {required}, but torch {found} is installed",
        _Z: "{package} {version} 是针对 torch {required} 构建的，但当前安装的是 torch {found}",
    },
    "reason.forward-compat-available": {
        _E: "{gpu} is a data-center GPU: with the cuda-compat package, driver {found} can run CUDA {required} "
        "({variant})",
        _Z: "{gpu} 是数据中心 GPU：安装 cuda-compat 软件包后，驱动 {found} 也能运行 CUDA {required}（{variant}）",
    },
    "warn.driver-unknown": {
        _E: "no driver version was given or detected, so the driver was not checked; pass --driver",
        _Z: "没有给出也没有检测到驱动版本，因此没有检查驱动；请用 --driver 指定",
    },
    "alt.works": {
        _E: "{spec} works here: {picked} from {index}",
        _Z: "{spec} 在本机可用：从 {index} 安装 {picked}",
    },
    "alt.driver-upgrade": {
        _E: "upgrade the NVIDIA driver to {full} or newer for CUDA {cuda} ({floor} is the floor under"
        " minor-version compatibility)",
        _Z: "把 NVIDIA 驱动升级到 {full} 或更高版本以完全支持 CUDA {cuda}（借助小版本兼容性的最低要求是 {floor}）",
    },
    "alt.source-build": {
        _E: 'build from source with TORCH_CUDA_ARCH_LIST="{arch_list}" so that every GPU here gets native code',
        _Z: '用 TORCH_CUDA_ARCH_LIST="{arch_list}" 从源码构建，让本机每块 GPU 都有原生代码',
    },
    "render.why-not.possible": {
        _E: "{spec} is possible here; it would install:",
        _Z: "{spec} 在本机可行，将会安装：",
    },
    "render.why-not.impossible": {
        _E: "{spec} is not possible here",
        _Z: "{spec} 在本机不可行",
    },
    "render.why-not.because": {_E: "because", _Z: "原因"},
    "render.why-not.ways-out": {_E: "ways out", _Z: "解决办法"},
    "render.findings": {_E: "findings, most basic cause first", _Z: "发现的问题（最根本的原因在前）"},
    "render.no-solution": {
        _E: "no set of packages fits this target: {first}",
        _Z: "没有一组软件包适合这台机器：{first}",
    },
    "render.no-solution-hint": {
        _E: "run 'cudaresolve why-not' on a package or variant for the ways out",
        _Z: "对某个软件包或构建变体运行 'cudaresolve why-not'，查看可行的办法",
    },
    "reason.minor-version-compat": {
        _E: "driver {found} runs {variant} only through CUDA minor-version compatibility (full support needs "
        "{required}); code that the driver must JIT-compile from PTX may fail",
        _Z: "驱动 {found} 只能借助 CUDA 小版本兼容性运行 {variant}（完全支持需要 {required}）；"
        "需要驱动从 PTX 即时编译的代码可能会失败",
    },
    # -- signature: no kernel image ---------------------------------------------------------
    "sig.no-kernel-image.cause": {
        _E: "A CUDA library in this process has no kernel for this GPU: its wheel carries neither native code "
        "(SASS) nor PTX for the GPU's architecture.",
        _Z: "进程中的某个 CUDA 库没有适用于这块 GPU 的内核：它的 wheel 既不含该架构的原生代码（SASS），也不含 PTX。",
    },
    "sig.no-kernel-image.cause-package": {
        _E: "The failing kernel comes from {package}, whose wheel carries neither native code (SASS) nor PTX "
        "for this GPU's architecture.",
        _Z: "出错的内核来自 {package}，它的 wheel 既不含这块 GPU 架构的原生代码（SASS），也不含 PTX。",
    },
    "sig.no-kernel-image.target": {
        _E: "The target's GPUs: {gpus}; a build must carry code for {sms}.",
        _Z: "目标机器的 GPU：{gpus}；构建中必须包含 {sms} 的代码。",
    },
    "word.this-gpu": {_E: "this GPU", _Z: "这块 GPU"},
    "word.fbgemm-via-torchrec": {
        _E: "fbgemm-gpu (torchrec's GPU kernels)",
        _Z: "fbgemm-gpu（torchrec 的 GPU 内核由它提供）",
    },
    # -- signature: driver older than the runtime ---------------------------------------------
    "sig.driver-insufficient.cause": {
        _E: "The NVIDIA driver is older than the CUDA runtime this build needs.",
        _Z: "NVIDIA 驱动版本过旧，不支持该构建所需的 CUDA 运行时。",
    },
    "sig.driver-insufficient.cause-found": {
        _E: "The NVIDIA driver supports CUDA {found} at most; the installed build needs a newer CUDA runtime.",
        _Z: "NVIDIA 驱动最高只支持 CUDA {found}，而已安装的构建需要更新的 CUDA 运行时。",
    },
    # -- signature: ABI pairing ---------------------------------------------------------------
    "sig.abi-mismatch.cause": {
        _E: "{package} is a compiled extension built against another torch than the one installed, so its C++ "
        "symbols do not resolve.",
        _Z: "{package} 是针对另一个 torch 版本编译的扩展，与当前安装的 torch 不匹配，因此它的 C++ 符号无法解析。",
    },
    "sig.abi-mismatch.cause-built-for": {
        _E: "xFormers was built for torch {required}, but torch {found} is installed.",
        _Z: "xFormers 是针对 torch {required} 构建的，但当前安装的是 torch {found}。",
    },
    # -- signature: xformers built for another SM ---------------------------------------------
    "sig.xformers-built-for-other-sm.cause": {
        _E: "This xFormers was compiled for sm_{built} only, but the kernel {kernel} needs sm_{low} to sm_{high}: "
        "it was built from source on another GPU than the one it runs on.",
        _Z: "这个 xFormers 只针对 sm_{built} 编译，而内核 {kernel} 需要 sm_{low} 到 sm_{high}："
        "它是在另一块 GPU 上从源码构建的，与运行它的 GPU 不同。",
    },
    # -- signature: flashinfer sm75 check -----------------------------------------------------
    "sig.flashinfer-requires-sm75.cause-old": {
        _E: "flashinfer before 0.3.0 checked the architectures in TORCH_CUDA_ARCH_LIST, not the GPUs: any entry "
        "below 7.5 there fails the check, even on a newer GPU (flashinfer#1115, fixed in 0.3.0).",
        _Z: "0.3.0 之前的 flashinfer 检查的是 TORCH_CUDA_ARCH_LIST 中的架构，而不是 GPU 本身：只要其中有低于 7.5 的项，"
        "即使 GPU 更新也会检查失败（flashinfer#1115，已在 0.3.0 修复）。",
    },
    "sig.flashinfer-requires-sm75.cause-new": {
        _E: "flashinfer found no target GPU of compute capability 7.5 or newer: it reads FLASHINFER_CUDA_ARCH_LIST "
        "if set, otherwise the visible GPUs.",
        _Z: "flashinfer 没有找到计算能力 7.5 或更高的目标 GPU：设置了 FLASHINFER_CUDA_ARCH_LIST 时它读取该变量，"
        "否则读取可见的 GPU。",
    },
    "sig.flashinfer-requires-sm75.gpus-ok": {
        _E: "Every GPU here is 7.5 or newer ({ccs}), so an architecture list, not the hardware, triggers this.",
        _Z: "本机每块 GPU 的计算能力都不低于 7.5（{ccs}），因此触发该错误的是架构列表，而不是硬件。",
    },
    "sig.flashinfer-requires-sm75.gpus-old": {
        _E: "{gpus} is below flashinfer's minimum compute capability 7.5; no flashinfer build runs on it.",
        _Z: "{gpus} 低于 flashinfer 要求的最低计算能力 7.5，任何 flashinfer 构建都无法在其上运行。",
    },
    # -- signature: torch without code for the GPU --------------------------------------------
    "sig.torch-sm-unsupported.cause": {
        _E: "This torch build has no kernels for {gpu} ({sm}); it carries {found}.",
        _Z: "这个 torch 构建没有适用于 {gpu}（{sm}）的内核；它只包含 {found}。",
    },
    "sig.torch-sm-unsupported.cause-short": {
        _E: "This torch build has no kernels for {gpu} ({sm}).",
        _Z: "这个 torch 构建没有适用于 {gpu}（{sm}）的内核。",
    },
    "sig.torch-sm-unsupported.cause-min": {
        _E: "{gpu} has compute capability {cc}; this torch build supports {required} and newer only.",
        _Z: "{gpu} 的计算能力为 {cc}；这个 torch 构建只支持 {required} 及以上。",
    },
    "sig.torch-sm-unsupported.newer-gpu": {
        _E: "The GPU is newer than every architecture in the build: a torch built with CUDA {cuda} or newer is needed "
        "to compile for {sm}.",
        _Z: "这块 GPU 比构建中的所有架构都新：需要用 CUDA {cuda} 或更高版本构建的 torch 才能包含 {sm} 的代码。",
    },
    # -- signature: torch.cuda.is_available() is False ----------------------------------------
    "sig.cuda-not-available.cause": {
        _E: "torch cannot use a GPU: the installed torch is a CPU-only build, no working NVIDIA driver or GPU is "
        "visible, or the driver is older than the torch build's CUDA.",
        _Z: "torch 无法使用 GPU：可能安装的是仅 CPU 的构建，可能看不到可用的 NVIDIA 驱动或 GPU，"
        "也可能驱动版本低于该 torch 构建所用的 CUDA。",
    },
    # -- signature: CPU-only torch --------------------------------------------------------------
    "sig.torch-cpu-build.cause": {
        _E: "The installed torch is a CPU-only build (a +cpu wheel, or the PyPI wheel on Windows and macOS).",
        _Z: "当前安装的 torch 是仅 CPU 的构建（+cpu 的 wheel，或 Windows 和 macOS 上来自 PyPI 的 wheel）。",
    },
    # -- signature: PTX from a newer toolchain --------------------------------------------------
    "sig.ptx-unsupported-toolchain.cause": {
        _E: "A kernel shipped as PTX was compiled by a newer CUDA toolkit than this driver supports, so the driver "
        "cannot JIT-compile it.",
        _Z: "某个以 PTX 形式发布的内核是用比该驱动所支持的更新的 CUDA 工具包编译的，因此驱动无法即时编译它。",
    },
    # -- signature: AOTInductor device mismatch -------------------------------------------------
    "sig.aoti-device-mismatch.cause": {
        _E: "An AOTInductor model runs on another device than it was compiled for: a CPU-compiled model loaded by a "
        "CUDA runner, or CPU tensors passed to a CUDA-compiled model.",
        _Z: "AOTInductor 模型运行的设备与编译时的设备不同：用 CUDA runner 加载了为 CPU 编译的模型，"
        "或者把 CPU 张量传给了为 CUDA 编译的模型。",
    },
    # -- signature: no driver -------------------------------------------------------------------
    "sig.no-driver.cause": {
        _E: "torch found no NVIDIA driver: none is installed, its kernel module is not loaded, or the container was "
        "started without GPU access.",
        _Z: "torch 没有找到 NVIDIA 驱动：可能没有安装驱动、内核模块没有加载，或者容器启动时没有开放 GPU 访问。",
    },
    # -- signature: cuInit failed ---------------------------------------------------------------
    "sig.driver-init-failed.cause": {
        _E: "An NVIDIA driver is installed, but CUDA could not initialise it (cuInit failed).",
        _Z: "已安装 NVIDIA 驱动，但 CUDA 无法完成初始化（cuInit 失败）。",
    },
    # -- signature: no device -------------------------------------------------------------------
    "sig.no-cuda-device.cause": {
        _E: "CUDA sees no usable GPU: CUDA_VISIBLE_DEVICES hides them or names a missing index, or no GPU is "
        "attached to this process or container.",
        _Z: "CUDA 看不到可用的 GPU：可能是 CUDA_VISIBLE_DEVICES 屏蔽了它们或指定了不存在的编号，"
        "也可能这个进程或容器没有挂载 GPU。",
    },
    # -- signature: missing CUDA library --------------------------------------------------------
    "sig.missing-cuda-library.cause": {
        _E: "{library} is missing: a compiled package was built for CUDA {major}, and this environment has no "
        "CUDA {major} runtime (its torch comes from another CUDA major version, or is a CPU build).",
        _Z: "缺少 {library}：某个编译好的软件包是针对 CUDA {major} 构建的，而当前环境没有 CUDA {major} 运行时"
        "（其中的 torch 来自另一个 CUDA 主版本，或是仅 CPU 的构建）。",
    },
    "sig.missing-cuda-library.cause-unversioned": {
        _E: "{library} is missing: a compiled package needs a CUDA library that this environment does not provide.",
        _Z: "缺少 {library}：某个编译好的软件包需要一个当前环境没有提供的 CUDA 库。",
    },
    # -- signature: Triton and old GPUs ---------------------------------------------------------
    "sig.triton-gpu-too-old.cause": {
        _E: "Triton, which torch.compile uses to generate GPU code, needs compute capability {required} or newer; "
        "{gpu} is {cc}.",
        _Z: "torch.compile 用 Triton 生成 GPU 代码，而 Triton 需要计算能力 {required} 或更高；"
        "{gpu} 的计算能力为 {cc}。",
    },
    # -- fixes ----------------------------------------------------------------------------------
    "fix.rerun-with-target": {
        _E: "Name the GPU (--gpu NAME or --gpu 6.1) or run this on the failing machine to get fixes for it.",
        _Z: "用 --gpu 指定 GPU（名称或计算能力，例如 --gpu 6.1），或在出错的机器上运行本命令，以获得针对它的修复建议。",
    },
    "fix.doctor": {
        _E: "Run 'cudaresolve doctor' in the failing environment: it checks each installed library against the GPUs "
        "and the driver.",
        _Z: "在出错的环境中运行 'cudaresolve doctor'：它会对照 GPU 和驱动逐一检查已安装的库。",
    },
    "fix.releases": {
        _E: "{package} releases with native code for {sms}: {releases}.",
        _Z: "包含 {sms} 原生代码的 {package} 版本：{releases}。",
    },
    "fix.no-releases": {
        _E: "No {package} wheel in the database has native code for {sms}.",
        _Z: "数据库中没有任何 {package} wheel 包含 {sms} 的原生代码。",
    },
    "fix.source-build": {
        _E: 'Build {package} from source with TORCH_CUDA_ARCH_LIST="{arch_list}" so that it carries code for '
        "these GPUs.",
        _Z: '设置 TORCH_CUDA_ARCH_LIST="{arch_list}" 后从源码构建 {package}，使其包含这些 GPU 的代码。',
    },
    "fix.use-variant": {
        _E: "Install builds for {variant} (CUDA {cuda}), the newest variant this driver fully supports: "
        "pip install torch --index-url {index_url}",
        _Z: "安装 {variant}（CUDA {cuda}）构建，这是该驱动完全支持的最新变体："
        "pip install torch --index-url {index_url}",
    },
    "fix.use-variant-minor": {
        _E: "Install builds for {variant} (CUDA {cuda}); this driver runs them only through minor-version "
        "compatibility, so code JIT-compiled from PTX may fail: pip install torch --index-url {index_url}",
        _Z: "安装 {variant}（CUDA {cuda}）构建；该驱动只能借助小版本兼容性运行它们，需要从 PTX 即时编译的代码可能失败："
        "pip install torch --index-url {index_url}",
    },
    "fix.use-cuda-max": {
        _E: "Install builds made for CUDA {cuda} or older.",
        _Z: "安装针对 CUDA {cuda} 或更早版本构建的软件包。",
    },
    "fix.no-variant": {
        _E: "No variant in the database runs on driver {driver}; upgrade the driver.",
        _Z: "数据库中没有能在驱动 {driver} 上运行的变体，请升级驱动。",
    },
    "fix.upgrade-driver": {
        _E: "Or upgrade the NVIDIA driver; nvidia-smi shows the newest CUDA version a driver supports.",
        _Z: "或者升级 NVIDIA 驱动；nvidia-smi 会显示驱动支持的最高 CUDA 版本。",
    },
    "fix.lock": {
        _E: "Run 'cudaresolve lock' to choose a set of builds that this driver and these GPUs run.",
        _Z: "运行 'cudaresolve lock'，选出这个驱动和这些 GPU 都能运行的一组构建。",
    },
    "fix.pair-fbgemm": {
        _E: "Install the fbgemm-gpu release paired with your torch: fbgemm-gpu 1.X is built for torch 2.(X+5), "
        "e.g. 1.2 for 2.7 and 1.3 for 2.8, and torchrec X.Y needs fbgemm-gpu X.Y.",
        _Z: "安装与当前 torch 配套的 fbgemm-gpu：fbgemm-gpu 1.X 是针对 torch 2.(X+5) 构建的，"
        "例如 1.2 对应 2.7、1.3 对应 2.8；torchrec X.Y 需要 fbgemm-gpu X.Y。",
    },
    "fix.pair-xformers": {
        _E: "Install the xformers release made for your torch: up to 0.0.34 each release pins one exact torch "
        "version; 0.0.35 works with torch 2.10 and newer.",
        _Z: "安装为当前 torch 构建的 xformers：0.0.34 及之前的每个版本都固定依赖一个确切的 torch 版本；"
        "0.0.35 适用于 torch 2.10 及更高版本。",
    },
    "fix.pair-flashinfer": {
        _E: "Install a flashinfer made for your torch: 0.4 and newer do not depend on torch's ABI (flashinfer-python "
        "with flashinfer-jit-cache for your CUDA version); older AOT wheels from "
        "https://flashinfer.ai/whl/<cuda>/<torch>/ each fit one torch minor version.",
        _Z: "安装与当前 torch 相匹配的 flashinfer：0.4 及更高版本不依赖 torch 的 ABI（flashinfer-python 加上与 CUDA "
        "版本对应的 flashinfer-jit-cache）；更早的 AOT wheel 来自 https://flashinfer.ai/whl/<cuda>/<torch>/，"
        "每个只适用于一个 torch 小版本。",
    },
    "fix.same-index": {
        _E: "Install torch and {package} in one command from the same index "
        "(https://download.pytorch.org/whl/<variant>), so that pip picks a matching pair.",
        _Z: "用同一条命令从同一个索引（https://download.pytorch.org/whl/<variant>）安装 torch 和 {package}，"
        "让 pip 选出相互匹配的一对。",
    },
    "fix.arch-list-target": {
        _E: 'Rebuild xFormers with every GPU of this machine listed: TORCH_CUDA_ARCH_LIST="{arch_list}" '
        "(xformers#1045).",
        _Z: '重新构建 xFormers，并列出本机的每一种 GPU：TORCH_CUDA_ARCH_LIST="{arch_list}"（xformers#1045）。',
    },
    "fix.arch-list-generic": {
        _E: "Rebuild xFormers with TORCH_CUDA_ARCH_LIST naming the compute capability of every GPU it runs on, "
        'e.g. "7.5 8.6" for an RTX 2080 and an RTX 3090 (xformers#1045).',
        _Z: "重新构建 xFormers，并在 TORCH_CUDA_ARCH_LIST 中写明它要运行的每种 GPU 的计算能力，"
        '例如 RTX 2080 加 RTX 3090 写 "7.5 8.6"（xformers#1045）。',
    },
    "fix.xformers-prebuilt": {
        _E: "Or install a prebuilt xformers wheel, which carries code for 7.5, 8.0 (with PTX) and newer GPUs.",
        _Z: "或者安装预编译的 xformers wheel，它包含 7.5、8.0（带 PTX）及更新 GPU 的代码。",
    },
    "fix.unset-arch-list-target": {
        _E: "Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or set them to this machine's GPUs: "
        '"{arch_list}".',
        _Z: '取消设置 TORCH_CUDA_ARCH_LIST 和 FLASHINFER_CUDA_ARCH_LIST，或将它们设为本机的 GPU："{arch_list}"。',
    },
    "fix.unset-arch-list": {
        _E: "Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or list only architectures 7.5 and newer "
        "in them.",
        _Z: "取消设置 TORCH_CUDA_ARCH_LIST 和 FLASHINFER_CUDA_ARCH_LIST，或者只在其中列出 7.5 及以上的架构。",
    },
    "fix.upgrade-flashinfer": {
        _E: "Upgrade flashinfer to 0.3.0 or newer, which checks the GPUs actually present.",
        _Z: "将 flashinfer 升级到 0.3.0 或更高版本，新版本检查的是实际存在的 GPU。",
    },
    "fix.check-build": {
        _E: 'Check the build: python -c "import torch; print(torch.__version__, torch.version.cuda)"; a +cpu '
        "version or None means a CPU-only build.",
        _Z: '检查构建：python -c "import torch; print(torch.__version__, torch.version.cuda)"；'
        "版本带 +cpu 或输出 None 即表示仅 CPU 的构建。",
    },
    "fix.cpu-target": {
        _E: "This target has no NVIDIA GPU; only the cpu variant applies.",
        _Z: "目标机器没有 NVIDIA GPU，只能使用 cpu 变体。",
    },
    "fix.nvidia-smi": {
        _E: "Check that nvidia-smi lists the GPU; if nvidia-smi fails too, the driver is the problem.",
        _Z: "确认 nvidia-smi 能列出这块 GPU；如果 nvidia-smi 也失败，问题出在驱动。",
    },
    "fix.cuda-index": {
        _E: "Reinstall torch from the PyTorch index of a CUDA variant: pip install torch --index-url "
        "https://download.pytorch.org/whl/<variant>; 'cudaresolve lock torch' picks the variant for this machine.",
        _Z: "从某个 CUDA 变体的 PyTorch 索引重新安装 torch：pip install torch --index-url "
        "https://download.pytorch.org/whl/<variant>；'cudaresolve lock torch' 会为本机选出合适的变体。",
    },
    "fix.cpu-device": {
        _E: "If the machine has no NVIDIA GPU, the code must not ask for 'cuda': run it on the CPU device.",
        _Z: "如果机器没有 NVIDIA GPU，代码就不应请求 'cuda'：请改在 CPU 设备上运行。",
    },
    "fix.sass-build-target": {
        _E: "A build with native code for {sms} needs no JIT compilation and avoids this error.",
        _Z: "包含 {sms} 原生代码的构建无需即时编译，可以避免这个错误。",
    },
    "fix.sass-build": {
        _E: "A build with native code (SASS) for the GPU needs no JIT compilation and avoids this error.",
        _Z: "包含该 GPU 原生代码（SASS）的构建无需即时编译，可以避免这个错误。",
    },
    "fix.aoti-export-device": {
        _E: "Compile the model for the device it runs on: export and package it with the model and the example "
        "inputs on that device.",
        _Z: "为实际运行的设备编译模型：导出和打包时，把模型和示例输入都放在该设备上。",
    },
    "fix.aoti-runner-device": {
        _E: "Give the runner the device explicitly instead of letting it assume CUDA (torchchat added '-d DEVICE' "
        "for this, pytorch/torchchat#858).",
        _Z: "显式告诉 runner 要用的设备，不要让它默认使用 CUDA（torchchat 为此加入了 '-d DEVICE'，"
        "pytorch/torchchat#858）。",
    },
    "fix.aoti-inputs": {
        _E: "Move the inputs to the model's device before calling run().",
        _Z: "调用 run() 之前，先把输入移到模型所在的设备上。",
    },
    "fix.docker-gpus": {
        _E: "In Docker, start the container with --gpus all (NVIDIA Container Toolkit).",
        _Z: "在 Docker 中，用 --gpus all 启动容器（需要 NVIDIA Container Toolkit）。",
    },
    "fix.cpu-variant": {
        _E: "Without an NVIDIA GPU, install the cpu variant: pip install torch --index-url "
        "https://download.pytorch.org/whl/cpu",
        _Z: "没有 NVIDIA GPU 时，请安装 cpu 变体：pip install torch --index-url https://download.pytorch.org/whl/cpu",
    },
    "fix.driver-reload": {
        _E: "Run nvidia-smi: if it fails too, the driver is broken; after a driver upgrade, reboot so that the "
        "kernel module and the user-space libraries match.",
        _Z: "运行 nvidia-smi：如果它也失败，说明驱动已损坏；升级驱动后请重启，使内核模块与用户态库的版本一致。",
    },
    "fix.dev-permissions": {
        _E: "Check that this user can open /dev/nvidia*; a container needs those devices passed in.",
        _Z: "确认当前用户能打开 /dev/nvidia*；容器需要把这些设备传进去。",
    },
    "fix.detect": {
        _E: "Run 'cudaresolve detect' to see what the driver reports.",
        _Z: "运行 'cudaresolve detect' 查看驱动报告的信息。",
    },
    "fix.visible-devices": {
        _E: "Check CUDA_VISIBLE_DEVICES: an empty value, or an index that does not exist, hides every GPU.",
        _Z: "检查 CUDA_VISIBLE_DEVICES：值为空或指定了不存在的编号时，所有 GPU 都会被屏蔽。",
    },
    "fix.nvidia-smi-list": {
        _E: "List the GPUs with nvidia-smi -L.",
        _Z: "用 nvidia-smi -L 列出 GPU。",
    },
    "fix.match-torch-cuda": {
        _E: "Install the build of the failing package that matches your torch's CUDA "
        '(python -c "import torch; print(torch.version.cuda)").',
        _Z: "为出错的软件包安装与当前 torch 的 CUDA 版本相符的构建"
        '（python -c "import torch; print(torch.version.cuda)"）。',
    },
    "fix.torch-major-variant": {
        _E: "Or install torch for {variant} (CUDA {cuda}), a CUDA {major} build this driver runs: "
        "pip install torch --index-url {index_url}",
        _Z: "或者安装 {variant}（CUDA {cuda}）的 torch，这是该驱动能运行的 CUDA {major} 构建："
        "pip install torch --index-url {index_url}",
    },
    "fix.triton-eager": {
        _E: "Run the model without torch.compile (eager mode), or with a backend that generates no Triton code, "
        'e.g. torch.compile(backend="aot_eager").',
        _Z: "不使用 torch.compile（即 eager 模式）运行模型，或者使用不生成 Triton 代码的后端，"
        '例如 torch.compile(backend="aot_eager")。',
    },
    # -- the explain-error command --------------------------------------------------------------
    "explain.no-known-error": {
        _E: "no known CUDA error in the text",
        _Z: "文本中没有已知的 CUDA 错误",
    },
    "explain.no-known-error.hint": {
        _E: "run 'cudaresolve doctor' to check the installed packages against this machine",
        _Z: "运行 'cudaresolve doctor'，对照本机检查已安装的软件包",
    },
    "explain.empty-input": {
        _E: "no error text given",
        _Z: "没有提供错误文本",
    },
    "explain.empty-input.hint": {
        _E: "pass the message as an argument, or pipe a log: ... 2>&1 | cudaresolve explain-error -",
        _Z: "把错误信息作为参数传入，或通过管道传入日志：... 2>&1 | cudaresolve explain-error -",
    },
    "render.cause": {_E: "cause", _Z: "原因"},
    "render.fix": {_E: "fix", _Z: "修复"},
    "render.colon": {_E: ": ", _Z: "："},
    # -- the doctor command (doctor.py, render/doctor.py) -------------------------------------
    "word.unknown-variant": {_E: "variant unknown", _Z: "变体未知"},
    "word.no-gpu-code": {_E: "no GPU code", _Z: "无 GPU 代码"},
    "word.driver-unknown": {_E: "unknown", _Z: "未知"},
    "word.note": {_E: "note", _Z: "注意"},
    "word.support-full": {_E: "full", _Z: "完全支持"},
    "word.support-minor": {_E: "minor-version compatibility only", _Z: "仅小版本兼容"},
    "word.support-none": {_E: "none", _Z: "不支持"},
    "word.support-unchecked": {_E: "not checked", _Z: "未检查"},
    "render.doctor.unreadable": {
        _E: "cannot read {path}: {error}",
        _Z: "无法读取 {path}：{error}",
    },
    "render.doctor.cpu-build": {
        _E: "{package} {version} is a CPU-only build: it cannot use {gpu}",
        _Z: "{package} {version} 是仅 CPU 的构建：无法使用 {gpu}",
    },
    "render.doctor.no-record": {
        _E: "{package} {version} has no RECORD, so its libraries could not be listed",
        _Z: "{package} {version} 没有 RECORD 文件，因此无法列出它的库",
    },
    "render.doctor.not-in-db": {
        _E: "{package} {version} is not in the database: its pairing and minimum GPU were not checked",
        _Z: "数据库中没有 {package} {version}：未检查它的配对关系和最低 GPU 要求",
    },
    "render.doctor.pair-mismatch": {
        _E: "{package} {version} is paired with {dep} {required}, but {dep} {found} is installed",
        _Z: "{package} {version} 与 {dep} {required} 配套，但当前安装的是 {dep} {found}",
    },
    "render.doctor.variant-mismatch": {
        _E: "{package} {version} is a {variant} build, but torch {found} is a {torch_variant} build; a compiled "
        "package must come from the same CUDA major version as torch",
        _Z: "{package} {version} 是 {variant} 构建，而 torch {found} 是 {torch_variant} 构建；"
        "编译型软件包必须与 torch 来自同一个 CUDA 主版本",
    },
    "render.doctor.runtime-unknown": {
        _E: "{name} {version} ships CUDA {cuda}, which the database does not know; the driver was not checked "
        "against it",
        _Z: "{name} {version} 提供 CUDA {cuda}，数据库中没有这个版本，因此没有对照驱动检查它",
    },
    "render.doctor.arch-list-invalid": {
        _E: '{var}="{value}" is not an architecture list: {error}',
        _Z: '{var}="{value}" 不是有效的架构列表：{error}',
    },
    "render.doctor.arch-list-excludes": {
        _E: '{var}="{value}" leaves out {gpu} (compute capability {cc}): extensions built or JIT-compiled in '
        "this environment get no code for it",
        _Z: '{var}="{value}" 漏掉了 {gpu}（计算能力 {cc}）：在此环境中构建或即时编译的扩展将不包含它的代码',
    },
    "render.doctor.aoti-device": {
        _E: "{path} was compiled for {required} but would run on {found}; AOTInductor then fails with "
        "'CUDA error: invalid argument'",
        _Z: "{path} 是为 {required} 编译的，却会在 {found} 上运行；AOTInductor 随后会报错 "
        "'CUDA error: invalid argument'",
    },
    "render.doctor.aoti-sm": {
        _E: "{path} has kernels for {found}, none of which runs on a GPU of compute capability {required}",
        _Z: "{path} 只包含 {found} 的内核，它们都无法在计算能力为 {required} 的 GPU 上运行",
    },
    "render.doctor.target": {_E: "target: {gpus}; driver {driver}", _Z: "目标机器：{gpus}；驱动 {driver}"},
    "render.doctor.cpu-target": {_E: "target: no NVIDIA GPU", _Z: "目标机器：没有 NVIDIA GPU"},
    "render.doctor.site-packages": {_E: "environment: {paths}", _Z: "环境：{paths}"},
    "render.doctor.no-packages": {
        _E: "none of torch, fbgemm-gpu, torchrec, xformers or flashinfer is installed here",
        _Z: "这里没有安装 torch、fbgemm-gpu、torchrec、xformers、flashinfer 中的任何一个",
    },
    "render.doctor.runtime": {
        _E: "CUDA runtime {name} {version} (CUDA {cuda}); driver support: {support}",
        _Z: "CUDA 运行时 {name} {version}（CUDA {cuda}）；驱动支持：{support}",
    },
    "render.doctor.environment": {_E: "environment", _Z: "环境"},
    "render.doctor.pt2": {
        _E: "AOTInductor package {path}: compiled for {devices}",
        _Z: "AOTInductor 包 {path}：为 {devices} 编译",
    },
    "render.doctor.ok": {_E: "ok", _Z: "ok（未发现问题）"},
    "render.doctor.ok-warnings": {_E: "ok, with {warnings} warning(s)", _Z: "ok，另有 {warnings} 条警告"},
    "render.doctor.not-ok": {
        _E: "{errors} problem(s), {warnings} warning(s)",
        _Z: "{errors} 个问题，{warnings} 条警告",
    },
    "fix.doctor-reinstall": {
        _E: "Reinstall it from the index it came from: pip install --force-reinstall --no-deps '{package}=={version}'",
        _Z: "从原来的索引重新安装它：pip install --force-reinstall --no-deps '{package}=={version}'",
    },
    "fix.doctor-below-minimum": {
        _E: "No {package} build supports compute capability {cc}; run it on a GPU of compute capability {required} "
        "or newer, or remove it.",
        _Z: "没有任何 {package} 构建支持计算能力 {cc}；请在计算能力 {required} 或更高的 GPU 上运行它，或者卸载它。",
    },
    "fix.doctor-native-build": {
        _E: "For a fast first start, pick a build with native code for {sms}: cudaresolve lock {package} {gpus}",
        _Z: "若想首次启动更快，请选用包含 {sms} 原生代码的构建：cudaresolve lock {package} {gpus}",
    },
    "fix.doctor-lock": {
        _E: "Run 'cudaresolve lock {package} {gpus}' to pick builds with native code for every GPU here, then "
        "'cudaresolve install' to install them.",
        _Z: "运行 'cudaresolve lock {package} {gpus}'，选出为本机每块 GPU 都包含原生代码的构建，"
        "再用 'cudaresolve install' 安装。",
    },
    "fix.doctor-paired-release": {
        _E: "Install {spec}, the {package} release paired with {dep} {found}.",
        _Z: "安装 {spec}，这是与 {dep} {found} 配套的 {package} 版本。",
    },
    "fix.doctor-paired-dep": {
        _E: "Alternatively install {dep} {required}, the version that {package} {version} is paired with.",
        _Z: "也可以改为安装与 {package} {version} 配套的 {dep} {required}。",
    },
}

_FORMATTER: Final = string.Formatter()
_ITEM_SEP: Final[Mapping[str, str]] = {"en": ", ", "zh": "、"}
_GROUP_SEP: Final[Mapping[str, str]] = {"en": "; ", "zh": "；"}
_SENTENCE_SEP: Final[Mapping[str, str]] = {"en": " ", "zh": ""}
_PARENS: Final[Mapping[str, tuple[str, str]]] = {"en": (" (", ")"), "zh": ("（", "）")}


def _check_lang(lang: str) -> Lang:
    if lang == "en":
        return "en"
    if lang == "zh":
        return "zh"
    raise InvalidInput(f"unknown language: {lang!r}", hint="use --lang en or --lang zh")


def message(key: str, lang: str = "en", **fields: object) -> str:
    """The template ``key`` in ``lang``, filled with ``fields`` (``KeyError`` for an unknown key or field)."""
    try:
        templates = MESSAGES[key]
    except KeyError:
        raise KeyError(f"no message {key!r}") from None
    return templates[_check_lang(lang)].format(**fields)


def placeholders(key: str, lang: str = "en") -> frozenset[str]:
    """The field names the template ``key`` takes in ``lang``."""
    template = MESSAGES[key][_check_lang(lang)]
    return frozenset(name for _, name, _, _ in _FORMATTER.parse(template) if name)


def join_items(items: Iterable[str], lang: str = "en") -> str:
    """``a, b, c`` in English, ``a、b、c`` in Chinese."""
    return _ITEM_SEP[_check_lang(lang)].join(items)


def join_groups(items: Iterable[str], lang: str = "en") -> str:
    """``a; b`` in English (a full-width semicolon in Chinese): for items that contain commas themselves."""
    return _GROUP_SEP[_check_lang(lang)].join(items)


def parenthesize(head: str, inner: str, lang: str = "en") -> str:
    """``head (inner)`` in English; full-width parentheses, without the space, in Chinese."""
    left, right = _PARENS[_check_lang(lang)]
    return f"{head}{left}{inner}{right}"


def join_sentences(parts: Iterable[str], lang: str = "en") -> str:
    """Sentences joined by a space in English and directly in Chinese."""
    return _SENTENCE_SEP[_check_lang(lang)].join(p for p in parts if p)


def pick_lang(flag: str | None, env: Mapping[str, str]) -> Lang:
    """``--lang`` if given; else the POSIX message locale (LC_ALL, then LC_MESSAGES, then LANG): zh* is Chinese."""
    if flag:
        return _check_lang(flag.strip().lower())
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
