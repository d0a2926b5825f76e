"""fatbin.read_fatbin_archs (through staticlib.read_code, which adds static libraries) on nvcc-built fixtures,
synthetic files, and mutated/truncated input."""

from __future__ import annotations

import bisect
import io
import os
import re
import shutil
import struct
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudaresolve.binaries.elf import Limits
from cudaresolve.binaries.fatbin import (
    FLAG_ARCH_SPECIFIC,
    FLAG_FAMILY_SPECIFIC,
    FatbinListing,
    read_fatbin_archs,
)
from cudaresolve.binaries.staticlib import read_code
from cudaresolve.core.archs import Arch, ComputeCapability
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.catalogue import format_text as words

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
ROOT = Path(__file__).parent.parent
MANIFEST: list[dict[str, Any]] = tomllib.loads((FIXTURES / "manifest.toml").read_text())["fixture"]
BINARIES = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".so", ".o", ".a", ".pyd", ".cubin", ".fatbin"))


class CountingReader:
    """A reader that counts every byte handed out, to check the parser's own accounting and limits."""

    def __init__(self, data: bytes | SparseImage) -> None:
        self._data = data
        self.pos = 0
        self.bytes = 0
        self.calls = 0

    def seek(self, offset: int, whence: int = 0, /) -> int:
        size = len(self._data)
        self.pos = {0: 0, 1: self.pos, 2: size}[whence] + offset
        return self.pos

    def read(self, size: int = -1, /) -> bytes:
        end = len(self._data) if size < 0 else min(self.pos + size, len(self._data))
        chunk = self._data[self.pos:end] if self.pos < end else b""
        self.pos += len(chunk)
        self.bytes += len(chunk)
        self.calls += 1
        return bytes(chunk)


class SparseImage:
    """A large virtual file: a few written pieces, zeros elsewhere, nothing allocated for the gaps."""

    def __init__(self, size: int, pieces: dict[int, bytes]) -> None:
        self.size = size
        self.pieces = sorted(pieces.items())
        self.starts = [offset for offset, _ in self.pieces]

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key: slice) -> bytes:
        start, stop = key.start, key.stop
        out = bytearray(stop - start)
        first = max(bisect.bisect_right(self.starts, start) - 1, 0)
        for offset, data in self.pieces[first:bisect.bisect_left(self.starts, stop)]:
            lo, hi = max(start, offset), min(stop, offset + len(data))
            if lo < hi:
                out[lo - start:hi - start] = data[lo - offset:hi - offset]
        return bytes(out)


# --- builders for synthetic files (ELF64 gABI; fatbin layout as in binaries/fatbin.py) -----

def entry_header(kind: int, sm: int, *, flags: int = 0x11, payload: int = 0, hsize: int = 64,
                 code: tuple[int, int] = (1, 8), usize: int = 0, version: int = 0x0101) -> bytes:
    head = struct.pack("<HHIQIIHHIIIQQQ", kind, version, hsize, payload, 0, 0, code[1], code[0], sm, 0, 0,
                       flags, 0, usize)
    return head + b"\0" * (hsize - 64)


