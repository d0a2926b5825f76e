"""Typed rows of the compatibility database: CUDA releases, GPUs, variants, package releases and builds. Pure."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.core.versions import parse_driver

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.version import Version

    from cudaresolve.core.archs import Arch, ComputeCapability
    from cudaresolve.core.versions import CudaVersion, DriverVersion
    from cudaresolve.db.index_floors import IndexFloor
    from cudaresolve.db.python_platforms import PythonPlatform

__all__ = [
    "CHECK_LEVELS",
    "Build",
    "CudaRelease",
    "DriverGpu",
    "DriverSupport",
    "ForwardCompat",
    "GpuModel",
    "IndexFacts",
    "PackageFacts",
    "PackageRelease",
    "VariantInfo",
]

CHECK_LEVELS: Final = ("wheel", "build-script", "announcement", "source", "unverified")
"""How a build's facts were checked, strongest first; "source" is a cited source with no level recorded."""
_CHECKED_KEYS: Final = CHECK_LEVELS[:3]



class DriverSupport(enum.Enum):
    """How a driver runs a CUDA runtime: fully, only under minor-version compatibility, or not."""

    FULL = "full"
    MINOR = "minor"
    NONE = "none"


@dataclass(frozen=True, slots=True, kw_only=True)
class CudaRelease:
    version: CudaVersion
    min_driver_linux: DriverVersion
    min_driver_windows: DriverVersion | None
    minor_compat_driver_linux: DriverVersion
    minor_compat_driver_windows: DriverVersion | None
    driver_branch: str | None
    nvcc_sm: tuple[Arch, ...]
    source: str
    verified: bool = True

    def min_driver(self, platform: str) -> DriverVersion:
        """Full-compatibility minimum on this platform (Windows 13.x has none: its floor applies)."""
        if platform.startswith("win"):
            if self.min_driver_windows is not None:
                return self.min_driver_windows
            branch = re.sub(r"\D", "", self.driver_branch or "")  # 13.x: NVIDIA names only a branch ("R615")
            if branch:
                return parse_driver(branch)
            return self.minor_compat_driver_windows or self.min_driver_linux
        return self.min_driver_linux

    def minor_compat_driver(self, platform: str) -> DriverVersion:
        if platform.startswith("win"):
            return self.minor_compat_driver_windows or self.minor_compat_driver_linux
        return self.minor_compat_driver_linux


