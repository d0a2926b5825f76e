"""Read an ELF64 header and its section table through a bounded reader. Pure.

Everything here works on a seekable binary reader passed in (``read``/``seek``); nothing is
opened, loaded or decompressed.  The layout is the System V gABI's (ELF64 little-endian, what
x86_64 and aarch64 use); ``tests/fixtures/cuda`` holds nvcc 13.0 objects it is checked on.
A cubin is an ELF file too (``e_machine`` 190, EM_CUDA) that names its SM in ``e_flags``.

Reads are bounded by :class:`Limits`; anything malformed raises ``InvalidBinary`` and nothing
else, so a hostile file cannot crash, hang, or make the reader allocate more than a chunk.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

__all__ = [
    "CUBIN_IDENT",
    "DEFAULT_LIMITS",
    "EHDR_SIZE",
    "ELF_MAGIC",
    "EM_CUDA",
    "NOT_A_BINARY",
    "TOOLKIT_NOTE",
    "BoundedReader",
    "CubinTarget",
    "ElfHeader",
    "Limits",
    "Section",
    "SeekableReader",
    "SliceReader",
    "cubin_target",
    "embedded_suffix",
    "invalid_binary",
    "parse_elf_header",
    "read_elf_header",
    "read_sections",
    "toolkit_suffix",
]


class SeekableReader(Protocol):
    """What the parser needs from a file: ``io.RawIOBase``, ``BytesIO`` and zip members all fit."""

    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Hard bounds on one parse; exceeding a hard one raises ``InvalidBinary``.

    ``max_scan_bytes`` is soft: scanning ``.rodata`` (or junk between containers) for the
    container magic stops there and the listing says so in ``notes``.
    """

    max_read_bytes: int = 128 * 1024 * 1024  # every byte the parser asks the reader for
    max_sections: int = 10_000
    max_shstrtab: int = 1024 * 1024
    # A longer name is cut here (names are looked up, never shown whole): without the cut, 10,000
    # sections all naming offset 0 of a 1 MiB table with no NUL would be 10 GB of strings.
    max_section_name: int = 4096
    max_containers: int = 100_000  # libtorch_cuda.so has a few thousand (one per translation unit)
    max_entries: int = 500_000
    max_scan_bytes: int = 64 * 1024 * 1024
    chunk_size: int = 64 * 1024


DEFAULT_LIMITS: Final = Limits()

#: The hint of every ``InvalidBinary`` about a file's bytes.
NOT_A_BINARY: Final = Text("binaries.not-a-binary.hint")

ELF_MAGIC: Final = b"\x7fELF"
CUBIN_IDENT: Final = b"\x7fELF\x02\x01\x01"  # ELF64, little-endian, version 1: how a cubin starts
EM_CUDA: Final = 190
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
EHDR_SIZE: Final = _EHDR.size
_SHT_NULL: Final = 0
_SHT_NOBITS: Final = 8
_SHN_XINDEX: Final = 0xFFFF

# Cubin e_flags.  ABI version 8 (every CUDA 13 cubin, checked on our fixtures): SM in bits 8-15,
# and sm_90/sm_90a, sm_100/sm_100a/sm_100f have identical flags, so the flags cannot tell the suffix;
# a bare cubin's own ``.note.nv.tkinfo`` can (``toolkit_suffix``).
# ABI version 7 (older toolkits): SM in the low byte.  LLVM's EF_CUDA_ACCELERATORS_V1 (0x800,
# llvm/include/llvm/BinaryFormat/ELF.h) marks "a", but the sm_60 cubin inside CUDA 13.0's own
# libcupti.so has 0x800 set too (e_flags 0x3c0d3c), so the bit is only read as "a" from SM 90 on,
# where arch-specific targets exist; not re-checked against a real CUDA 12 sm_90a cubin.
_CUBIN_V7_ACCELERATORS: Final = 0x800


def invalid_binary(key: str, **fields: object) -> InvalidBinary:
    """An ``InvalidBinary`` saying ``key`` about the file's bytes, with the shared hint."""
    return InvalidBinary(Text.of(key, **fields), hint=NOT_A_BINARY)


