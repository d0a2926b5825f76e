r"""Known CUDA error messages and how to find them in a log. Pure.

``match_errors(text)`` scans a message or a whole log for the ``SIGNATURES`` below (the CUDA
errors users post most: no kernel image, driver too old, ABI mismatches, unsupported SMs …) and
returns one ``SignatureMatch`` per signature, in order of first appearance.
``errorlog.explain`` turns matches into causes and fixes.

Each signature names a public report where users posted it (``source``); the tests quote them.

Bounded work: only the first ``MAX_TEXT_CHARS`` characters (1 MiB) of a text are scanned, and
every pattern has a bounded width (no ``*``, ``+`` or ``{n,}``: ``\S{1,400}``, ``[^\n]{1,100}?``),
so one attempt at one position costs at most about ``MAX_PATTERN_WIDTH`` steps and a whole
scan is linear in the text: ``len(SIGNATURES)`` patterns, one ``search`` each (test_signatures
checks the widths). Unbounded ``[^\n]+?`` made 120 KB of "Found " take 54 s (issue 12).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "MAX_PATTERN_WIDTH", "MAX_TEXT_CHARS", "SIGNATURES", "Signature", "SignatureMatch", "clean_log", "match_errors",
    "module_of",
]

#: The most of a text (a whole log) that is scanned; the rest is ignored and the CLI says so.
MAX_TEXT_CHARS: Final = 1024 * 1024
#: The most characters one attempt of any signature pattern can span (tests check every pattern).
MAX_PATTERN_WIDTH: Final = 1000

# ASCII: \d, \s and \w mean what the messages print (int() of a match never meets an Arabic-Indic digit).
_I: Final = re.IGNORECASE | re.ASCII


@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    """One known error: any of ``patterns`` finds it; ``extra`` patterns only add fields.

    Named groups of every pattern become the match's fields. With ``context`` set, the text
    must also contain that pattern somewhere (AOTInductor's generic "invalid argument").
    """

    code: str
    patterns: tuple[re.Pattern[str], ...]
    extra: tuple[re.Pattern[str], ...] = ()
    context: re.Pattern[str] | None = None
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SignatureMatch:
    """Where a signature was found and the fields its patterns captured (``found_version``, ``sm`` …)."""

    code: str
    start: int  # offset of the first hit in the text
    line: str  # the line that matched, stripped
    fields: Mapping[str, str] = field(default_factory=dict)


def _sig(code: str, *patterns: str, extra: Sequence[str] = (), context: str | None = None, source: str) -> Signature:
    return Signature(
        code=code,
        patterns=tuple(re.compile(p, _I) for p in patterns),
        extra=tuple(re.compile(p, _I) for p in extra),
        context=re.compile(context, _I) if context else None,
        source=source,
    )


SIGNATURES: Final[tuple[Signature, ...]] = (
    _sig(
        "no-kernel-image",
        r"no kernel image is available for execution on the device",
        r"cudaErrorNoKernelImageForDevice",
        r"no kernel image is available",  # the short form users paste
        # the driver API's name of the same error, 209 (cupy, numba, TVM, rust-cuda print it)
        r"CUDA_ERROR_NO_BINARY_FOR_GPU",
        r"\bNoBinaryForGpu\b",

        source="https://github.com/meta-pytorch/torchrec/issues/2708",
    ),
    _sig(
        # cudaErrorInvalidDeviceFunction (98; 8 before CUDA 10.1): "the requested device function does not exist or
        # is not compiled for the proper device architecture"; ROCm's HIP error of the same words is not CUDA's.
        "invalid-device-function",
        r"(?<!HIP error: )(?<!hipError)invalid device function",
        r"cudaErrorInvalidDeviceFunction",
        r"CUDA_ERROR_INVALID_DEVICE_FUNCTION",
        source="https://github.com/facebookresearch/SparseConvNet/issues/136",
    ),
    _sig(
        "driver-insufficient",
        r"CUDA driver version is insufficient for CUDA runtime version",
        r"The NVIDIA driver on your system is too old \(found version (?P<found_version>\d{4,6})\)",
        r"cudaErrorInsufficientDriver",
        r"CUDA driver version is insufficient",  # the short forms users paste
        r"NVIDIA driver on your system is too old",
        extra=[r"found version (?P<found_version>\d{4,6})"],
        source="https://github.com/lllyasviel/Fooocus/issues/1313",
    ),
    _sig(
        # Any extension module: the path before ".so" is read back from the text (``_ABI_PATH``), and the
        # symbol must lie in a namespace of torch's C++ API (c10::, at::, torch::, caffe2::; a vtable or
        # typeinfo of one too): the class of "built against another torch", whatever the package.
        "abi-mismatch",
        r"\.so[.\d]{0,30}:\s{0,8}undefined symbol:\s{0,8}"
        r"(?P<symbol>_Z(?:T[VIS])?N[rVKRO]{0,4}(?:3c10|2at|5torch|6caffe2)\d[^\s'\",]{0,400})",
        r"xFormers can't load C\+\+/CUDA extensions\. xFormers was built for:\s{0,40}"
        r"PyTorch (?P<built_for>[^\s()]{1,40}) with CUDA \d{1,4} \(you have (?P<have>[^\s()]{1,40})\)",
        source="https://github.com/pytorch/FBGEMM/issues/2715",
    ),
    _sig(
        # A package's own operator missing from torch's registry: its compiled extension did not load (torchvision's
        # "_C" built for another torch). torch's own namespaces (aten, prim) are another story.
        "missing-operator",
        r"operator (?!aten::|prim::)(?P<namespace>[A-Za-z_]\w{0,60})::(?P<op>\w{1,100}) does not exist",
        r"No such operator (?!aten::|prim::)(?P<namespace>[A-Za-z_]\w{0,60})::(?P<op>\w{1,100})",
        source="https://github.com/fudan-generative-vision/hallo/issues/98",
    ),
    _sig(
        "xformers-built-for-other-sm",
        r"kernel [`']?(?P<kernel>\w{1,200})[`']? is for sm(?P<low>\d{1,4})-sm(?P<high>\d{1,4}), "
        r"but was built for sm(?P<built>\d{1,4})",
        source="https://github.com/facebookresearch/xformers/issues/1045",
    ),
    _sig(
        "xformers-no-operator",
        r"No operator found for [`']?(?P<op>memory_efficient_attention\w{0,40})[`']?",
        extra=[
            r"(?P<no_cuda>xFormers wasn't build with CUDA support)",
            r"requires device with capability (?P<cmp>[<>]=?) \((?P<need>\d{1,2}, \d{1,2})\) but your GPU has "
            r"capability \((?P<have>\d{1,2}, \d{1,2})\)",
        ],
        source="https://github.com/camenduru/DeepCache-colab/issues/2; https://github.com/facebookresearch/xformers/issues/800;"
        " https://github.com/cswry/VOSR/issues/5 (too new)",
    ),
    _sig(
        "flashinfer-requires-sm75",
        r"(?P<old>FlashInfer requires sm75\+)",
        r"(?P<new>FlashInfer requires GPU'?s with sm75 or higher)",
        source="https://github.com/flashinfer-ai/flashinfer/issues/1115",
    ),
    _sig(
        "torch-sm-unsupported",
        r"with CUDA capability sm_(?P<sm>\d{1,4}) is not compatible with the current PyTorch installation",
        r"Found GPU\d{1,3} (?P<gpu>[^\n]{1,100}?) which is of cuda capability (?P<cc>\d{1,2}\.\d)\.?\s{1,40}"
        r"PyTorch no longer supports this GPU because it is too old",
        r"Found GPU\d{1,3} (?P<gpu>[^\n]{1,100}?) which is of cuda capability (?P<cc>\d{1,2}\.\d)\.?\s{1,40}"
        r"Minimum and Maximum cuda capability supported by this version of PyTorch is\s{0,8}"
        r"\((?P<min>\d{1,2}\.\d)\)",
        extra=[
            r"supports CUDA capabilities (?P<supported>(?:(?:sm|compute)_\d{1,4}[af]? ?){1,64})",
            r"If you want to use the (?P<gpu>[^\n]{1,100}?) GPU with PyTorch",
            r"minimum cuda capability (?:supported by this library|that we support) is (?P<min>\d{1,2}\.\d)",
        ],
        source="https://github.com/astral-sh/uv/issues/14742",
    ),
    _sig(
        "cuda-not-available",
        r"torch\.cuda\.is_available\(\)\)?`?\s{0,8}(?:(?:returns?|returned|is|==?|->|:|返回值?为?|为|是)\s{0,8})?`?\s{0,8}"
        r"False(?![A-Za-z0-9_])",
        r"Is CUDA available\s{0,8}:\s{0,8}False",
        source="https://github.com/pytorch/pytorch/issues/85332",
    ),
    _sig(
        "torch-cpu-build",
        r"Torch not compiled with CUDA enabled",
        source="https://github.com/facebookresearch/detectron2/issues/460",
    ),
    _sig(
        "ptx-unsupported-toolchain",
        r"the provided PTX was (?:compiled|complied) with an unsupported toolchain",
        r"cudaErrorUnsupportedPtxVersion",
        r"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        source="https://github.com/NVIDIA-AI-IOT/Lidar_AI_Solution/issues/289",
    ),
    _sig(
        "ptx-jit-disabled",
        r"PTX JIT compilation was disabled",
        r"cudaErrorJitCompilationDisabled",
        r"CUDA_ERROR_JIT_COMPILATION_DISABLED",
        # captured on an H100 by tools/gpu_proof; CUDA_DISABLE_PTX_JIT is documented at
        # https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html
        source="tests/fixtures/gpu/h100-580/kernels/run-ptx80-nojit.out",
    ),
    _sig(
        "aoti-device-mismatch",
        r"CUDA error: invalid argument",
        r"resides on host memory and is not registered with any CUDA device",
        context=r"aoti|AOTInductor|model_container_runner",
        source="https://github.com/pytorch/torchchat/issues/709",
    ),
    _sig(
        "no-driver",
        r"Found no NVIDIA driver on your system",
        r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        source="https://github.com/pytorch/pytorch/issues/74733",
    ),
    _sig(
        "driver-init-failed",
        r"CUDA driver initialization failed, you might not have a CUDA gpu",
        source="https://github.com/wenet-e2e/wenet/issues/700",
    ),
    _sig(
        "no-cuda-device",
        r"no CUDA-capable device is detected",
        r"No CUDA GPUs are available",
        r"cudaErrorNoDevice\b",
        source="https://github.com/jwyang/faster-rcnn.pytorch/issues/377",
    ),
    _sig(
        "missing-cuda-library",
        r"(?P<library>lib(?:cudart|nvrtc|nvrtc-builtins|cublas|cublasLt|cufft|curand|cusparse|cusparseLt|cusolver"
        r"|nvJitLink|cudnn(?:_\w{1,40})?|cupti|cufile|nccl|nvToolsExt)"
        r"\.so(?:\.(?P<major>\d{1,4})(?:\.\d{1,6}){0,4})?): cannot open shared object file",
        # CTranslate2 and onnxruntime list the names they tried: "Unable to load any of {libcudnn_ops.so.9.1.0, ..."
        r"Unable to load any of \{(?P<library>libcudnn\w{0,40}\.so\.(?P<major>\d{1,4})[.\d]{0,30})",
        source="https://github.com/huggingface/autotrain-advanced/issues/292",
    ),
    _sig(
        # A C symbol of a CUDA library (NCCL, nvJitLink, cuDNN, cuBLAS ...) that the loaded copy lacks: an older copy
        # loaded than the caller was built with (a system CUDA on LD_LIBRARY_PATH ahead of torch's nvidia-* wheels).
        "cuda-library-too-old",
        r"(?P<caller>[\w.+-]{1,120}?\.so[.\d]{0,20}):\s{0,8}undefined symbol:\s{0,8}"
        r"(?P<csymbol>_{0,2}(?P<family>nccl|nvJitLink|cudnn|cublasLt|cublas|cusparseLt|cusparse|cufft|curand|cusolver"
        r"|cupti|nvrtc)\w{0,100})(?:,\s{0,8}version (?P<soname>lib\w{1,40}\.so[.\d]{0,20}))?",
        # any symbol the loader ties to a CUDA library's version (cuDNN 8's sub-libraries from two copies), also as
        # glibc's "relocation error: ...: symbol X, version V not defined in file V with link time reference"
        r"(?P<caller>[\w.+-]{1,120}?\.so[.\d]{0,20}):\s{0,8}(?:undefined symbol:|symbol)\s{0,8}"
        r"(?P<csymbol>[^\s,]{1,400}),\s{0,8}version "
        r"(?P<soname>lib(?:cudnn|cublas|cusparse|nvJitLink|nccl|cufft|curand|cusolver|cupti|nvrtc|cudart)\w{0,40}"
        r"\.so[.\d]{0,20})",
        source="https://github.com/pytorch/pytorch/issues/131312",
    ),
    _sig(
        # JAX (XLA) checks the cuDNN it loads against the one it was built with: an older one fails the CUDA backend.
        "cudnn-too-old",
        r"Found cuDNN version (?P<found>\d{4,6}), but (?P<who>[\w.-]{1,40}) was built against version "
        r"(?P<built>\d{4,6})",
        r"Outdated cuDNN installation found\.\s{0,8}Version (?P<who>[\w.-]{1,40}) was built against: (?P<built>\d{4,6})"
        r"\s{0,8}Minimum supported: (?P<minimum>\d{4,6})\s{0,8}Installed version: (?P<found>\d{4,6})",
        source="https://github.com/MIT-REALM/gcbfplus/issues/1",
    ),
    _sig(
        "cudnn-version-mismatch",
        r"CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
        r"CUDNN_STATUS_VERSION_MISMATCH",
        source="https://github.com/mav-rik/facerestore_cf/issues/27",
    ),
    _sig(
        "triton-gpu-too-old",
        r"Found (?P<gpu>[^\n]{1,100}?) which is too old to be supported by the triton GPU compiler",
        extra=[
            r"Triton only supports devices of CUDA Capability >= (?P<required>\d{1,2}\.\d), "
            r"but your device is of CUDA capability (?P<cc>\d{1,2}\.\d)"
        ],
        source="https://github.com/2noise/ChatTTS/issues/341",
    ),
    # Not compatibility errors, said so: the GPU ran out of memory, or a kernel that has code for the GPU failed
    # while it ran. Users paste them beside the errors above; the builds are not the cause.
    _sig(
        "out-of-memory",
        r"CUDA out of memory\. Tried to allocate",
        r"CUDA error: out of memory",
        r"cudaErrorMemoryAllocation",
        source="https://github.com/antgroup/echomimic_v2/issues/115",
    ),
    _sig(
        "kernel-fault",
        r"CUDA error: unspecified launch failure",
        r"CUDA error: an illegal memory access was encountered",
        r"CUDA error: device-side assert triggered",
        r"cudaErrorLaunchFailure|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|CUDA_ERROR_LAUNCH_FAILED",
        source="https://github.com/Acly/krita-ai-diffusion/issues/930",
    ),
    _sig(
        "flash-attn-refused",
        r"FlashAttention only supports (?P<family>\w{1,20}) GPUs or newer",
        source="https://github.com/Dao-AILab/flash-attention/issues/762",
    ),
    _sig(
        "unsupported-gpu-arch",
        r"nvcc fatal\s{0,8}:\s{0,8}Unsupported gpu architecture '(?P<arch>[^'\s]{0,40})'",
        r"nvcc fatal\s{0,8}:\s{0,8}Value '(?P<arch>[^'\s]{1,40})' is not defined for option "
        r"'gpu-(?:architecture|code)'",
        source="https://github.com/mit-han-lab/Block-Sparse-Attention/issues/15",
    ),
    _sig(
        "ptxas-unknown-arch",
        r"ptxas fatal\s{0,8}:\s{0,8}Value '(?P<arch>[^'\s]{1,40})' is not defined for option 'gpu-name'",
        extra=[r"(?P<triton>triton)"],
        source="https://github.com/triton-lang/triton/issues/8539",
    ),
)

# Which compiled library a "no kernel image" came from, judged from the traceback before it.
_LIBRARY_WINDOW: Final = 3000
_FBGEMM: Final = re.compile(r"fbgemm_gpu|torch\.ops\.fbgemm|torchrec", _I)
_TORCHREC: Final = re.compile(r"torchrec", _I)
_XFORMERS: Final = re.compile(r"xformers", _I)
_FRAME: Final = re.compile(r"(?:site|dist)-packages/([A-Za-z_][A-Za-z0-9_]{0,100})/")  # a frame's installed module


# torch in a log: its name, or the words its CUDA check prints ("CUDA error: ", "Search for `cudaError...' in
# https://docs.nvidia.com ..."). Case-sensitive: "CUDA Error:" of other programs is not torch's.
_TORCH: Final = re.compile(
    r"\btorch\b|[Pp]y[Tt]orch|CUDA error: |Search for `cuda\w{1,60}' in https|TORCH_USE_CUDA_DSA", re.ASCII
)
_DRIVER_API: Final = re.compile(r"CUDA_ERROR_\w{1,40}|NoBinaryForGpu", re.ASCII)  # torch prints the runtime's words

# Another framework than torch named on a missing library's own line: whose library it is.
_FRAMEWORK: Final = re.compile(r"\b(tensorflow|jaxlib|paddle|onnxruntime|cupy)\b", _I)


# The path of the library an "undefined symbol" names: the run of path characters ending in ".so".
_PATH_WINDOW: Final = 300
_PATH_STOP: Final = frozenset(" \t\r\n:'\"()[]`")
_OWN_LIBRARY: Final = re.compile(r"lib(?:torch|c10|cu|nv)", _I)
_INSTALL_DIRS: Final = ("site-packages", "dist-packages")


def module_of(path: str) -> str:
    """The top-level module an extension library belongs to: the folder under site-packages
    (``torch_scatter/_scatter_cuda.so`` -> ``torch_scatter``), else the file's own module name
    (``flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so`` -> ``flash_attn_2_cuda``), else its folder
    when the file is a private module (``mmcv/_ext.so`` -> ``mmcv``)."""
    parts = [p for p in path.split("/") if p]
    marks = [i for i, p in enumerate(parts) if p in _INSTALL_DIRS]
    rest = parts[marks[-1] + 1 :] if marks else parts
    stem = rest[-1].split(".", 1)[0] if rest else path
    if marks and len(rest) > 1:
        return rest[0]
    if stem.startswith("_") and len(parts) > 1:
        return parts[-2]
    return stem


def _innermost_module(window: str) -> str | None:
    """The top-level module of the innermost installed frame of a traceback other than torch's own (whose frames
    sit between any package and its kernels): the package that launched the kernel, if it has kernels of its own."""
    modules = [m.group(1) for m in _FRAME.finditer(window)]
    return next((m for m in reversed(modules) if m != "torch"), None)


def _line_at(text: str, start: int) -> str:
    begin = text.rfind("\n", 0, start) + 1
    end = text.find("\n", start)
    return text[begin : end if end != -1 else len(text)].strip()


def _match_one(sig: Signature, text: str) -> SignatureMatch | None:
    hits = [m for p in sig.patterns if (m := p.search(text))]
    if not hits or (sig.context is not None and not sig.context.search(text)):
        return None
    hits.sort(key=lambda m: m.start())
    fields: dict[str, str] = {}
    for m in (*hits, *(m for p in sig.extra if (m := p.search(text)))):
        for name, value in m.groupdict().items():
            if value is not None:
                fields.setdefault(name, value.strip())
    start = hits[0].start()
    if sig.code == "abi-mismatch" and "symbol" in fields:
        end = next(m for m in hits if m.groupdict().get("symbol")).start() + 3  # just after ".so"
        begin = end
        while begin > max(0, end - _PATH_WINDOW) and text[begin - 1] not in _PATH_STOP:
            begin -= 1
        path = text[begin:end]
        if path == ".so" or _OWN_LIBRARY.match(path.rsplit("/", 1)[-1]):
            return None  # torch's or CUDA's own library: torch's parts come from two releases, not an extension
        fields["path"] = path
        fields["library"] = module_of(path)
    if sig.code == "missing-cuda-library" and (framework := _FRAMEWORK.search(_line_at(text, start))):
        fields["framework"] = framework[1].lower()  # TensorFlow's dso_loader line: its library, not torch's
    if sig.code in ("no-kernel-image", "invalid-device-function"):
        window = text[max(0, hits[0].end() - _LIBRARY_WINDOW) : hits[0].end()]
        if _FBGEMM.search(window):
            fields["package"] = "fbgemm-gpu"
            if _TORCHREC.search(window):
                fields["via"] = "torchrec"
        elif _XFORMERS.search(window):
            fields["package"] = "xformers"
        elif (module := _innermost_module(window)) is not None:
            fields["module"] = module  # the explanation asks the database whose package it is (flashinfer, vllm)
        other = "module" in fields or _DRIVER_API.search(text)  # another program's frames, or the driver API's name
        if "package" not in fields and other and not _TORCH.search(text):
            fields["torchless"] = "1"  # cupy's, numba's, TVM's log: no torch advice
    return SignatureMatch(code=sig.code, start=start, line=_line_at(text, start), fields=fields)


# A pasted log's decoration, taken away before the scan: terminal colour codes (with their ESC, or the bare "[31m"
# left when a web page dropped it), CR line ends, and the stamps loggers put before every line (an ISO or glog
# time, a level, "[rank0]:", vllm's "(EngineCore_DP0 pid=73)", "[core.py:866]", "|"), which split a message
# printed on several lines. Every repeat is bounded; a line keeps what follows its stamps.
_ANSI: Final = re.compile(r"\x1b\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b\n]{0,400}(?:\x07|\x1b\\)?|\x1b"
                          r"|\[[0-9]{1,3}(?:;[0-9]{1,3}){0,6}m")
_STAMP: Final = re.compile(
    r"^(?:[ \t]{0,8}(?:\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?|\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9} {1,8}\d{1,10} [^\s\]]{1,300}\]"
    r"|\(\w{1,80} pid=\d{1,10}\)|\[[^\]\n]{1,80}\]:?|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)(?=[\s:|\]])"
    r"|\|)[ \t:]{0,4}){1,12}",
    re.MULTILINE,
)


def clean_log(text: str) -> str:
    """``text`` without colour codes, CR line ends and per-line log stamps: a message as the program printed it."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _STAMP.sub("", text)


def match_errors(text: str) -> list[SignatureMatch]:
    """Every known signature in ``text[:MAX_TEXT_CHARS]``, once each, ordered by where it first appears.

    The text is read as ``clean_log`` gives it: offsets and lines are those of the cleaned text."""
    text = clean_log(text[:MAX_TEXT_CHARS])
    found = [m for sig in SIGNATURES if (m := _match_one(sig, text))]
    return sorted(found, key=lambda m: m.start)

