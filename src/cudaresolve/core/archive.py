"""Open a zip archive (a wheel, a ``.pt2``) within bounds on the whole archive, and read one member as a
seekable stream without extracting it. Does I/O: reads through the open file passed in (it opens none).

``open_archive`` is the one way an archive is opened for reading members, and bounds the archive as a
whole before a member is read: at most ``MAX_ARCHIVE_MEMBERS`` entries (counted in the end record, before
``zipfile`` builds one object per entry), no two entries sharing bytes (a directory whose entries all
point at one member, or overlap, inflates the same data again and again), and all members together
inflating to at most ``inflate_budget(size)`` (their declared sizes, which ``_Spool`` holds each to).

A stored member is a window onto the archive file; a deflated one is inflated once, front to
back, into memory (small) or a temporary file deleted at once (large), after its magic check.
"""

from __future__ import annotations

import io
import itertools
import struct
import tempfile
import zipfile
import zlib
from typing import IO, Any, Final

from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text

__all__ = [
    "ARCHIVE_INFLATE_RATIO", "ARCHIVE_SEPARATOR", "DAMAGED_ARCHIVE", "MAX_ARCHIVE_INFLATED", "MAX_ARCHIVE_MEMBERS",
    "MIN_ARCHIVE_INFLATE", "READ_ERRORS", "inflate_budget", "open_archive", "open_zip_member",
]

ARCHIVE_SEPARATOR: Final = "!"  # "torch-2.7.1-...whl!torch/lib/libtorch_cuda.so"
#: What reading a damaged archive or member can raise besides ``InvalidBinary`` (a member name flagged UTF-8 that
#: is not: ``UnicodeDecodeError``).
READ_ERRORS: Final = (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, UnicodeDecodeError)
DAMAGED_ARCHIVE: Final = Text("binaries.damaged-archive.hint")
# A deflated member is inflated once, front to back: up to this size into memory, a bigger one
# into a temporary file (zipfile's own stream re-inflates from the start on a backward seek).
_IN_MEMORY_MEMBER: Final = 32 * 1024 * 1024
_SPOOL_CHUNK: Final = 1024 * 1024
_ZEROS: Final = bytes(_SPOOL_CHUNK)
# Deflate cannot do better than about 1032:1, so a member claiming more is lying about its size.
_MAX_DEFLATE_RATIO: Final = 1100
_MAX_MEMBER_SIZE: Final = 16 * 1024**3
#: Entries one archive may list; torch's CUDA wheel has about 15,000 files.
MAX_ARCHIVE_MEMBERS: Final = 100_000
#: All members of one archive inflate to at most this many times the archive's own size (real wheels
#: are 2 to 5 times, a ``.pt2`` stores its members), with ``MIN_ARCHIVE_INFLATE`` allowed to any archive
#: and ``MAX_ARCHIVE_INFLATED`` to none (twice the largest CUDA wheels unpacked).
ARCHIVE_INFLATE_RATIO: Final = 100
MIN_ARCHIVE_INFLATE: Final = 512 * 1024 * 1024
MAX_ARCHIVE_INFLATED: Final = 32 * 1024**3
_EOCD: Final = b"PK\x05\x06"
_EOCD64_LOCATOR: Final = b"PK\x06\x07"
_EOCD64: Final = b"PK\x06\x06"
_LOCAL_HEADER: Final = 30  # the fixed part of a local file header, before its name and extra field


def inflate_budget(size: int) -> int:
    """The bytes all members of an archive of ``size`` bytes may inflate to."""
    return min(MAX_ARCHIVE_INFLATED, max(MIN_ARCHIVE_INFLATE, ARCHIVE_INFLATE_RATIO * size))