def container(entries: list[tuple[bytes, int]]) -> bytes:
    """Entries as (header, payload size): the size is written into the header, the payload is zeros."""
    body = b"".join(h[:8] + struct.pack("<Q", n) + h[16:] + b"\0" * n for h, n in entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf(sections: list[tuple[str, bytes]], *, machine: int = 62) -> bytes:
    """A minimal ELF64 LE with the given PROGBITS sections, a .shstrtab, and the table at the end."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n, _ in sections) + b".shstrtab\0"
    body = bytearray(b"\0" * 64)
    placed = []
    for name, data in sections:
        while len(body) % 8:
            body.append(0)
        placed.append((name, len(body), len(data)))
        body += data
    str_off = len(body)
    body += names
    while len(body) % 8:
        body.append(0)
    shoff = len(body)
    table = struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    name_pos = 1
    for name, off, size in placed:
        table += struct.pack("<IIQQQQIIQQ", name_pos, 1, 2, off, off, size, 0, 0, 8, 0)
        name_pos += len(name) + 1
    table += struct.pack("<IIQQQQIIQQ", name_pos, 3, 0, 0, str_off, len(names), 0, 0, 1, 0)
    count = len(placed) + 2
    header = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack(
        "<HHIQQQIHHHHHH", 3, machine, 1, 0, 0, shoff, 0, 64, 0, 0, 64, count, count - 1)
    return header + bytes(body[64:]) + table


def listing_of(name: str, **kwargs: Any) -> FatbinListing:
    with open(FIXTURES / name, "rb", buffering=0) as raw:
        return read_code(raw, **kwargs)


# --- the nvcc fixtures -------------------------------------------------------------------

def test_fixtures_are_small_and_all_in_the_manifest() -> None:
    assert sorted(f["file"] for f in MANIFEST) == BINARIES
    assert sum((FIXTURES / name).stat().st_size for name in BINARIES) < 1024 * 1024


@pytest.mark.parametrize("fixture", MANIFEST, ids=[f["file"] for f in MANIFEST])
def test_fixture_lists_what_its_nvcc_command_asked_for(fixture: dict[str, Any]) -> None:
    listing = listing_of(fixture["file"])
    assert (listing.sass, listing.ptx, listing.lto) == (
        tuple(fixture["sass"]), tuple(fixture["ptx"]), tuple(fixture["lto"]))


@pytest.mark.parametrize("fixture", [f for f in MANIFEST if "compression" in f], ids=lambda f: f["file"])
def test_fixture_compression_matches_the_compress_mode(fixture: dict[str, Any]) -> None:
    listing = listing_of(fixture["file"])
    got = {e.name: e.compression for e in listing.entries if e.name in fixture["compression"]}
    assert got == fixture["compression"]
    for entry in listing.entries:
        assert entry.compressed == (entry.compression != "none")


def test_arch_specific_and_family_flags_are_the_researched_bits() -> None:
    multi = {e.name: e for e in listing_of("multi.so").entries}
    assert multi["sm_90a"].flags & FLAG_ARCH_SPECIFIC and not multi["sm_90a"].flags & FLAG_FAMILY_SPECIFIC
    assert multi["sm_100a"].flags & FLAG_ARCH_SPECIFIC
    assert not multi["sm_86"].flags & (FLAG_ARCH_SPECIFIC | FLAG_FAMILY_SPECIFIC)
    family = {e.name: e for e in listing_of("family.so").entries}
    assert family["sm_100f"].flags & FLAG_FAMILY_SPECIFIC and not family["sm_100f"].flags & FLAG_ARCH_SPECIFIC
    assert family["compute_120f"].flags & FLAG_FAMILY_SPECIFIC


def test_entries_carry_arch_and_ptx_isa() -> None:
    listing = listing_of("multi.so")
    by_name = {e.name: e for e in listing.entries}
    assert by_name["sm_90a"].arch == Arch(ComputeCapability(9, 0), "a")
    assert by_name["sm_100a"].arch == Arch(ComputeCapability(10, 0), "a")
    assert by_name["compute_90"].arch == Arch(ComputeCapability(9, 0), ptx=True)
    assert by_name["compute_90"].ptx_isa == "9.0"  # nvcc 13.0 writes PTX ISA 9.0
    assert by_name["sm_86"].ptx_isa is None
    assert listing.ptx_isa == {"compute_90": "9.0"}
    assert by_name["sm_100a"].header_size == 112  # sm_100+ cubins have an extended header
    assert listing.sections == (".nv_fatbin",) and listing.format == "elf"


def test_rdc_shared_object_lists_only_what_the_runtime_loads() -> None:
    listing = listing_of("rdc.so")
    assert listing.sections == (".nv_fatbin", "__nv_relfatbin")
    relocatable = sorted(e.name or "" for e in listing.entries if not e.loadable)
    assert relocatable == ["compute_90", "sm_86"]
    assert (listing.sass, listing.ptx, listing.ptx_isa) == (("sm_86",), (), {})


def test_rdc_object_falls_back_to_relocatable_entries() -> None:
    listing = listing_of("rdc.o")
    assert listing.sections == ("__nv_relfatbin",)
    assert (listing.sass, listing.ptx) == (("sm_86",), ("compute_90",))


def test_lto_entries_are_kind_8_and_not_archs() -> None:
    entries = listing_of("lto.o").entries
    assert [(e.kind, e.kind_name, e.name, e.arch) for e in entries] == [
        (8, "lto", "lto_90", None), (8, "lto", "lto_100a", None)]


def test_bare_fatbin_and_cubin() -> None:
    fatbin = listing_of("kernel.fatbin")
    assert (fatbin.format, fatbin.sections, len(fatbin.containers)) == ("fatbin", ("",), 1)
    cubin = listing_of("sm_90a.cubin")
    (entry,) = cubin.entries
    assert (cubin.format, entry.name, entry.suffix_known, entry.code_version) == ("cubin", "sm_90a", True, (8, 0))


def test_rodata_scan_finds_embedded_fatbin_and_cubin() -> None:
    listing = listing_of("embedded.so")
    assert listing.sections == (".rodata",)
    # the stored cubin's own toolkit note names sm_90a (its e_flags cannot): it was listed as sm_90 before
    assert [(e.name, e.header_size, e.suffix_known) for e in listing.entries if e.header_size == 0] == [
        ("sm_90a", 0, True)]
    assert listing_of("embedded.so", scan_rodata=False).entries == ()


def test_rodata_is_scanned_by_default_only_without_fatbin_sections() -> None:
    embedded = container([(entry_header(2, 90), 8)])
    image = elf([(".rodata", embedded), (".nv_fatbin", container([(entry_header(2, 80), 8)]))])
    assert read_fatbin_archs(io.BytesIO(image)).sass == ("sm_80",)
    assert read_fatbin_archs(io.BytesIO(image), scan_rodata=True).sass == ("sm_80", "sm_90")
    rodata_only = elf([(".rodata", embedded)])
    assert read_fatbin_archs(io.BytesIO(rodata_only)).sass == ("sm_90",)


def test_host_only_library_is_an_empty_listing() -> None:
    listing = listing_of("nogpu.so")
    assert (listing.format, listing.entries, listing.containers, listing.notes) == ("elf", (), (), ())


def test_bytes_read_is_what_the_reader_handed_out() -> None:
    data = (FIXTURES / "multi.so").read_bytes()
    reader = CountingReader(data)
    listing = read_fatbin_archs(reader)
    assert listing.bytes_read == reader.bytes
    assert listing.size == len(data)


def _nvcc_release() -> tuple[int, int]:
    """nvcc's ``release X.Y``, or (0, 0) without nvcc and the host tools the script also needs."""
    if not all(shutil.which(tool) for tool in ("nvcc", "gcc", "ld", "objcopy")):
        return (0, 0)
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"release (\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2])) if match else (0, 0)


@pytest.mark.skipif(_nvcc_release() < (12, 9), reason="needs nvcc 12.9+ (family 'f' targets), gcc, ld, objcopy")
def test_rebuilt_fixtures_match_their_manifest(tmp_path: Path) -> None:
    subprocess.run([str(ROOT / "tools" / "build_cuda_fixtures.sh"), str(tmp_path)], check=True,
                   capture_output=True, timeout=600)
    rebuilt = tomllib.loads((tmp_path / "manifest.toml").read_text())["fixture"]
    assert [f["command"] for f in rebuilt] == [f["command"] for f in MANIFEST]
    for fixture in rebuilt:
        with open(tmp_path / fixture["file"], "rb") as raw:
            listing = read_code(raw)
        assert (listing.sass, listing.ptx, listing.lto) == (
            tuple(fixture["sass"]), tuple(fixture["ptx"]), tuple(fixture["lto"])), fixture["file"]


# --- synthetic files ---------------------------------------------------------------------

def test_synthetic_elf_with_every_kind_and_flag() -> None:
    fat = container([
        (entry_header(2, 90, flags=0x100011), 8),
        (entry_header(2, 103, flags=0x200011, hsize=112), 16),
        (entry_header(1, 120, flags=0x8011, code=(9, 1), usize=40, hsize=80), 8),
        (entry_header(8, 100, flags=0x118011, hsize=120), 8),
        (entry_header(0x10, 100, hsize=64), 8),
    ])
    listing = read_fatbin_archs(io.BytesIO(elf([(".nv_fatbin", fat)])))
    assert (listing.sass, listing.ptx, listing.lto) == (("sm_90a", "sm_103f"), ("compute_120",), ("lto_100a",))
    assert [e.kind_name for e in listing.entries] == ["sass", "sass", "ptx", "lto", "kind-16"]
    assert listing.ptx_isa == {"compute_120": "9.1"}
    assert listing.compressed == 2


def test_padding_between_containers_is_skipped() -> None:
    one = container([(entry_header(2, 80), 8)])
    two = container([(entry_header(2, 86), 8)])
    listing = read_fatbin_archs(io.BytesIO(elf([(".nv_fatbin", one + b"\0" * 40 + two + b"\0" * 24)])))
    assert [c.offset - listing.containers[0].offset for c in listing.containers] == [0, len(one) + 40]
    assert listing.sass == ("sm_80", "sm_86")


def test_a_large_library_is_listed_from_its_headers_only() -> None:
    """A 1.03 GiB virtual file: 2100 containers of 4 cubins with 128 KiB payloads each."""
    payload = 128 * 1024
    sms = (75, 80, 90, 100)
    entries = [(entry_header(2, sm, payload=payload, flags=0x100011 if sm >= 90 else 0x11), payload) for sm in sms]
    one = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, sum(64 + payload for _ in sms))
    heads = [h for h, _ in entries]
    size_one = 16 + len(sms) * (64 + payload)
    count = 2100
    start = 4096
    pieces: dict[int, bytes] = {}
    for c in range(count):
        base = start + c * size_one
        pieces[base] = one
        for i, head in enumerate(heads):
            pieces[base + 16 + i * (64 + payload)] = head
    section_size = count * size_one
    # ELF header and section table placed around the section, built with the same helper
    table_elf = elf([(".nv_fatbin", b"")])
    header = bytearray(table_elf[:64])
    tail_start = start + section_size
    names = b"\0.nv_fatbin\0.shstrtab\0"
    shoff = tail_start + len(names) + (-(tail_start + len(names)) % 8)
    table = struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    table += struct.pack("<IIQQQQIIQQ", 1, 1, 2, start, start, section_size, 0, 0, 8, 0)
    table += struct.pack("<IIQQQQIIQQ", 12, 3, 0, 0, tail_start, len(names), 0, 0, 1, 0)
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HH", header, 0x3C, 3, 2)
    pieces[0] = bytes(header)
    pieces[tail_start] = names
    pieces[shoff] = table
    image = SparseImage(shoff + len(table), pieces)
    assert len(image) > 1024**3
    reader = CountingReader(image)
    listing = read_fatbin_archs(reader)
    assert listing.sass == ("sm_75", "sm_80", "sm_90a", "sm_100a")
    assert (len(listing.containers), len(listing.entries)) == (count, count * len(sms))
    assert reader.bytes == listing.bytes_read == count * (16 + 64 * len(sms)) + 4 + 64 + 64 + 3 * 64 + len(names)
    assert reader.bytes < len(image) / 1000


