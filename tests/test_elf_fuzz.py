"""Property tests of the ELF reader (binaries/elf.py, through fatbin.read_fatbin_archs).

Valid files built from parts, extended section numbering included, must read back exactly;
damaged ones (any field of the header or section table set to anything) may only raise
``InvalidBinary``, and never make the reader take more bytes than its ``Limits`` allow.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudaresolve.binaries.elf import BoundedReader, Limits, read_elf_header, read_sections
from cudaresolve.binaries.fatbin import read_fatbin_archs
from cudaresolve.errors import CudaResolveError, InvalidBinary
from hostile.elf_build import EHDR, SHDR, SHT_NOBITS, SHT_PROGBITS, SHT_STRTAB, build_elf, fatbin_container

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
#: Small enough that a hostile count or size meets a cap long before memory or time would.
SMALL = Limits(
    max_read_bytes=256 * 1024,
    max_sections=600,
    max_shstrtab=32 * 1024,
    max_containers=64,
    max_entries=256,
    max_scan_bytes=64 * 1024,
    chunk_size=4096,
    max_section_name=256,
)


class CountingReader:
    """A ``BytesIO`` that counts the bytes it hands out."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)
        self.bytes_read = 0

    def read(self, size: int = -1, /) -> bytes:
        data = self._f.read(size)
        self.bytes_read += len(data)
        return data

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return self._f.seek(offset, whence)


def read_bounded(data: bytes, limits: Limits = SMALL) -> object:
    """``read_fatbin_archs`` on ``data``: its listing, or the coded error; asserts the byte budget."""
    counting = CountingReader(data)
    try:
        result: object = read_fatbin_archs(counting, limits=limits)
    except CudaResolveError as err:
        assert isinstance(err, InvalidBinary), err
        assert err.code == "invalid-binary" and "\n" not in err.message
        result = err
    assert counting.bytes_read <= limits.max_read_bytes
    return result


section_names = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=24).filter(
    lambda n: n not in (".shstrtab", ".nv_fatbin", "__nv_relfatbin", ".rodata", ".lrodata")
)
other_sections = st.lists(
    st.tuples(section_names, st.sampled_from([SHT_PROGBITS, SHT_NOBITS, SHT_STRTAB]), st.binary(max_size=40)),
    max_size=40,
)
sms = st.integers(10, 255)
suffixes = st.sampled_from(["", "a", "f"])


@FUZZ
@given(
    others=other_sections,
    fatbin_at=st.integers(0, 40),
    strtab_at=st.integers(1, 42),
    sm=sms,
    suffix=suffixes,
    extended_count=st.booleans(),
    extended_strndx=st.booleans(),
)
def test_valid_elf_reads_back_with_or_without_extended_numbering(
    others: list[tuple[str, int, bytes]],
    fatbin_at: int,
    strtab_at: int,
    sm: int,
    suffix: str,
    extended_count: bool,
    extended_strndx: bool,
) -> None:
    parts = list(others)
    parts.insert(min(fatbin_at, len(parts)), (".nv_fatbin", SHT_PROGBITS, fatbin_container(sm, suffix)))
    built = build_elf(parts, strtab_at=strtab_at, extended_count=extended_count, extended_strndx=extended_strndx)
    reader = BoundedReader(io.BytesIO(built.data), None, SMALL)
    header = read_elf_header(reader)
    assert (header.shnum == 0) == extended_count and (header.shstrndx == 0xFFFF) == extended_strndx
    got = [(s.name, s.type, s.offset, s.size) for s in read_sections(reader, header, whole=True)]
    assert got == built.sections
    listing = read_bounded(built.data)
    assert not isinstance(listing, InvalidBinary), listing
    assert listing.sass == (f"sm_{sm}{suffix}",)  # type: ignore[attr-defined]
    [container] = listing.containers  # type: ignore[attr-defined]
    assert (container.section, container.offset) == (".nv_fatbin", dict((n, o) for n, _, o, _ in got)[".nv_fatbin"])


def test_more_sections_than_the_header_can_count() -> None:
    # 0xff00 (SHN_LORESERVE) sections and more: the only case where a linker must use extended numbering
    count = 0xFF00 + 20
    parts = [(f".text.f{i}", SHT_PROGBITS, b"") for i in range(count - 3)]
    parts.append((".nv_fatbin", SHT_PROGBITS, fatbin_container(90, "a")))
    built = build_elf(parts, strtab_at=count - 1, extended_count=True, extended_strndx=True)
    assert built.strndx >= 0xFF00 and len(built.sections) == count
    wide = Limits(max_sections=70_000)
    reader = BoundedReader(io.BytesIO(built.data), None, wide)
    sections = read_sections(reader, read_elf_header(reader), whole=True)
    assert [s.name for s in sections] == [name for name, *_ in built.sections]
    assert read_fatbin_archs(io.BytesIO(built.data), limits=wide).sass == ("sm_90a",)
    with pytest.raises(InvalidBinary, match=r"ELF claims 65300 sections \(limit 10000\)"):
        read_fatbin_archs(io.BytesIO(built.data))  # the default cap still holds


