"""Which builds of a release the target's platform can take, and why not. Pure.

* ``os_not_served``: a package that does not serve the target's OS at all (``[packages.os]``:
  FlashInfer is Linux only), one ``os-not-served`` finding for the release.
* ``other_platform``: a build for another platform is no candidate, and no reason either, when
  another build of the release serves the target's platform (torch 2.15.0's cu132 build is not
  for macOS; its cpu build is): "has no wheel for" is said only of a release with none at all.
* ``below_floor``: the macOS or glibc version a PyPI or PyTorch-index wheel needs (``platform-too-old``).
* ``on_source``: under ``--gpu-source pytorch`` or ``pypi`` a release may have a wheel for the
  target's platform only on the other index (torch 2.15.0's macOS wheel is PyPI's): "has no wheel
  for" then names the index it is true of, and where the wheel is. A wheel PyPI has (the release's
  ``platforms``) that no build describes is said to be undescribed, never absent.

PyPI's wheel tags name the oldest system each wheel installs on (``macosx_14_0_arm64``,
``manylinux_2_28_x86_64``); the database keeps them per release (``floors``). A declared target
runs the macOS or glibc its flags name (``--platform macosx_13_0_arm64``), else the one the
database assumes for declared targets (``[index]``, as uv assumes). The PyTorch index's Linux wheels
need the glibc of their build platform (``[packages.index-floors]``: manylinux 2.28 from torch 2.7).
A build whose floor is newer than the target's system is no candidate, offline as online, where the
index's file tags say the same.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cudaresolve.core.platforms import platform_os
from cudaresolve.db.index_floors import index_floor
from cudaresolve.resolve.sources import sourced_builds
from cudaresolve.text.findings import Finding, reason
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cudaresolve.db.database import Build, CompatDB, PackageRelease
    from cudaresolve.target.model import Gpu, Target

__all__ = ["below_floor", "declaring", "dotted", "floor_of", "jetson_not_served", "on_source", "os_not_served",
           "other_platform", "serves_jetson"]  # fmt: skip


def os_not_served(db: CompatDB, target: Target, release: PackageRelease) -> Finding | None:
    """``os-not-served`` when the package serves other operating systems only; None when it serves the
    target's (or the database does not say)."""
    systems = db.operating_systems(release.name)
    if systems is None or platform_os(target.platform) in systems:
        return None
    version = str(release.version)
    return reason("os-not-served", package=release.name, version=version, required=", ".join(systems),
                  found=target.platform)


def serves_jetson(db: CompatDB, variant: str | None, gpu: Gpu) -> bool:
    """Whether an Arm server build of ``variant`` runs on the Jetson ``gpu``: it does from the CUDA version NVIDIA
    made one Arm toolkit for both (``GpuModel.sbsa_from``); whether its code runs there is the SM check's."""
    info = db.variant(variant) if variant is not None else None
    return gpu.sbsa_from is not None and info is not None and info.cuda is not None and info.cuda >= gpu.sbsa_from


def jetson_not_served(
    db: CompatDB, target: Target, variant: str | None, version: str, package: str | None = None
) -> Finding | None:
    """``jetson-not-served`` (``jetson-needs-cuda`` for a Jetson that runs the Arm server builds of a newer CUDA)
    when a Jetson GPU of the target cannot run the CUDA ``variant``: for ``package``'s build, or, with no package,
    for the variant itself (``version`` its CUDA version), whatever the driver: a Jetson's driver is L4T's, so
    the variant's driver floor says nothing of it. None for ``cpu`` and for a target with no such GPU."""
    jetson = next((g for g in target.gpus if g.tegra and not serves_jetson(db, variant, g)), None)
    if jetson is None or variant is None or variant == "cpu":  # these indexes build for SBSA, not Tegra
        return None
    finding = reason(
        "jetson-not-served" if jetson.sbsa_from is None else "jetson-needs-cuda",
        package=package or "CUDA",
        version=version,
        variant=variant,
        found=jetson.name,
        url=db.jetson_wheels or "JetPack",
        cuda=jetson.sbsa_from,
    )
    return finding if package is not None else replace(finding, package=None)


def _serves(build: Build, platform: str) -> bool:
    return "any" in build.platforms or platform in build.platforms


def other_platform(build: Build | None, builds: Sequence[Build | None], platform: str) -> bool:
    """Whether ``build`` is for another platform while some build of ``builds`` serves ``platform``."""
    if build is None or _serves(build, platform):
        return False
    return any(b is not None and _serves(b, platform) for b in builds)


def dotted(text: str) -> tuple[int, ...]:
    """A glibc or macOS version as numbers, to compare (``2.28`` < ``2.34``)."""
    return tuple(int(part) for part in text.split("."))


def declaring(platform: str, floor: str) -> str:
    """The ``--platform`` that declares a target of ``platform`` with system ``floor``: ``manylinux_2_34_x86_64``
    for linux_x86_64 and glibc 2.34, ``macosx_14_0_arm64`` for macosx_arm64 and macOS 14.0."""
    system, _, machine = platform.partition("_")  # linux_x86_64 -> x86_64, macosx_arm64 -> arm64
    return f"{'macosx' if system == 'macosx' else 'manylinux'}_{floor.replace('.', '_')}_{machine}"


