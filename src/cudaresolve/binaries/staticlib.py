"""List the GPU code in a static library (``ar`` archive, ``libx.a``) as well as in every other binary. Pure.

A static library of CUDA objects (``nvcc -c``/``-dc`` then ``ar rcs``) holds one ELF object per
member; NVIDIA's cuobjdump lists each member's fat binaries (``member libx.a:k.o:``).  Here the
archive is one listing: each member object is read by ``fatbin.read_fatbin_archs`` through a view
on the same bounded reader (one read budget for the whole archive), its entries tagged with the
member's name and their offsets made file offsets.  A member that is no ELF object or fatbin
(a GNU symbol table, an LLVM bitcode object) is skipped.

The layout (System V / GNU ``ar``, and BSD's ``#1/N`` long names): the 8-byte magic ``!<arch>\\n``,
then per member a 60-byte header (name 16, date 12, uid 6, gid 6, mode 8, size 10, ``\\`\\n``)
and its bytes, padded to an even offset.  GNU names longer than 15 bytes live in the ``//``
member and are named ``/<offset>``.  A thin archive (``!<thin>\\n``) keeps no member bytes and
is not read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from cudaresolve.binaries.elf import (
    DEFAULT_LIMITS,
    ELF_MAGIC,
    BoundedReader,
    Limits,
    SeekableReader,
    SliceReader,
    invalid_binary,
)
from cudaresolve.binaries.fatbin import FATBIN_MAGIC, FatbinListing, read_fatbin_archs
from cudaresolve.errors import InvalidBinary

if TYPE_CHECKING:
    from cudaresolve.binaries.fatbin import Container, FatbinEntry
    from cudaresolve.text.model import Text

__all__ = ["AR_MAGIC", "read_code"]

AR_MAGIC: Final = b"!<arch>\n"
_HEADER: Final = 60
_MEMBER_MAGICS: Final = (ELF_MAGIC, FATBIN_MAGIC.to_bytes(4, "little"))
_SYMBOL_TABLES: Final = frozenset({"/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64"})
_INDEX_BYTES: Final = 4 * 1024 * 1024


def read_code(
    fileobj: SeekableReader, *, size: int | None = None, limits: Limits = DEFAULT_LIMITS,
    scan_rodata: bool | None = None,
) -> FatbinListing:
    """``fatbin.read_fatbin_archs`` for a host ELF, fatbin or cubin; a static library's members for an archive."""
    reader = BoundedReader(fileobj, size, limits)
    if reader.size < len(AR_MAGIC) or reader.read_at(0, len(AR_MAGIC)) != AR_MAGIC:
        listing = read_fatbin_archs(fileobj, size=reader.size, limits=limits, scan_rodata=scan_rodata)
        return replace(listing, bytes_read=listing.bytes_read + reader.bytes_read)
    entries: list[FatbinEntry] = []
    containers: list[Container] = []
    notes: list[Text] = []
    for name, start, length in _members(reader):
        if length < 4 or reader.read_at(start, 4) not in _MEMBER_MAGICS:
            continue
        try:
            # .rodata is not scanned unless asked: a large library's host objects hold many MB of it, which would
            # spend the archive's one read budget (cuobjdump reads no .rodata either)
            member = read_fatbin_archs(SliceReader(reader, start, length), size=length, limits=limits,
                                       scan_rodata=bool(scan_rodata))
        except InvalidBinary as err:
            raise invalid_binary("binaries.static-member-bad", member=name, problem=err.text) from err
        entries += [replace(e, member=name, offset=e.offset + start) for e in member.entries]
        containers += [replace(c, offset=c.offset + start) for c in member.containers]
        notes += member.notes
        if len(entries) > limits.max_entries:
            raise invalid_binary("binaries.too-many-entries", limit=limits.max_entries)
    return FatbinListing(format="ar", size=reader.size, entries=tuple(entries), containers=tuple(containers),
                         bytes_read=reader.bytes_read, notes=tuple(notes))


def _members(reader: BoundedReader) -> list[tuple[str, int, int]]:
    """(name, offset of its bytes, length) of every member but the symbol and name tables.

    ``ar`` has no length field of its own: a cut at a member's end leaves a well-formed archive, which only
    the GNU symbol index (``/``, ``/SYM64/``: the header offset of each member defining a symbol) shows short.
    """
    found: list[tuple[str, int, int]] = []
    long_names = b""
    indexed = 0  # the furthest member header the symbol index names
    pos = len(AR_MAGIC)
    while pos + _HEADER <= reader.size:
        header = reader.read_at(pos, _HEADER)
        raw_size = header[48:58].strip(b" ")
        if header[58:60] != b"`\n" or not raw_size.isdigit():
            raise invalid_binary("binaries.static-header", offset=f"{pos:#x}")
        start, length = pos + _HEADER, int(raw_size)
        if start + length > reader.size:
            raise invalid_binary("binaries.static-member-past-end", offset=f"{pos:#x}", size=length)
        name = header[:16].decode("latin-1").rstrip(" ")
        if name in ("/", "/SYM64/"):
            indexed = max(indexed, _furthest_indexed(reader, start, length, 8 if name == "/SYM64/" else 4, pos))
        elif name == "//":  # GNU: the names longer than 15 bytes, each ending "/\n"
            if length > reader.limits.max_shstrtab:
                raise invalid_binary("binaries.name-table-size", size=length)
            long_names = reader.read_at(start, length)
        elif name.startswith("#1/") and name[3:].isdigit():  # BSD: the name is the member's first N bytes
            count = min(int(name[3:]), length)
            name = reader.read_at(start, count).rstrip(b"\0").decode("latin-1")
            found.append((name, start + count, length - count))
        elif name.startswith("/") and name[1:].isdigit():
            offset = int(name[1:])
            end = long_names.find(b"/\n", offset)
            found.append((long_names[offset:end if end >= 0 else None].decode("latin-1"), start, length))
        elif name not in _SYMBOL_TABLES:
            found.append((name[:-1] if name.endswith("/") else name, start, length))
        if len(found) > reader.limits.max_containers:
            raise invalid_binary("binaries.static-members", limit=reader.limits.max_containers)
        pos = start + length + (length & 1)
    if pos < reader.size and reader.read_at(pos, reader.size - pos).strip(b"\n"):
        raise invalid_binary("binaries.static-header", offset=f"{pos:#x}")  # a member header cut short
    if indexed and indexed + _HEADER > reader.size:
        raise invalid_binary("binaries.file-ends", offset=f"{indexed + _HEADER:#x}")
    return [(_printable(name), start, length) for name, start, length in found]


def _furthest_indexed(reader: BoundedReader, start: int, length: int, width: int, where: int) -> int:
    """The largest member offset in a GNU symbol index: a big-endian count, then that many offsets."""
    if length < width:
        raise invalid_binary("binaries.static-header", offset=f"{where:#x}")
    count = int.from_bytes(reader.read_at(start, width), "big")
    if (count + 1) * width > length:
        raise invalid_binary("binaries.static-header", offset=f"{where:#x}")
    if count * width > _INDEX_BYTES:
        return 0  # a huge index is not read only to check the file's length
    raw = reader.read_at(start + width, count * width)
    return max((int.from_bytes(raw[i : i + width], "big") for i in range(0, len(raw), width)), default=0)


def _printable(name: str) -> str:
    """A member name fit for a one-line message (a newline or escape in it is shown escaped)."""
    return name if name.isprintable() else repr(name)[1:-1]
