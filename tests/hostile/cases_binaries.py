"""Hostile binaries for ``inspect``: crafted wheels, FIFOs, extended ELF numbering, deep ``.pt2`` metadata.

Every file is generated in ``setup``; the large ones are highly compressible zip members, so the
disk holds a few MiB however large the member claims to be.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from hostile.case import Case

if TYPE_CHECKING:
    from collections.abc import Iterator

    from hostile.case import Result

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"
_CONTAINER = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64)  # one container of one 64-byte entry header
_ENTRY = struct.pack("<HHIQIIHHIIIQQQ", 2, 0x0101, 64, 0, 0, 0, 0, 8, 80, 0, 0, 0, 0, 0)  # sm_80 cubin


def scattered_elf_parts(size: int, sections: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) pieces of a ``size``-byte ELF whose ``.nv_fatbin`` sections alternate
    between the front and the back of the file in table order (zero bytes between pieces)."""
    names = b"\0.nv_fatbin\0.shstrtab\0"
    table_size = (sections + 2) * 64
    shoff = size - table_size
    str_off = shoff - 64
    step = (str_off - 4096) // sections
    offsets = [4096 + i * step for i in range(sections)]
    order = [offsets[(i // 2) if i % 2 == 0 else sections - 1 - i // 2] for i in range(sections)]
    header = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0, 0, shoff, 0,
                         64, 0, 0, 64, sections + 2, sections + 1)
    yield 0, header
    for off in sorted(offsets):
        yield off, _CONTAINER + _ENTRY
    yield str_off, names
    table = bytearray(64)  # section 0: SHT_NULL
    for off in order:
        table += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, off, 80, 0, 0, 8, 0)  # PROGBITS .nv_fatbin
    table += struct.pack("<IIQQQQIIQQ", 12, 3, 0, 0, str_off, len(names), 0, 0, 1, 0)  # STRTAB
    yield shoff, bytes(table)


def write_scattered_member(archive: zipfile.ZipFile, name: str, size: int, sections: int) -> None:
    """One deflated member built piece by piece, never held whole in memory."""
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    zeros = bytes(1024 * 1024)
    with archive.open(info, "w", force_zip64=size > 2**31) as out:
        pos = 0
        for off, piece in scattered_elf_parts(size, sections):
            while pos < off:
                count = min(len(zeros), off - pos)
                out.write(zeros[:count])
                pos += count
            out.write(piece)
            pos += len(piece)
        while pos < size:
            count = min(len(zeros), size - pos)
            out.write(zeros[:count])
            pos += count


def _crafted_wheel(tmp: Path) -> None:
    with zipfile.ZipFile(tmp / "evil-1.0-py3-none-any.whl", "w", compresslevel=9) as z:
        write_scattered_member(z, "evil/libevil.so", 256 * 1024**2, 400)


def _check_crafted_wheel(result: Result, tmp: Path) -> None:
    [report] = json.loads(result.stdout)["files"]
    assert report["sass"] == ["sm_80"] and report["containers"] == 400
    assert report["bytes_read"] <= 64 * 1024  # headers only: the zeros between sections are never parsed


def _fifo_dir(tmp: Path) -> None:
    (tmp / "d").mkdir()
    os.mkfifo(tmp / "d" / "libx.so")  # opening it for reading would block forever
    (tmp / "d" / "libreal.so").write_bytes((FIXTURES / "multi.so").read_bytes())


def _check_fifo_dir(result: Result, tmp: Path) -> None:
    assert [Path(f["path"]).name for f in json.loads(result.stdout)["files"]] == ["libreal.so"]


def _fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "libx.so")


def _extended(tmp: Path) -> None:
    data = bytearray((FIXTURES / "compress-size.so").read_bytes())
    shoff, = struct.unpack_from("<Q", data, 40)
    shnum, shstrndx = struct.unpack_from("<HH", data, 60)
    struct.pack_into("<HH", data, 60, 0, 0xFFFF)
    struct.pack_into("<Q", data, shoff + 32, shnum)
    struct.pack_into("<I", data, shoff + 40, shstrndx)
    (tmp / "libext.so").write_bytes(bytes(data))


def _check_extended(result: Result, tmp: Path) -> None:
    [report] = json.loads(result.stdout)["files"]
    assert report["sass"] == ["sm_80"] and report["bytes_read"] <= 64 * 1024


def _huge_section_count(tmp: Path) -> None:
    data = bytearray((FIXTURES / "multi.so").read_bytes())
    shoff, = struct.unpack_from("<Q", data, 40)
    struct.pack_into("<H", data, 60, 0)
    struct.pack_into("<Q", data, shoff + 32, 2**62)  # extended count: hostile
    (tmp / "libhuge.so").write_bytes(bytes(data))


def _check_error_report(result: Result, tmp: Path) -> None:
    [report] = json.loads(result.stdout)["files"]
    assert report["error"]["code"] == "invalid-binary"


def _deep_pt2(tmp: Path) -> None:
    with zipfile.ZipFile(tmp / "deep.pt2", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("deep/data/aotinductor/model/x_metadata.json", "[" * 500_000 + "]" * 500_000)


def _bomb_wheel(tmp: Path) -> None:
    with zipfile.ZipFile(tmp / "bomb-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("bomb/libbomb.so", b"\x7fELF\x02\x01\x01" + bytes(64 * 1024 * 1024))  # a header and zeros


def _not_zip(tmp: Path) -> None:
    (tmp / "bad-1.0-py3-none-any.whl").write_bytes(b"PK\x03\x04" + bytes(1000))


def _check_bounded(result: Result, tmp: Path) -> None:
    for report in json.loads(result.stdout)["files"]:
        assert report.get("bytes_read", 0) <= 64 * 1024


CASES = [
    Case("binaries-crafted-wheel-256mib-scattered", ["inspect", "--json", "{tmp}/evil-1.0-py3-none-any.whl"],
         setup=_crafted_wheel, codes=(0,), check=_check_crafted_wheel),
    Case("binaries-fifo-in-directory", ["inspect", "--json", "{tmp}/d"], setup=_fifo_dir, codes=(0,),
         check=_check_fifo_dir),
    Case("binaries-fifo-named", ["inspect", "{tmp}/libx.so"], setup=_fifo, codes=(1,)),
    Case("binaries-empty-path", ["inspect", ""], codes=(1,)),
    Case("binaries-extended-numbering", ["inspect", "--json", "{tmp}/libext.so"], setup=_extended, codes=(0,),
         check=_check_extended),
    Case("binaries-extended-count-huge", ["inspect", "--json", "{tmp}/libhuge.so"], setup=_huge_section_count,
         codes=(0, 1), check=_check_error_report),
    Case("binaries-pt2-metadata-500k-deep", ["inspect", "--json", "{tmp}/deep.pt2"], setup=_deep_pt2, codes=(0, 1)),
    Case("binaries-wheel-64mib-zeros", ["inspect", "--json", "{tmp}/bomb-1.0-py3-none-any.whl"], setup=_bomb_wheel,
         codes=(0, 1), check=_check_bounded),
    Case("binaries-wheel-not-a-zip", ["inspect", "--json", "{tmp}/bad-1.0-py3-none-any.whl"], setup=_not_zip,
         codes=(0, 1), check=_check_error_report),
]