# --- limits and malformed input ----------------------------------------------------------

def test_read_budget_is_never_exceeded() -> None:
    data = (FIXTURES / "multi.so").read_bytes()
    reader = CountingReader(data)
    with pytest.raises(InvalidBinary, match="read budget"):
        read_fatbin_archs(reader, limits=Limits(max_read_bytes=1000))
    assert reader.bytes <= 1000


def test_too_many_containers_and_sections_are_errors() -> None:
    fat = b"".join(container([(entry_header(2, 80), 8)]) for _ in range(5))
    with pytest.raises(InvalidBinary, match="more than 4 fatbin containers"):
        read_fatbin_archs(io.BytesIO(elf([(".nv_fatbin", fat)])), limits=Limits(max_containers=4))
    with pytest.raises(InvalidBinary, match="more than 4 fatbin entries"):
        read_fatbin_archs(io.BytesIO(elf([(".nv_fatbin", fat)])), limits=Limits(max_entries=4))
    with pytest.raises(InvalidBinary, match="claims 3 sections"):
        read_fatbin_archs(io.BytesIO(elf([(".nv_fatbin", fat)])), limits=Limits(max_sections=2))


def test_rodata_scan_stops_at_its_limit_with_a_note() -> None:
    rodata = b"\1" * 4096 + container([(entry_header(2, 80), 8)])
    listing = read_fatbin_archs(io.BytesIO(elf([(".rodata", rodata)])), limits=Limits(max_scan_bytes=1024,
                                                                                       chunk_size=512))
    assert listing.entries == ()
    assert len(listing.notes) == 1 and words(listing.notes[0]).startswith("stopped scanning .rodata for fatbins at 0x")
    found = read_fatbin_archs(io.BytesIO(elf([(".rodata", rodata)])), limits=Limits(chunk_size=512))
    assert found.sass == ("sm_80",)


