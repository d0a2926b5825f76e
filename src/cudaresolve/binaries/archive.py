"""Read one member of a zip archive (a wheel, a ``.pt2``) as a seekable stream, without extracting it.
Does I/O: reads through the open ``zipfile.ZipFile`` passed in (it opens no file itself).

A stored member is a window onto the archive file, a small deflated one is inflated once into
memory, a large one is read through zipfile's own stream with its tail kept in memory.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from typing import IO, Any, Final

from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text

__all__ = ["ARCHIVE_SEPARATOR", "DAMAGED_ARCHIVE", "READ_ERRORS", "open_zip_member"]

ARCHIVE_SEPARATOR: Final = "!"  # "torch-2.7.1-...whl!torch/lib/libtorch_cuda.so"
#: What reading a damaged archive or member can raise besides ``InvalidBinary``.
READ_ERRORS: Final = (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError)
DAMAGED_ARCHIVE: Final = Text("binaries.damaged-archive.hint")
# A deflated member up to this size is decompressed once into memory; a bigger one is read
# through zipfile's seekable stream, which re-decompresses from the start on a backward seek.
_IN_MEMORY_MEMBER: Final = 32 * 1024 * 1024
# Deflate cannot do better than about 1032:1, so a member claiming more is lying about its size.
_MAX_DEFLATE_RATIO: Final = 1100
_MAX_MEMBER_SIZE: Final = 16 * 1024**3


def open_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> _MemberStream:
    """A seekable, bounded reader over one member, without extracting it.

    A stored member (AOTInductor packages store theirs) is a window onto the archive file, so
    seeks cost nothing.  A small deflated member is inflated once into memory; a large one is
    read through zipfile's own stream.  Decompression errors surface as ``OSError``.
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
    ext = archive.open(info)
    if info.file_size <= _IN_MEMORY_MEMBER:
        with _MemberStream(ext) as whole:
            data = whole.read(info.file_size + 1)
        return _MemberStream(io.BytesIO(data))
    return _MemberStream(_TailCache(ext, info.file_size))


class _TailCache:
    """Keeps the last MiB of a large deflated member in memory once it is reached.

    An ELF's section table and section names sit at its end, so without this every listing
    would inflate the member twice more (zipfile rewinds and re-inflates on a backward seek).
    """

    _TAIL: Final = 1024 * 1024

    def __init__(self, inner: Any, size: int) -> None:
        self._inner, self._size, self._pos = inner, size, 0
        self._tail_start = max(size - self._TAIL, 0)
        self._tail: bytes | None = None

    def seek(self, offset: int, whence: int = 0, /) -> int:
        self._pos = max({0: 0, 1: self._pos, 2: self._size}[whence] + offset, 0)
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        if self._pos >= self._tail_start:
            if self._tail is None:
                self._inner.seek(self._tail_start)
                self._tail = bytes(self._inner.read(self._size - self._tail_start))
            at = self._pos - self._tail_start
            data = self._tail[at:] if size < 0 else self._tail[at:at + size]
        else:
            self._inner.seek(self._pos)
            data = bytes(self._inner.read(size))
        self._pos += len(data)
        return data

    def close(self) -> None:
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
