"""List the GPU code inside ELF files, CUDA fat binaries and cubins from their headers. Pure.

Everything here works on a seekable binary reader passed in (``read``/``seek``); nothing is
opened, loaded or decompressed.  Byte layouts are in ``shared/facts/formats.md`` (A.2-A.7) and
were re-checked against nvcc 13.0 fixtures in ``tests/fixtures/cuda``:

* ELF64 little-endian section table -> ``.nv_fatbin`` (what the runtime registers),
  ``__nv_relfatbin`` (pre-link copies kept by ``-rdc`` builds), and a scan of ``.rodata``
  for whole fatbins embedded as data (NVIDIA's libcupti; AOTInductor's embedded kernels).
* fatbin container: 16-byte header, magic ``0xBA55ED50``, then entries back to back.
* entry: a header of at least 64 bytes (kind, SM, flags, sizes) followed by its payload;
  the next entry starts ``header_size + payload_size`` further on, so payloads are skipped.
* a bare cubin (``e_machine`` 190, EM_CUDA) names its SM in ``e_flags``.

Reads are bounded by :class:`Limits`; anything malformed raises ``InvalidBinary`` and nothing
else, so a hostile file cannot crash, hang, or make the reader allocate more than a chunk.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Protocol

from cudaresolve.core.archs import Arch, ComputeCapability
from cudaresolve.errors import InvalidBinary

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DEFAULT_LIMITS",
    "Container",
    "FatbinEntry",
    "FatbinListing",
    "Limits",
    "SeekableReader",
    "read_fatbin_archs",
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
    max_containers: int = 100_000  # libtorch_cuda.so has a few thousand (one per translation unit)
    max_entries: int = 500_000
    max_scan_bytes: int = 64 * 1024 * 1024
    chunk_size: int = 64 * 1024


DEFAULT_LIMITS: Final = Limits()

_HINT: Final = "the file is truncated or is not a CUDA/ELF binary; reinstall the package that owns it"

# Container and entry header (formats.md A.3, A.4; NVIDIA fatbinary.h).
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

# Entry flags (formats.md A.5).  Checked on our nvcc 13.0 fixtures: sm_90a/sm_100a/compute_90a
# carry 0x100000 and sm_100f/compute_120f carry 0x200000, exactly as the research says.
FLAG_ARCH_SPECIFIC: Final = 0x100000  # the "a" suffix
FLAG_FAMILY_SPECIFIC: Final = 0x200000  # the "f" suffix
FLAG_LEGACY_COMPRESS: Final = 0x1000
FLAG_LZ4: Final = 0x2000
FLAG_ZSTD: Final = 0x8000

# ELF (formats.md A.2; System V gABI).
_ELF_MAGIC: Final = b"\x7fELF"
_CUBIN_IDENT: Final = b"\x7fELF\x02\x01\x01"  # ELF64, little-endian, version 1: how a cubin starts
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SHT_NOBITS: Final = 8
_EM_CUDA: Final = 190
FATBIN_SECTIONS: Final = (".nv_fatbin", "__nv_relfatbin")
SCANNED_SECTIONS: Final = (".rodata", ".lrodata")
RELOCATABLE_SECTION: Final = "__nv_relfatbin"

# Cubin e_flags.  ABI version 8 (every CUDA 13 cubin, checked on our fixtures): SM in bits 8-15,
# and sm_90/sm_90a, sm_100/sm_100a/sm_100f have identical flags, so the suffix is unknowable.
# ABI version 7 (older toolkits): SM in the low byte.  LLVM's EF_CUDA_ACCELERATORS_V1 (0x800,
# llvm/include/llvm/BinaryFormat/ELF.h) marks "a", but the sm_60 cubin inside CUDA 13.0's own
# libcupti.so has 0x800 set too (e_flags 0x3c0d3c), so the bit is only read as "a" from SM 90 on,
# where arch-specific targets exist; not re-checked against a real CUDA 12 sm_90a cubin.
_CUBIN_V7_ACCELERATORS: Final = 0x800


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

    format: str  # "elf", "fatbin" or "cubin"
    size: int
    entries: tuple[FatbinEntry, ...] = ()
    containers: tuple[Container, ...] = ()
    bytes_read: int = 0
    notes: tuple[str, ...] = ()

    def _pool(self) -> list[FatbinEntry]:
        loadable = [e for e in self.entries if e.loadable]
        return loadable if loadable else list(self.entries)

    def _names(self, kind: int) -> tuple[str, ...]:
        found = {(e.sm, e.suffix, e.name) for e in self._pool() if e.kind == kind and e.name}
        return tuple(name for _, _, name in sorted(found))

    @property
    def sass(self) -> tuple[str, ...]:
        """Distinct SASS targets, ``sm_75`` … ``sm_100a``, sorted by SM.

        ``__nv_relfatbin`` copies count only when a file has nothing else (an ``-rdc`` object).
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
    """List the GPU code in ``fileobj``: a host ELF (``.so``/``.o``), a bare fatbin, or a cubin.

    ``size`` is the file's length when the caller knows it (a zip member); otherwise it is
    found by seeking to the end.  ``scan_rodata``: ``None`` (default) scans ``.rodata`` only in
    an ELF without fatbin sections (libcupti and AOTInductor models keep their kernels there;
    libcurand's 20 MB of .rodata tables would otherwise cost more than its 150 entry headers);
    ``True`` always, ``False`` never.  Raises ``InvalidBinary`` for anything else or anything
    malformed; a host ELF without device code gives an empty listing.
    """
    reader = _Reader(fileobj, size, limits)
    if reader.size < 4:
        raise InvalidBinary(f"file too short to be a binary ({reader.size} bytes)", hint=_HINT)
    magic = reader.read_at(0, 4)
    if magic == _MAGIC_BYTES:
        walker = _Walker(reader, section="", strict=False)
        walker.walk(0, reader.size)
        if not walker.containers:
            raise InvalidBinary("truncated fatbin: no complete container", hint=_HINT)
        return reader.listing("fatbin", walker.entries, walker.containers, walker.notes)
    if magic != _ELF_MAGIC:
        raise InvalidBinary("not an ELF file, fatbin or cubin", hint=_HINT)
    header = _read_elf_header(reader)
    if header.machine == _EM_CUDA:
        if header.ph_end > reader.size:
            raise InvalidBinary("truncated cubin: its program headers lie past the end of the file", hint=_HINT)
        _read_sections(reader, header, whole=True)
        return reader.listing("cubin", (_cubin_entry(header, reader.size),), (), ())
    entries: list[FatbinEntry] = []
    containers: list[Container] = []
    notes: list[str] = []
    scan_budget = [limits.max_scan_bytes]
    sections = _read_sections(reader, header)
    if scan_rodata is None:
        scan_rodata = not any(s.name in FATBIN_SECTIONS and s.size for s in sections)
    for section in sections:
        if section.name in FATBIN_SECTIONS:
            strict = False
        elif scan_rodata and section.name in SCANNED_SECTIONS:
            strict = True
        else:
            continue
        walker = _Walker(reader, section=section.name, strict=strict, scan_budget=scan_budget)
        walker.walk(section.offset, section.offset + section.size)
        entries += walker.entries
        containers += walker.containers
        notes += walker.notes
    return reader.listing("elf", entries, containers, notes)


