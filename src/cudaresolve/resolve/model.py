"""What a resolution returns: the pinned packages, the variant, the index and the warnings. Pure."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cudaresolve.core.urls import strip_credentials

if TYPE_CHECKING:
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Notice

__all__ = ["FileKind", "LockedPackage", "Solution"]


class FileKind(enum.Enum):
    """What file a locked package installs from: the PEP 751 table it is written as."""

    WHEEL = "wheel"  # ``[[packages.wheels]]``: a wheel its index lists
    SDIST = "sdist"  # ``[packages.sdist]``: a source distribution its index lists (built when installed)
    ARCHIVE = "archive"  # ``[packages.archive]``: a wheel named by URL (``name @ URL``), from no index
    DIRECTORY = "directory"  # ``[packages.directory]``: a local project folder (``name @ file:///dir``, ``-e``)


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedPackage:
    """One pinned file of a solution: its full local version and the one index it comes from (a wheel or an
    sdist), or the URL the user named (an archive: ``index`` is "")."""

    name: str
    version: str  # full local version, e.g. "2.7.1+cu118"
    index: str  # the index URL (PEP 503 root) this package is installed from
    url: str | None = None
    sha256: str | None = None
    filename: str | None = None
    requires_python: str | None = None
    size: int | None = None
    kind: FileKind = FileKind.WHEEL
    upload_time: str | None = None  # ISO 8601, as the index gave it (PEP 700)
    editable: bool = False  # a directory installed in place (``-e``)
    marker: str | None = None  # PEP 751 ``packages.marker``: installed only when it holds (extras, groups)

    def to_dict(self) -> dict[str, Any]:
        url = strip_credentials(self.url) if self.url else self.url  # a private mirror's token stays out of output
        index = strip_credentials(self.index) if self.index else None
        marker = {"marker": self.marker} if self.marker else {}  # only some extras or groups install it (PEP 751)
        return {
            "name": self.name,
            "version": self.version,
            "index": index,
            "url": url,
            "sha256": self.sha256,
            "kind": self.kind.value,
            **marker,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Solution:
    """A consistent set: one variant, its index, the pinned packages and any warnings."""

    target: Target
    variant: str
    index_url: str
    packages: tuple[LockedPackage, ...]
    warnings: tuple[Notice, ...] = ()
    complete: bool = True  # every package and dependency resolved from real metadata (a whole-environment lock)
    #: what failed while it was solved: an index (down, a stale copy used), or a release's metadata passed over
    #: (``sdist-unusable``, whether or not the set holds that package): an answer that may change once it answers
    failed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target.to_dict(),
            "variant": self.variant,
            "index_url": self.index_url,
            "packages": [p.to_dict() for p in self.packages],
            "warnings": [w.to_dict() for w in self.warnings],
        }
