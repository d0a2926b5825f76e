"""An ELF shared object's dynamic linking: DT_NEEDED, RUNPATH, and its dynamic symbols with GNU versions. Pure.

Works on a ``BoundedReader`` (``elf``), so every read is counted against ``Limits``; nothing is
loaded. The layout is the System V gABI's for ELF64 little-endian: ``.dynamic`` holds
``Elf64_Dyn`` entries whose strings live in the section its ``sh_link`` names (``.dynstr``);
``.dynsym`` holds 24-byte ``Elf64_Sym`` entries; ``.gnu.version`` one half-word per symbol, whose
value (bit 15 aside) indexes a ``Vernaux`` of ``.gnu.version_r`` (the library and version a needed
symbol is bound to) or a ``Verdef`` of ``.gnu.version_d`` (a defined symbol's own version).

``read_linkage`` reads only the dynamic section and the strings it names (a few KiB of any
library); ``read_symbols`` also reads the whole ``.dynsym`` and ``.dynstr`` (tens of MiB for
``libtorch_cpu.so``), bounded by ``Limits.max_read_bytes`` and ``MAX_SYMBOLS``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.binaries.elf import ELF_MAGIC, invalid_binary, read_elf_header, read_sections

if TYPE_CHECKING:
    from cudaresolve.binaries.elf import BoundedReader, Section

__all__ = ["MAX_SYMBOLS", "DynamicSymbols", "Linkage", "NeededSymbol", "read_linkage", "read_symbols"]

#: The most ``.dynsym`` entries read from one library (``libtorch_cpu.so`` 2.8 has about 190,000).
MAX_SYMBOLS: Final = 2_000_000
_MAX_NEEDED: Final = 1000  # DT_NEEDED and RUNPATH entries read from one file
_MAX_STRING: Final = 4096  # a library name or search path longer than this is cut
_SHT_DYNAMIC: Final = 6
_SHT_DYNSYM: Final = 11
_SHT_GNU_VERNEED: Final = 0x6FFFFFFE
_SHT_GNU_VERSYM: Final = 0x6FFFFFFF
_DT_NULL, _DT_NEEDED, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 0, 1, 14, 15, 29
_DYN: Final = struct.Struct("<qQ")
_SYM: Final = struct.Struct("<IBBHQQ")
_VERNEED: Final = struct.Struct("<HHIII")
_VERNAUX: Final = struct.Struct("<IHHII")
_STB_WEAK: Final = 2
_STT_SECTION, _STT_FILE = 3, 4
_STV_HIDDEN, _STV_INTERNAL = 2, 1
_VERSYM_HIDDEN: Final = 0x8000


@dataclass(frozen=True, slots=True, kw_only=True)
class Linkage:
    """What the dynamic loader reads first: the libraries a file needs and where it looks for them."""

    needed: tuple[str, ...] = ()  # DT_NEEDED, in order: "libtorch_cpu.so", "libcudart.so.12"
    runpath: tuple[str, ...] = ()  # DT_RUNPATH (else DT_RPATH) entries, "$ORIGIN" unexpanded
    soname: str | None = None
    dynamic: bool = False  # False: no .dynamic section (a static or non-ELF file): nothing is needed


@dataclass(frozen=True, slots=True, kw_only=True)
class NeededSymbol:
    """An undefined, non-weak dynamic symbol: its name, and the version and library it is bound to."""

    name: bytes
    version: str | None = None  # "GLIBC_2.14"; None when unversioned
    library: str | None = None  # the Verneed file of that version: "libc.so.6"


@dataclass(frozen=True, slots=True, kw_only=True)
class DynamicSymbols:
    """A library's linkage, the symbols it needs, and the names it exports (defined, default or protected)."""

    linkage: Linkage
    needed: tuple[NeededSymbol, ...] = ()
    exported: frozenset[bytes] = frozenset()
    count: int = 0  # .dynsym entries read


def _string(reader: BoundedReader, table: Section, offset: int) -> str:
    """The NUL-ended string at ``offset`` of ``table``, read in a small window (cut at ``_MAX_STRING``)."""
    if offset >= table.size:
        raise invalid_binary("binaries.dynamic-string", offset=offset)
    count = min(_MAX_STRING, table.size - offset)
    raw = reader.read_at(table.offset + offset, min(count, 256))
    if b"\0" not in raw and count > len(raw):
        raw = reader.read_at(table.offset + offset, count)
    end = raw.find(b"\0")
    text = raw[: end if end >= 0 else len(raw)].decode("utf-8", "replace")
    return text if text.isprintable() else repr(text)[1:-1]


def _sections(reader: BoundedReader) -> list[Section]:
    if reader.size < 4 or reader.read_at(0, 4) != ELF_MAGIC:
        raise invalid_binary("binaries.unknown-format")
    return read_sections(reader, read_elf_header(reader))


def _linked(sections: list[Section], section: Section) -> Section:
    if not 0 < section.link < len(sections):
        raise invalid_binary("binaries.dynamic-link", name=section.name)
    return sections[section.link]


