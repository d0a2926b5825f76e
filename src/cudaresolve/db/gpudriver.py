"""Which driver versions know a GPU: the ``[[driver-gpu]]`` rows matched to one GPU. Pure.

A kernel driver runs only the GPUs it knows: each architecture has a first driver (Hopper needs
R520) and, for old architectures, a last branch (Kepler ends with R470; Maxwell, Pascal and Volta
with R580). Forward compatibility (``cuda-compat``) does not change this, since it replaces only
the user-space CUDA driver. ``check_gpu`` answers for one GPU; ``CompatDB.driver_supports_gpu``
is its front door.

A GPU is matched on its architecture (from its ``[[gpu]]`` row, else from the rows that share
its compute capability), then the most specific ``[[driver-gpu]]`` row wins: one naming the
GPU, then one listing its compute capability, then one for data-center or consumer parts only.
Jetson (Tegra) GPUs run the L4T driver, whose versions are not desktop ones: never checked.
On Windows a row's ``min-driver-windows`` is the floor, and a branch's Windows drivers are numbered from the
branch up to, not into, the next branch (NVIDIA's Table 3 pairs Linux 470.82.01 with Windows 472.50, 535.104.05
with 537.13, 570.124.06 with 572.61): a GPU whose support ended with branch ``last-branch`` is refused on Windows
from the next branch that a CUDA toolkit's Linux driver names (the ``[[cuda]]`` rows: 590 after 580, 495 after
470). On Linux the same holds when the last branch is one a toolkit names: no Linux driver is numbered between it
and the next such branch (580.x, then 590; 470.x, then 495), and a driver there is a Windows driver as WSL 2's
nvidia-smi reports it ("Driver Version: 581.57" in Ubuntu on WSL, an R580 driver), which supports what R580 does.
The list of Linux driver releases in keylase/nvidia-patch's README (commit 7b022ce, 2026-08-17, 465 to
595, desktop and data-center) goes 470.256.02 -> 495.29.05 and 580.178.04 -> 590.44.01, nothing between.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudaresolve.db.gpu_names import gpu_name_key

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.core.versions import DriverVersion
    from cudaresolve.db.rows import DriverGpu, GpuModel

__all__ = ["GpuDriverCheck", "check_gpu", "gpu_arch", "match_row"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuDriverCheck:
    """Whether a driver knows one GPU, and the bounds behind the answer.

    ``needed`` is the lowest driver for this GPU on the platform (None: no floor recorded);
    ``last_branch`` the last branch that supports it (None: still supported, or a platform without desktop
    drivers, macOS); ``stop`` the first branch, in the platform's numbering, that no longer supports it (the next
    branch a CUDA toolkit names; on Linux, past a branch no toolkit names, the next number). ``row`` is None when
    the GPU's architecture has no row (nothing is checked).
    """

    gpu: str
    arch: str | None
    ok: bool
    needed: DriverVersion | None = None
    last_branch: int | None = None
    ended: bool = False  # the driver is newer than the last branch that supports the GPU
    row: DriverGpu | None = None
    stop: int | None = None


def gpu_arch(
    model: GpuModel | None, cc: ComputeCapability, gpus: Sequence[GpuModel], rows: Sequence[DriverGpu]
) -> str | None:
    """The architecture of a GPU: its ``[[gpu]]`` row's, else the one every GPU (or every
    ``[[driver-gpu]]`` row) of that compute capability shares; None when unknown or ambiguous."""
    if model is not None:
        return model.arch
    archs = {g.arch for g in gpus if g.cc == cc}
    if not archs:
        archs = {r.arch for r in rows if cc in r.cc}
    return next(iter(archs)) if len(archs) == 1 else None


def _names_model(row: DriverGpu, model: GpuModel | None) -> bool:
    if model is None:
        return False
    keys = {gpu_name_key(label) for label in (model.name, *model.aliases)}
    return any(gpu_name_key(name) in keys for name in row.gpus)


def match_row(
    rows: Sequence[DriverGpu],
    arch: str,
    cc: ComputeCapability,
    datacenter: bool,
    model: GpuModel | None = None,
) -> DriverGpu | None:
    """The most specific row of ``arch`` that matches the GPU; None when none does."""
    fitting = [
        r
        for r in rows
        if r.arch == arch
        and (not r.gpus or _names_model(r, model))
        and (not r.cc or cc in r.cc)
        and (r.datacenter is None or r.datacenter == datacenter)
    ]
    return max(fitting, key=lambda r: r.specificity, default=None)


def check_gpu(
    row: DriverGpu | None,
    *,
    gpu: str,
    arch: str | None,
    driver: DriverVersion,
    platform: str,
    branches: Sequence[int] = (),
) -> GpuDriverCheck:
    """Whether ``driver`` supports a GPU that ``row`` describes, on ``platform``; ``branches``: the Linux driver
    branches the CUDA toolkits name, which tell where a branch's Windows (and WSL) numbers end (module docstring)."""
    if row is None:
        return GpuDriverCheck(gpu=gpu, arch=arch, ok=True)
    if platform.startswith("linux"):
        needed, last = row.min_driver, row.last_branch
        stop = last + 1 if last is not None else None
        if last is not None and last in branches:  # up to the next toolkit's branch: WSL's Windows numbers only
            stop = min((b for b in branches if b > last), default=stop)
    elif platform.startswith("win"):
        needed, last = row.min_driver_windows, row.last_branch
        stop = min((b for b in branches if last is not None and b > last), default=None)
    else:
        needed, last, stop = None, None, None
    ended = stop is not None and driver.branch >= stop
    ok = not ended and (needed is None or driver >= needed)
    return GpuDriverCheck(gpu=gpu, arch=arch, ok=ok, needed=needed, last_branch=last, ended=ended, row=row, stop=stop)
