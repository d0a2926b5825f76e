"""Read the section table of a Windows module (``.pyd``, ``.dll``: PE/COFF) through a bounded reader. Pure.

Windows wheels (torch's ``torch_cuda.dll``, xformers' ``_C.pyd``) keep their fat binaries as ELF
files do, in a section of their own; an image's section names are cut to 8 bytes, so nvcc's
``.nv_fatbin`` is ``.nv_fatb`` there (NVIDIA's cuobjdump on Linux does not read PE files: the
fat binaries are cut out of that section to check them).  The layout is Microsoft's "PE Format":
``e_lfanew`` at 0x3C points at ``PE\\0\\0``, then the 20-byte COFF header (section count at +2,
optional-header size at +16), the optional header, and 40-byte section headers (name 8,
VirtualSize, VirtualAddress, SizeOfRawData, PointerToRawData, ...).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Final

from cudaresolve.binaries.elf import Section, invalid_binary

if TYPE_CHECKING:
    from cudaresolve.binaries.elf import BoundedReader

__all__ = ["PE_MAGIC", "read_pe_sections"]

PE_MAGIC: Final = b"MZ"
_SIGNATURE: Final = b"PE\0\0"
_COFF = struct.Struct("<HHIIIHH")  # machine, sections, time, symbols, symbol count, optional size, flags
_SECTION = struct.Struct("<8sIIII")  # name, VirtualSize, VirtualAddress, SizeOfRawData, PointerToRawData
_SECTION_SIZE: Final = 40


def read_pe_sections(reader: BoundedReader) -> list[Section]:
    """The sections of the PE image ``reader`` holds, each the bytes it has in the file; a section past the end
    of the file is an error (an image's section table comes first, so only this finds a cut file)."""
    if reader.size < 0x40:
        raise invalid_binary("binaries.pe-header")
    (lfanew,) = struct.unpack("<I", reader.read_at(0x3C, 4))
    if lfanew + 4 + _COFF.size > reader.size or reader.read_at(lfanew, 4) != _SIGNATURE:
        raise invalid_binary("binaries.pe-header")
    _machine, count, _time, symbols, nsyms, optional, _flags = _COFF.unpack(reader.read_at(lfanew + 4, _COFF.size))
    if symbols:  # a COFF symbol table (GNU ld leaves one; Microsoft's linker does not): 18 bytes a symbol, then
        # the string table, its u32 length first; the last bytes of the file, so only it finds a cut there
        strings = symbols + 18 * nsyms
        (length,) = struct.unpack("<I", reader.read_at(strings, 4))
        if strings + length > reader.size:
            raise invalid_binary("binaries.file-ends", offset=f"{strings + length:#x}")
    if count > reader.limits.max_sections:
        raise invalid_binary("binaries.too-many-sections", count=count, limit=reader.limits.max_sections)
    table = reader.read_at(lfanew + 4 + _COFF.size + optional, count * _SECTION_SIZE)
    sections = []
    for index in range(count):
        raw_name, virtual, _address, raw_size, pointer = _SECTION.unpack_from(table, index * _SECTION_SIZE)
        name = raw_name.rstrip(b"\0").decode("latin-1")
        if not name.isprintable():
            name = repr(name)[1:-1]
        # SizeOfRawData is rounded up to the file alignment; VirtualSize is what the section holds
        size = min(virtual, raw_size) if virtual else raw_size
        if raw_size and pointer + raw_size > reader.size:
            raise invalid_binary("binaries.section-past-end", name=name)
        sections.append(Section(name, 1, pointer, size if pointer else 0))
    return sections
