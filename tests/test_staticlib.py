"""staticlib: static libraries (``ar`` archives of CUDA objects) listed as cuobjdump lists them, member by member.

``libkernels.a`` (tools/build_cuda_fixtures.sh) holds ``rdc.o`` (sm_86 and compute_90, only in __nv_relfatbin)
and ``plain_kernel_object.o`` (sm_75 in .nv_fatbin; its name is longer than GNU ar's 15 bytes).  NVIDIA's
cuobjdump 13.5 ``-lelf -lptx`` on it: member rdc.o: sm_86 cubin, sm_90 PTX; member plain_kernel_object.o:
sm_75 cubin.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import pytest

from cudaresolve.binaries.elf import Limits
from cudaresolve.binaries.inspect import inspect_directory, inspect_path
from cudaresolve.binaries.scan import is_candidate
from cudaresolve.binaries.staticlib import read_code
from cudaresolve.cli import main
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.catalogue import format_text as words
from test_fatbin import elf

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
LIBRARY = FIXTURES / "libkernels.a"


def member(name: bytes, data: bytes) -> bytes:
    """One ``ar`` member: the 60-byte header and the bytes, padded to an even length."""
    header = name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8)
    header += str(len(data)).encode().ljust(10) + b"`\n"
    return header + data + (b"\n" if len(data) % 2 else b"")


def test_a_static_library_lists_every_member_as_cuobjdump_does() -> None:
    listing = read_code(io.BytesIO(LIBRARY.read_bytes()))
    assert (listing.format, listing.sass, listing.ptx, listing.lto) == ("ar", ("sm_75", "sm_86"), ("compute_90",), ())
    # the rdc member's copies count although the other member has code the runtime loads
    assert {e.member for e in listing.entries} == {"rdc.o", "plain_kernel_object.o"}
    assert listing.sections == (".nv_fatbin", "__nv_relfatbin")


def test_entry_offsets_are_offsets_in_the_archive() -> None:
    data = LIBRARY.read_bytes()
    listing = read_code(io.BytesIO(data))
    for entry in listing.entries:
        kind, version, hsize = struct.unpack_from("<HHI", data, entry.offset)
        assert (kind, version, hsize) == (entry.kind, 0x0101, entry.header_size)
    for found in listing.containers:
        assert data[found.offset : found.offset + 4] == b"\x50\xed\x55\xba"


def test_inspect_lists_a_static_library_named_in_a_folder_or_in_a_wheel(tmp_path: Path) -> None:
    (report,) = inspect_path(LIBRARY)
    assert (report.format, report.sass, report.ptx, report.error) == ("ar", ("sm_75", "sm_86"), ("compute_90",), None)
    assert report.to_dict()["members"] == ["plain_kernel_object.o", "rdc.o"]
    assert "libkernels.a" in [Path(r.path).name for r in inspect_directory(FIXTURES)]
    wheel = tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(LIBRARY, "pkg.libs/deep/libkernels.a", compress_type=zipfile.ZIP_DEFLATED)
    assert [(r.path, r.sass) for r in inspect_path(wheel)] == [
        (f"{wheel}!pkg.libs/deep/libkernels.a", ("sm_75", "sm_86"))]


def test_doctor_and_torch_lookups_still_skip_static_libraries() -> None:
    """What the runtime loads holds no .a: doctor's view of a distribution (and linkage's) leaves them out."""
    assert not is_candidate("lib/libkernels.a") and is_candidate("lib/libkernels.a", wide=True)
    assert not is_candidate("lib/data.a.txt", wide=True)


def test_cli_json_of_a_static_library(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(LIBRARY), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert (entry["sass"], entry["ptx"], entry["format"]) == (["sm_75", "sm_86"], ["compute_90"], "ar")


def test_bsd_long_names_and_members_without_device_code() -> None:
    rdc = (FIXTURES / "rdc.o").read_bytes()
    image = b"!<arch>\n" + member(b"__.SYMDEF", b"\0" * 8) + member(b"#1/24", b"a_member_named_at_length" + rdc)
    image += member(b"notes.txt/", b"not an object\n") + member(b"nogpu.so/", (FIXTURES / "nogpu.so").read_bytes())
    listing = read_code(io.BytesIO(image))
    assert (listing.sass, listing.ptx) == (("sm_86",), ("compute_90",))
    assert {e.member for e in listing.entries} == {"a_member_named_at_length"}
    assert read_code(io.BytesIO(b"!<arch>\n")).entries == ()  # an empty library is no error


@pytest.mark.parametrize(("image", "message"), [
    (b"!<arch>\n" + member(b"k.o/", b"x")[:40], "bad static-library member header at 0x8"),
    (b"!<arch>\n" + member(b"k.o/", b"\x7fELF").replace(b"4         `", b"9         `"), "claims 9 bytes, past"),
    (b"!<arch>\n" + member(b"k.o/", b"12").replace(b"`\n", b"xx"), "bad static-library member header"),
    (b"!<arch>\n" + member(b"/", struct.pack(">II", 1, 0x400)) + member(b"k.o/", b"12"), "file ends before 0x43c"),
    (b"!<arch>\n" + member(b"/", struct.pack(">I", 9)), "bad static-library member header at 0x8"),
    (b"!<arch>\n" + member(b"broken.o/", b"\x7fELF\x02\x01\x01" + b"\0" * 40), "member broken.o: truncated ELF"),
    (b"!<thin>\n" + member(b"k.o/", b"12"), "not an ELF file, fatbin or cubin"),
])
def test_damaged_static_libraries_are_one_clean_error(image: bytes, message: str) -> None:
    with pytest.raises(InvalidBinary) as info:
        read_code(io.BytesIO(image))
    assert message in words(info.value.text)


def test_cutting_the_library_at_a_member_boundary_is_found_by_its_symbol_index() -> None:
    data = LIBRARY.read_bytes()
    listing = read_code(io.BytesIO(data))
    last = max(e.offset for e in listing.entries if e.member == "plain_kernel_object.o")
    start = data.rfind(b"`\n", 0, last) + 2  # the bytes of the last member
    with pytest.raises(InvalidBinary, match="file ends"):
        read_code(io.BytesIO(data[: start - 60]))


def test_host_objects_rodata_does_not_spend_the_archive_read_budget() -> None:
    """A large static library's host objects carry MBs of .rodata: scanned member by member for embedded fatbins
    (as for a lone .so without fatbin sections) it spent the one read budget, and the library was an error."""
    image = b"!<arch>\n" + b"".join(
        member(f"host{i}.o/".encode(), elf([(".rodata", b"\x01" * 300_000)])) for i in range(4))
    image += member(b"rdc.o/", (FIXTURES / "rdc.o").read_bytes())
    limits = Limits(max_read_bytes=1_000_000)
    listing = read_code(io.BytesIO(image), limits=limits)
    assert (listing.sass, listing.ptx) == (("sm_86",), ("compute_90",))
    assert listing.bytes_read < 100_000
    assert read_code(io.BytesIO(image), limits=Limits(), scan_rodata=True).sass == ("sm_86",)  # asked: scanned
