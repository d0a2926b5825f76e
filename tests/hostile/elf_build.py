"""Valid ELF64 files and fatbin containers built from parts, for the fuzz tests of the binary readers.

The layout is the System V gABI's (ELF64 little-endian): a 64-byte header, the sections' bytes,
the section-name table, then the section table. Extended numbering (gABI "Sections") moves the
section count into section 0's ``sh_size`` (``e_shnum`` 0) and the name table's index into
section 0's ``sh_link`` (``e_shstrndx`` SHN_XINDEX, 0xffff); a linker does that for 0xff00
sections or more, and either half may be used on its own.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

EHDR: Final = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR: Final = struct.Struct("<IIQQQQIIQQ")
SHN_XINDEX: Final = 0xFFFF
SHT_PROGBITS: Final = 1
SHT_STRTAB: Final = 3
SHT_NOBITS: Final = 8
EM_X86_64: Final = 62
_IDENT: Final = b"\x7fELF\x02\x01\x01" + bytes(9)
_CONTAINER: Final = struct.Struct("<IHHQ")
_ENTRY: Final = struct.Struct("<HHIQIIHHIIIQQQ")
FLAG_FOR_SUFFIX: Final = {"": 0, "a": 0x100000, "f": 0x200000}


def fatbin_container(sm: int, suffix: str = "", *, kind: int = 2, payload: bytes = b"") -> bytes:
    """One fatbin container holding one entry (a cubin by default) for ``sm_<sm><suffix>``."""
    pad = payload + bytes(-len(payload) % 8)
    entry = _ENTRY.pack(kind, 0x0101, 64, len(pad), 0, 0, 0, 8, sm, 0, 0, FLAG_FOR_SUFFIX[suffix], 0, 0) + pad
    return _CONTAINER.pack(0xBA55ED50, 1, 16, len(entry)) + entry


@dataclass(frozen=True)
class Built:
    data: bytes
    sections: list[tuple[str, int, int, int]]  # (name, type, offset, size) in table order, as a reader sees them
    strndx: int


def build_elf(
    parts: Sequence[tuple[str, int, bytes]],
    *,
    strtab_at: int,
    extended_count: bool = False,
    extended_strndx: bool = False,
    machine: int = EM_X86_64,
) -> Built:
    """An ELF whose sections after the null one are ``parts`` ((name, type, bytes); NOBITS
    sections get a size but no bytes), with ``.shstrtab`` inserted at table index
    ``strtab_at`` (clamped to 1..len(parts)+1)."""
    strndx = max(1, min(strtab_at, len(parts) + 1))
    named = list(parts)
    named.insert(strndx - 1, (".shstrtab", SHT_STRTAB, b""))
    names = bytearray(b"\0")
    name_offsets = []
    for name, _, _ in named:
        name_offsets.append(len(names))
        names += name.encode("latin-1") + b"\0"
    body = bytearray(EHDR.size)
    placed: list[tuple[int, int]] = []
    for name, kind, blob in named:
        if name == ".shstrtab" and kind == SHT_STRTAB and not blob:
            blob = bytes(names)
        body += bytes(-len(body) % 8)
        placed.append((len(body), len(blob)))
        if kind != SHT_NOBITS:
            body += blob
    body += bytes(-len(body) % 8)
    shoff = len(body)
    count = len(named) + 1
    null = SHDR.pack(0, 0, 0, 0, 0, count if extended_count else 0, strndx if extended_strndx else 0, 0, 0, 0)
    table = bytearray(null)
    sections = [("", 0, 0, 0)]
    for (name, kind, _), name_off, (offset, size) in zip(named, name_offsets, placed, strict=True):
        table += SHDR.pack(name_off, kind, 0, 0, offset, size, 0, 0, 1, 0)
        sections.append((name, kind, offset, 0 if kind == SHT_NOBITS else size))
    header = EHDR.pack(
        _IDENT,
        3,
        machine,
        1,
        0,
        0,
        shoff,
        0,
        EHDR.size,
        0,
        0,
        SHDR.size,
        0 if extended_count else count,
        SHN_XINDEX if extended_strndx else strndx,
    )
    body[: EHDR.size] = header
    return Built(data=bytes(body + table), sections=sections, strndx=strndx)