def test_chance_magic_in_rodata_is_not_an_error() -> None:
    junk = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 1 << 40) + b"\x7fELF\x02\x01\x01" + b"\xff" * 64
    listing = read_fatbin_archs(io.BytesIO(elf([(".rodata", junk)])))
    assert listing.entries == () and listing.notes == ()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "too short"),
        (b"MZ\x90\x00" + b"\0" * 60, "not a PE image"),  # a Windows module is read since pe.py
        (b"\x7fELF\x01\x01\x01" + b"\0" * 60, "only 64-bit little-endian"),
        (b"\x7fELF\x02\x01\x01" + b"\0" * 20, "truncated ELF header"),
        (elf([(".nv_fatbin", container([(entry_header(2, 80, hsize=32), 8)]))]), "bad fatbin"),
        (elf([(".nv_fatbin", container([(entry_header(2, 3), 8)]))]), "implausible SM 3"),
        (elf([(".nv_fatbin", struct.pack("<IHHQ", 0xBA55ED50, 2, 16, 0))]), "version 2"),
        (struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 72) + entry_header(2, 80, payload=1 << 20) + b"\0" * 8,
         "past its container"),
    ],
    ids=["empty", "pe", "elf32", "short-elf", "small-entry-header", "sm-3", "container-version", "payload"],
)
def test_malformed_input_is_a_clean_error(data: bytes, message: str) -> None:
    with pytest.raises(InvalidBinary, match=message) as info:
        read_fatbin_archs(io.BytesIO(data))
    assert info.value.code == "invalid-binary" and info.value.hint


