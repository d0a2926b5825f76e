"""Read chosen members of a wheel on a web server, and the GPU code of one binary. Does I/O: HTTP range
requests, one temporary file at a time.

:class:`RemoteZip` reads a wheel's zip directory from its tail and then the wanted members with
ranged GETs (members closer than ``GAP_BYTES`` share one), each in one forward pass through an
inflater: nothing seeks back into a deflate stream and the wheel is never on disk.
:func:`spool_and_list` inflates one binary into memory (small) or a temporary file (deleted on
close) and lists it with the project's reader ``read_fatbin_archs``: an ELF (``.so``) directly,
a Windows PE (DLL/PYD) through its ``.nv_fatb`` sections; it also notes the CUDA runtime
majors the binary links (``libcudart.so.N`` in ``.dynstr``, ``cudart64_N.dll``).
"""

from __future__ import annotations

import io
import queue
import re
import struct
import tempfile
import threading
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

from cudaresolve.binaries.fatbin import read_fatbin_archs  # the reader; its module may be renamed

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

TAIL_BYTES: Final = 64 * 1024
GAP_BYTES: Final = 8 * 1024 * 1024  # members closer than this share one ranged request
IN_MEMORY: Final = 64 * 1024 * 1024  # a member up to this size is inflated into memory
FATBIN_MAGIC: Final = b"\x50\xed\x55\xba"
_CUDART = re.compile(rb"libcudart(?:-[0-9a-f]+)?\.so\.(\d+)|cudart64_(\d{2,3})\.dll", re.IGNORECASE)


# --------------------------------------------------------------------------- remote zip


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    method: int
    compressed: int
    size: int
    offset: int  # of the local header


class RemoteZip:
    """The central directory of a wheel on PyPI, and ranged, forward-only reads of members."""

    def __init__(self, client: httpx.Client, url: str, stats: Counter[str]) -> None:
        self.client, self.url, self.stats = client, url, stats
        tail, tail_start, self.total = self._range(f"-{TAIL_BYTES}")
        cd_offset, cd_size = _central_directory(tail, tail_start, self._range)
        if cd_offset >= tail_start:
            directory = tail[cd_offset - tail_start : cd_offset - tail_start + cd_size]
        else:
            directory = self._range(f"{cd_offset}-{cd_offset + cd_size - 1}")[0]
        self.members = _parse_directory(directory)

    def _range(self, spec: str) -> tuple[bytes, int, int]:
        response = self.client.get(self.url, headers={"Range": f"bytes={spec}"})
        self.stats["requests"] += 1
        self.stats["bytes"] += len(response.content)
        if response.status_code != 206:
            raise RuntimeError(f"range request not honoured ({response.status_code}) for {self.url}")
        match = re.match(r"bytes (\d+)-(\d+)/(\d+)", response.headers.get("content-range", ""))
        if not match:
            raise RuntimeError(f"no Content-Range in reply for {self.url}")
        return response.content, int(match.group(1)), int(match.group(3))

    def read_members(self, wanted: list[Member]) -> Iterator[tuple[Member, _MemberReader]]:
        """Each wanted member in file order, as a forward-only inflating reader."""
        wanted = sorted(wanted, key=lambda m: m.offset)
        groups: list[list[Member]] = []
        for member in wanted:
            if groups and member.offset - _end(groups[-1][-1]) < GAP_BYTES:
                groups[-1].append(member)
            else:
                groups.append([member])
        for group in groups:
            start, stop = group[0].offset, min(_end(group[-1]) + 1024, self.total)
            with self.client.stream("GET", self.url, headers={"Range": f"bytes={start}-{stop - 1}"}) as response:
                self.stats["requests"] += 1
                if response.status_code != 206:
                    raise RuntimeError(f"range request not honoured ({response.status_code}) for {self.url}")
                prefetch = _Prefetch(response.iter_raw(1 << 20))
                stream = _ByteStream(iter(prefetch), start, self.stats)
                try:
                    yield from self._members_of(group, stream)
                finally:
                    prefetch.stop()

    def _members_of(self, group: list[Member], stream: _ByteStream) -> Iterator[tuple[Member, _MemberReader]]:
        for member in group:
            stream.skip_to(member.offset)
            local = stream.read(30)
            if local[:4] != b"PK\x03\x04":
                raise RuntimeError(f"bad local header for {member.name}")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            stream.read(name_len + extra_len)
            reader = _MemberReader(stream, member)
            yield member, reader
            reader.drain()


