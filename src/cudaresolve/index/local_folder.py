"""A folder of wheels on this machine given as ``--find-links DIR`` (pip's and uv's wheelhouse). Does I/O: lists the
folder and reads its files.

The folder stands for a page of links: each distribution file in it (a wheel, an sdist) is one anchor, its URL the
file's ``file://`` URL, with no hash (the lock hashes the files it pins, ``lock.computed``). It is listed afresh on
each run and never cached: its files may change between runs. At most ``limits.MAX_PAGE_FILES`` names are listed,
as for an index page; a name that is no distribution file, or is no regular file, is left out.
"""

from __future__ import annotations

import html
import os
import stat
import time
from typing import TYPE_CHECKING, Final
from urllib.parse import quote, unquote, urlsplit

from cudaresolve.core.files import open_regular
from cudaresolve.errors import IndexUnavailable, InvalidInput
from cudaresolve.index.http_cache import CachedResponse
from cudaresolve.index.limits import MAX_DIRECT_BYTES, MAX_PAGE_FILES, too_large, too_many_files
from cudaresolve.index.simple import HINT
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

__all__ = ["folder_listing", "open_local", "read_local", "read_local_file"]

_SUFFIXES: Final = (".whl", ".tar.gz", ".zip")
_CHUNK: Final = 1024 * 1024  # bytes read at once


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
    try:
        read_local_file(unquote(urlsplit(url).path), write, cap=cap, url=url)
    except InvalidInput as exc:  # gone or unreadable since it was listed
        raise IndexUnavailable(exc.text, hint=HINT) from exc


def open_local(url: str) -> BinaryIO:
    """The regular file at ``url`` (``file:///abs/dir/name.whl``) of at most ``MAX_DIRECT_BYTES`` opened to read (a
    FIFO put there since the folder was listed is not waited on); ``IndexUnavailable`` when it is gone, unreadable,
    no regular file or larger (``core.files.open_regular``)."""
    try:
        return open_regular(unquote(urlsplit(url).path), MAX_DIRECT_BYTES)
    except OSError as exc:  # NotRegularFile among them
        raise IndexUnavailable(Text.of("index.could-not-fetch", url=url, error=str(exc.strerror or exc)),
                               hint=HINT) from exc  # fmt: skip


def read_local_file(path: str, write: Callable[[bytes], object], *, cap: int, url: str) -> None:
    """A ``file://`` wheel: a regular file of at most ``cap`` bytes (a FIFO or device is refused unread)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise InvalidInput(
            Text.of("index.direct-cannot-read", path=path, reason=str(exc.strerror or exc)),
            hint=Text("index.direct-cannot-read.hint"),
        ) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInput(
                Text.of("index.direct-cannot-read", path=path, reason="not a regular file"),
                hint=Text("index.direct-cannot-read.hint"),
            )
        if info.st_size > cap:
            raise too_large(url, cap, file=True)
        total = 0
        while chunk := os.read(fd, _CHUNK):
            total += len(chunk)
            if total > cap:
                raise too_large(url, cap, file=True)
            write(chunk)
    finally:
        os.close(fd)
