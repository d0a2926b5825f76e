"""List the GPU code inside ELF files, CUDA fat binaries and cubins from their headers. Pure.

Everything here works on a seekable binary reader passed in (``read``/``seek``); nothing is
opened, loaded or decompressed.  The byte layouts follow NVIDIA's ``fatbinary.h`` and were
checked against the nvcc 13.0 fixtures in ``tests/fixtures/cuda`` (``manifest.toml`` says how
each was built):

* the ELF section table (``elf.py``) -> ``.nv_fatbin`` (what the runtime registers),
  ``__nv_relfatbin`` (pre-link copies kept by ``-rdc`` builds), and a scan of ``.rodata``
  for whole fatbins embedded as data (NVIDIA's libcupti; AOTInductor's embedded kernels);
  a Windows module's section table (``pe.py``) -> ``.nv_fatb`` and ``.rdata`` the same way.
* fatbin container: 16-byte header, magic ``0xBA55ED50``, then entries back to back.
* entry: a header of at least 64 bytes (kind, SM, flags, sizes) followed by its payload;
  the next entry starts ``header_size + payload_size`` further on, so payloads are skipped.
* a bare cubin (``e_machine`` 190, EM_CUDA) names its SM in ``e_flags``.

Reads are bounded by ``elf.Limits``; anything malformed raises ``InvalidBinary`` and nothing
else, so a hostile file cannot crash, hang, or make the reader allocate more than a chunk.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from cudaresolve.binaries.elf import (
    CUBIN_IDENT,
    DEFAULT_LIMITS,
    EHDR_SIZE,
    ELF_MAGIC,
    EM_CUDA,
    BoundedReader,
    ElfHeader,
    Limits,
    SeekableReader,
    cubin_target,
    embedded_suffix,
    invalid_binary,
    parse_elf_header,
    read_elf_header,
    read_sections,
    toolkit_suffix,
)
from cudaresolve.binaries.pe import PE_MAGIC, read_pe_sections
from cudaresolve.core.archs import Arch, ComputeCapability
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "FATBIN_MAGIC",
    "FLAG_ARCH_SPECIFIC",
    "FLAG_FAMILY_SPECIFIC",
    "KIND_CUBIN",
    "KIND_LTO_IR",
    "KIND_PTX",
    "Container",
    "FatbinEntry",
    "FatbinListing",
    "read_fatbin_archs",
]

# Container and entry header (NVIDIA fatbinary.h: fatBinaryHeader, fatBinData_t).
FATBIN_MAGIC: Final = 0xBA55ED50
_MAGIC_BYTES: Final = struct.pack("<I", FATBIN_MAGIC)
_CONTAINER = struct.Struct("<IHHQ")  # magic, version, header_size, fat_size
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # the fixed 64 bytes of an entry header
_ENTRY_VERSION: Final = 0x0101

KIND_PTX: Final = 1
KIND_CUBIN: Final = 2
KIND_LEGACY_CUBIN: Final = 4  # pre-ELF cubin (fatbinary.h); never runs on a current GPU
KIND_LTO_IR: Final = 8
_KNOWN_KINDS: Final = frozenset({KIND_PTX, KIND_CUBIN, KIND_LEGACY_CUBIN, KIND_LTO_IR, 0x10})

# Entry flags (fatbinary.h).  Checked on our nvcc 13.0 fixtures: sm_90a/sm_100a/compute_90a
# carry 0x100000 and sm_100f/compute_120f carry 0x200000.
FLAG_ARCH_SPECIFIC: Final = 0x100000  # the "a" suffix
FLAG_FAMILY_SPECIFIC: Final = 0x200000  # the "f" suffix
FLAG_LEGACY_COMPRESS: Final = 0x1000
FLAG_LZ4: Final = 0x2000
FLAG_ZSTD: Final = 0x8000

FATBIN_SECTIONS: Final = (".nv_fatbin", "__nv_relfatbin", ".nv_fatb")  # .nv_fatb: a PE image's cut name
SCANNED_SECTIONS: Final = (".rodata", ".lrodata", ".rdata")  # .rdata: a PE image's read-only data
RELOCATABLE_SECTION: Final = "__nv_relfatbin"


@dataclass(frozen=True, slots=True, kw_only=True)
class FatbinEntry:
    """One code object: PTX, a cubin (SASS) or LTO-IR, as its header describes it."""

    section: str  # ".nv_fatbin", "__nv_relfatbin", ".rodata", or "" for a bare fatbin/cubin file
    offset: int  # file offset of the entry header
    kind: int  # 1 PTX, 2 cubin, 8 LTO-IR; others are kept but not named
    sm: int  # decimal SM number: 90 for sm_90a
    suffix: str = ""  # "", "a" or "f"
    flags: int = 0
    header_size: int = 64
    payload_size: int = 0
    compressed_size: int = 0
    uncompressed_size: int = 0
    code_version: tuple[int, int] = (0, 0)  # PTX: the ISA version (9, 0); cubin: ELF ABI
    suffix_known: bool = True  # False for a bare ABI-8 cubin, whose e_flags omit a/f
    member: str = ""  # the object inside a static library (``staticlib``) that holds it

    @property
    def kind_name(self) -> str:
        return {KIND_PTX: "ptx", KIND_CUBIN: "sass", KIND_LTO_IR: "lto"}.get(self.kind, f"kind-{self.kind}")

    @property
    def name(self) -> str | None:
        """``sm_90a``, ``compute_80`` or ``lto_100a``; ``None`` for kinds we do not name."""
        prefix = {KIND_PTX: "compute", KIND_CUBIN: "sm", KIND_LTO_IR: "lto"}.get(self.kind)
        return None if prefix is None else f"{prefix}_{self.sm}{self.suffix}"

    @property
    def arch(self) -> Arch | None:
        """The SASS or PTX target as an ``Arch``; ``None`` for LTO-IR and unknown kinds."""
        if self.kind not in (KIND_PTX, KIND_CUBIN):
            return None
        return Arch(ComputeCapability(self.sm // 10, self.sm % 10), self.suffix, ptx=self.kind == KIND_PTX)

    @property
    def compressed(self) -> bool:
        return self.uncompressed_size != 0 or bool(self.flags & (FLAG_LEGACY_COMPRESS | FLAG_LZ4 | FLAG_ZSTD))

    @property
    def compression(self) -> str:
        """``zstd``, ``lz4``, ``legacy``, ``unknown`` (sizes say compressed, flags do not) or ``none``."""
        if self.flags & FLAG_ZSTD:
            return "zstd"
        if self.flags & FLAG_LZ4:
            return "lz4"
        if self.flags & FLAG_LEGACY_COMPRESS:
            return "legacy"
        return "unknown" if self.uncompressed_size else "none"

    @property
    def ptx_isa(self) -> str | None:
        """The PTX ISA version (``"9.0"``) of a PTX entry; it decides the minimum driver."""
        if self.kind != KIND_PTX:
            return None
        return f"{self.code_version[0]}.{self.code_version[1]}"

    @property
    def loadable(self) -> bool:
        """Whether the CUDA runtime can load it as is (not a pre-link ``-rdc`` copy)."""
        return self.section != RELOCATABLE_SECTION


@dataclass(frozen=True, slots=True, kw_only=True)
class Container:
    section: str
    offset: int
    size: int  # header plus entries
    entries: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FatbinListing:
    """Every entry found in one file, plus how much of the file it took to find them."""

    format: str  # "elf", "pe", "fatbin", "cubin", or "ar" (staticlib)
    size: int
    entries: tuple[FatbinEntry, ...] = ()
    containers: tuple[Container, ...] = ()
    bytes_read: int = 0
    notes: tuple[Text, ...] = ()

    def _pool(self) -> list[FatbinEntry]:
        """Per object (a static library's members apart): what the runtime loads, else its ``-rdc`` copies."""
        objects: dict[str, list[FatbinEntry]] = {}
        for entry in self.entries:
            objects.setdefault(entry.member, []).append(entry)
        return [e for group in objects.values() for e in ([e for e in group if e.loadable] or group)]

    def _names(self, kind: int) -> tuple[str, ...]:
        found = {(e.sm, e.suffix, e.name) for e in self._pool() if e.kind == kind and e.name}
        return tuple(name for _, _, name in sorted(found))

    @property
    def sass(self) -> tuple[str, ...]:
        """Distinct SASS targets, ``sm_75`` … ``sm_100a``, sorted by SM.

        ``__nv_relfatbin`` copies count only when an object has nothing else (an ``-rdc`` object).
        """
        return self._names(KIND_CUBIN)

    @property
    def ptx(self) -> tuple[str, ...]:
        return self._names(KIND_PTX)

    @property
    def lto(self) -> tuple[str, ...]:
        return self._names(KIND_LTO_IR)

    @property
    def sections(self) -> tuple[str, ...]:
        return tuple(sorted({c.section for c in self.containers} | {e.section for e in self.entries}))

    @property
    def compressed(self) -> int:
        """How many entries are stored compressed."""
        return sum(1 for e in self.entries if e.compressed)

    @property
    def ptx_isa(self) -> dict[str, str]:
        """Highest PTX ISA version per PTX target, e.g. ``{"compute_90": "9.0"}``."""
        best: dict[str, tuple[int, int]] = {}
        for e in self._pool():
            if e.kind == KIND_PTX and e.name and e.code_version > best.get(e.name, (-1, -1)):
                best[e.name] = e.code_version
        return {name: f"{v[0]}.{v[1]}" for name, v in sorted(best.items())}


def read_fatbin_archs(
    fileobj: SeekableReader,
    *,
    size: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    scan_rodata: bool | None = None,
) -> FatbinListing:
    """List the GPU code in ``fileobj``: a host ELF (``.so``/``.o``), a Windows module, a bare fatbin, or a cubin.

    ``size`` is the file's length when the caller knows it (a zip member); otherwise it is
    found by seeking to the end.  ``scan_rodata``: ``None`` (default) scans ``.rodata`` only in
    an ELF without fatbin sections (libcupti and AOTInductor models keep their kernels there;
    libcurand's 20 MB of .rodata tables would otherwise cost more than its 150 entry headers);
    ``True`` always, ``False`` never.  Raises ``InvalidBinary`` for anything else or anything
    malformed; a host ELF without device code gives an empty listing.
    """
    reader = BoundedReader(fileobj, size, limits)
    if reader.size < 4:
        raise invalid_binary("binaries.too-short", size=reader.size)
    magic = reader.read_at(0, 4)
    if magic == _MAGIC_BYTES:
        walker = _Walker(reader, section="", strict=False)
        walker.walk(0, reader.size)
        if not walker.containers:
            raise invalid_binary("binaries.fatbin-truncated")
        return _listing(reader, "fatbin", walker.entries, walker.containers, walker.notes)
    if magic[:2] == PE_MAGIC:  # a Windows module: nvcc's fat binaries are in ".nv_fatb" (pe.py)
        fmt, sections = "pe", read_pe_sections(reader)
    elif magic != ELF_MAGIC:
        raise invalid_binary("binaries.unknown-format")
    elif (header := read_elf_header(reader)).machine == EM_CUDA:
        if header.ph_end > reader.size:
            raise invalid_binary("binaries.cubin-truncated")
        sections = read_sections(reader, header, whole=True)
        entry = _cubin_entry(header, reader.size)
        # the flags cannot tell sm_100a from sm_100: the cubin's toolkit note can
        if not entry.suffix_known and (suffix := toolkit_suffix(reader, sections, entry.sm)) is not None:
            entry = replace(entry, suffix=suffix, suffix_known=True)
        return _listing(reader, "cubin", (entry,), (), ())
    else:
        fmt, sections = "elf", read_sections(reader, header, checked=FATBIN_SECTIONS + SCANNED_SECTIONS)
    entries: list[FatbinEntry] = []
    containers: list[Container] = []
    notes: list[Text] = []
    scan_budget = [limits.max_scan_bytes]
    seen = [0, 0]  # entries and containers found in the whole file: budgets are per file, not per section
    if scan_rodata is None:
        scan_rodata = not any(s.name in FATBIN_SECTIONS and s.size for s in sections)
    for section in sections:
        if section.name in FATBIN_SECTIONS:
            strict = False
        elif scan_rodata and section.name in SCANNED_SECTIONS:
            strict = True
        else:
            continue
        walker = _Walker(reader, section=section.name, strict=strict, scan_budget=scan_budget, seen=seen)
        walker.walk(section.offset, section.offset + section.size)
        entries += walker.entries
        containers += walker.containers
        notes += walker.notes
    return _listing(reader, fmt, entries, containers, notes)


def _listing(
    reader: BoundedReader, fmt: str, entries: Sequence[FatbinEntry], containers: Sequence[Container],
    notes: Sequence[Text],
) -> FatbinListing:
    return FatbinListing(
        format=fmt, size=reader.size, entries=tuple(entries), containers=tuple(containers),
        bytes_read=reader.bytes_read, notes=tuple(notes),
    )


def _cubin_entry(header: ElfHeader, size: int) -> FatbinEntry:
    target = cubin_target(header)
    return FatbinEntry(
        section="", offset=0, kind=KIND_CUBIN, sm=target.sm, suffix=target.suffix, header_size=0,
        payload_size=size, code_version=(header.abi_version, 0), suffix_known=target.suffix_known,
    )


class _Walker:
    """Walks containers in one byte range.

    ``strict`` is for ranges that are not fatbin sections (``.rodata``): a magic number there
    may be chance, so a candidate that fails any check is skipped instead of being an error.
    """

    def __init__(
        self, reader: BoundedReader, *, section: str, strict: bool, scan_budget: list[int] | None = None,
        seen: list[int] | None = None,
    ) -> None:
        self.reader = reader
        self.section = section
        self.strict = strict
        self.scan_budget = scan_budget if scan_budget is not None else [reader.limits.max_scan_bytes]
        self.seen = seen if seen is not None else [0, 0]  # shared by the walkers of one file
        self.entries: list[FatbinEntry] = []
        self.containers: list[Container] = []
        self.notes: list[Text] = []

    def walk(self, start: int, end: int) -> None:
        pos = start if not self.strict else self._find_magic(start, end)
        while pos is not None and pos + _CONTAINER.size <= end:
            head = self.reader.read_at(pos, _CONTAINER.size)
            if self.strict and head.startswith(CUBIN_IDENT):
                self._embedded_cubin(pos, end)
                pos = self._find_magic(pos + 1, end)
                continue
            magic, version, hsize, fat_size = _CONTAINER.unpack(head)
            if magic != FATBIN_MAGIC:
                after = self._find_magic(pos + 1, end)
                if not self.strict and self._junk(pos, end if after is None else after):
                    if not self.containers and after is None:  # a fatbin section that holds no container at all
                        raise invalid_binary("binaries.bad-container", offset=f"{pos:#x}", section=self._where,
                                             problem=Text("binaries.no-container"))  # fmt: skip
                    self.notes.append(Text.of("binaries.fatbin-junk", section=self._where, offset=f"{pos:#x}"))
                pos = after
                continue
            stop = pos + hsize + fat_size
            problem = self._container_problem(version, hsize, fat_size, stop, end)
            entries = None if problem else self._entries(pos + hsize, stop)
            if entries is None:
                if not self.strict:
                    raise invalid_binary("binaries.bad-container", offset=f"{pos:#x}", section=self._where,
                                   problem=problem or Text("binaries.bad-entry"))
                pos = self._find_magic(pos + 1, end)
                continue
            self.seen[1] += 1
            if self.seen[1] > self.reader.limits.max_containers:
                raise invalid_binary("binaries.too-many-containers", limit=self.reader.limits.max_containers)
            self.containers.append(Container(section=self.section, offset=pos, size=stop - pos, entries=len(entries)))
            self.entries += entries
            self.seen[0] += len(entries)
            pos = stop

    def _embedded_cubin(self, pos: int, end: int) -> None:
        """A whole cubin stored as data (AOTInductor's ``embed_kernel_binary`` puts them in .rodata)."""
        if pos + EHDR_SIZE > end:
            return
        header = parse_elf_header(self.reader.read_at(pos, EHDR_SIZE))
        if header.machine != EM_CUDA or header.ehsize != EHDR_SIZE or header.type not in (1, 2):
            return
        try:
            entry = _cubin_entry(header, 0)
        except InvalidBinary:
            return
        if not entry.suffix_known and (suffix := embedded_suffix(self.reader, pos, end, header, entry.sm)) is not None:
            entry = replace(entry, suffix=suffix, suffix_known=True)  # its toolkit note: Triton's sm_90a, say
        self.entries.append(replace(entry, section=self.section, offset=pos))
        self.seen[0] += 1
        if self.seen[0] > self.reader.limits.max_entries:
            raise invalid_binary("binaries.too-many-entries", limit=self.reader.limits.max_entries)

    @property
    def _where(self) -> Text:
        """The section's name, or "file" for a bare fatbin."""
        return literal(self.section) if self.section else Text("binaries.the-file")

    def _container_problem(self, version: int, hsize: int, fat_size: int, stop: int, end: int) -> Text | None:
        if version != 1:
            return Text.of("binaries.container-version", version=version)
        if hsize < _CONTAINER.size or hsize % 8 or (self.strict and hsize != _CONTAINER.size):
            return Text.of("binaries.container-header-size", size=hsize)
        if stop > end:
            return Text.of("binaries.container-past-end", size=fat_size)
        if self.strict and (fat_size == 0 or fat_size % 8):
            return Text.of("binaries.container-size", size=fat_size)
        return None

    def _entries(self, pos: int, stop: int) -> list[FatbinEntry] | None:
        """The entries of one container, or ``None`` when one fails validation."""
        found: list[FatbinEntry] = []
        while pos < stop:
            if pos + _ENTRY.size > stop:
                return self._reject(Text.of("binaries.entry-header-past-end", offset=f"{pos:#x}"))
            fields = _ENTRY.unpack(self.reader.read_at(pos, _ENTRY.size))
            kind, version, hsize, payload, csize, _opt, minor, major, sm, _id_off, _id_len, flags, _res, usize = fields
            if hsize < _ENTRY.size or pos + hsize + payload > stop:
                return self._reject(Text.of("binaries.entry-past-end", offset=f"{pos:#x}", header=hsize,
                                            payload=payload))
            if self.strict and (version != _ENTRY_VERSION or hsize % 8 or kind not in _KNOWN_KINDS):
                return None
            if kind in (KIND_PTX, KIND_CUBIN, KIND_LTO_IR) and not 10 <= sm <= 255:
                return self._reject(Text.of("binaries.entry-sm", offset=f"{pos:#x}", sm=sm))
            suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
            found.append(FatbinEntry(
                section=self.section, offset=pos, kind=kind, sm=sm, suffix=suffix, flags=flags, header_size=hsize,
                payload_size=payload, compressed_size=csize, uncompressed_size=usize, code_version=(major, minor),
            ))
            if self.seen[0] + len(found) > self.reader.limits.max_entries:
                raise invalid_binary("binaries.too-many-entries", limit=self.reader.limits.max_entries)
            pos += hsize + payload
        return found

    def _junk(self, pos: int, stop: int) -> bool:
        """Whether bytes other than zero padding lie between ``pos`` and ``stop`` in a fatbin section: what is left
        of a container whose size or magic number was damaged (cuobjdump: "Invalid fatbin header")."""
        chunk = self.reader.limits.chunk_size
        while pos < stop:
            count = min(chunk, stop - pos)
            if self.reader.read_at(pos, count).strip(b"\0"):
                return True
            pos += count
        return False

    def _reject(self, problem: Text) -> list[FatbinEntry] | None:
        """``None`` (skip the candidate) in a scanned section; an error in a fatbin section."""
        if self.strict:
            return None
        raise invalid_binary("binaries.bad-entry-in", section=self._where, problem=problem)

    def _find_magic(self, pos: int, end: int) -> int | None:
        """The next container magic at or after ``pos``, reading chunk by chunk within the scan budget."""
        chunk = self.reader.limits.chunk_size
        while pos + _CONTAINER.size <= end:
            if self.scan_budget[0] <= 0:
                self.notes.append(Text.of("binaries.scan-stopped", section=self._where, offset=f"{pos:#x}",
                                          limit=self.reader.limits.max_scan_bytes))
                return None
            count = min(chunk, end - pos, self.scan_budget[0])
            self.scan_budget[0] -= count
            data = self.reader.read_at(pos, count)
            hits = [h for h in (data.find(_MAGIC_BYTES), data.find(CUBIN_IDENT) if self.strict else -1) if h >= 0]
            if hits:
                return pos + min(hits)
            pos += max(count - (len(CUBIN_IDENT) - 1), 1)
        return None
