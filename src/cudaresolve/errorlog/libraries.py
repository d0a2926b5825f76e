"""A CUDA library older than the library or extension that calls it: "libcusparse.so.12: undefined symbol:
__nvJitLinkComplete_12_4, version libnvJitLink.so.12", "libtorch_cuda.so: undefined symbol: ncclCommRegister". Pure.

The caller and the library are of one CUDA major (a major apart, the soname itself differs and the library is
missing instead: ``missing-cuda-library``); an older copy of the library loaded, most often another copy earlier on
the loader path than the one installed with torch. The library is the symbol's version when the loader prints it,
else the CUDA library whose C API the symbol's prefix names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["cudnn_too_old", "cudnn_version", "library_too_old"]

# The CUDA library whose C API a symbol's prefix names (NVIDIA's own API prefixes).
_FAMILY: Final = {
    "nccl": "NCCL", "nvjitlink": "nvJitLink", "cudnn": "cuDNN", "cublaslt": "cuBLASLt", "cublas": "cuBLAS",
    "cusparselt": "cuSPARSELt", "cusparse": "cuSPARSE", "cufft": "cuFFT", "curand": "cuRAND", "cusolver": "cuSOLVER",
    "cupti": "CUPTI", "nvrtc": "NVRTC",
}  # fmt: skip


def library_too_old(f: Mapping[str, str]) -> tuple[list[Text], list[Text]]:
    """Cause and fixes: the caller, the symbol and the library it comes from; the loader path, then the package."""
    family = f.get("family", "?")
    library = f.get("soname") or _FAMILY.get(family.lower(), family)
    caller = f.get("caller", "?")
    cause = Text.of("sig.cuda-library-too-old.cause", caller=caller, symbol=f.get("csymbol", "?"), library=library)
    fixes = [
        Text.of("fix.loader-path", caller=caller, library=library),
        Text.of("fix.library-upgrade", library=library),
        Text.of("fix.doctor"),
    ]
    return [cause], fixes


def cudnn_version(raw: str) -> str:
    """cuDNN's version number as its dotted version: 8906 is 8.9.6 (major * 1000 before cuDNN 9, and in JAX's checks),
    90501 is 9.5.1 (major * 10000 from cuDNN 9, as cudnnGetVersion returns it)."""
    number = int(raw)
    major = number // 10000 if number >= 10000 else number // 1000
    return f"{major}.{number % (10000 if number >= 10000 else 1000) // 100}.{number % 100}"


def cudnn_too_old(f: Mapping[str, str]) -> tuple[list[Text], list[Text]]:
    """A program (JAX) built against one cuDNN found an older one: cuDNN at least the newer of its build and floor."""
    needed = max((f[k] for k in ("built", "minimum") if k in f), key=int, default="0")
    needed_v = cudnn_version(needed)
    fields = {"who": f.get("who", "?"), "built": cudnn_version(f.get("built", "0")),
              "found": cudnn_version(f.get("found", "0")), "needed": needed_v}  # fmt: skip
    if "minimum" in f:  # JAX's floor, which may be above the cuDNN it was built with (conda-forge's jaxlib)
        cause = Text.of("sig.cudnn-too-old.cause-minimum", who=fields["who"], found=fields["found"], needed=needed_v)
    else:
        cause = Text.of("sig.cudnn-too-old.cause", **fields)
    fixes = [Text.of("fix.cudnn-at-least", needed=needed_v), Text.of("fix.loader-path-cudnn"),
             Text.of("fix.doctor")]  # fmt: skip
    return [cause], fixes