@dataclass(frozen=True, slots=True, kw_only=True)
class ForwardCompat:
    cuda_major: int
    package: str  # a name pattern: "cuda-compat-12-{minor}"
    min_driver_branch: int
    source: str
    verified: bool = True

    def package_for(self, cuda: CudaVersion) -> str:
        """The package that brings the CUDA ``cuda`` runtime: ``cuda-compat-12-{minor}`` -> ``cuda-compat-12-8``."""
        return self.package.format(major=cuda.major, minor=cuda.minor)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFacts:
    """The ``[index]`` table: where packages come from, and which hosts the file may name."""

    default: str  # the index of every package the database does not place elsewhere
    pytorch_root: str  # a variant's index is <pytorch_root>/<variant>
    allowed_hosts: tuple[str, ...]
    source: str
    manylinux_glibc: str | None = None  # the glibc a declared Linux target is assumed to have ("2.28")
    macos_version: str | None = None  # the macOS a declared Mac target is assumed to run ("13.0")
    jetson_wheels: str | None = None  # NVIDIA's page for Jetson's CUDA wheels (these indexes serve Arm servers)
    python_platforms: tuple[PythonPlatform, ...] = ()  # uv's --python-platform names ([index.python-platform])


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageFacts:
    """The ``[packages]`` table: which package tables the file may hold, and the anchor package."""

    tables: tuple[str, ...]  # in the order ``db show`` lists them
    anchor: str  # pinned first by the solver; why-not's context when none is given
    source: str
    #: Packages whose CUDA builds also run on a machine without a GPU (their CPU code is in the same wheel): a CPU
    #: target may take PyPI's CUDA wheel of them when the PyTorch index's cpu build cannot be had.
    runs_without_gpu: frozenset[str] = frozenset()
    os: tuple[tuple[str, tuple[str, ...]], ...] = ()  # ``[packages.os]``: (table, its operating systems)
    cpu_packages: tuple[tuple[str, str], ...] = ()  # ``[packages.cpu-package]``: (table, its CPU-only PyPI project)
    index_floors: tuple[IndexFloor, ...] = ()  # ``[packages.index-floors]``: the PyTorch index's Linux wheels' glibc

    def cpu_package(self, name: str) -> str | None:
        """The PyPI project that is the CPU-only build of package ``name`` (fbgemm-gpu-cpu); None when none is known."""
        return next((project for table, project in self.cpu_packages if table == name), None)

    def operating_systems(self, name: str) -> tuple[str, ...] | None:
        """The operating systems package ``name`` serves; None when the database does not say."""
        return next((systems for table, systems in self.os if table == name), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuModel:
    name: str
    aliases: tuple[str, ...]
    cc: ComputeCapability
    arch: str
    datacenter: bool
    tegra: bool
    source: str
    verified: bool = True
    #: A Jetson that also runs the Arm server (SBSA) builds from this CUDA version on (Thor: 13.0, when NVIDIA made
    #: one Arm toolkit); None: only Jetson wheels serve it.
    sbsa_from: CudaVersion | None = None
    #: The only platforms a host of this GPU has (a Grace superchip: ``linux_aarch64``); (): any.
    host_platforms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverGpu:
    """One ``[[driver-gpu]]`` row: the drivers that know an architecture (or some of its GPUs).

    A row keys on ``arch``; ``cc``, ``datacenter`` and ``gpus`` narrow it, and the most specific
    matching row wins (``specificity``). ``min_driver`` is the lowest Linux driver that supports
    the GPUs (None: older than any driver the database models); ``last_branch`` the last driver
    branch that does, on Linux and Windows alike (None: still supported; ``gpudriver`` tells a Windows driver's
    branch).
    """

    arch: str
    cc: tuple[ComputeCapability, ...]  # empty: every GPU of the architecture
    datacenter: bool | None
    gpus: tuple[str, ...]  # [[gpu]] names or aliases; empty: not a per-GPU row
    min_driver: DriverVersion | None
    min_driver_windows: DriverVersion | None
    last_branch: int | None
    source: str
    verified: bool = True

    @property
    def specificity(self) -> tuple[bool, bool, bool]:
        """Per-GPU rows first, then rows that name compute capabilities, then data-center-only rows."""
        return (bool(self.gpus), bool(self.cc), self.datacenter is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantInfo:
    name: str
    cuda: CudaVersion | None
    index_url: str
    source: str
    verified: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Build:
    """One published build of a release: a variant on one channel, with its code targets."""

    variant: str
    channel: str  # "index" or "pypi"
    index_url: str
    local: str  # "+cu118", "" on PyPI, "+cu124torch2.6" on flashinfer's index
    sass: tuple[Arch, ...]
    ptx: tuple[Arch, ...]
    requires: tuple[Requirement, ...]
    platforms: tuple[str, ...]
    source: str
    verified: bool = True  # false when this build or its release is marked unverified
    marked_unverified: bool = False  # this build's own row says ``verified = false``
    checked: str = "unverified"  # provenance: "wheel", "build-script", "announcement", "source", "unverified"
    scanned: str | None = None  # the date of the wheel scan when ``checked`` is "wheel"
    withdrawn: str | None = None  # "never-published" (exists = false) or "broken": never a candidate
    url: str | None = None  # a [[prebuilt]] wheel's URL, ``{python}`` left for the target's tag (``db.prebuilt``)
    build_env: str | None = None  # a source build's own arch-list variable, "FLASH_ATTN_CUDA_ARCHS={major}{minor}"

    @property
    def archs(self) -> tuple[Arch, ...]:
        return self.sass + self.ptx


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageRelease:
    """One release of one package; ``builds`` empty means a pure-Python wheel from PyPI."""

    name: str
    version: Version
    python: tuple[str, ...]
    platforms: tuple[str, ...]
    requires: tuple[Requirement, ...]
    constrains: tuple[Requirement, ...]
    metadata_requires: tuple[str, ...]
    min_sm: ComputeCapability | None
    pypi_variant: str | None
    builds: tuple[Build, ...]
    source: str
    verified: bool = True
    index: str = "pypi"  # pure rows: "pypi", or "pytorch" when the chosen variant's index carries it
    index_url: str | None = None  # pure rows on another index (flashinfer's own)
    withdrawn: tuple[Build, ...] = ()  # builds that never existed or cannot be used; kept out of ``builds``
    # ``floors``: (platform key, Python or "", version): the macOS or glibc its PyPI wheel needs
    floors: tuple[tuple[str, str, str], ...] = ()

    def floor(self, platform: str, python: str) -> str | None:
        """The lowest macOS (``14.0``) or glibc (``2.28``) version the PyPI wheel for ``platform`` and
        ``python`` needs; None when the database does not record one."""
        mine = [(py, v) for key, py, v in self.floors if key == platform and py in ("", python)]
        return next((v for py, v in mine if py == python), None) or next((v for py, v in mine if not py), None)

    @property
    def pure(self) -> bool:
        return not self.builds
