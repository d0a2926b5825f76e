"""SM arithmetic: parse compute capabilities and arch names, decide what runs where. Pure.

The rules (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility",
https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility):

* SASS for ``sm_XY`` runs on a GPU of compute capability ``X.Z`` when ``Z >= Y``; never
  across majors.  Tegra parts are outside that guarantee, so there only an exact match counts.
* ``sm_XYa`` (arch-specific, e.g. ``sm_90a``) runs on exactly ``X.Y``.
* ``sm_XYf`` (family-specific, CUDA >= 12.9, e.g. ``sm_100f``) runs on the same major with
  minor ``>= Y`` (10.0 and 10.3 for ``sm_100f``).
* PTX for ``compute_XY`` is JIT-compiled by the driver for any GPU ``>= X.Y``, provided the
  driver knows that PTX ISA version; ``a``/``f`` PTX follow the SASS rules above.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.errors import InvalidArch
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "Arch",
    "ComputeCapability",
    "Coverage",
    "arch_runs_on",
    "coverage",
    "format_arch_list",
    "parse_arch",
    "parse_arch_list",
    "parse_cc",
]

_HINT: Final = Text("core.arch.hint")


@dataclass(frozen=True, slots=True, order=True)
class ComputeCapability:
    """A GPU's compute capability, written ``"8.6"``."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def sm(self) -> str:
        """The SASS target name for exactly this capability, e.g. ``sm_86``."""
        return f"sm_{self.major}{self.minor}"


class Coverage(enum.Enum):
    """How a build reaches a GPU: native code, driver JIT of PTX, or not at all."""

    SASS = "sass"
    PTX_JIT = "ptx-jit"
    NONE = "none"


@dataclass(frozen=True, slots=True, order=True)
class Arch:
    """One code target inside a binary: SASS (``sm_90a``) or PTX (``compute_80``)."""

    cc: ComputeCapability
    suffix: str = ""  # "", "a" (arch-specific) or "f" (family-specific)
    ptx: bool = False

    @property
    def name(self) -> str:
        prefix = "compute" if self.ptx else "sm"
        return f"{prefix}_{self.cc.major}{self.cc.minor}{self.suffix}"

    def __str__(self) -> str:
        return self.name


# ASCII digits only: Python's \d and int() also take other scripts' digits (Arabic-Indic "8.0").
_CC_DOTTED = re.compile(r"^([0-9]{1,2})\.([0-9])([af]?)$")
_CC_BARE = re.compile(r"^([0-9]{1,2})([0-9])([af]?)$")
_NAMED = re.compile(r"^(sm|compute|lto)_([0-9]{1,2})([0-9])([af]?)$")


def _split(text: str) -> tuple[int, int, str, str | None]:
    """(major, minor, suffix, prefix) from ``8.6``, ``86``, ``sm_86``, ``compute_90a``."""
    raw = text.strip().lower()
    for pattern, has_prefix in ((_NAMED, True), (_CC_DOTTED, False), (_CC_BARE, False)):
        match = pattern.match(raw)
        if match:
            groups = match.groups()
            if has_prefix:
                return int(groups[1]), int(groups[2]), groups[3], groups[0]
            return int(groups[0]), int(groups[1]), groups[2], None
    raise InvalidArch(Text.of("core.bad-arch", text=repr(text)), hint=_HINT)


def parse_cc(text: str) -> ComputeCapability:
    """``"8.6"``, ``"86"``, ``"sm_86"`` -> ``ComputeCapability(8, 6)``. Suffixes are refused."""
    major, minor, suffix, prefix = _split(text)
    if suffix or prefix == "compute":
        raise InvalidArch(Text.of("core.cc-form", form=suffix or "compute_", text=repr(text)), hint=_HINT)
    if major < 1:
        raise InvalidArch(Text.of("core.cc-range", text=repr(text)), hint=_HINT)
    return ComputeCapability(major, minor)


@functools.lru_cache(maxsize=1024)
def parse_arch(text: str) -> tuple[Arch, ...]:
    """One arch-list item -> its targets.

    ``sm_86``/``8.6``/``86`` give SASS; ``compute_86`` gives PTX; ``8.0+PTX`` gives both;
    ``sm_90a``/``9.0a`` and ``sm_100f`` keep their suffix; ``lto_90`` counts as SASS-level code.
    """
    raw = text.strip()
    with_ptx = raw.upper().endswith("+PTX")
    if with_ptx:
        raw = raw[: -len("+PTX")]
    major, minor, suffix, prefix = _split(raw)
    if major < 1:
        raise InvalidArch(Text.of("core.cc-range", text=repr(text)), hint=_HINT)
    cc = ComputeCapability(major, minor)
    if prefix == "compute":
        if with_ptx:
            raise InvalidArch(Text.of("core.ptx-on-ptx", text=repr(text)), hint=_HINT)
        return (Arch(cc, suffix, ptx=True),)
    if with_ptx:
        return (Arch(cc, suffix), Arch(cc, suffix, ptx=True))
    return (Arch(cc, suffix),)


def parse_arch_list(text: str) -> tuple[Arch, ...]:
    """A ``TORCH_CUDA_ARCH_LIST``-style list (``;``, ``,`` or space separated), deduplicated, sorted."""
    items = [part for part in re.split(r"[;,\s]+", text.strip()) if part]
    if not items:
        raise InvalidArch(Text("core.empty-arch-list"), hint=_HINT)
    return tuple(sorted({arch for item in items for arch in parse_arch(item)}))


def arch_runs_on(arch: Arch, cc: ComputeCapability, *, tegra: bool = False) -> bool:
    """Whether code for ``arch`` can execute on a GPU of capability ``cc`` (rules in the module doc).

    For PTX this says only that the JIT may target ``cc``; whether the driver knows the PTX
    ISA version is the caller's question.
    """
    target = arch.cc
    if arch.suffix == "a":
        return cc == target
    if arch.ptx and not arch.suffix:
        return cc >= target
    if tegra:  # binary compatibility is not guaranteed on Tegra: exact match only
        return cc == target
    return cc.major == target.major and cc.minor >= target.minor


def coverage(archs: Iterable[Arch], cc: ComputeCapability, *, tegra: bool = False, ptx_jit_ok: bool = True) -> Coverage:
    """The best way a build with ``archs`` reaches a GPU ``cc``: SASS, else PTX JIT, else none."""
    listed = tuple(archs)
    if any(not a.ptx and arch_runs_on(a, cc, tegra=tegra) for a in listed):
        return Coverage.SASS
    if ptx_jit_ok and any(a.ptx and arch_runs_on(a, cc, tegra=tegra) for a in listed):
        return Coverage.PTX_JIT
    return Coverage.NONE


def format_arch_list(ccs: Iterable[ComputeCapability], *, ptx: bool = False) -> str:
    """``TORCH_CUDA_ARCH_LIST`` naming every distinct capability; ``+PTX`` on the highest."""
    distinct = sorted(set(ccs))
    if not distinct:
        return ""
    parts = [str(cc) for cc in distinct]
    if ptx:
        parts[-1] += "+PTX"
    return ";".join(parts)
