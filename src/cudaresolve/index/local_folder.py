"""A folder of wheels on this machine given as ``--find-links DIR`` (pip's and uv's wheelhouse). Does I/O: lists the
folder and reads its files.

The folder stands for a page of links: each distribution file in it (a wheel, an sdist) is one anchor, its URL the
file's ``file://`` URL, with no hash (the lock hashes the files it pins, ``lock.computed``). It is listed afresh on
each run and never cached: its files may change between runs. At most ``simple.MAX_PAGE_FILES`` names are listed,
as for an index page (``limits``); a name that is no distribution file, or is no regular file, is left out.
"""

from __future__ import annotations

import html
import os
import stat
import time
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.http_cache import CachedResponse
from cudaresolve.index.limits import MAX_PAGE_FILES, too_many_files
from cudaresolve.index.simple import HINT
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["folder_listing", "local_metadata", "read_local"]

_SUFFIXES = (".whl", ".tar.gz", ".zip")


def folder_listing(url: str) -> CachedResponse:
    """The folder at ``url`` (``file:///abs/dir/``) as a page of links to its distribution files."""
    folder = unquote(urlsplit(url).path)
    try:
        names: list[str] = []
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.lower().endswith(_SUFFIXES) and entry.is_file():
                    names.append(entry.name)
                    if len(names) > MAX_PAGE_FILES:
                        raise too_many_files(url, MAX_PAGE_FILES)
    except OSError as exc:
        raise IndexUnavailable(Text.of("index.could-not-fetch", url=url, error=str(exc.strerror or exc)),
                               hint=HINT) from exc  # fmt: skip
    base = url.rstrip("/") + "/"
    anchors = "".join(f'<a href="{html.escape(base + quote(n))}">{html.escape(n)}</a>\n' for n in sorted(names))
    return CachedResponse(url=base, status=200, body=f"<!DOCTYPE html>\n<html><body>\n{anchors}</body></html>\n",
                          content_type="text/html", fetched_at=time.time())  # fmt: skip


def read_local(url: str, write: Callable[[bytes], object], *, cap: int) -> None:
    """The file at ``url`` (``file:///abs/dir/name.whl``) into ``write``, at most ``cap`` bytes."""
    from cudaresolve.errors import InvalidInput
    from cudaresolve.index.direct import read_local_file

    try:
        read_local_file(unquote(urlsplit(url).path), write, cap=cap, url=url)  # type: ignore[arg-type]
    except InvalidInput as exc:  # gone or unreadable since it was listed
        raise IndexUnavailable(exc.text, hint=HINT) from exc


def local_metadata(url: str) -> str:
    """The METADATA of the wheel at ``url`` (``file:///abs/dir/name.whl``), read where it is."""
    from cudaresolve.index.lazy_wheel import wheel_metadata

    path = unquote(urlsplit(url).path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO put there since: not waited on
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise IndexUnavailable(Text.of("index.could-not-fetch", url=url, error="not a regular file"),
                                       hint=HINT)  # fmt: skip
            return wheel_metadata(file, url)
    except OSError as exc:  # gone or unreadable since it was listed
        raise IndexUnavailable(Text.of("index.could-not-fetch", url=url, error=str(exc.strerror or exc)),
                               hint=HINT) from exc  # fmt: skip