class _Reader:
    """Positioned reads with a byte budget; turns short reads and OS errors into ``InvalidBinary``."""

    def __init__(self, fileobj: SeekableReader, size: int | None, limits: Limits) -> None:
        self.file = fileobj
        self.limits = limits
        self.bytes_read = 0
        try:
            self.size = fileobj.seek(0, 2) if size is None else size
        except (OSError, EOFError) as exc:
            raise InvalidBinary(f"cannot seek in file: {exc}", hint=_HINT) from exc

    def read_at(self, offset: int, count: int) -> bytes:
        if offset < 0 or count < 0 or offset + count > self.size:
            raise InvalidBinary(
                f"truncated: needs bytes {offset:#x}..{offset + count:#x}, file has {self.size:#x}", hint=_HINT
            )
        if self.bytes_read + count > self.limits.max_read_bytes:
            raise InvalidBinary(f"read budget of {self.limits.max_read_bytes} bytes exhausted", hint=_HINT)
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
            raise InvalidBinary(f"read failed at {offset:#x}: {exc}", hint=_HINT) from exc
        if remaining:
            raise InvalidBinary(f"truncated: file ends before {offset + count:#x}", hint=_HINT)
        return b"".join(chunks)

    def listing(
        self, fmt: str, entries: Sequence[FatbinEntry], containers: Sequence[Container], notes: Sequence[str]
    ) -> FatbinListing:
        return FatbinListing(
            format=fmt, size=self.size, entries=tuple(entries), containers=tuple(containers),
            bytes_read=self.bytes_read, notes=tuple(notes),
        )


@dataclass(frozen=True, slots=True)
class _ElfHeader:
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
class _Section:
    name: str
    type: int
    offset: int
    size: int


def _read_elf_header(reader: _Reader) -> _ElfHeader:
    raw = reader.read_at(0, min(_EHDR.size, reader.size))
    if len(raw) >= 6 and (raw[4] != 2 or raw[5] != 1):
        raise InvalidBinary("only 64-bit little-endian ELF is supported (x86_64, aarch64)", hint=_HINT)
    if len(raw) < _EHDR.size:
        raise InvalidBinary("truncated ELF header", hint=_HINT)
    return _parse_elf_header(raw)