def test_section_past_end_of_file_is_an_error() -> None:
    image = bytearray(elf([(".nv_fatbin", container([(entry_header(2, 80), 8)]))]))
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    struct.pack_into("<Q", image, shoff + 64 + 32, 1 << 30)  # sh_size of .nv_fatbin
    with pytest.raises(InvalidBinary, match="extends past the end"):
        read_fatbin_archs(io.BytesIO(bytes(image)))


def test_os_errors_become_invalid_binary() -> None:
    class Failing(io.BytesIO):
        def read(self, size: int | None = -1, /) -> bytes:
            raise OSError(5, "Input/output error")

    with pytest.raises(InvalidBinary, match="read failed at 0x0"):
        read_fatbin_archs(Failing(b"\0" * 100))


# --- property tests: mutated and truncated fixtures -------------------------------------

_SMALL = Limits(max_read_bytes=2 * 1024 * 1024, max_scan_bytes=512 * 1024, max_containers=64, max_entries=256,
                chunk_size=4096)
_SAMPLES = {name: (FIXTURES / name).read_bytes() for name in BINARIES}


def _parse_bounded(data: bytes) -> None:
    reader = CountingReader(data)
    try:
        listing = read_code(reader, limits=_SMALL)
    except InvalidBinary:
        pass
    else:
        assert listing.bytes_read == reader.bytes
        assert len(listing.entries) <= _SMALL.max_entries
    assert reader.bytes <= _SMALL.max_read_bytes


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(BINARIES), data=st.data())
def test_mutated_fixtures_only_raise_invalid_binary(name: str, data: st.DataObject) -> None:
    image = bytearray(_SAMPLES[name])
    edits = data.draw(st.lists(st.tuples(st.integers(0, len(image) - 1), st.integers(0, 255)), min_size=1,
                               max_size=16))
    for pos, value in edits:
        image[pos] = value
    _parse_bounded(bytes(image))


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(BINARIES), data=st.data())
def test_truncated_fixtures_only_raise_invalid_binary(name: str, data: st.DataObject) -> None:
    image = _SAMPLES[name]
    cut = data.draw(st.integers(0, len(image) - 1))
    if name.endswith(".a") and cut == 8:
        return  # "!<arch>\n" alone is an empty static library, a well-formed one
    with pytest.raises(InvalidBinary):
        read_code(CountingReader(image[:cut]), limits=_SMALL)


