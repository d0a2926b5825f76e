"""A compiler that does not know a GPU architecture: nvcc's "Unsupported gpu architecture 'compute_XX'" and ptxas'
"Value 'sm_XX' is not defined for option 'gpu-name'" (Triton's bundled ptxas on a GPU newer than it). Pure.

Which CUDA toolkits compile an architecture is the database's ``[[cuda]] nvcc-sm``: the first that does (sm_120:
12.8), or the last before a release dropped it (sm_35: 11.8, dropped by 12.0). An architecture no toolkit compiles
(``compute_``, ``compute_N``) is a malformed architecture list, not an old toolkit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cudaresolve.core.archs import ComputeCapability, format_arch_list, parse_arch
from cudaresolve.db.toolkits import sass_targets
from cudaresolve.errors import InvalidArch
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cudaresolve.core.versions import CudaVersion
    from cudaresolve.db.database import CompatDB

__all__ = ["toolkit_range", "unknown_arch", "unknown_ptxas_arch"]

_Result = tuple[list[Text], list[Text]]


def _arch_cc(name: str) -> ComputeCapability | None:
    try:
        return parse_arch(name)[0].cc
    except InvalidArch:
        return None


def toolkit_range(db: CompatDB, cc: ComputeCapability) -> tuple[CudaVersion | None, CudaVersion | None, bool]:
    """(first, last, dropped): the oldest and newest CUDA toolkits whose nvcc compiles ``cc``, and whether a newer
    toolkit than ``last`` dropped it; (None, None, False) when no toolkit the database knows compiles it."""
    versions = sorted(r.version for r in db.cuda if cc in sass_targets(r))
    if not versions:
        return None, None, False
    return versions[0], versions[-1], versions[-1] < max(r.version for r in db.cuda)


# The cause keys of each compiler: (too old, dropped it, no toolkit known compiles it, not an architecture).
_NVCC: Final = ("sig.unsupported-gpu-arch.cause-newer", "sig.unsupported-gpu-arch.cause-dropped",
                "sig.unsupported-gpu-arch.cause", "sig.unsupported-gpu-arch.cause-malformed")  # fmt: skip
_PTXAS: Final = ("sig.ptxas-unknown-arch.cause-newer", "sig.ptxas-unknown-arch.cause-dropped",
                 "sig.ptxas-unknown-arch.cause", "sig.ptxas-unknown-arch.cause-malformed")  # fmt: skip


def _cause(
    db: CompatDB | None, keys: tuple[str, str, str, str], arch: str
) -> tuple[Text, CudaVersion | None, CudaVersion | None, bool]:
    newer, dropped_key, plain, malformed = keys
    cc = _arch_cc(arch)
    if cc is None:
        return Text.of(malformed, arch=arch), None, None, False
    first, last, dropped = toolkit_range(db, cc) if db is not None else (None, None, False)
    if first is None:
        return Text.of(plain, arch=arch), None, None, False
    if dropped:
        return Text.of(dropped_key, arch=arch, last=last), first, last, True
    return Text.of(newer, arch=arch, first=first), first, last, False


def unknown_arch(db: CompatDB | None, ccs: Sequence[ComputeCapability], f: Mapping[str, str]) -> _Result:
    """nvcc refused an architecture: the toolkit is too old for it (or too new, after CUDA dropped it), or the list
    is malformed. On a known target the build needs only the target's GPUs, which may leave the architecture out."""
    arch = f.get("arch") or "?"
    cause, first, last, dropped = _cause(db, _NVCC, arch)
    cc = _arch_cc(arch)
    fixes: list[Text] = []
    if ccs:
        fixes.append(Text.of("fix.arch-list-only-target", arch_list=format_arch_list(ccs)))
    elif cc is not None:
        fixes.append(Text.of("fix.arch-list-drop", arch=arch))
    else:
        fixes.append(Text("fix.arch-list-check"))
    if first is not None and (not ccs or cc in ccs):
        key = "fix.toolkit-at-most" if dropped else "fix.toolkit-at-least"
        fixes.append(Text.of(key, cuda=last if dropped else first))
    return [cause], fixes


def unknown_ptxas_arch(db: CompatDB | None, ccs: Sequence[ComputeCapability], f: Mapping[str, str]) -> _Result:
    """ptxas refused the GPU's architecture: Triton's bundled ptxas (or the toolkit's) predates the GPU."""
    arch = f.get("arch") or "?"
    cause, first, _, dropped = _cause(db, _PTXAS, arch)
    causes, fixes = [cause], []
    if "triton" in f:
        causes.append(Text("sig.ptxas-unknown-arch.triton"))
        fixes.append(Text("fix.upgrade-triton"))
        if first is not None and not dropped:
            fixes.append(Text.of("fix.triton-ptxas-path", cuda=first))
        fixes.append(Text("fix.triton-eager"))
    elif first is not None and not dropped:
        fixes.append(Text.of("fix.toolkit-at-least", cuda=first))
    return causes, fixes