def floor_of(db: CompatDB, target: Target, release: PackageRelease, build: Build | None) -> str | None:
    """PyPI's wheel: the release's ``floors`` (its tags); the PyTorch index's: ``[packages.index-floors]``
    (its build platform); any other index's: not known."""
    if build is None or build.channel == "pypi":
        return release.floor(target.platform, target.python)
    if not _on_pytorch(db, build):
        return None
    return index_floor(db.package_facts.index_floors, release.name, release.version, build.variant, target.platform)


def below_floor(db: CompatDB, target: Target, release: PackageRelease, build: Build | None) -> Finding | None:
    """The ``platform-too-old`` finding when the target's system is older than the floor of the wheel
    ``build`` (a PyPI or PyTorch-index build, or a pure release) would install; None otherwise or when no
    floor is known."""
    floor = floor_of(db, target, release, build)
    if floor is None:
        return None
    mac = target.platform.startswith("macosx")
    have = (target.macos or db.assumed_macos) if mac else (target.glibc or db.assumed_glibc)
    if have is None or dotted(have) >= dotted(floor):
        return None
    system = "macOS" if mac else "glibc"
    return reason(
        "platform-too-old",
        package=release.name,
        version=str(release.version),
        required=f"{system} {floor}",
        found=f"{system} {have}",
        platform=target.platform,
        example=declaring(target.platform, floor),
    )


def _on_pytorch(db: CompatDB, build: Build) -> bool:
    info = db.variant(build.variant)
    return build.channel == "index" and info is not None and build.index_url == info.index_url


def _kind(build: Build, cpu: bool) -> bool:
    return (build.variant == "cpu") == cpu


def _undescribed(release: PackageRelease, platform: str) -> bool:
    """PyPI has a wheel of ``release`` for ``platform`` (the release's ``platforms``: its file list) that no
    build, usable or withdrawn, describes (vLLM's linux_aarch64 wheels)."""
    builds = (*release.builds, *release.withdrawn)
    return bool(release.builds) and platform in release.platforms and not any(_serves(b, platform) for b in builds)


def _not_described(db: CompatDB, release: PackageRelease, finding: Finding, platform: str) -> Finding:
    described = dict.fromkeys(p for b in release.builds for p in b.platforms if p != "any")
    text = Text.of("resolve.wheel-not-described", package=release.name, version=str(release.version),
                   found=platform, index=db.default_index, required=", ".join(described) or "-")
    return Finding(code=finding.code, text=text, package=finding.package, variant=finding.variant,
                   required=", ".join(described), found=finding.found)


def on_source(db: CompatDB, target: Target, release: PackageRelease, finding: Finding, gpu_source: str) -> Finding:
    """``finding`` (``no-wheel-for-platform``) said of the whole release: the platforms it lists are every one
    the builds of the target's kind (CUDA, or CPU for a CPU target) serve on the sources ``gpu_source`` keeps,
    not one build's. When a build of that kind that the source rule set aside serves the target's platform,
    the statement is said of the index kept (``--gpu-source pytorch`` or ``pypi``): it is true of that index
    only. Any other finding is returned unchanged."""
    if finding.code != "no-wheel-for-platform" or not release.builds:
        return finding
    cpu, pytorch = target.is_cpu, gpu_source == "pytorch"
    every = dict.fromkeys([*release.platforms, *(p for b in release.builds for p in b.platforms)])
    kept = [p for p in every if p != "any" and any(_serves(b, p) and _kind(b, cpu)
                                                  for b in sourced_builds(db, release, gpu_source, p))]
    elsewhere = gpu_source in ("pytorch", "pypi") and any(
        _serves(b, target.platform) and _kind(b, cpu) and _on_pytorch(db, b) != pytorch for b in release.builds)
    if not elsewhere:
        if _undescribed(release, target.platform):
            return _not_described(db, release, finding, target.platform)
        if not kept:
            return finding
        found = reason("no-wheel-for-platform", package=release.name, version=str(release.version),
                       required=", ".join(kept), found=target.platform)
        if not any(_serves(b, target.platform) and not _kind(b, cpu) for b in release.builds):
            return found
        # its wheel for the platform is a build of the other kind (PyPI's aarch64 torch is a CUDA build)
        text = Text.of("resolve.wheel-of-other-kind", package=release.name, version=str(release.version),
                       found=target.platform, required=", ".join(kept), kind="CPU" if cpu else "CUDA",
                       other="CUDA" if cpu else "CPU")
        return replace(found, text=text)
    here, there = (db.pytorch_index_root, db.default_index) if pytorch else (db.default_index, db.pytorch_index_root)
    key = "resolve.no-cpu-wheel-on-index" if cpu else "resolve.no-wheel-on-index"
    text = Text.of(key, package=release.name, version=str(release.version), found=target.platform,
                   required=", ".join(kept) or "-", index=here, other=there, source=gpu_source,
                   other_source="pypi" if pytorch else "pytorch")
    return Finding(code=finding.code, text=text, package=finding.package, variant=finding.variant,
                   required=", ".join(kept), found=finding.found)
