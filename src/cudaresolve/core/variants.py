"""PyTorch variant names (``cpu``, ``cu118``, ``rocm6.2``): the one parser. Pure.

A variant is PyTorch's local version tag and the last part of its index URL
(https://download.pytorch.org/whl/cu118). ``cuXY`` names CUDA X.Y with the minor as the last
digit (``cu92`` is 9.2, ``cu118`` 11.8, ``cu130`` 13.0); ``rocmX.Y`` names a ROCm release.
Local labels may carry more after the tag (``cu124torch2.6`` on flashinfer's index,
``cpu.cxx11.abi``); ``variant_of_local`` reads the tag at their start.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

from cudaresolve.core.versions import CudaVersion
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

__all__ = ["Variant", "VariantKind", "is_variant", "parse_variant", "variant_of_local"]

_TAG: Final = r"(?P<tag>cpu|cu(?P<cuda>\d{2,3})|rocm(?P<rocm>\d+(?:\.\d+)*))"
_WHOLE: Final = re.compile(rf"^{_TAG}$")
_PREFIX: Final = re.compile(rf"^{_TAG}(?!\d)")


class VariantKind(enum.Enum):
    CPU = "cpu"
    CUDA = "cuda"
    ROCM = "rocm"


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    """A parsed variant name: its kind and the toolkit version it names (``(11, 8)``; ``()`` for cpu)."""

    name: str
    kind: VariantKind
    version: tuple[int, ...]

    def __str__(self) -> str:
        return self.name

    @property
    def cuda(self) -> CudaVersion | None:
        """The CUDA version a ``cuXY`` variant names; None for cpu and ROCm."""
        if self.kind is not VariantKind.CUDA:
            return None
        return CudaVersion(self.version[0], self.version[1])

    @property
    def family(self) -> str:
        """Variants whose native libraries load together: ``cpu``, ``cuda12`` (one CUDA major), ``rocm``."""
        if self.kind is VariantKind.CUDA:
            return f"cuda{self.version[0]}"
        return str(self.kind.value)


def _variant(match: re.Match[str]) -> Variant:
    if match["cuda"]:
        digits = match["cuda"]
        return Variant(name=match["tag"], kind=VariantKind.CUDA, version=(int(digits[:-1]), int(digits[-1])))
    if match["rocm"]:
        version = tuple(int(p) for p in match["rocm"].split("."))
        return Variant(name=match["tag"], kind=VariantKind.ROCM, version=version)
    return Variant(name="cpu", kind=VariantKind.CPU, version=())


def is_variant(text: str) -> bool:
    """Whether ``text`` is written as a variant name (known to the database or not)."""
    return _WHOLE.match(text) is not None


def parse_variant(text: str) -> Variant:
    """``"cu118"`` -> ``Variant(kind=CUDA, version=(11, 8))``; anything else is ``InvalidInput``."""
    match = _WHOLE.match(text)
    if match is None:
        raise InvalidInput(Text.of("core.bad-variant", text=repr(text)), hint=Text("core.bad-variant.hint"))
    return _variant(match)


def variant_of_local(local: str | None) -> Variant | None:
    """The variant a local version label starts with: ``cu124torch2.6`` -> cu124, ``cpu.cxx11.abi`` -> cpu."""
    match = _PREFIX.match(local or "")
    return _variant(match) if match else None