def _end(member: Member) -> int:
    return member.offset + 30 + len(member.name.encode()) + 1024 + member.compressed


class _Prefetch:
    """Pulls the network chunks on a thread, up to ``depth`` ahead, so downloading overlaps inflating."""

    def __init__(self, chunks: Iterator[bytes], depth: int = 64) -> None:
        self._queue: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=depth)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(chunks,), daemon=True)
        self._thread.start()

    def _run(self, chunks: Iterator[bytes]) -> None:
        item: bytes | BaseException | None = None
        try:
            for item in chunks:
                if not self._put(item):
                    return
            item = None
        except BaseException as exc:  # handed to the reading thread
            item = exc
        self._put(item)

    def _put(self, item: bytes | BaseException | None) -> bool:
        while not self._stopped.is_set():
            try:
                self._queue.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[bytes]:
        while (item := self._queue.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)


class _ByteStream:
    def __init__(self, chunks: Iterator[bytes], position: int, stats: Counter[str]) -> None:
        self._chunks, self.position, self._buffer, self._stats = chunks, position, b"", stats

    def read(self, count: int) -> bytes:
        while len(self._buffer) < count:
            chunk = next(self._chunks, b"")
            if not chunk:
                raise RuntimeError("connection closed inside a ranged read")
            self._stats["bytes"] += len(chunk)
            self._buffer += chunk
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        self.position += count
        return data

    def read_some(self, limit: int) -> bytes:
        if not self._buffer:
            chunk = next(self._chunks, b"")
            self._stats["bytes"] += len(chunk)
            self._buffer = chunk
            if not chunk:
                raise RuntimeError("connection closed inside a member")
        data, self._buffer = self._buffer[:limit], self._buffer[limit:]
        self.position += len(data)
        return data

    def skip_to(self, offset: int) -> None:
        while self.position < offset:
            self.read_some(offset - self.position)


class _MemberReader:
    """Inflates one member's bytes as they arrive; each byte of the network is seen once."""

    def __init__(self, stream: _ByteStream, member: Member) -> None:
        self._stream, self._left = stream, member.compressed
        self._inflate = zlib.decompressobj(-15) if member.method == 8 else None
        if member.method not in (0, 8):
            raise RuntimeError(f"{member.name}: compression method {member.method} not supported")

    def chunks(self) -> Iterator[bytes]:
        while self._left > 0:
            raw = self._stream.read_some(min(self._left, 1 << 20))
            self._left -= len(raw)
            yield self._inflate.decompress(raw) if self._inflate else raw
        if self._inflate:
            yield self._inflate.flush()

    def drain(self) -> None:
        for _ in self.chunks():
            pass