def _linkage(reader: BoundedReader, sections: list[Section]) -> Linkage:
    dynamic = next((s for s in sections if s.type == _SHT_DYNAMIC), None)
    if dynamic is None or dynamic.size == 0:
        return Linkage()
    strings = _linked(sections, dynamic)
    count = min(dynamic.size // _DYN.size, 4 * _MAX_NEEDED)
    needed: list[str] = []
    rpath: list[str] = []
    runpath: list[str] = []
    soname = None
    for tag, value in _DYN.iter_unpack(reader.read_at(dynamic.offset, count * _DYN.size)):
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED and len(needed) < _MAX_NEEDED:
            needed.append(_string(reader, strings, value))
        elif tag in (_DT_RPATH, _DT_RUNPATH):
            (runpath if tag == _DT_RUNPATH else rpath).extend(
                p for p in _string(reader, strings, value).split(":")[:_MAX_NEEDED] if p)
        elif tag == _DT_SONAME:
            soname = _string(reader, strings, value)
    # ld.so ignores DT_RPATH when DT_RUNPATH is present (ld.so(8), "Rpath token expansion")
    return Linkage(needed=tuple(needed), runpath=tuple(runpath or rpath), soname=soname, dynamic=True)


def read_linkage(reader: BoundedReader) -> Linkage:
    """The file's DT_NEEDED, RUNPATH and SONAME (an empty ``Linkage`` for a file with no ``.dynamic``)."""
    return _linkage(reader, _sections(reader))


def _verneed(reader: BoundedReader, sections: list[Section]) -> dict[int, tuple[str, str]]:
    """Version index -> (library, version name) from ``.gnu.version_r``."""
    section = next((s for s in sections if s.type == _SHT_GNU_VERNEED and s.size), None)
    if section is None:
        return {}
    strings = _linked(sections, section)
    raw = reader.read_at(section.offset, section.size)
    out: dict[int, tuple[str, str]] = {}
    at, entries = 0, min(section.info, _MAX_NEEDED)
    for _ in range(entries):
        if at + _VERNEED.size > len(raw):
            raise invalid_binary("binaries.version-table", name=section.name)
        _ver, cnt, file, aux, nxt = _VERNEED.unpack_from(raw, at)
        library = _string(reader, strings, file)
        where = at + aux
        for _ in range(min(cnt, _MAX_NEEDED)):
            if where + _VERNAUX.size > len(raw):
                raise invalid_binary("binaries.version-table", name=section.name)
            _hash, _flags, other, name, step = _VERNAUX.unpack_from(raw, where)
            out[other & 0x7FFF] = (library, _string(reader, strings, name))
            if not step:
                break
            where += step
        if not nxt:
            break
        at += nxt
    return out


def read_symbols(reader: BoundedReader, *, exports: bool = True, needs: bool = True) -> DynamicSymbols:
    """The linkage, the undefined non-weak symbols (``needs``) and the exported names (``exports``).

    An exported name is a defined, non-local dynamic symbol of default or protected visibility
    whose version (if any) is not hidden: what another library's undefined reference binds to.
    """
    sections = _sections(reader)
    linkage = _linkage(reader, sections)
    table = next((s for s in sections if s.type == _SHT_DYNSYM and s.size), None)
    if table is None:
        return DynamicSymbols(linkage=linkage)
    count = table.size // _SYM.size
    if count > MAX_SYMBOLS:
        raise invalid_binary("binaries.too-many-symbols", count=count, limit=MAX_SYMBOLS)
    strings = _linked(sections, table)
    names = reader.read_at(strings.offset, strings.size)
    symbols = reader.read_at(table.offset, count * _SYM.size)
    versym = next((s for s in sections if s.type == _SHT_GNU_VERSYM and s.size >= 2 * count), None)
    versions = reader.read_at(versym.offset, 2 * count) if versym is not None else b""
    bound = _verneed(reader, sections) if needs and versions else {}
    needed: list[NeededSymbol] = []
    exported: set[bytes] = set()
    for index, (st_name, info, other, shndx, _value, _size) in enumerate(_SYM.iter_unpack(symbols)):
        if not st_name or index == 0:
            continue
        bind, kind = info >> 4, info & 0xF
        if kind in (_STT_SECTION, _STT_FILE) or bind == 0:
            continue
        if st_name >= len(names):
            raise invalid_binary("binaries.dynamic-string", offset=st_name)
        end = names.find(b"\0", st_name)
        name = names[st_name : end if end >= 0 else len(names)]
        ver = int.from_bytes(versions[2 * index : 2 * index + 2], "little") if versions else 1
        if shndx == 0:
            if needs and bind != _STB_WEAK:
                library, version = bound.get(ver & 0x7FFF, (None, None))
                needed.append(NeededSymbol(name=name, version=version, library=library))
        elif exports and other & 3 not in (_STV_HIDDEN, _STV_INTERNAL) and not ver & _VERSYM_HIDDEN:
            exported.add(name)
    return DynamicSymbols(linkage=linkage, needed=tuple(needed), exported=frozenset(exported), count=count)
