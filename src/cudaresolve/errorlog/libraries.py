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

__all__ = ["library_too_old"]

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