def _central_directory(tail: bytes, tail_start: int, get: Any) -> tuple[int, int]:
    at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        raise RuntimeError("no zip end record")
    cd_size, cd_offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if cd_offset != 0xFFFFFFFF and cd_size != 0xFFFFFFFF:
        return cd_offset, cd_size
    locator = tail.rfind(b"PK\x06\x07", 0, at)
    (record_offset,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
    record = tail[record_offset - tail_start :] if record_offset >= tail_start else get(
        f"{record_offset}-{record_offset + 55}")[0]
    size64, offset64 = struct.unpack("<QQ", record[40:56])
    return offset64, size64


def _parse_directory(data: bytes) -> list[Member]:
    members, at = [], 0
    while at + 46 <= len(data) and data[at : at + 4] == b"PK\x01\x02":
        (method,) = struct.unpack("<H", data[at + 10 : at + 12])
        comp, size = struct.unpack("<II", data[at + 20 : at + 28])
        name_len, extra_len, comment_len = struct.unpack("<HHH", data[at + 28 : at + 34])
        (offset,) = struct.unpack("<I", data[at + 42 : at + 46])
        name = data[at + 46 : at + 46 + name_len].decode("utf-8", "replace")
        extra = data[at + 46 + name_len : at + 46 + name_len + extra_len]
        pos = 0
        while pos + 4 <= len(extra):
            header_id, length = struct.unpack("<HH", extra[pos : pos + 4])
            if header_id == 1:
                body = extra[pos + 4 : pos + 4 + length]
                values = list(struct.unpack(f"<{len(body) // 8}Q", body[: len(body) // 8 * 8]))
                if size == 0xFFFFFFFF and values:
                    size = values.pop(0)
                if comp == 0xFFFFFFFF and values:
                    comp = values.pop(0)
                if offset == 0xFFFFFFFF and values:
                    offset = values.pop(0)
            pos += 4 + length
        members.append(Member(name, method, comp, size, offset))
        at += 46 + name_len + extra_len + comment_len
    return members


# --------------------------------------------------------------------------- one binary


@dataclass(slots=True)
class LibraryCode:
    sass: set[str] = field(default_factory=set)
    ptx: set[str] = field(default_factory=set)
    containers: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # containers holding each target
    cudart: set[int] = field(default_factory=set)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"sass": sort_archs(self.sass), "ptx": sort_archs(self.ptx)}
        data["containers"] = self.containers
        data["counts"] = dict(sorted(self.counts.items()))
        if self.cudart:
            data["cudart"] = sorted(self.cudart)
        if self.error:
            data["error"] = self.error
        return data


def list_binary(handle: IO[bytes], size: int) -> LibraryCode | None:
    """The GPU code and CUDA runtime of one spooled file; None when it is no binary."""
    handle.seek(0)
    head = handle.read(4)
    code = LibraryCode()
    try:
        if head == b"\x7fELF" or head == FATBIN_MAGIC:
            _add_listing(code, read_fatbin_archs(handle, size=size))
            if head == b"\x7fELF":
                code.cudart |= _elf_cudart(handle)
        elif head[:2] == b"MZ":
            for offset, length in _pe_fatbin_sections(handle):
                _add_listing(code, read_fatbin_archs(_Window(handle, offset, length), size=length))
            code.cudart |= _scan_cudart(handle, size)
        else:
            return None
    except Exception as exc:  # the reader's InvalidBinary, or a malformed PE/ELF table
        code.error = f"{type(exc).__name__}: {exc}"
    return code


def _add_listing(code: LibraryCode, listing: Any) -> None:
    loadable = [c for c in listing.containers if c.section != "__nv_relfatbin"] or list(listing.containers)
    entries = sorted(listing.entries, key=lambda e: e.offset)
    for container in loadable:
        inside = {e.name for e in entries if container.offset <= e.offset < container.offset + container.size
                  and e.name and e.kind in (1, 2)}
        code.containers += 1
        code.counts.update(inside)
    if not loadable and listing.entries:  # a bare cubin
        code.containers += 1
        code.counts.update(e.name for e in listing.entries if e.name)
    code.sass |= set(listing.sass)
    code.ptx |= set(listing.ptx)


def _elf_cudart(handle: IO[bytes]) -> set[int]:
    """CUDA runtime majors named in the ELF ``.dynstr`` (DT_NEEDED and version needs)."""
    handle.seek(0)
    header = handle.read(64)
    shoff, = struct.unpack("<Q", header[40:48])
    shentsize, shnum, shstrndx = struct.unpack("<HHH", header[58:64])
    if not shoff or shentsize != 64 or not 0 < shnum < 100_000:
        return set()
    handle.seek(shoff)
    table = handle.read(shnum * 64)
    sections = [struct.unpack("<IIQQQQIIQQ", table[i * 64 : i * 64 + 64]) for i in range(shnum)]
    names_off, names_size = sections[shstrndx][4], sections[shstrndx][5]
    handle.seek(names_off)
    names = handle.read(min(names_size, 1 << 20))
    for sh_name, _type, _flags, _addr, offset, length, *_ in sections:
        if names[sh_name : sh_name + 8] == b".dynstr\0":
            handle.seek(offset)
            return _majors(handle.read(min(length, 64 << 20)))
    return set()


def _majors(data: bytes) -> set[int]:
    out = set()
    for match in _CUDART.finditer(data):
        if match.group(1):
            out.add(int(match.group(1)))
        else:
            digits = match.group(2).decode()
            out.add(int(digits[:-1]))  # cudart64_12.dll is CUDA 12, cudart64_110.dll CUDA 11
    return out


def _scan_cudart(handle: IO[bytes], size: int) -> set[int]:
    found: set[int] = set()
    handle.seek(0)
    carry = b""
    while chunk := handle.read(8 << 20):
        found |= _majors(carry + chunk)
        carry = chunk[-64:]
    return found


def _pe_fatbin_sections(handle: IO[bytes]) -> list[tuple[int, int]]:
    """(file offset, size) of each ``.nv_fatb`` section of a PE image (a Windows DLL/PYD)."""
    handle.seek(0x3C)
    (pe_offset,) = struct.unpack("<I", handle.read(4))
    handle.seek(pe_offset)
    header = handle.read(24)
    if header[:4] != b"PE\0\0":
        return []
    count, = struct.unpack("<H", header[6:8])
    optional_size, = struct.unpack("<H", header[20:22])
    handle.seek(pe_offset + 24 + optional_size)
    table = handle.read(40 * count)
    out = []
    for i in range(count):
        raw = table[i * 40 : i * 40 + 40]
        name = raw[:8].rstrip(b"\0")
        raw_size, raw_pointer = struct.unpack("<II", raw[16:24])
        if name.startswith(b".nv_fat") and raw_size:
            out.append((raw_pointer, raw_size))
    return out


class _Window:
    """Bytes ``[start, start + size)`` of a seekable file, as a file of its own."""

    def __init__(self, handle: IO[bytes], start: int, size: int) -> None:
        self._handle, self._start, self._size, self._pos = handle, start, size, 0

    def seek(self, offset: int, whence: int = 0, /) -> int:
        self._pos = max({0: 0, 1: self._pos, 2: self._size}[whence] + offset, 0)
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        count = self._size - self._pos if size < 0 else min(size, self._size - self._pos)
        if count <= 0:
            return b""
        self._handle.seek(self._start + self._pos)
        data = self._handle.read(count)
        self._pos += len(data)
        return data


def spool_and_list(reader: _MemberReader, member: Member) -> LibraryCode | None:
    """The GPU code of one binary member, read as it arrives; None when it is no binary."""
    if member.size <= IN_MEMORY:
        return list_binary(io.BytesIO(b"".join(reader.chunks())), member.size)
    with tempfile.TemporaryFile(prefix="scan-wheels-") as handle:  # deleted on close
        for chunk in reader.chunks():
            handle.write(chunk)
        handle.flush()
        return list_binary(handle, member.size)


def sort_archs(names: set[str] | list[str]) -> list[str]:
    """``sm_90a`` after ``sm_90``, ``sm_100`` after both (by number, then suffix)."""

    def key(name: str) -> tuple[int, int, str]:
        m = re.match(r"^(?:sm|compute)_(\d+)([af]?)$", name)
        return (int(m.group(1)), 0, m.group(2)) if m else (0, 0, name)

    return sorted(set(names), key=key)