# --- damaged files ------------------------------------------------------------------------------

INTERESTING = (0, 1, 7, 8, 63, 64, 65, 0xFF00, 0xFFFF, 0x10000, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1)


def _base_files() -> list[bytes]:
    files = [
        (FIXTURES / name).read_bytes()
        for name in ("multi.so", "compress-size.so", "embedded.so", "sm_90a.cubin", "lto.o", "kernel.fatbin")
    ]
    parts = [(".rodata", SHT_PROGBITS, fatbin_container(80)), (".nv_fatbin", SHT_PROGBITS, fatbin_container(90))]
    files.append(build_elf(parts, strtab_at=1, extended_count=True, extended_strndx=True).data)
    return files


BASES = _base_files()


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A base file with a few of its header or section-table fields, or any bytes, overwritten."""
    data = bytearray(draw(st.sampled_from(BASES)))
    shoff = struct.unpack_from("<Q", data, 40)[0] if data[:4] == b"\x7fELF" else 0
    table = range(shoff, len(data) - 8) if 0 < shoff < len(data) - 8 else range(0, len(data) - 8)
    for _ in range(draw(st.integers(1, 6))):
        region = draw(st.sampled_from(["header", "table", "anywhere"]))
        if region == "header":  # e_type .. e_shstrndx
            where = draw(st.sampled_from([16, 18, 20, 32, 40, 48, 52, 54, 56, 58, 60, 62]))
        elif region == "table":  # one field of one section header, section 0 included
            row = draw(st.integers(0, max((len(table) - 1) // SHDR.size, 0)))
            where = table.start + row * SHDR.size + draw(st.sampled_from([0, 4, 8, 24, 32, 40, 44]))
        else:
            where = draw(st.integers(0, len(data) - 8))
        width = draw(st.sampled_from([1, 2, 4, 8]))
        value = draw(st.one_of(st.sampled_from(INTERESTING), st.integers(0, 2**64 - 1))) % (1 << (8 * width))
        if 0 <= where <= len(data) - width:
            data[where : where + width] = value.to_bytes(width, "little")
    return bytes(data[: draw(st.sampled_from([len(data), len(data), len(data) // 2, EHDR.size, 40]))])


@settings(FUZZ, max_examples=600)
@given(data=damaged())
def test_damaged_elf_only_coded_errors_within_budget(data: bytes) -> None:
    read_bounded(data)
    read_bounded(data, Limits())


@FUZZ
@given(data=st.binary(max_size=4096).map(lambda b: b"\x7fELF\x02\x01\x01" + b))
def test_random_bytes_after_an_elf_magic(data: bytes) -> None:
    read_bounded(data)


def test_section_names_are_capped() -> None:
    # every section named by offset 0 of a name table with no NUL: each name would be the whole table
    parts = [(f"s{i}", SHT_PROGBITS, b"") for i in range(500)]
    built = bytearray(build_elf(parts, strtab_at=501).data)
    shoff = struct.unpack_from("<Q", built, 40)[0]
    str_off, str_size = struct.unpack_from("<QQ", built, shoff + 501 * SHDR.size + 24)
    built[str_off : str_off + str_size] = b"x" * str_size
    for i in range(1, 502):
        struct.pack_into("<I", built, shoff + i * SHDR.size, 0)
    reader = BoundedReader(io.BytesIO(bytes(built)), None, SMALL)
    sections = read_sections(reader, read_elf_header(reader))
    assert len(sections) == 502
    assert max(len(s.name) for s in sections) == SMALL.max_section_name


def test_a_section_name_with_control_characters_stays_on_one_line() -> None:
    # found by test_damaged_elf_only_coded_errors_within_budget: a name byte set to "\n" split the error line
    parts = [(".nv_fatbin", SHT_PROGBITS, fatbin_container(80))]
    data = bytearray(build_elf(parts, strtab_at=2).data)
    at = data.index(b".nv_fatbin\0")
    data[at : at + 10] = b".nv\n\x1b[2Jbi"
    shoff = struct.unpack_from("<Q", data, 40)[0]
    struct.pack_into("<Q", data, shoff + SHDR.size + 32, 1 << 20)  # sh_size past the end: an error naming it
    reader = BoundedReader(io.BytesIO(bytes(data)), None, SMALL)
    with pytest.raises(InvalidBinary) as info:
        read_sections(reader, read_elf_header(reader), whole=True)
    assert info.value.message == "section .nv\\n\\x1b[2Jbi extends past the end of the file"