def _parse_elf_header(raw: bytes) -> _ElfHeader:
    ident, etype, machine, _ver, _entry, phoff, shoff, flags, ehsize, phentsize, phnum, shentsize, shnum, shstrndx = (
        _EHDR.unpack(raw)
    )
    ph_end = phoff + phentsize * phnum
    return _ElfHeader(etype, machine, ehsize, ident[8], flags, shoff, shentsize, shnum, shstrndx, ph_end)


def _read_sections(reader: _Reader, header: _ElfHeader, *, whole: bool = False) -> list[_Section]:
    """The section table.  A fatbin or scanned section past the end of the file is an error
    (every section when ``whole``: a truncated cubin)."""
    if header.shoff == 0:
        return []  # no section table (a stripped-to-the-bone object); nothing to list
    if header.shentsize != _SHDR.size:
        raise InvalidBinary(f"unexpected ELF section header size {header.shentsize}", hint=_HINT)
    first = _SHDR.unpack(reader.read_at(header.shoff, _SHDR.size))
    count = header.shnum or first[4]  # e_shnum 0: the real count is in shdr[0].sh_size
    strndx = first[6] if header.shstrndx == 0xFFFF else header.shstrndx  # SHN_XINDEX
    if count > reader.limits.max_sections:
        raise InvalidBinary(f"ELF claims {count} sections (limit {reader.limits.max_sections})", hint=_HINT)
    table = reader.read_at(header.shoff, count * _SHDR.size)
    raw = [_SHDR.unpack_from(table, i * _SHDR.size) for i in range(count)]
    if not raw:
        return []
    if strndx >= count:
        raise InvalidBinary(f"section-name table index {strndx} out of range", hint=_HINT)
    str_off, str_size = raw[strndx][4], raw[strndx][5]
    if str_size > reader.limits.max_shstrtab:
        raise InvalidBinary(f"section-name table of {str_size} bytes is implausible", hint=_HINT)
    names = reader.read_at(str_off, str_size)
    sections = []
    for sh_name, sh_type, _flags, _addr, sh_offset, sh_size, *_ in raw:
        if sh_name >= max(len(names), 1) and sh_name != 0:
            raise InvalidBinary(f"section name offset {sh_name} outside the name table", hint=_HINT)
        end = names.find(b"\0", sh_name)
        name = names[sh_name : end if end >= 0 else len(names)].decode("latin-1")
        if sh_type != _SHT_NOBITS and sh_offset + sh_size > reader.size and (
            whole or name in FATBIN_SECTIONS or name in SCANNED_SECTIONS
        ):
            raise InvalidBinary(f"section {name} extends past the end of the file", hint=_HINT)
        sections.append(_Section(name, sh_type, sh_offset, 0 if sh_type == _SHT_NOBITS else sh_size))
    return sections


def _cubin_entry(header: _ElfHeader, size: int) -> FatbinEntry:
    if header.abi_version >= 8:
        sm, suffix, known = (header.flags >> 8) & 0xFF, "", False
    else:
        sm, known = header.flags & 0xFF, True
        suffix = "a" if sm >= 90 and header.flags & _CUBIN_V7_ACCELERATORS else ""
    if not 10 <= sm <= 255:
        raise InvalidBinary(f"cubin names an implausible SM {sm}", hint=_HINT)
    return FatbinEntry(
        section="", offset=0, kind=KIND_CUBIN, sm=sm, suffix=suffix, header_size=0,
        payload_size=size, code_version=(header.abi_version, 0), suffix_known=known,
    )


