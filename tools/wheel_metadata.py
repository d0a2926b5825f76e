"""A wheel file on PyPI and its METADATA, read without downloading the wheel. Does I/O: HTTP range reads.

Used by ``check_pypi.py`` (run it, not this module). METADATA comes from the PEP 658
``<wheel>.metadata`` file where PyPI serves one, else from HTTP range reads of the wheel's zip
(tail, central directory entry, one member), so a 1 GB torch wheel costs tens of kilobytes.
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass
from email.parser import HeaderParser
from typing import TYPE_CHECKING, Final

from packaging.requirements import Requirement

if TYPE_CHECKING:
    from pathlib import Path

    import httpx
    from packaging.version import Version

__all__ = ["WheelFile", "fetch_metadata", "requires_dist"]

TAIL_BYTES: Final = 32 * 1024  # the end record and, in most wheels, the .dist-info entries
CD_SIG: Final = b"PK\x01\x02"
EOCD_SIG: Final = b"PK\x05\x06"
ZIP64_LOCATOR_SIG: Final = b"PK\x06\x07"
_METADATA_MEMBER = re.compile(r"^[^/]+\.dist-info/METADATA$")


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelFile:
    filename: str
    url: str
    version: Version
    build: tuple[int, str] | tuple[()]
    interpreters: frozenset[str]  # "cp312", "cp313t", "abi3:cp39", "py310", "py3"
    platforms: frozenset[str]
    requires_python: str | None
    yanked: bool


def fetch_metadata(client: httpx.Client, wheel: WheelFile, cache: Path | None) -> str:
    """The wheel's METADATA text (PEP 658 file, else ranged zip reads); cached by file name."""
    cached = cache / f"{wheel.filename}.METADATA" if cache else None
    if cached and cached.exists():
        return cached.read_text(encoding="utf-8")
    response = client.get(wheel.url + ".metadata")
    text = response.text if response.status_code == 200 else _metadata_from_zip(client, wheel.url)
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(text, encoding="utf-8")
    return text


def _get_range(client: httpx.Client, url: str, spec: str) -> tuple[bytes, int, int]:
    """(body, first byte offset, total size) of a ranged GET; ``spec`` like ``-32768`` or ``10-99``."""
    response = client.get(url, headers={"Range": f"bytes={spec}"})
    if response.status_code != 206:
        raise RuntimeError(f"range request not honoured ({response.status_code}) for {url}")
    match = re.match(r"bytes (\d+)-(\d+)/(\d+)", response.headers.get("content-range", ""))
    if not match:
        raise RuntimeError(f"no Content-Range in reply for {url}")
    return response.content, int(match.group(1)), int(match.group(3))


def _metadata_from_zip(client: httpx.Client, url: str) -> str:
    tail, tail_start, total = _get_range(client, url, f"-{TAIL_BYTES}")
    entry = _find_cd_entry(tail)
    if entry is None:  # older torch wheels list .dist-info first: try the directory's head, then all of it
        cd_offset, cd_size = _central_directory(client, url, tail, tail_start)
        head_end = cd_offset + min(cd_size, TAIL_BYTES) - 1
        for end in (head_end, cd_offset + cd_size - 1):
            directory, _, _ = _get_range(client, url, f"{cd_offset}-{end}")
            entry = _find_cd_entry(directory)
            if entry is not None:
                break
        else:
            raise RuntimeError(f"no .dist-info/METADATA in {url}")
    method, comp_size, local_offset = entry
    want = 30 + 512 + comp_size
    chunk, _, _ = _get_range(client, url, f"{local_offset}-{min(local_offset + want, total) - 1}")
    if chunk[:4] != b"PK\x03\x04":
        raise RuntimeError(f"bad local header in {url}")
    name_len, extra_len = struct.unpack("<HH", chunk[26:30])
    start = 30 + name_len + extra_len
    if start + comp_size > len(chunk):
        chunk, _, _ = _get_range(client, url, f"{local_offset}-{local_offset + start + comp_size - 1}")
    data = chunk[start : start + comp_size]
    raw = zlib.decompress(data, -15) if method == 8 else data
    return raw.decode("utf-8")


def _central_directory(client: httpx.Client, url: str, tail: bytes, tail_start: int) -> tuple[int, int]:
    """(offset, size) of the central directory, from the (zip64) end record."""
    at = tail.rfind(EOCD_SIG)
    if at < 0:
        raise RuntimeError(f"no zip end record in the tail of {url}")
    cd_size, cd_offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if cd_offset != 0xFFFFFFFF and cd_size != 0xFFFFFFFF:
        return cd_offset, cd_size
    locator = tail.rfind(ZIP64_LOCATOR_SIG, 0, at)
    (record_offset,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
    if record_offset >= tail_start:
        record = tail[record_offset - tail_start :]
    else:
        record, _, _ = _get_range(client, url, f"{record_offset}-{record_offset + 55}")
    cd_size64, cd_offset64 = struct.unpack("<QQ", record[40:56])
    return cd_offset64, cd_size64


def _find_cd_entry(buffer: bytes) -> tuple[int, int, int] | None:
    """(method, compressed size, local header offset) of the METADATA entry found in ``buffer``."""
    at = buffer.find(CD_SIG)
    while 0 <= at <= len(buffer) - 46:
        (method,) = struct.unpack("<H", buffer[at + 10 : at + 12])
        comp_size, size = struct.unpack("<II", buffer[at + 20 : at + 28])
        name_len, extra_len, _comment_len = struct.unpack("<HHH", buffer[at + 28 : at + 34])
        (local_offset,) = struct.unpack("<I", buffer[at + 42 : at + 46])
        name = buffer[at + 46 : at + 46 + name_len].decode("utf-8", "replace")
        if _METADATA_MEMBER.match(name):
            extra = buffer[at + 46 + name_len : at + 46 + name_len + extra_len]
            comp_size, local_offset = _zip64_fix(extra, comp_size, size, local_offset)
            return method, comp_size, local_offset
        at = buffer.find(CD_SIG, at + 4)
    return None


def _zip64_fix(extra: bytes, comp_size: int, size: int, offset: int) -> tuple[int, int]:
    """Apply the zip64 extra field (id 1) to 32-bit sentinel values."""
    pos = 0
    while pos + 4 <= len(extra):
        header_id, length = struct.unpack("<HH", extra[pos : pos + 4])
        body = extra[pos + 4 : pos + 4 + length]
        if header_id == 1:
            values = list(struct.unpack(f"<{len(body) // 8}Q", body[: len(body) // 8 * 8]))
            if size == 0xFFFFFFFF and values:
                values.pop(0)
            if comp_size == 0xFFFFFFFF and values:
                comp_size = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
        pos += 4 + length
    return comp_size, offset


def requires_dist(metadata: str) -> list[Requirement]:
    headers = HeaderParser().parsestr(metadata)
    return [Requirement(value) for value in headers.get_all("Requires-Dist") or []]
