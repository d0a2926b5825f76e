"""binaries/elf.py: the bounded reader and the ELF section table, on the nvcc fixtures and on damaged copies."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest

from cudaresolve.binaries.elf import (
    EM_CUDA,
    BoundedReader,
    Limits,
    cubin_target,
    read_elf_header,
    read_sections,
)
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.catalogue import format_text

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"


def reader(data: bytes, **limits: int) -> BoundedReader:
    return BoundedReader(io.BytesIO(data), None, Limits(**limits))


def sections_of(name: str) -> dict[str, tuple[int, int, int]]:
    r = reader((FIXTURES / name).read_bytes())
    return {s.name: (s.type, s.offset, s.size) for s in read_sections(r, read_elf_header(r))}


def test_section_table_of_a_shared_library() -> None:
    # the values `readelf -S -W multi.so` prints
    r = reader((FIXTURES / "multi.so").read_bytes())
    header = read_elf_header(r)
    sections = read_sections(r, header)
    assert (header.machine, header.shoff, len(sections)) == (62, 0x7DD0, 32)  # EM_X86_64
    table = {s.name: (s.type, s.offset, s.size) for s in sections}
    assert table[".nv_fatbin"] == (1, 0x2020, 0x3FB0)
    assert table[".rodata"] == (1, 0x2000, 0xE)
    assert table[".bss"] == (8, 0x7090, 0)  # NOBITS: no bytes in the file
    assert sections[0].name == "" and sections[-1].name == ".shstrtab"


def test_section_table_of_an_rdc_build_has_both_fatbin_sections() -> None:
    table = sections_of("rdc.so")
    assert (table[".nv_fatbin"][1:], table["__nv_relfatbin"][1:]) == ((0x2060, 0xE78), (0x2ED8, 0x590))
    assert len(table) == 39 and table[""] == (0, 0, 0)  # section 0 is the null section


def test_no_fatbin_section_in_a_host_only_library() -> None:
    assert not {".nv_fatbin", "__nv_relfatbin"} & set(sections_of("nogpu.so"))


def test_cubin_header_and_target() -> None:
    r = reader((FIXTURES / "sm_90a.cubin").read_bytes())
    header = read_elf_header(r)
    assert (header.machine, header.type, header.abi_version, header.flags) == (EM_CUDA, 2, 8, 0x6005A04)
    assert len(read_sections(r, header, whole=True)) == 15
    target = cubin_target(header)
    # ABI 8 e_flags say sm_90 but cannot tell sm_90 from sm_90a
    assert (target.sm, target.suffix, target.suffix_known) == (90, "", False)


def test_checked_sections_past_the_end_are_errors_others_are_not() -> None:
    data = bytearray((FIXTURES / "multi.so").read_bytes())
    shoff = read_elf_header(reader(bytes(data))).shoff
    struct.pack_into("<Q", data, shoff + 16 * 64 + 32, 1 << 30)  # sh_size of section 16, .nv_fatbin
    r = reader(bytes(data))
    header = read_elf_header(r)
    assert read_sections(r, header)[16].name == ".nv_fatbin"  # not checked: listed as the table says
    with pytest.raises(InvalidBinary, match=r"section \.nv_fatbin extends past the end of the file") as info:
        read_sections(r, header, checked=(".nv_fatbin",))
    assert format_text(info.value.text, "zh") == "节 .nv_fatbin 超出了文件末尾"
    assert info.value.hint == "the file is truncated or is not a CUDA/ELF binary; reinstall the package that owns it"
    with pytest.raises(InvalidBinary, match="extends past the end"):
        read_sections(r, header, whole=True)


def test_bounded_reader_refuses_reads_past_the_end_and_over_budget() -> None:
    r = reader(b"\0" * 64, max_read_bytes=48)
    assert r.read_at(0, 32) == b"\0" * 32 and r.bytes_read == 32
    with pytest.raises(InvalidBinary, match=r"truncated: needs bytes 0x30\.\.0x50, file has 0x40"):
        r.read_at(0x30, 0x20)
    with pytest.raises(InvalidBinary, match="read budget of 48 bytes exhausted"):
        r.read_at(0, 32)


def test_too_many_sections_and_a_bad_name_table() -> None:
    data = (FIXTURES / "multi.so").read_bytes()
    with pytest.raises(InvalidBinary, match=r"ELF claims 32 sections \(limit 8\)"):
        r = reader(data, max_sections=8)
        read_sections(r, read_elf_header(r))
    patched = bytearray(data)
    struct.pack_into("<H", patched, 0x3E, 99)  # e_shstrndx
    r = reader(bytes(patched))
    with pytest.raises(InvalidBinary, match="section-name table index 99 out of range"):
        read_sections(r, read_elf_header(r))