class _Walker:
    """Walks containers in one byte range.

    ``strict`` is for ranges that are not fatbin sections (``.rodata``): a magic number there
    may be chance, so a candidate that fails any check is skipped instead of being an error.
    """

    def __init__(self, reader: _Reader, *, section: str, strict: bool, scan_budget: list[int] | None = None) -> None:
        self.reader = reader
        self.section = section
        self.strict = strict
        self.scan_budget = scan_budget if scan_budget is not None else [reader.limits.max_scan_bytes]
        self.entries: list[FatbinEntry] = []
        self.containers: list[Container] = []
        self.notes: list[str] = []

    def walk(self, start: int, end: int) -> None:
        pos = start if not self.strict else self._find_magic(start, end)
        while pos is not None and pos + _CONTAINER.size <= end:
            head = self.reader.read_at(pos, _CONTAINER.size)
            if self.strict and head.startswith(_CUBIN_IDENT):
                self._embedded_cubin(pos, end)
                pos = self._find_magic(pos + 1, end)
                continue
            magic, version, hsize, fat_size = _CONTAINER.unpack(head)
            if magic != FATBIN_MAGIC:
                pos = self._find_magic(pos + 1, end)
                continue
            stop = pos + hsize + fat_size
            problem = self._container_problem(version, hsize, fat_size, stop, end)
            entries = None if problem else self._entries(pos + hsize, stop)
            if entries is None:
                if not self.strict:
                    raise InvalidBinary(
                        f"bad fatbin container at {pos:#x} in {self.section or 'file'}: {problem or 'bad entry'}",
                        hint=_HINT,
                    )
                pos = self._find_magic(pos + 1, end)
                continue
            if len(self.containers) + 1 > self.reader.limits.max_containers:
                raise InvalidBinary(f"more than {self.reader.limits.max_containers} fatbin containers", hint=_HINT)
            self.containers.append(Container(section=self.section, offset=pos, size=stop - pos, entries=len(entries)))
            self.entries += entries
            pos = stop

    def _embedded_cubin(self, pos: int, end: int) -> None:
        """A whole cubin stored as data (AOTInductor's ``embed_kernel_binary`` puts them in .rodata)."""
        if pos + _EHDR.size > end:
            return
        header = _parse_elf_header(self.reader.read_at(pos, _EHDR.size))
        if header.machine != _EM_CUDA or header.ehsize != _EHDR.size or header.type not in (1, 2):
            return
        try:
            entry = _cubin_entry(header, 0)
        except InvalidBinary:
            return
        self.entries.append(replace(entry, section=self.section, offset=pos))
        if len(self.entries) > self.reader.limits.max_entries:
            raise InvalidBinary(f"more than {self.reader.limits.max_entries} fatbin entries", hint=_HINT)

    def _container_problem(self, version: int, hsize: int, fat_size: int, stop: int, end: int) -> str | None:
        if version != 1:
            return f"version {version}"
        if hsize < _CONTAINER.size or hsize % 8 or (self.strict and hsize != _CONTAINER.size):
            return f"header size {hsize}"
        if stop > end:
            return f"size {fat_size} runs past the section end"
        if self.strict and (fat_size == 0 or fat_size % 8):
            return f"size {fat_size}"
        return None

    def _entries(self, pos: int, stop: int) -> list[FatbinEntry] | None:
        """The entries of one container, or ``None`` when one fails validation."""
        found: list[FatbinEntry] = []
        while pos < stop:
            if pos + _ENTRY.size > stop:
                return self._reject(f"entry header at {pos:#x} runs past its container")
            fields = _ENTRY.unpack(self.reader.read_at(pos, _ENTRY.size))
            kind, version, hsize, payload, csize, _opt, minor, major, sm, _id_off, _id_len, flags, _res, usize = fields
            if hsize < _ENTRY.size or pos + hsize + payload > stop:
                return self._reject(f"entry at {pos:#x} has sizes {hsize}+{payload} past its container")
            if self.strict and (version != _ENTRY_VERSION or hsize % 8 or kind not in _KNOWN_KINDS):
                return None
            if kind in (KIND_PTX, KIND_CUBIN, KIND_LTO_IR) and not 10 <= sm <= 255:
                return self._reject(f"entry at {pos:#x} names an implausible SM {sm}")
            suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
            found.append(FatbinEntry(
                section=self.section, offset=pos, kind=kind, sm=sm, suffix=suffix, flags=flags, header_size=hsize,
                payload_size=payload, compressed_size=csize, uncompressed_size=usize, code_version=(major, minor),
            ))
            if len(self.entries) + len(found) > self.reader.limits.max_entries:
                raise InvalidBinary(f"more than {self.reader.limits.max_entries} fatbin entries", hint=_HINT)
            pos += hsize + payload
        return found

    def _reject(self, problem: str) -> list[FatbinEntry] | None:
        """``None`` (skip the candidate) in a scanned section; an error in a fatbin section."""
        if self.strict:
            return None
        raise InvalidBinary(f"bad fatbin entry in {self.section or 'file'}: {problem}", hint=_HINT)

    def _find_magic(self, pos: int, end: int) -> int | None:
        """The next container magic at or after ``pos``, reading chunk by chunk within the scan budget."""
        chunk = self.reader.limits.chunk_size
        while pos + _CONTAINER.size <= end:
            if self.scan_budget[0] <= 0:
                self.notes.append(f"stopped scanning {self.section or 'file'} for fatbins at {pos:#x} "
                                  f"(scan limit {self.reader.limits.max_scan_bytes} bytes)")
                return None
            count = min(chunk, end - pos, self.scan_budget[0])
            self.scan_budget[0] -= count
            data = self.reader.read_at(pos, count)
            hits = [h for h in (data.find(_MAGIC_BYTES), data.find(_CUBIN_IDENT) if self.strict else -1) if h >= 0]
            if hits:
                return pos + min(hits)
            pos += max(count - (len(_CUBIN_IDENT) - 1), 1)
        return None
