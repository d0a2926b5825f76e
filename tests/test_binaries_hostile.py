"""Hostile files for inspect: empty paths, FIFOs, deep .pt2 metadata, zip members read in one pass."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from cudaresolve.binaries.aoti import package_report
from cudaresolve.binaries.elf import Limits
from cudaresolve.binaries.fatbin import read_fatbin_archs
from cudaresolve.binaries.inspect import inspect_path
from cudaresolve.core.archive import open_zip_member
from cudaresolve.errors import InvalidBinary, InvalidInput
from hostile.cases_binaries import scattered_elf_parts, write_scattered_member
from hostile.counting import CountingFile

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"


def test_empty_path_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "libx.so").write_bytes((FIXTURES / "multi.so").read_bytes())
    with pytest.raises(InvalidInput) as info:
        inspect_path("")
    assert info.value.code == "invalid-input"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_in_a_directory_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "libx.so")  # opening it for reading would block forever
    (tmp_path / "libreal.so").write_bytes((FIXTURES / "multi.so").read_bytes())
    reports = inspect_path(tmp_path)
    assert [Path(r.path).name for r in reports] == ["libreal.so"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_named_explicitly_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "libx.so")
    with pytest.raises(InvalidInput):
        inspect_path(tmp_path / "libx.so")


def test_deeply_nested_pt2_metadata_is_a_coded_problem(tmp_path: Path) -> None:
    path = tmp_path / "deep.pt2"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("deep/data/aotinductor/model/x_metadata.json", "[" * 500_000 + "]" * 500_000)
    report = package_report(path)
    assert report.package is not None
    [note] = report.package.models[0].notes
    assert dict(note.fields)["note"].key == "binaries.metadata-too-deep"


def test_scattered_sections_in_a_deflated_member_are_inflated_once(tmp_path: Path) -> None:
    path = tmp_path / "evil-1.0-py3-none-any.whl"
    size = 48 * 1024 * 1024  # past the in-memory threshold: spooled to a temporary file
    with zipfile.ZipFile(path, "w", compresslevel=9) as z:
        write_scattered_member(z, "evil/libevil.so", size, 64)
    counting = CountingFile(open(path, "rb"))
    with zipfile.ZipFile(counting) as archive:
        info = archive.getinfo("evil/libevil.so")
        before = counting.bytes_read
        with open_zip_member(archive, info) as stream:
            listing = read_fatbin_archs(stream, size=info.file_size)
        compressed_reads = counting.bytes_read - before
    assert listing.sass == ("sm_80",) and len(listing.containers) == 64
    # one forward pass: the compressed bytes are read once (zipfile reads ahead a little)
    assert compressed_reads <= info.compress_size + 64 * 1024, (compressed_reads, info.compress_size)


def test_magic_check_does_not_inflate_the_member(tmp_path: Path) -> None:
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("x/libnot.so", b"/* GNU ld script */" + bytes(20 * 1024 * 1024))
    counting = CountingFile(open(path, "rb"))
    with zipfile.ZipFile(counting) as archive:
        info = archive.getinfo("x/libnot.so")
        before = counting.bytes_read
        with open_zip_member(archive, info) as stream:
            assert stream.read(4) == b"/* G"
        assert info.compress_size > 16 * 1024
        assert counting.bytes_read - before <= 8 * 1024  # a few compressed blocks, not all of them


def test_entry_budget_is_per_file(tmp_path: Path) -> None:
    data = bytearray(256 * 1024)
    for off, piece in scattered_elf_parts(len(data), 40):
        data[off : off + len(piece)] = piece
    listing = read_fatbin_archs(io.BytesIO(bytes(data)), limits=Limits(max_entries=100))
    assert len(listing.entries) == 40
    with pytest.raises(InvalidBinary):  # 40 sections of one entry each: over 39 for the file
        read_fatbin_archs(io.BytesIO(bytes(data)), limits=Limits(max_entries=39))
    with pytest.raises(InvalidBinary):
        read_fatbin_archs(io.BytesIO(bytes(data)), limits=Limits(max_containers=39))


def test_a_member_name_flagged_utf8_that_is_not_is_a_coded_report(tmp_path: Path) -> None:
    # general-purpose bit 11 says "UTF-8 name"; zipfile then raises UnicodeDecodeError while opening
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("m/data/aotinductor/model/k\u00e9.so", (FIXTURES / "multi.so").read_bytes())
    data = bytearray(buf.getvalue())
    central = data.rfind(b"PK\x01\x02")
    data[central + 46 + len("m/data/aotinductor/model/k")] = 0xFF  # first byte of "é": now not UTF-8
    for suffix in (".pt2", ".whl"):
        path = tmp_path / f"bad-1.0-py3-none-any{suffix}"
        path.write_bytes(bytes(data))
        [report] = inspect_path(path)
        assert report.error is not None and report.error.code == "invalid-binary"


def test_a_path_the_system_refuses_is_one_coded_line() -> None:
    """A name longer than the file system takes (ENAMETOOLONG) is invalid input, for inspect and doctor --pt2."""
    from cudaresolve.binaries.inspect import inspect_path
    from cudaresolve.doctor.environment import read_pt2
    from cudaresolve.errors import InvalidInput

    long = "/tmp/" + "x" * 300
    with pytest.raises(InvalidInput):
        inspect_path(long)
    with pytest.raises(InvalidInput):
        read_pt2(long)
