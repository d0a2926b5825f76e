"""``doctor``'s check of AOTInductor packages (``.pt2``) against the target's GPUs. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.binaries.aoti_check import check_package
from cudaresolve.doctor.report import Problem, Pt2Check
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from cudaresolve.binaries.report import BinaryReport
    from cudaresolve.target.model import Target

__all__ = ["check_pt2"]


def check_pt2(report: BinaryReport, target: Target) -> Pt2Check:
    """An AOTInductor package against the target's GPUs (none: it would run through a CPU runner)."""
    package = report.package
    if package is None:
        code, error = (report.error.code, report.error.text) if report.error else ("invalid-binary", literal("?"))
        said = Text.of("render.doctor.unreadable", path=report.path, error=error)
        return Pt2Check(path=report.path, problems=(Problem(code=code, text=said, package=report.path),))
    problems = []
    for finding in check_package(package, [g.cc for g in target.gpus]):
        fixes: tuple[Text, ...] = (Text.of("fix.aoti-export-device"),)
        if finding.code == "aoti-device-mismatch":
            key = "render.doctor.aoti-device"
            fixes += (Text.of("fix.aoti-runner-device"),)
        else:
            key = "render.doctor.aoti-sm"
        said = Text.of(key, path=report.path, required=finding.required, found=finding.found)
        problems.append(Problem(code=finding.code, text=said, fixes=fixes, package=report.path,
                                required=finding.required, found=finding.found))
    return Pt2Check(path=report.path, devices=package.devices, sass=report.sass, ptx=report.ptx,
                    problems=tuple(problems))
