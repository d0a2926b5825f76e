"""What ``inspect`` finds in a binary or an AOTInductor package: frozen values and their JSON. Pure.

``scan`` and ``aoti`` fill them from disk; ``doctor`` and ``render`` read them. Sentences (a
file's error, notes) are ``Text`` values that ``render`` formats in the chosen language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cudaresolve.core.archs import ComputeCapability

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cudaresolve.binaries.fatbin import FatbinEntry, FatbinListing
    from cudaresolve.core.archs import Arch
    from cudaresolve.errors import CudaResolveError
    from cudaresolve.text.model import Text

__all__ = ["AotiModel", "AotiPackage", "BinaryReport", "FileError"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileError:
    """Why one file could not be listed (the ``error`` object of a file in ``inspect --json``)."""

    code: str
    text: Text
    hint: Text | None = None

    @classmethod
    def from_exception(cls, err: CudaResolveError) -> FileError:
        return cls(code=err.code, text=err.text, hint=err.hint_text)

    def to_dict(self) -> dict[str, Any]:
        """``message`` and ``hint`` are ``Text`` values that render formats."""
        return {"code": self.code, "message": self.text, "hint": self.hint}


@dataclass(frozen=True, slots=True, kw_only=True)
class BinaryReport:
    """What one file holds: SASS like ``sm_90a``, PTX like ``compute_80``, LTO-IR like ``lto_90``."""

    path: str
    listing: FatbinListing | None = None
    error: FileError | None = None
    package: AotiPackage | None = None  # set for an AOTInductor .pt2 package

    @property
    def format(self) -> str:
        if self.package is not None:
            return "aoti"
        return self.listing.format if self.listing else ""

    @property
    def sass(self) -> tuple[str, ...]:
        return self.listing.sass if self.listing else ()

    @property
    def ptx(self) -> tuple[str, ...]:
        return self.listing.ptx if self.listing else ()

    @property
    def lto(self) -> tuple[str, ...]:
        return self.listing.lto if self.listing else ()

    @property
    def entries(self) -> tuple[FatbinEntry, ...]:
        return self.listing.entries if self.listing else ()

    @property
    def archs(self) -> tuple[Arch, ...]:
        """The loadable SASS and PTX targets as ``Arch`` values, for ``archs.coverage``."""
        names = set(self.sass) | set(self.ptx)
        pool = [e for e in self.entries if e.name in names]
        return tuple(sorted({arch for e in pool if (arch := e.arch) is not None}))

    @property
    def has_device_code(self) -> bool:
        return bool(self.entries)

    def to_dict(self) -> dict[str, Any]:
        """One element of ``files`` in ``inspect --json`` (the contract's keys first, then extra ones)."""
        data: dict[str, Any] = {"path": self.path, "sass": list(self.sass), "ptx": list(self.ptx)}
        data["lto"] = list(self.lto)
        data["format"] = self.format
        if self.listing is not None:
            data["ptx_isa"] = self.listing.ptx_isa
            data["containers"] = len(self.listing.containers)
            data["entries"] = len(self.listing.entries)
            data["compressed"] = self.listing.compressed
            data["sections"] = [s for s in self.listing.sections if s]  # "" is the file itself
            data["bytes_read"] = self.listing.bytes_read
            data["size"] = self.listing.size
            if self.listing.format == "ar":  # a static library: the member objects that hold GPU code
                data["members"] = sorted({e.member for e in self.listing.entries})
            if self.listing.notes:
                data["notes"] = list(self.listing.notes)
        if self.package is not None:
            data["aoti"] = self.package.to_dict()
        if self.error is not None:
            data["error"] = self.error.to_dict()
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class AotiModel:
    """One model of an AOTInductor package: its metadata strings and the reports of its kernel files."""

    name: str
    metadata: tuple[tuple[str, str], ...] = ()
    kernels: tuple[BinaryReport, ...] = ()
    notes: tuple[Text, ...] = ()

    def _get(self, key: str) -> str | None:
        return dict(self.metadata).get(key)

    @property
    def device(self) -> str | None:
        """``AOTI_DEVICE_KEY``: "cuda", "cpu", "xpu" (``None`` when the package has no metadata)."""
        return self._get("AOTI_DEVICE_KEY") or None

    @property
    def compute_capability(self) -> ComputeCapability | None:
        """The compiling GPU, from ``AOTI_COMPUTE_CAPABILITY`` ("90" -> 9.0, "120" -> 12.0)."""
        raw = self._get("AOTI_COMPUTE_CAPABILITY") or ""
        if not re.fullmatch(r"\d{2,3}", raw):
            return None  # "" on CPU, "gfx90a" on ROCm
        return ComputeCapability(int(raw[:-1]), int(raw[-1]))

    @property
    def sass(self) -> tuple[str, ...]:
        return _union(r.sass for r in self.kernels)

    @property
    def ptx(self) -> tuple[str, ...]:
        return _union(r.ptx for r in self.kernels)

    @property
    def archs(self) -> tuple[Arch, ...]:
        return tuple(sorted({a for r in self.kernels for a in r.archs}))

    def to_dict(self) -> dict[str, Any]:
        cc = self.compute_capability
        data: dict[str, Any] = {
            "name": self.name, "device": self.device, "compute_capability": str(cc) if cc else None,
            "platform": self._get("AOTI_PLATFORM"), "machine": self._get("AOTI_MACHINE"),
            "sass": list(self.sass), "ptx": list(self.ptx),
            "kernels": [{"path": k.path, "sass": list(k.sass), "ptx": list(k.ptx)}
                        | ({"error": k.error.to_dict()} if k.error else {}) for k in self.kernels],
        }
        if self.notes:
            data["notes"] = list(self.notes)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class AotiPackage:
    """An AOTInductor ``.pt2`` package: its models (``aoti.read_package``)."""

    path: str
    models: tuple[AotiModel, ...] = ()

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(sorted({m.device for m in self.models if m.device}))

    def to_dict(self) -> dict[str, Any]:
        return {"devices": list(self.devices), "models": [m.to_dict() for m in self.models]}


def _union(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    names = {name for group in groups for name in group}
    return tuple(sorted(names, key=_arch_key))


def _arch_key(name: str) -> tuple[int, str, str]:
    prefix, _, rest = name.partition("_")
    digits = rest.rstrip("af")
    return (int(digits) if digits.isdigit() else 0, rest[len(digits):], prefix)
