"""Where a prebuilt extension wheel (``db.prebuilt``: flash-attn's release assets) is read from. Pure but the source.

A prebuilt build is not on an index. Its file is, in order: the copy on the extra index or
``--find-links`` page that lists the package (the user's mirror of the release page: uv's
first-index rule, as ``PackageSource.index_for`` answers it), else the release asset itself, read once
to hash it as a direct reference is (``PackageSource.direct_release``). The lock then records the file
with its hash: a wheel of the mirror, or an archive at the release URL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.db.prebuilt import PREBUILT, prebuilt_url
from cudaresolve.errors import NoSolution

if TYPE_CHECKING:
    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.resolve.source import IndexRelease, PackageSource

__all__ = ["is_prebuilt", "prebuilt_release"]


def is_prebuilt(candidate: Candidate) -> bool:
    return candidate.build is not None and candidate.build.channel == PREBUILT


def prebuilt_release(source: PackageSource, candidate: Candidate, python: str) -> IndexRelease | None:
    """The file of the prebuilt ``candidate`` for CPython ``python`` (module docstring); raises what the source
    raises when the release asset cannot be read (``IndexUnavailable``: the solver passes the build over)."""
    assert candidate.build is not None
    where = source.index_for(candidate.name)
    if where.rstrip("/") != candidate.index_url.rstrip("/"):  # an extra index or find-links page lists it
        found = source.build_release(candidate.name, str(candidate.version), where)
        if found is not None:
            return found
    url = prebuilt_url(candidate.build, python)
    try:
        return source.direct_release(candidate.name, url) if url else None
    except NoSolution:  # its tags or Requires-Python leave the target out: not this target's file
        return None
