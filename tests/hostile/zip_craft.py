"""Zip archives whose central directory lies: entries that share or overlap one member's bytes, and end
records that declare more entries than any wheel has. Built from a real zip by rewriting its directory."""

from __future__ import annotations

import io
import struct
import zipfile

_CD = b"PK\x01\x02"
_CD_FIXED = 46


def real_zip(members: dict[str, bytes]) -> bytes:
    """A plain deflated zip of ``members``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data,
                             compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _split(data: bytes) -> tuple[bytes, list[bytes]]:
    """The bytes before the central directory, and its entries (each with name, extra and comment)."""
    eocd = data.rfind(b"PK\x05\x06")
    count, _size, start = struct.unpack_from("<HII", data, eocd + 10)
    entries, at = [], start
    for _ in range(count):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, at + 28)
        end = at + _CD_FIXED + name_len + extra_len + comment_len
        entries.append(data[at:end])
        at = end
    return data[:start], entries


def _entry(template: bytes, name: str, offset: int) -> bytes:
    fixed = bytearray(template[:_CD_FIXED])
    struct.pack_into("<HHH", fixed, 28, len(name.encode()), 0, 0)
    struct.pack_into("<I", fixed, 42, offset)
    return bytes(fixed) + name.encode()


def _with_directory(body: bytes, entries: list[bytes], declared: int | None = None) -> bytes:
    directory = b"".join(entries)
    count = len(entries) if declared is None else declared
    if count < 0xFFFF:
        end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(body), 0)
        return body + directory + end
    record_at = len(body) + len(directory)
    record = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(directory), len(body))
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, record_at, 1)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return body + directory + record + locator + end


def shared_offsets(member: bytes, copies: int, name: str = "pkg/lib{}.so") -> bytes:
    """One real member ``member``, listed ``copies`` times under other names, every entry at its offset."""
    body, (template,) = _split(real_zip({name.format(0): member}))
    return _with_directory(body, [_entry(template, name.format(i), 0) for i in range(copies)])


def overlapping(member: bytes, copies: int, step: int = 1, name: str = "pkg/lib{}.so") -> bytes:
    """One real member and ``copies - 1`` entries that start ``step`` bytes apart inside it."""
    body, (template,) = _split(real_zip({name.format(0): member}))
    return _with_directory(body, [_entry(template, name.format(i), i * step) for i in range(copies)])


def declaring(count: int, member: bytes = b"\x7fELF") -> bytes:
    """A real one-member zip whose end record (Zip64 above 65,534) declares ``count`` entries."""
    body, entries = _split(real_zip({"pkg/lib0.so": member}))
    return _with_directory(body, entries, declared=count)
