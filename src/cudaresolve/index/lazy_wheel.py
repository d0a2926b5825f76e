"""A remote wheel's METADATA read with HTTP range requests, as pip's lazy wheel does. Does I/O through IndexClient.

For indexes that offer no PEP 658 ``.metadata`` file: ``zipfile`` reads the archive through a
file object that fetches only the byte ranges it touches (the end-of-central-directory record,
the central directory, the METADATA member), typically 2-3 small requests for a wheel of any size.
A server that ignores ``Range`` answers 200 with the whole file: the body is then used as is,
under the cap. Every read is bounded: the wheel's size cap, each request's cap, the member's size.
"""

from __future__ import annotations

import io
import re
import struct
import zlib
from typing import IO, TYPE_CHECKING, Final

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.simple import HINT
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.index.client import IndexClient

__all__ = ["read_remote_metadata", "wheel_metadata"]

_TAIL: Final = 64 * 1024  # the first request: the end of the file, where the central directory usually is
_MAX_REQUEST: Final = 64 * 1024 * 1024  # one ranged read; and the whole wheel when the server ignores Range
_MAX_METADATA: Final = 16 * 1024 * 1024  # an uncompressed METADATA file
_MAX_REQUESTS: Final = 16
_CONTENT_RANGE: Final = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
_METADATA: Final = re.compile(r"[^/]+\.dist-info/METADATA")


class _RangeFile(io.RawIOBase):
    """A seekable read-only view of a remote file; fetched blocks are kept."""

    def __init__(self, client: IndexClient, url: str, cap: int = _MAX_REQUEST) -> None:
        self._client, self._url, self._cap = client, url, cap
        self._pos = 0
        self._blocks: list[tuple[int, bytes]] = []
        self._requests = 0
        status, content_range, body = self._fetch(None, _TAIL)
        match = _CONTENT_RANGE.fullmatch(content_range or "")
        if status == 206 and match is not None:
            self.size = int(match.group(3))
            self._blocks.append((int(match.group(1)), body))
        else:  # the whole file came back (Range ignored)
            self.size = len(body)
            self._blocks.append((0, body))

    def _fetch(self, first: int | None, last: int) -> tuple[int, str | None, bytes]:
        self._requests += 1
        if self._requests > _MAX_REQUESTS:
            raise _bad(self._url, f"more than {_MAX_REQUESTS} range requests")
        return self._client.fetch_range(self._url, first, last, cap=self._cap)

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        end = min(self.size, self._pos + len(buffer))
        if end <= self._pos:
            return 0
        data = self._read(self._pos, end)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def _read(self, start: int, end: int) -> bytes:
        for offset, block in self._blocks:
            if offset <= start and end <= offset + len(block):
                return block[start - offset : end - offset]
        if end - start > _MAX_REQUEST:
            raise _bad(self._url, "a zip member larger than the read cap")
        first, last = start, max(end, min(self.size, start + _TAIL)) - 1
        status, content_range, body = self._fetch(first, last)
        match = _CONTENT_RANGE.fullmatch(content_range or "")
        if status != 206 or match is None or int(match.group(1)) != first:
            raise _bad(self._url, "the server did not honour the byte range")
        self._blocks.append((first, body))
        return body[: end - start]


def _bad(url: str, why: str) -> IndexUnavailable:
    return IndexUnavailable(Text.of("index.bad-metadata", url=url, reason=why), hint=HINT)


def read_remote_metadata(
    client: IndexClient, url: str, project: str, version: str, *, request_cap: int = _MAX_REQUEST
) -> str:
    """The text of ``<name>-<version>.dist-info/METADATA`` inside the remote wheel at ``url``. A server that
    ignores ``Range`` and sends a wheel over the one-request cap (a plain file server holding torch) has the
    wheel downloaded whole instead, as pip and uv then do: streamed to a temporary file under
    ``MAX_DIRECT_BYTES`` within its file deadline, METADATA read from there."""
    try:
        return wheel_metadata(_RangeFile(client, url, request_cap), url)  # type: ignore[arg-type]  # read as IO
    except IndexUnavailable as e:
        if e.text.key != "index.page-too-large":
            raise
    import tempfile

    from cudaresolve.index.limits import MAX_DIRECT_BYTES

    with tempfile.SpooledTemporaryFile(max_size=_MAX_REQUEST, prefix="cudaresolve-") as spool:
        client.download(url, spool.write, cap=MAX_DIRECT_BYTES)
        spool.seek(0)
        return wheel_metadata(spool, url)


def wheel_metadata(file: IO[bytes], url: str) -> str:
    """The text of the one ``*.dist-info/METADATA`` in the wheel read from ``file`` (seekable), under the same
    bounds; a file that is no readable wheel is ``IndexUnavailable`` naming ``url``."""
    from cudaresolve.index.wheel_zip import find_member

    try:
        data = find_member(file, _METADATA, _MAX_METADATA)  # a plain archive's directory walked quickly
        if data is None:  # any other: as zipfile reads it, and says what is wrong
            data = _by_zipfile(file, url)
    except (
        EOFError,
        ValueError,
        NotImplementedError,
        KeyError,
        OSError,
        zlib.error,
        struct.error,
    ) as e:
        raise _bad(url, f"not a readable wheel ({type(e).__name__})") from e
    if len(data) > _MAX_METADATA:
        raise _bad(url, f"METADATA of more than {_MAX_METADATA} bytes")
    return data.decode("utf-8", errors="replace")


def _by_zipfile(file: IO[bytes], url: str) -> bytes:
    """The METADATA member's bytes (at most ``_MAX_METADATA`` + 1) as ``zipfile`` reads the archive: imported
    here only, since a wheel ``wheel_zip`` cannot read is rare. Raises what ``wheel_metadata`` turns into its
    error; ``zipfile``'s own errors are turned here."""
    import zipfile

    try:
        with zipfile.ZipFile(file) as wheel:
            names = [n for n in wheel.namelist() if _METADATA.fullmatch(n)]
            if len(names) != 1:
                raise _bad(url, f"{len(names)} .dist-info/METADATA files in the wheel")
            info = wheel.getinfo(names[0])
            if info.file_size > _MAX_METADATA:
                raise _bad(url, f"METADATA of {info.file_size} bytes")
            with wheel.open(info) as member:
                return member.read(_MAX_METADATA + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as e:
        raise _bad(url, f"not a readable wheel ({type(e).__name__})") from e
