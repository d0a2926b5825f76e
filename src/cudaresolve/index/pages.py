"""The values fetching gives: one project's page on one index, and the pages of a run. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cudaresolve.index.simple import IndexFile, canonical_project

if TYPE_CHECKING:
    from packaging.utils import NormalizedName

    from cudaresolve.text.findings import Notice
    from cudaresolve.text.model import Text

__all__ = ["Listings", "ProjectPage"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectPage:
    """One project's listing on one index, and where it actually came from.

    ``index_url`` is the index as configured (what a lock calls the index); ``served_from`` is
    the same index after mirrors (what was contacted). ``found`` is False when the index
    answered 404: the project is not on it. ``source``: "network", "revalidated" (304),
    "cache" (offline, or still fresh: no request) or "stale-cache" (network failed; ``error`` says how).
    """

    project: NormalizedName
    index_url: str
    served_from: str
    url: str
    files: tuple[IndexFile, ...]
    found: bool = True
    source: str = "network"
    fetched_at: float | None = None
    error: Text | None = None
    refused: tuple[tuple[str, str], ...] = ()  # (file name, why) of links not taken: bad scheme or host
    key: str | None = field(default=None, compare=False)  # what the files were parsed from (``parsed_key``)

    @property
    def mirrored(self) -> bool:
        return self.served_from != self.index_url


@dataclass(frozen=True, slots=True, kw_only=True)
class Listings:
    """What ``fetch_listings`` found. ``unavailable`` lists (index, project) pairs with no listing."""

    pages: tuple[ProjectPage, ...] = ()
    unavailable: tuple[tuple[str, NormalizedName], ...] = ()
    notices: tuple[Notice, ...] = ()

    def page(self, index_url: str, project: str) -> ProjectPage | None:
        index, name = index_url.strip().rstrip("/"), canonical_project(project)
        return next((p for p in self.pages if p.index_url == index and p.project == name), None)

    def files(self, index_url: str, project: str) -> tuple[IndexFile, ...] | None:
        """The wheels found; () when the index lacks the project; None when not fetched (use embedded data)."""
        page = self.page(index_url, project)
        return None if page is None else page.files