@pytest.mark.parametrize("name", BINARIES)
def test_every_truncation_of_every_fixture_is_an_error(name: str) -> None:
    image = _SAMPLES[name]
    survived = []
    for cut in range(len(image)):
        try:
            read_code(CountingReader(image[:cut]), limits=_SMALL)
        except InvalidBinary:
            continue
        survived.append(cut)
    # "!<arch>\n" alone is an empty static library; any other cut of one is found by its symbol index
    assert survived == ([8] if name.endswith(".a") else [])


@settings(max_examples=300, deadline=None)
@given(
    fields=st.lists(st.tuples(st.integers(0, 0x20), st.integers(0, 0xFFFF), st.integers(0, (1 << 32) - 1),
                              st.integers(0, 1 << 40), st.integers(0, 1 << 22), st.integers(0, 300)),
                    min_size=1, max_size=6),
    fat_size=st.one_of(st.none(), st.integers(0, 1 << 62)),
    where=st.sampled_from([".nv_fatbin", "__nv_relfatbin", ".rodata", ""]),
)
def test_hostile_headers_only_raise_invalid_binary(
    fields: list[tuple[int, int, int, int, int, int]], fat_size: int | None, where: str
) -> None:
    body = b"".join(
        struct.pack("<HHIQIIHHIIIQQQ", kind, version, hsize, payload, 0, 0, 0, 9, sm, 0, 0, flags, 0, 0)
        for kind, version, hsize, payload, flags, sm in fields
    )
    fat = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body) if fat_size is None else fat_size) + body
    _parse_bounded(fat if not where else elf([(where, fat)]))


@settings(max_examples=200, deadline=None)
@given(blob=st.binary(max_size=512),
       prefix=st.sampled_from([b"", b"\x7fELF\x02\x01\x01", b"\x50\xed\x55\xba", b"!<arch>\n"]))
def test_random_bytes_only_raise_invalid_binary(blob: bytes, prefix: bytes) -> None:
    _parse_bounded(prefix + blob)


def test_fixture_files_are_not_modified_by_reading() -> None:
    before = {name: os.stat(FIXTURES / name).st_mtime_ns for name in BINARIES}
    for name in BINARIES:
        listing_of(name)
    assert {name: os.stat(FIXTURES / name).st_mtime_ns for name in BINARIES} == before


def _damaged(data: bytes, container: int, *, fat_size: int | None = None, magic: bytes | None = None) -> io.BytesIO:
    """``data`` with the container header at ``container`` given another fat size or magic number."""
    out = bytearray(data)
    if fat_size is not None:
        out[container + 8 : container + 16] = struct.pack("<Q", fat_size)
    if magic is not None:
        out[container : container + 4] = magic
    return io.BytesIO(bytes(out))


def test_a_damaged_container_is_said_not_listed_as_whole() -> None:
    """Found by this stop's binary audit: a container whose fat size was cut dropped its last entries from the
    listing silently (exit 0), and one whose magic number was broken made the library read as no GPU code at
    all; cuobjdump says 'Invalid fatbin header' for both."""
    data = (FIXTURES / "kernel.fatbin").read_bytes()
    whole = read_fatbin_archs(io.BytesIO(data))
    assert not whole.notes and (whole.sass, whole.ptx) == (("sm_75",), ("compute_120",))
    (first, *_), size = whole.entries, struct.unpack_from("<Q", data, 8)[0]
    cut = read_fatbin_archs(_damaged(data, 0, fat_size=first.header_size + first.payload_size))
    assert len(cut.entries) == 1 and len(cut.notes) == 1  # the rest is said to be unread
    assert "damaged container" in words(cut.notes[0])
    assert size > first.header_size + first.payload_size
    elf = (FIXTURES / "multi.so").read_bytes()
    at = elf.index(struct.pack("<I", 0xBA55ED50))
    with pytest.raises(InvalidBinary, match="no fat-binary container"):
        read_fatbin_archs(_damaged(elf, at, magic=b"\x51\xed\x55\xba"))
