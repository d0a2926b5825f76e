"""A wheel's METADATA member found by walking the zip's central directory. Pure over a seekable file.

``zipfile.ZipFile`` builds an object for every member before one can be opened: 70-100 ms for torch's
13,000, on every cold lock (the range requests fetch little more than the directory, so reading it was
most of a remote METADATA's cost). ``find_member`` walks the directory's records, one ``struct`` unpack
each, and decodes only the names that end in ``/METADATA``. It reads only plain archives, as wheels are:
no zip64, no archive comment, nothing before the first member, no member of a newer zip version than
``zipfile`` reads, and the member it returns neither encrypted nor patched, stored or deflated, and of a
compressed size that deflate could have made of its size (so what is read is bounded by the limit). For
anything else it answers None and the caller reads the archive with ``zipfile``, which also says what is
wrong with a bad one. Where it answers, it gives what ``zipfile`` would: the same members are matched
(names decoded as ``zipfile`` decodes them, cut at a NUL as ``ZipInfo`` cuts them), one and only one must
match, and the bytes must be exactly the recorded size with the recorded CRC-32.
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    import re

__all__ = ["find_member"]

_END: Final = struct.Struct("<4s4H2LH")  # end of central directory, as zipfile's structEndArchive
_CENTRAL: Final = struct.Struct("<4s4B4HL2L5H2L")  # a central directory record (structCentralDir)
_LOCAL: Final = struct.Struct("<4s2B4HL2L2H")  # a local file header (structFileHeader)
_END_SIG: Final = b"PK\x05\x06"
_ZIP64_LOCATOR_SIG: Final = b"PK\x06\x07"
_CENTRAL_SIG: Final = b"PK\x01\x02"
_LOCAL_SIG: Final = b"PK\x03\x04"
_UTF8_NAME: Final = 0x800
_UNREAD_FLAGS: Final = 0x1 | 0x20 | 0x40  # encrypted, compressed patched data, strong encryption
_MAX_EXTRACT_VERSION: Final = 63  # zipfile's: a member of a later version makes it refuse the archive
_STORED, _DEFLATED = 0, 8
_SUFFIX: Final = b"METADATA"  # in every name that can match, whatever separates its folder


def find_member(file: IO[bytes], names: re.Pattern[str], limit: int) -> bytes | None:
    """The bytes of the one member of the archive ``file`` whose whole name ``names`` matches, at most ``limit``
    of them; None when the archive is not of the plain kind this reads, or not exactly one member matches, or
    the member is larger than ``limit`` or damaged (the module docstring: the caller then asks ``zipfile``)."""
    size = file.seek(0, 2)
    if size < _END.size + 20:
        return None
    file.seek(size - _END.size - 20)
    tail = file.read(_END.size + 20)
    if len(tail) != _END.size + 20 or tail.startswith(_ZIP64_LOCATOR_SIG):
        return None
    sig, _, _, _, count, cd_size, cd_offset, comment = _END.unpack_from(tail, 20)
    if sig != _END_SIG or comment or cd_offset + cd_size != size - _END.size:  # zipfile would search for it
        return None
    file.seek(cd_offset)
    directory = file.read(cd_size)
    if len(directory) != cd_size:
        return None
    found = _walk(directory, names)
    if found is None or len(found) != 1 or count == 0xFFFF:
        return None
    return _member(file, *found[0], limit, size)


def _walk(directory: bytes, names: re.Pattern[str]) -> list[tuple[bytes, int, int, int, int, int, int]] | None:
    """(raw name, flags, method, CRC, compressed size, size, header offset) of each matching record; None when a
    record is not one or one is of a kind ``zipfile`` refuses or this module does not read."""
    found = []
    at, end, unpack, record = 0, len(directory), _CENTRAL.unpack_from, _CENTRAL.size
    while at < end:
        if end - at < record:
            return None
        fields = unpack(directory, at)
        sig, _, _, version, _, flags, method, _, _, crc, packed, unpacked, name_len, extra_len, note_len = fields[:15]
        offset = fields[18]
        if sig != _CENTRAL_SIG or version > _MAX_EXTRACT_VERSION:
            return None
        start = at + record
        raw = directory[start : start + name_len]
        if extra_len and not _plain_extra(directory[start + name_len : start + name_len + extra_len]):
            return None
        at = start + name_len + extra_len + note_len
        if at > end:
            return None
        if flags & _UTF8_NAME or _SUFFIX in raw:  # only such a name can match (cp437 keeps ASCII as it is)
            try:  # zipfile decodes every name so, and fails on one that does not decode
                codec = "utf-8" if flags & _UTF8_NAME else "ascii" if raw.isascii() else "cp437"  # ascii: no import
                name = raw.decode(codec).split("\0", 1)[0]
            except UnicodeDecodeError:
                return None
            if os.sep != "/":  # as ``zipfile.ZipInfo`` has it
                name = name.replace(os.sep, "/")
            if name.endswith("/METADATA") and names.fullmatch(name):
                found.append((raw, flags, method, crc, packed, unpacked, offset))
    return found


def _plain_extra(extra: bytes) -> bool:
    """Whether ``zipfile`` reads the extra field ``extra`` without error and it holds no zip64 block."""
    while len(extra) >= 4:
        kind, length = struct.unpack_from("<HH", extra)
        if length + 4 > len(extra) or kind == 0x0001:
            return False
        extra = extra[length + 4 :]
    return True


def _member(
    file: IO[bytes], raw: bytes, flags: int, method: int, crc: int, packed: int, unpacked: int, offset: int,
    limit: int, size: int,
) -> bytes | None:  # fmt: skip
    if flags & _UNREAD_FLAGS or method not in (_STORED, _DEFLATED) or unpacked > limit:
        return None
    if packed > unpacked + (unpacked >> 3) + 1024 or offset + _LOCAL.size + len(raw) + packed > size:
        return None  # more than deflate adds to what it packs, or past the end: zipfile reads such a member
    file.seek(offset)
    header = file.read(_LOCAL.size)
    if len(header) != _LOCAL.size:
        return None
    sig, _, _, local_flags, _, _, _, _, _, _, name_len, extra_len = _LOCAL.unpack(header)
    if sig != _LOCAL_SIG or file.read(name_len) != raw or (local_flags ^ flags) & _UTF8_NAME:
        return None
    file.seek(offset + _LOCAL.size + name_len + extra_len)
    data = file.read(packed)
    if len(data) != packed:
        return None
    if method == _DEFLATED:
        inflate = zlib.decompressobj(-15)
        try:
            data = inflate.decompress(data, limit + 1)
        except zlib.error:
            return None
    if len(data) != unpacked or zlib.crc32(data) != crc:
        return None
    return data