def open_archive(raw: IO[bytes]) -> zipfile.ZipFile:
    """``raw`` (an open, seekable archive file) as a ``ZipFile`` whose members keep the bounds of the module
    docstring; one that breaks them is ``InvalidBinary`` for the archive as a whole, before any member is
    read. A file that is no zip at all raises what ``zipfile`` raises (``READ_ERRORS``)."""
    size = raw.seek(0, 2)
    declared = _declared_entries(raw, size)
    if declared > MAX_ARCHIVE_MEMBERS:
        raise InvalidBinary(Text.of("binaries.archive-members", count=declared, limit=MAX_ARCHIVE_MEMBERS),
                            hint=DAMAGED_ARCHIVE)
    archive = zipfile.ZipFile(raw)
    try:
        _check_members(archive.infolist(), size)
    except BaseException:
        archive.close()
        raise
    return archive


def _check_members(infos: list[zipfile.ZipInfo], size: int) -> None:
    if len(infos) > MAX_ARCHIVE_MEMBERS:
        raise InvalidBinary(Text.of("binaries.archive-members", count=len(infos), limit=MAX_ARCHIVE_MEMBERS),
                            hint=DAMAGED_ARCHIVE)
    ordered = sorted(infos, key=lambda i: i.header_offset)
    for first, second in itertools.pairwise(ordered):
        # a member's header and data end before the next header starts (its name and extra field only add)
        if first.header_offset + _LOCAL_HEADER + first.compress_size > second.header_offset:
            raise InvalidBinary(Text.of("binaries.archive-overlap", member=second.filename, other=first.filename),
                                hint=DAMAGED_ARCHIVE)
    inflated = sum(i.file_size for i in infos if i.compress_type != zipfile.ZIP_STORED)
    if inflated > inflate_budget(size):
        raise InvalidBinary(Text.of("binaries.archive-inflated", size=inflated, limit=inflate_budget(size)),
                            hint=DAMAGED_ARCHIVE)


def _declared_entries(raw: IO[bytes], size: int) -> int:
    """The entry count the archive's end record declares (Zip64's when it defers to it); 0 when none is found
    (``zipfile`` then says what is wrong). Read from the last 64 KiB and a few bytes, whatever the count."""
    tail_start = max(0, size - (22 + 65535))
    raw.seek(tail_start)
    tail = raw.read(size - tail_start)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        return 0
    (count,) = struct.unpack_from("<H", tail, at + 10)
    if count != 0xFFFF or at < 20 or tail[at - 20 : at - 16] != _EOCD64_LOCATOR:
        return int(count)
    (record,) = struct.unpack_from("<Q", tail, at - 20 + 8)
    if record + 40 > size:
        return 0
    raw.seek(record)
    head = raw.read(40)
    if len(head) < 40 or head[:4] != _EOCD64:
        return 0
    return int(struct.unpack_from("<Q", head, 32)[0])


def open_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> _MemberStream:
    """A seekable, bounded reader over one member, without extracting it.

    A stored member (AOTInductor packages store theirs) is a window onto the archive file, so
    seeks cost nothing.  A deflated member is inflated at most once (``_Spool``), and not at all
    when its first bytes show it is no binary.  Decompression errors surface as ``OSError``.
    """
    if info.flag_bits & 0x1:
        raise InvalidBinary(Text.of("binaries.member-encrypted", member=info.filename),
                            hint=Text("binaries.member-encrypted.hint"))
    if info.file_size > _MAX_MEMBER_SIZE or (
        info.compress_type != zipfile.ZIP_STORED and info.file_size > _MAX_DEFLATE_RATIO * max(info.compress_size, 1)
    ):
        raise InvalidBinary(Text.of("binaries.member-size", member=info.filename, size=info.file_size),
                            hint=DAMAGED_ARCHIVE)
    fp = archive.fp
    if info.compress_type == zipfile.ZIP_STORED and fp is not None and fp.seekable():
        fp.seek(info.header_offset)
        local = fp.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise InvalidBinary(Text.of("binaries.member-header", member=info.filename), hint=DAMAGED_ARCHIVE)
        name_len, extra_len = struct.unpack_from("<HH", local, 26)
        start = info.header_offset + 30 + name_len + extra_len
        return _MemberStream(_Window(fp, start, info.file_size))
    return _MemberStream(_Spool(archive.open(info), info.file_size))


