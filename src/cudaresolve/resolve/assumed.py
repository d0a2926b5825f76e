"""Newer releases a lock passed over only for the system a declared target is assumed to have. Pure.

A declared Linux target's glibc (and a Mac target's macOS) is an assumption (``[index] manylinux-glibc``) unless
``--platform``/``--python-platform`` names one. When a newer release of a pinned database package was passed over
only because its wheels need a newer system than that (vllm 0.14 and later need glibc 2.34), the lock says so: the
machine may well have it. "Only because": with the system its wheels need, the release would be a candidate for
the target (the same checks, the same sources); whether the solver would then pick it is not claimed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cudaresolve.resolve.catalog import CUDA, release_candidates
from cudaresolve.resolve.platforms import declaring, dotted, floor_of
from cudaresolve.text.findings import warning

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.db.database import CompatDB, PackageRelease
    from cudaresolve.resolve.catalog import Candidate, Rejection
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Notice

__all__ = ["assumed_system_notices"]


def assumed_system_notices(
    pins: Mapping[str, Candidate], db: CompatDB, target: Target, gpu_source: str
) -> list[Notice]:
    """One ``assumed-system`` warning per pinned database package whose newer releases need a newer system than
    the one ``target`` is assumed to have, and would fit with it."""
    mac = target.platform.startswith("macosx")
    if not (mac or target.platform.startswith("linux")) or (target.macos if mac else target.glibc) is not None:
        return []  # another OS, or a system the user named
    assumed = db.assumed_macos if mac else db.assumed_glibc
    out: list[Notice] = []
    for name in sorted(pins):
        pinned = pins[name].release
        if name == CUDA or pins[name].extras or pinned is None:
            continue
        needs = [(r, floor) for r in db.packages(name) if r.version > pinned.version
                 and (floor := _needed(db, target, r, gpu_source, mac=mac)) is not None]  # fmt: skip
        if not needs:
            continue
        newer = sorted(r.version for r, _ in needs)
        floors = sorted({f for _, f in needs}, key=dotted)
        low, high = floors[0], floors[-1]
        system = "macOS" if mac else "glibc"
        out.append(warning("assumed-system", "warn.assumed-system", package=name, oldest=str(newer[0]),
                           newest=str(newer[-1]), chosen=str(pinned.version), found=f"{system} {assumed}",
                           required=f"{system} {low}" if low == high else f"{system} {low} to {high}",
                           example=declaring(target.platform, high)))  # fmt: skip
    return out


def _needed(db: CompatDB, target: Target, release: PackageRelease, gpu_source: str, *, mac: bool) -> str | None:
    """The system ``release``'s wheels need when the target's assumed one is too old for them and, given it, the
    release has a candidate for ``target``; else None."""
    refused: list[Rejection] = []
    if any(True for _ in release_candidates(db, target, release, refused, gpu_source)):
        return None  # a candidate already: passed over for another reason (the solver's choice)
    floors = {f for b in release.builds or (None,) if (f := floor_of(db, target, release, b)) is not None}
    if not floors or not any(r.finding.code == "platform-too-old" for r in refused):
        return None
    floor = max(floors, key=dotted)
    newer = replace(target, macos=floor) if mac else replace(target, glibc=floor)
    return floor if any(True for _ in release_candidates(db, newer, release, [], gpu_source)) else None
