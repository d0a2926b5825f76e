"""Whether an AOTInductor package can run on a target: its device type and kernels against the GPUs. Pure.

AOTInductor picks its runner from the package's ``AOTI_DEVICE_KEY`` (PyTorch's
``aoti_package/model_package_loader.cpp``); a CUDA package run through a CPU runner, or on a GPU
none of its kernels fits, fails late with ``CUDA error: invalid argument``. ``check_package``
says so first, for ``doctor --pt2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.core.archs import Arch, Coverage, coverage
from cudaresolve.text.findings import Finding
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cudaresolve.binaries.report import AotiModel, AotiPackage
    from cudaresolve.core.archs import ComputeCapability

__all__ = ["check_package"]


def check_package(
    package: AotiPackage, gpus: Sequence[ComputeCapability], *, runner_device: str | None = None
) -> tuple[Finding, ...]:
    """Problems running ``package`` on these GPUs (none: a CPU host), or through ``runner_device``.

    Codes: ``aoti-device-mismatch`` (compiled for one device type, run on another) and
    ``sm-not-covered`` (no kernel, nor the compiling GPU, matches a GPU of the target).
    """
    findings: list[Finding] = []
    for model in package.models:
        device = model.device
        if device is None:
            continue
        run_on = runner_device or ("cuda" if gpus else "cpu")
        if device != run_on:
            findings.append(Finding(
                code="aoti-device-mismatch", package=package.path, required=device, found=run_on,
                text=Text.of("binaries.aoti-device-mismatch", model=repr(model.name), device=device, run_on=run_on),
            ))
            continue
        if device != "cuda":
            continue
        archs = model.archs or _archs_from_metadata(model)
        for cc in sorted(set(gpus)):
            if archs and coverage(archs, cc) is Coverage.NONE:
                built = ", ".join(a.name for a in archs)
                findings.append(Finding(
                    code="sm-not-covered", package=package.path, required=str(cc), found=built,
                    text=Text.of("binaries.aoti-sm-not-covered", model=repr(model.name), built=built, cc=str(cc)),
                ))
    return tuple(findings)


def _archs_from_metadata(model: AotiModel) -> tuple[Arch, ...]:
    """The compiling GPU's own target when no kernel file says more (Triton names 9.0 and up ``sm_XYa``)."""
    cc = model.compute_capability
    if cc is None:
        return ()
    return (Arch(cc, "a" if cc.major >= 9 else ""),)
