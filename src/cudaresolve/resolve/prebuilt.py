"""Where a prebuilt extension wheel (``db.prebuilt``: flash-attn's release assets; ``db.pages``: PyG's and
mmcv's per-torch pages) is read from. Pure but the source.

A prebuilt build is not on an index. Its file is, in order: the copy on the extra index or
``--find-links`` page that lists the package (the user's mirror of the release page: uv's
first-index rule, as ``PackageSource.index_for`` answers it), else the release asset itself, or for
a ``[[wheel-page]]`` build the file of its page (the database's page URL, through ``--index-mirror``)
whose version, local tag included (``+pt24cu121``), is the build's; a file
whose listing gives no hash (a copy of a release page) is read once to hash it, as a direct
reference is (``PackageSource.direct_release``). The lock records the file as an archive: its URL and
hash (an installer fetches it there, not from the set's index, which does not list it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cudaresolve.core.archs import format_arch_list
from cudaresolve.db.pages import PAGE
from cudaresolve.db.prebuilt import PREBUILT, SDIST, prebuilt_url
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.model import FileKind
from cudaresolve.text.findings import warning

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.resolve.source import IndexRelease, PackageSource
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Notice

__all__ = ["is_prebuilt", "prebuilt_release", "source_builds"]


def is_prebuilt(candidate: Candidate) -> bool:
    return candidate.build is not None and candidate.build.channel in (PREBUILT, PAGE)


def prebuilt_release(source: PackageSource, candidate: Candidate, python: str) -> IndexRelease | None:
    """The file of the prebuilt ``candidate`` for CPython ``python`` (module docstring); raises what the source
    raises when the release asset cannot be read (``IndexUnavailable``: the solver passes the build over)."""
    assert candidate.build is not None
    url: str | None = None
    where = source.index_for(candidate.name)
    if where.rstrip("/") != candidate.index_url.rstrip("/"):  # an extra index or find-links page lists it
        found = source.build_release(candidate.name, str(candidate.version), where)
        if found is not None and found.artifact.sha256:  # locked by its URL: the file is not on the set's index
            return replace(found, artifact=replace(found.artifact, kind=FileKind.ARCHIVE))
        url = found.artifact.url if found is not None else None  # a copy of a release page gives no hash
    if url is None and candidate.build.channel == PAGE and candidate.build.url:
        found = source.build_release(candidate.name, str(candidate.version), candidate.build.url)
        if found is not None and found.artifact.sha256:
            return replace(found, artifact=replace(found.artifact, kind=FileKind.ARCHIVE))
        if found is None:
            return None  # the page lists no file of this version and local tag for the target
        url = found.artifact.url
    url = url or prebuilt_url(candidate.build, python)
    try:
        return source.direct_release(candidate.name, url) if url else None
    except NoSolution:  # its tags or Requires-Python leave the target out: not this target's file
        return None


def source_builds(pins: Mapping[str, Candidate], anchor: str, target: Target) -> list[Notice]:
    """A ``source-build`` warning for each package locked as its sdist (``db.prebuilt.SDIST``): the build time risk
    and the arch lists that cover the target's GPUs (``TORCH_CUDA_ARCH_LIST``, and the package's own variable)."""
    out: list[Notice] = []
    base = pins.get(anchor)
    for name in sorted(pins):
        build = pins[name].build
        if build is None or build.channel != SDIST:
            continue
        fields = {
            "package": name, "version": str(pins[name].version), "variant": build.variant, "anchor": anchor,
            "torch": str(base.version) if base is not None else "?", "arch_list": format_arch_list(target.ccs),
        }  # fmt: skip
        variable, _, item = (build.build_env or "").partition("=")
        if variable:
            value = ";".join(item.format(major=cc.major, minor=cc.minor) for cc in target.ccs)
            out.append(warning("source-build", "warn.source-build-env", env=variable, value=value, **fields))
        else:
            out.append(warning("source-build", "warn.source-build", **fields))
    return out
