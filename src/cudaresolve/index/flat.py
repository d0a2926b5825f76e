"""Mirrors laid out as flat directories: one listing of every wheel file of a variant. Does I/O through the client.

Some mirrors of the PyTorch index do not copy its per-project pages (``/whl/cu128/torch/``); they
keep one directory per variant holding every wheel file, with the directory's listing as the only
page (what ``pip --find-links`` reads). When a mirror of such an index answers 404 for a project
page, the client asks for the variant's directory (``/whl/cu128/``); when that page links wheel
files, it is a flat listing and the project's wheels are the ones whose file names carry its
name. A page linking no wheel at all is not a listing: the 404 stands, and the lock reports the
mirror (``lock.wheel-not-on-mirror``).

A URL naming a page file (``https://data.pyg.org/whl/torch-2.4.0+cu121.html``, a ``[[wheel-page]]``
row's page) is a page of links too, as a ``--find-links`` page is (``read_listing``), and it goes
through the mirrors (``--index-mirror``), so that a copy of such pages can stand in for them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from packaging.utils import NormalizedName

    from cudaresolve.index.http_cache import CachedResponse
    from cudaresolve.index.pages import ProjectPage

__all__ = ["flat_page", "is_page_url", "links_page", "read_listing"]

_PAGE_SUFFIXES: Final = (".html", ".htm")


class PageReader(Protocol):
    """What the flat reader needs of the index client (kept as a protocol: the client imports this module)."""

    @property
    def offline(self) -> bool: ...

    @property
    def mirrors(self) -> Mapping[str, str]: ...

    def fetch_page(self, index_url: str, name: str) -> ProjectPage: ...

    def entry(self, url: str, *, fresh_only: bool = False) -> tuple[CachedResponse, str] | None: ...

    def page_of(
        self, index: str, served_from: str, project: NormalizedName, entry: CachedResponse, source: str
    ) -> ProjectPage: ...


def flat_page(client: PageReader, page: ProjectPage, *, fresh_only: bool) -> ProjectPage | None:
    """``page`` (a mirror's 404) answered from the mirror's flat directory of its variant.

    Returns the project's wheels from the listing (``found`` False when the listing has none of
    them), ``page`` itself when the directory is not a listing of wheels, and None only when
    ``fresh_only`` and the directory would need a request."""
    from cudaresolve.errors import IndexUnavailable

    url = page.served_from.rstrip("/") + "/"
    try:
        got = client.entry(url, fresh_only=fresh_only)
    except IndexUnavailable:
        if client.offline:
            return page
        raise
    if got is None:
        return None
    entry, source = got
    if entry.status == 404 or ".whl" not in entry.body:  # no wheel linked: not a listing
        return page
    listed = client.page_of(page.index_url, page.served_from, page.project, entry, source)
    return replace(listed, found=bool(listed.files))


def links_page(client: PageReader, url: str, project: str) -> ProjectPage:
    """A ``--find-links`` page (one listing of files, any project's): ``project``'s files on it, ``found`` False
    when it lists none of them. The page is fetched and cached once, whichever project asks first."""
    from packaging.utils import canonicalize_name

    from cudaresolve.index.mirrors import apply_mirror

    served = apply_mirror(url, client.mirrors)  # a copy of the page stands in for it
    got = client.entry(served if is_page_url(served) else served.rstrip("/") + "/")
    if got is None:  # only asked with fresh_only, which this never is
        raise AssertionError("unreachable")
    entry, source = got
    listed = client.page_of(url, served, canonicalize_name(project), entry, source)
    return replace(listed, found=bool(listed.files))


def is_page_url(url: str) -> bool:
    """Whether ``url`` names a page file (``.../torch-2.4.0+cu121.html``), not an index root or a folder."""
    return url.rstrip("/").rsplit("/", 1)[-1].lower().endswith(_PAGE_SUFFIXES) and not url.endswith("/")


def read_listing(client: PageReader, links: Collection[str], index: str, project: str) -> ProjectPage:
    """``project``'s listing on ``index``: a page of links (a ``--find-links`` page in ``links``, or a URL naming
    a page file), else the index's project page."""
    if index in links or is_page_url(index):
        return links_page(client, index, project)
    return client.fetch_page(index, project)
