"""Frozen value types shared across cudaresolve: versions, GPUs, the target, findings, solutions. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.errors import InvalidDriver, InvalidInput

if TYPE_CHECKING:
    from cudaresolve.archs import ComputeCapability

__all__ = [
    "PLATFORMS",
    "CudaVersion",
    "DriverVersion",
    "Finding",
    "Gpu",
    "LockedPackage",
    "Notice",
    "Solution",
    "Target",
    "canonical_name",
    "normalize_platform",
    "parse_cuda_version",
    "parse_driver",
    "parse_python_version",
]

#: Platform keys used in compat.toml and on a Target (wheel-tag spelling, OS and machine only).
PLATFORMS: Final = ("linux_x86_64", "linux_aarch64", "win_amd64", "macosx_arm64", "macosx_x86_64")

_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name (``Flashinfer_Python`` -> ``flashinfer-python``).

    The same rule as ``packaging.utils.canonicalize_name``, without importing ``packaging.tags``
    (about 16 ms of start-up) on paths that need nothing else from it.
    """
    return _SEPARATORS.sub("-", name).lower()


_DRIVER = re.compile(r"^\d{2,4}(\.\d{1,3}){0,2}$")
_CUDA = re.compile(r"^(\d{1,2})\.(\d{1,2})(\.\d+)?$")
_PYTHON = re.compile(r"^3\.(\d{1,2})$")


@dataclass(frozen=True, slots=True, order=True)
class DriverVersion:
    """An NVIDIA driver version such as ``470.129.06``; compared part by part as integers."""

    parts: tuple[int, ...]
    text: str = field(compare=False)

    def __str__(self) -> str:
        return self.text

    @property
    def branch(self) -> int:
        """The driver branch (``R470`` is 470)."""
        return self.parts[0]


def parse_driver(text: str) -> DriverVersion:
    """``"470.129.06"`` -> DriverVersion; anything else is ``InvalidDriver``."""
    raw = text.strip()
    if not _DRIVER.match(raw):
        raise InvalidDriver(
            f"not an NVIDIA driver version: {text!r}",
            hint="give the version nvidia-smi prints, e.g. --driver 535.104.05",
        )
    return DriverVersion(tuple(int(p) for p in raw.split(".")), raw)


@dataclass(frozen=True, slots=True, order=True)
class CudaVersion:
    """A CUDA toolkit version, major.minor (``12.8``). Never a driver version."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def tag(self) -> str:
        """PyTorch's variant tag for this toolkit: ``cu128``."""
        return f"cu{self.major}{self.minor}"


def parse_cuda_version(text: str) -> CudaVersion:
    """``"12.8"`` or ``"12.8.1"`` -> ``CudaVersion(12, 8)``."""
    match = _CUDA.match(text.strip())
    if not match:
        raise InvalidInput(f"not a CUDA version: {text!r}", hint="write it as major.minor, e.g. 12.8")
    return CudaVersion(int(match.group(1)), int(match.group(2)))


def parse_python_version(text: str) -> str:
    """``"3.11"`` (or ``3.11.7``) -> ``"3.11"``."""
    raw = text.strip()
    parts = raw.split(".")
    short = ".".join(parts[:2])
    if not _PYTHON.match(short) or len(parts) > 3 or not all(p.isdigit() for p in parts):
        raise InvalidInput(f"not a Python version: {text!r}", hint="write it as 3.X, e.g. --python-version 3.11")
    return short


def normalize_platform(text: str) -> str:
    """A wheel platform tag or key -> one of ``PLATFORMS``.

    ``manylinux_2_28_x86_64``, ``manylinux2014_x86_64`` and ``linux_x86_64`` all give
    ``linux_x86_64``; ``macosx_11_0_arm64`` gives ``macosx_arm64``.
    """
    raw = text.strip().lower().replace("-", "_")
    if raw in PLATFORMS:
        return raw
    for machine in ("x86_64", "aarch64", "arm64", "amd64"):
        if not raw.endswith(machine):
            continue
        if raw.startswith(("manylinux", "musllinux", "linux")) and machine in ("x86_64", "aarch64"):
            return f"linux_{machine}"
        if raw.startswith("macosx") and machine in ("arm64", "x86_64"):
            return f"macosx_{machine}"
        if raw.startswith("win") and machine == "amd64":
            return "win_amd64"
    raise InvalidInput(f"unknown platform: {text!r}", hint=f"use one of {', '.join(PLATFORMS)} or a wheel platform tag")


@dataclass(frozen=True, slots=True, kw_only=True)
class Gpu:
    """One GPU of the target."""

    name: str
    cc: ComputeCapability
    memory_mib: int | None = None
    datacenter: bool = False
    tegra: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cc": str(self.cc),
            "memory_mib": self.memory_mib,
            "datacenter": self.datacenter,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """The machine to resolve for: GPUs, driver, the highest CUDA that driver runs, platform, Python.

    ``gpus`` empty means a CPU target; ``driver`` is None then (or when only declared GPUs
    were given without a driver, in which case the driver is unconstrained).
    """

    gpus: tuple[Gpu, ...] = ()
    driver: DriverVersion | None = None
    cuda_driver_max: CudaVersion | None = None
    platform: str = "linux_x86_64"
    python: str = "3.11"
    source: str = "flags"  # "nvml", "nvidia-smi", "proc", "flags", "host-file", "env", "none"

    @property
    def is_cpu(self) -> bool:
        return not self.gpus

    @property
    def ccs(self) -> tuple[ComputeCapability, ...]:
        """Distinct compute capabilities, lowest first."""
        return tuple(sorted({g.cc for g in self.gpus}))

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpus": [g.to_dict() for g in self.gpus],
            "driver": str(self.driver) if self.driver else None,
            "cuda_driver_max": str(self.cuda_driver_max) if self.cuda_driver_max else None,
            "platform": self.platform,
            "python": self.python,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One typed reason (design section 4 reason codes), with the numbers behind it."""

    code: str
    message: str
    package: str | None = None
    variant: str | None = None
    required: str | None = None
    found: str | None = None
    fields: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)  # for other languages

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("package", "variant", "required", "found"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """A warning attached to a successful result (``ptx-jit-only``, minor-version compatibility …)."""

    code: str
    message: str
    fields: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)  # for other languages

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedPackage:
    """One pinned wheel of a solution: its full local version and the one index it comes from."""

    name: str
    version: str  # full local version, e.g. "2.7.1+cu118"
    index: str  # the index URL (PEP 503 root) this package is installed from
    url: str | None = None
    sha256: str | None = None
    filename: str | None = None
    requires_python: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "index": self.index, "url": self.url, "sha256": self.sha256}


@dataclass(frozen=True, slots=True, kw_only=True)
class Solution:
    """A consistent set: one variant, its index, the pinned packages and any warnings."""

    target: Target
    variant: str
    index_url: str
    packages: tuple[LockedPackage, ...]
    warnings: tuple[Notice, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target.to_dict(),
            "variant": self.variant,
            "index_url": self.index_url,
            "packages": [p.to_dict() for p in self.packages],
            "warnings": [w.to_dict() for w in self.warnings],
        }
