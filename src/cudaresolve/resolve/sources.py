"""Where a GPU build comes from: the PyTorch index or the default index (PyPI or its mirror). Pure.

PyPI carries, for each release, the wheel of one variant (the release's ``pypi-variant``): the same
build the PyTorch index serves as ``2.9.0+cu128`` is PyPI's ``2.9.0``. The catalog adds that twin
beside the index build and ``gpu_source`` decides which of the two may be chosen and which first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cudaresolve.db.database import Build, CompatDB, PackageRelease

__all__ = ["GPU_SOURCES", "cpu_from_pypi", "on_variant_index", "sourced_builds"]

#: Where GPU builds may come from (``--gpu-source``, ``[tool.cudaresolve] gpu-source``): ``auto`` takes a
#: build from the default index (PyPI or its mirror) when that index carries the same build, else from
#: the variant's PyTorch index; ``pytorch`` only from the PyTorch index where it has the build;
#: ``pypi`` never from the PyTorch index.
GPU_SOURCES: Final = ("auto", "pytorch", "pypi")


def on_variant_index(release: PackageRelease | None, gpu_source: str) -> bool:
    """A pure row the database places on the PyTorch index (``index = "pytorch"``: torchrec) taken from the
    pinned variant's index: only with ``gpu_source = "pytorch"``; otherwise it comes from PyPI, which
    carries the same wheel."""
    return gpu_source == "pytorch" and release is not None and release.pure and release.index == "pytorch"


def _pypi_twin(db: CompatDB, release: PackageRelease, build: Build) -> Build | None:
    """The PyPI wheel of ``release`` as a build, when it is ``build`` itself: ``build`` is the PyTorch-index
    build of the release's ``pypi-variant`` and no ``channel = "pypi"`` row of that variant says otherwise.
    PyPI's wheel then carries the same code under the release's plain version (``2.9.0`` for ``2.9.0+cu128``),
    on Linux x86_64 (``pypi-variant`` describes that wheel)."""
    if build.channel != "index" or build.variant != release.pypi_variant or "linux_x86_64" not in build.platforms:
        return None
    info = db.variant(build.variant)
    if info is None or build.index_url != info.index_url or build.local != f"+{build.variant}":
        return None
    if any(
        b.channel == "pypi" and b.variant == build.variant and "linux_x86_64" in b.platforms for b in release.builds
    ):
        return None  # the row describes PyPI's x86_64 wheel itself (an aarch64 or macOS pypi build is not it)
    return replace(build, channel="pypi", index_url=db.default_index, local="", platforms=("linux_x86_64",))


def sourced_builds(db: CompatDB, release: PackageRelease, gpu_source: str, platform: str) -> list[Build]:
    """The builds of ``release`` that ``gpu_source`` allows, with the PyPI twin (``_pypi_twin``) added on
    the one platform it describes."""
    builds: list[Build] = []
    for build in release.builds:
        wanted = gpu_source != "pytorch" and platform == "linux_x86_64"
        twin = _pypi_twin(db, release, build) if wanted else None
        info = db.variant(build.variant)
        on_pytorch = build.channel == "index" and info is not None and build.index_url == info.index_url
        if gpu_source == "pypi" and on_pytorch:
            builds.extend(() if twin is None else (twin,))
            continue
        if gpu_source == "pytorch" and build.channel == "pypi":
            if any(b.channel == "index" and b.variant == build.variant for b in release.builds):
                continue  # the PyTorch index has this variant: the user asked for it from there
        builds.append(build)
        if twin is not None:
            builds.append(twin)
    return builds


def cpu_from_pypi(db: CompatDB, release: PackageRelease, gpu_source: str) -> bool:
    """Whether a CPU target may take PyPI's CUDA wheel of ``release``: only when PyPI is the one source of GPU
    builds (``--gpu-source pypi``, or the lock's retry when the PyTorch index cannot be read) and the database
    says the package's CUDA builds run without a GPU (``[packages] runs-without-gpu``)."""
    return gpu_source == "pypi" and release.name in db.package_facts.runs_without_gpu
