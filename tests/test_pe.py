"""pe: Windows modules (.pyd, .dll) of win_amd64 wheels, whose fat binaries live in the ``.nv_fatb`` section.

``windows.pyd`` (tools/build_cuda_fixtures.sh) is a PE image that GNU ld linked from multi.so's ``.nv_fatbin``
bytes; the linker cut the name to ``.nv_fatb`` as Microsoft's does.  NVIDIA's cuobjdump 13.5 says the .pyd
"does not contain device code" (it reads no PE), and lists sm_75, sm_86, sm_90a, sm_100a and sm_90 PTX in
the section cut out of it (``objcopy -O binary --only-section=.nv_fatb``): the lists multi.so has.
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from cudaresolve.binaries.inspect import inspect_directory, inspect_path
from cudaresolve.binaries.scan import is_candidate
from cudaresolve.binaries.staticlib import read_code
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.catalogue import format_text as words

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
MODULE = FIXTURES / "windows.pyd"


def _section_table(data: bytes) -> int:
    (lfanew,) = struct.unpack_from("<I", data, 0x3C)
    (optional,) = struct.unpack_from("<H", data, lfanew + 20)
    return lfanew + 24 + optional


def test_a_windows_module_lists_what_its_fat_binaries_hold() -> None:
    listing = read_code(io.BytesIO(MODULE.read_bytes()))
    multi = read_code(io.BytesIO((FIXTURES / "multi.so").read_bytes()))
    assert (listing.format, listing.sections) == ("pe", (".nv_fatb",))
    assert (listing.sass, listing.ptx, listing.ptx_isa) == (multi.sass, multi.ptx, multi.ptx_isa)
    assert listing.sass == ("sm_75", "sm_86", "sm_90a", "sm_100a")


def test_windows_modules_in_a_wheel_and_a_folder(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-cp312-cp312-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(MODULE, "pkg/_C.pyd", compress_type=zipfile.ZIP_DEFLATED)
        archive.write(MODULE, "pkg/lib/torch_cuda.DLL", compress_type=zipfile.ZIP_STORED)
    assert [(r.path.split("!")[1], r.format, r.sass[-1]) for r in inspect_path(wheel)] == [
        ("pkg/_C.pyd", "pe", "sm_100a"), ("pkg/lib/torch_cuda.DLL", "pe", "sm_100a")]
    assert "windows.pyd" in [Path(r.path).name for r in inspect_directory(FIXTURES)]
    assert is_candidate("x/_C.pyd", wide=True) and not is_candidate("x/_C.pyd")  # the Linux ABI check reads ELF


def test_a_module_without_device_code_is_an_empty_listing() -> None:
    data = bytearray(MODULE.read_bytes())
    table = _section_table(bytes(data))
    for index in range(3):
        if data[table + 40 * index : table + 40 * index + 8] == b".nv_fatb":
            data[table + 40 * index : table + 40 * index + 8] = b".data\0\0\0"
    listing = read_code(io.BytesIO(bytes(data)))
    assert (listing.format, listing.entries) == ("pe", ())


def _patched(offset: int, value: bytes) -> bytes:
    data = bytearray(MODULE.read_bytes())
    data[offset : offset + len(value)] = value
    return bytes(data)


def _fatb_header() -> int:
    data = MODULE.read_bytes()
    return data.index(b".nv_fatb", _section_table(data))


@pytest.mark.parametrize(("image", "message"), [
    (b"MZ" + b"\0" * 100, "not a PE image"),
    (_patched(0x3C, struct.pack("<I", 1 << 30)), "not a PE image"),
    (MODULE.read_bytes()[:0x600], "truncated: needs bytes"),
    (_patched(_fatb_header() + 16, struct.pack("<I", 1 << 24)), "section .nv_fatb extends past the end"),
])
def test_damaged_modules_are_one_clean_error(image: bytes, message: str) -> None:
    with pytest.raises(InvalidBinary) as info:
        read_code(io.BytesIO(image))
    assert message in words(info.value.text)


def test_a_huge_section_count_is_refused_before_reading_it() -> None:
    (lfanew,) = struct.unpack_from("<I", MODULE.read_bytes(), 0x3C)
    with pytest.raises(InvalidBinary, match="sections"):
        read_code(io.BytesIO(_patched(lfanew + 6, struct.pack("<H", 0xFFFF))))
