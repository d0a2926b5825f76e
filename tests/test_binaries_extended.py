"""ELF extended section numbering: e_shnum 0 and e_shstrndx SHN_XINDEX, the counts kept in section 0."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from cudaresolve.binaries.elf import BoundedReader, Limits, read_elf_header, read_sections
from cudaresolve.binaries.fatbin import read_fatbin_archs
from cudaresolve.binaries.inspect import inspect_path
from cudaresolve.errors import InvalidBinary

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"


def extended_numbering(data: bytes) -> bytes:
    """``data`` rewritten the way a linker does for 65,280+ sections: both counts moved into section 0."""
    out = bytearray(data)
    shoff, = struct.unpack_from("<Q", out, 40)
    shnum, shstrndx = struct.unpack_from("<HH", out, 60)
    struct.pack_into("<HH", out, 60, 0, 0xFFFF)  # e_shnum 0, e_shstrndx SHN_XINDEX
    struct.pack_into("<Q", out, shoff + 32, shnum)  # section 0's sh_size: the real count
    struct.pack_into("<I", out, shoff + 40, shstrndx)  # section 0's sh_link: the name table
    return bytes(out)


@pytest.mark.parametrize("name", ["compress-size.so", "multi.so"])
def test_extended_numbering_lists_the_same_code(name: str) -> None:
    plain = (FIXTURES / name).read_bytes()
    extended = extended_numbering(plain)
    assert extended[60:64] == b"\0\0\xff\xff"
    want = read_fatbin_archs(io.BytesIO(plain))
    got = read_fatbin_archs(io.BytesIO(extended))
    assert got.sass == want.sass and got.sass  # compress-size.so: sm_80
    assert got.ptx == want.ptx


def test_extended_numbering_section_table() -> None:
    data = extended_numbering((FIXTURES / "compress-size.so").read_bytes())
    r = BoundedReader(io.BytesIO(data), None, Limits())
    names = [s.name for s in read_sections(r, read_elf_header(r))]
    assert ".nv_fatbin" in names and ".shstrtab" in names


def test_extended_numbering_through_inspect(tmp_path: Path) -> None:
    path = tmp_path / "libext.so"
    path.write_bytes(extended_numbering((FIXTURES / "compress-size.so").read_bytes()))
    [report] = inspect_path(path)
    assert report.error is None and report.sass == ("sm_80",)
    readelf = shutil.which("readelf")
    if readelf:  # readelf agrees that the rewritten file is well formed and holds .nv_fatbin
        out = subprocess.run([readelf, "-S", "-W", str(path)], capture_output=True, text=True, check=False).stdout
        assert ".nv_fatbin" in out


def test_extended_count_is_still_bounded() -> None:
    data = bytearray(extended_numbering((FIXTURES / "compress-size.so").read_bytes()))
    shoff, = struct.unpack_from("<Q", data, 40)
    struct.pack_into("<Q", data, shoff + 32, 2**40)  # a hostile count in section 0
    with pytest.raises(InvalidBinary):
        read_fatbin_archs(io.BytesIO(bytes(data)))