class BoundedReader:
    """Positioned reads with a byte budget; turns short reads and OS errors into ``InvalidBinary``."""

    def __init__(self, fileobj: SeekableReader, size: int | None, limits: Limits) -> None:
        self.file = fileobj
        self.limits = limits
        self.bytes_read = 0
        try:
            self.size = fileobj.seek(0, 2) if size is None else size
        except (OSError, EOFError) as exc:
            raise invalid_binary("binaries.seek-failed", error=str(exc)) from exc

    def read_at(self, offset: int, count: int) -> bytes:
        if offset < 0 or count < 0 or offset + count > self.size:
            raise invalid_binary("binaries.read-past-end", start=f"{offset:#x}", end=f"{offset + count:#x}",
                           size=f"{self.size:#x}")
        if self.bytes_read + count > self.limits.max_read_bytes:
            raise invalid_binary("binaries.read-budget", limit=self.limits.max_read_bytes)
        self.bytes_read += count
        chunks: list[bytes] = []
        remaining = count
        try:
            self.file.seek(offset)
            while remaining:
                chunk = self.file.read(remaining)
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
        except (OSError, EOFError) as exc:
            raise invalid_binary("binaries.read-failed", offset=f"{offset:#x}", error=str(exc)) from exc
        if remaining:
            raise invalid_binary("binaries.file-ends", offset=f"{offset + count:#x}")
        return b"".join(chunks)


class SliceReader:
    """``size`` bytes of a bounded reader from ``start`` on, as a file of their own: a static library's member, a
    cubin stored as data.  Every read goes through the outer reader, so one budget bounds them all."""

    def __init__(self, reader: BoundedReader, start: int, size: int) -> None:
        self._reader, self._start, self._size, self._pos = reader, start, size, 0

    def seek(self, offset: int, whence: int = 0, /) -> int:
        self._pos = {0: 0, 1: self._pos, 2: self._size}[whence] + offset
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        count = self._size - self._pos if size < 0 else min(size, self._size - self._pos)
        if count <= 0 or self._pos < 0:
            return b""
        data = self._reader.read_at(self._start + self._pos, count)
        self._pos += count
        return data


@dataclass(frozen=True, slots=True)
class ElfHeader:
    type: int
    machine: int
    ehsize: int
    abi_version: int
    flags: int
    shoff: int
    shentsize: int
    shnum: int
    shstrndx: int
    ph_end: int  # end of the program header table


@dataclass(frozen=True, slots=True)
class Section:
    name: str
    type: int
    offset: int
    size: int  # 0 for a NOBITS section (.bss) or a NULL one: it has no bytes in the file
    link: int = 0  # sh_link: the string table of .dynsym and .dynamic, the symbol table of .gnu.version
    info: int = 0  # sh_info: the entry count of .gnu.version_r and .gnu.version_d


@dataclass(frozen=True, slots=True)
class CubinTarget:
    """The SM a cubin's ``e_flags`` name; ``suffix_known`` is False where the flags cannot tell ``a``/``f``."""

    sm: int
    suffix: str
    suffix_known: bool


def read_elf_header(reader: BoundedReader) -> ElfHeader:
    """The header of the ELF file ``reader`` holds (its magic already checked)."""
    raw = reader.read_at(0, min(_EHDR.size, reader.size))
    if len(raw) >= 6 and (raw[4] != 2 or raw[5] != 1):
        raise invalid_binary("binaries.elf-not-64-le")
    if len(raw) < _EHDR.size:
        raise invalid_binary("binaries.elf-header-truncated")
    return parse_elf_header(raw)


def parse_elf_header(raw: bytes) -> ElfHeader:
    """The fields of a 64-byte ELF64 little-endian header."""
    ident, etype, machine, _ver, _entry, phoff, shoff, flags, ehsize, phentsize, phnum, shentsize, shnum, shstrndx = (
        _EHDR.unpack(raw)
    )
    ph_end = phoff + phentsize * phnum
    return ElfHeader(etype, machine, ehsize, ident[8], flags, shoff, shentsize, shnum, shstrndx, ph_end)


