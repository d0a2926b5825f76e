"""The target value: the GPUs, driver, platform and Python to resolve for. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.core.versions import CudaVersion, DriverVersion

__all__ = ["Gpu", "Target", "hosts_platform"]

@dataclass(frozen=True, slots=True, kw_only=True)
class Gpu:
    """One GPU of the target."""

    name: str
    cc: ComputeCapability
    memory_mib: int | None = None
    datacenter: bool = False
    tegra: bool = False
    #: A Jetson that also runs the Arm server builds from this CUDA version on (``GpuModel.sbsa_from``).
    sbsa_from: CudaVersion | None = None
    #: The only platforms a host of this GPU has (``GpuModel.host_platforms``); (): any.
    host_platforms: tuple[str, ...] = ()
    #: The driver of the host that holds this GPU, where a target joins several hosts (a fleet
    #: plan's group); None: the target's own driver drives it.
    driver: DriverVersion | None = None

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
    glibc: str | None = None  # the glibc a Linux target has ("2.28"), when known (--python-platform, --python)
    macos: str | None = None  # the macOS version of a Mac target, when known

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
            **({"glibc": self.glibc} if self.glibc else {}),
            **({"macos": self.macos} if self.macos else {}),
        }


def hosts_platform(gpus: tuple[Gpu, ...], platform: str) -> str:
    """``platform``, unless every GPU of ``gpus`` lives only on hosts of platforms they agree on and ``platform``
    is not one (a GH200 or GB200 is always in a Grace host: ``linux_aarch64``): then the first of those."""
    common = [p for p in gpus[0].host_platforms if all(p in g.host_platforms for g in gpus)] if gpus else []
    return platform if not common or platform in common else common[0]