class _Spool:
    """A deflated member read once, front to back, into memory or a temporary file.

    zipfile's stream re-inflates from the start on every backward seek, so a member whose
    sections sit at alternating offsets would be inflated once per section (hours for a crafted
    1 GiB member).  Here the first few bytes (the magic check) come straight from the stream;
    the first read past them inflates the whole member once, and every later seek is free.
    ``inflated`` counts the bytes taken from zipfile: never more than the member's size.
    """

    _HEAD: Final = 64

    def __init__(self, inner: Any, size: int) -> None:
        self._inner, self._size, self._pos = inner, size, 0
        self._head = b""
        self._copy: IO[bytes] | None = None
        self.inflated = 0

    def seek(self, offset: int, whence: int = 0, /) -> int:
        self._pos = max({0: 0, 1: self._pos, 2: self._size}[whence] + offset, 0)
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        end = self._size if size < 0 else min(self._pos + size, self._size)
        if self._copy is None and end <= self._HEAD:
            while len(self._head) < min(end, self._size):
                chunk = self._inner.read(min(end, self._size) - len(self._head))
                if not chunk:
                    break
                self.inflated += len(chunk)
                self._head += chunk
            data = self._head[self._pos:end]
        else:
            copy = self._spooled()
            copy.seek(self._pos)
            data = copy.read(max(end - self._pos, 0))
        self._pos += len(data)
        return data

    def _spooled(self) -> IO[bytes]:
        if self._copy is not None:
            return self._copy
        # deleted as soon as it is created (POSIX); memory for the small members that are most
        copy: IO[bytes] = io.BytesIO() if self._size <= _IN_MEMORY_MEMBER else tempfile.TemporaryFile()
        copy.write(self._head)
        written = len(self._head)
        sparse = not isinstance(copy, io.BytesIO)
        while written <= self._size:
            chunk = self._inner.read(min(_SPOOL_CHUNK, self._size + 1 - written))
            if not chunk:
                break
            self.inflated += len(chunk)
            if sparse and chunk == _ZEROS[:len(chunk)]:
                copy.seek(len(chunk), 1)  # a hole: a member of zeros takes no disk
            else:
                copy.write(chunk)
            written += len(chunk)
        if sparse:
            copy.truncate(written)
        if written != self._size:
            copy.close()
            raise OSError(f"member holds {written} bytes, its directory entry says {self._size}")
        self._copy = copy
        return copy

    def close(self) -> None:
        if self._copy is not None:
            self._copy.close()
        self._inner.close()


class _Window:
    """Bytes ``[start, start + size)`` of a seekable file, as a file of its own."""

    def __init__(self, fp: IO[bytes], start: int, size: int) -> None:
        self._fp, self._start, self._size, self._pos = fp, start, size, 0

    def seek(self, offset: int, whence: int = 0, /) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        count = self._size - self._pos if size < 0 else min(size, self._size - self._pos)
        if count <= 0:
            return b""
        self._fp.seek(self._start + self._pos)
        data = self._fp.read(count)
        self._pos += len(data)
        return data

    def close(self) -> None:
        pass


class _MemberStream:
    """Wraps a member reader so that zlib and zip errors read as ``OSError`` (a context manager)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return int(self._call(self._inner.seek, offset, whence))

    def read(self, size: int = -1, /) -> bytes:
        return bytes(self._call(self._inner.read, size))

    def _call(self, func: Any, *args: Any) -> Any:
        try:
            return func(*args)
        except (zlib.error, zipfile.BadZipFile, EOFError) as exc:
            raise OSError(f"damaged archive member: {exc}") from exc

    def __enter__(self) -> _MemberStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()