def read_sections(
    reader: BoundedReader, header: ElfHeader, *, checked: Collection[str] = (), whole: bool = False
) -> list[Section]:
    """The section table.  A ``checked`` section past the end of the file is an error (every
    section when ``whole``: a truncated cubin)."""
    if header.shoff == 0:
        return []  # no section table (a stripped-to-the-bone object); nothing to list
    if header.shentsize != _SHDR.size:
        raise invalid_binary("binaries.section-header-size", size=header.shentsize)
    first = _SHDR.unpack(reader.read_at(header.shoff, _SHDR.size))
    # Extended numbering (gABI "Sections"): e_shnum 0 means the count is section 0's sh_size,
    # e_shstrndx SHN_XINDEX (0xffff) means the name table's index is section 0's sh_link.
    count = header.shnum or first[5]
    strndx = first[6] if header.shstrndx == _SHN_XINDEX else header.shstrndx
    if count > reader.limits.max_sections:
        raise invalid_binary("binaries.too-many-sections", count=count, limit=reader.limits.max_sections)
    table = reader.read_at(header.shoff, count * _SHDR.size)
    raw = [_SHDR.unpack_from(table, i * _SHDR.size) for i in range(count)]
    if not raw:
        return []
    if strndx >= count:
        raise invalid_binary("binaries.name-table-index", index=strndx)
    str_off, str_size = raw[strndx][4], raw[strndx][5]
    if str_size > reader.limits.max_shstrtab:
        raise invalid_binary("binaries.name-table-size", size=str_size)
    names = reader.read_at(str_off, str_size)
    sections = []
    longest = reader.limits.max_section_name
    for sh_name, sh_type, _flags, _addr, sh_offset, sh_size, sh_link, sh_info, *_ in raw:
        if sh_name >= max(len(names), 1) and sh_name != 0:
            raise invalid_binary("binaries.name-offset", offset=sh_name)
        stop = min(sh_name + longest, len(names))
        end = names.find(b"\0", sh_name, stop)
        name = names[sh_name : end if end >= 0 else stop].decode("latin-1")
        if not name.isprintable():  # a newline or escape sequence would reach messages: "one line" broken
            name = repr(name)[1:-1]
        # no bytes in the file: NOBITS (.bss), and NULL (section 0, whose sh_size may be the count)
        empty = sh_type in (_SHT_NOBITS, _SHT_NULL)
        if not empty and sh_offset + sh_size > reader.size and (whole or name in checked):
            raise invalid_binary("binaries.section-past-end", name=name)
        sections.append(Section(name, sh_type, sh_offset, 0 if empty else sh_size, sh_link, sh_info))
    return sections


#: The note ptxas writes into a cubin: its options, "-arch sm_100a -m 64" among them (CUDA 13's nvcc, checked on
#: sm_90a, sm_100a, sm_100f and sm_120a cubins against cuobjdump 13.5's names).
TOOLKIT_NOTE: Final = ".note.nv.tkinfo"
_NOTE_BYTES: Final = 4096
_ARCH_OPTION: Final = re.compile(rb"-arch[= ]sm_([0-9]{2,3})([af]?)(?![0-9A-Za-z_])")


def toolkit_suffix(reader: BoundedReader, sections: Sequence[Section], sm: int) -> str | None:
    """The ``a``/``f`` suffix ("" for none) a cubin's toolkit note gives for ``sm``; None when the cubin has no
    such note, a larger one, or one that names another SM or several."""
    note = next((s for s in sections if s.name == TOOLKIT_NOTE), None)
    if note is None or not 0 < note.size <= _NOTE_BYTES:
        return None
    named = {(int(m[1]), m[2].decode()) for m in _ARCH_OPTION.finditer(reader.read_at(note.offset, note.size))}
    if len(named) != 1:
        return None
    (found, suffix), = named
    return suffix if found == sm else None


def embedded_suffix(reader: BoundedReader, start: int, end: int, header: ElfHeader, sm: int) -> str | None:
    """``toolkit_suffix`` of a cubin stored as data at ``start`` (its offsets count from there), within ``end``;
    None when its section table or note cannot be read there."""
    view = BoundedReader(SliceReader(reader, start, end - start), end - start, reader.limits)
    try:
        return toolkit_suffix(view, read_sections(view, header), sm)
    except InvalidBinary:
        return None


def cubin_target(header: ElfHeader) -> CubinTarget:
    """The SM a cubin's header names (see ``_CUBIN_V7_ACCELERATORS`` for what ``e_flags`` can tell)."""
    if header.abi_version >= 8:
        sm, suffix, known = (header.flags >> 8) & 0xFF, "", False
    else:
        sm, known = header.flags & 0xFF, True
        suffix = "a" if sm >= 90 and header.flags & _CUBIN_V7_ACCELERATORS else ""
    if not 10 <= sm <= 255:
        raise invalid_binary("binaries.cubin-sm", sm=sm)
    return CubinTarget(sm, suffix, known)
