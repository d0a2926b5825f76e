"""Property tests of the zip readers: wheels (binaries/scan.py), ``.pt2`` packages (binaries/aoti.py)
and the member streams under both (core/archive.py).

A valid archive built from parts lists exactly the device code of its members; a damaged one
(any field of a local header, the central directory or its end record set to anything, names
flagged UTF-8 that are not) gives reports, never an exception, with only coded errors, and the
archive file is read a bounded number of times over.
"""

from __future__ import annotations

import io
import json
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudaresolve.binaries import aoti, scan
from cudaresolve.binaries.aoti import package_report
from cudaresolve.binaries.elf import Limits
from cudaresolve.binaries.fatbin import read_fatbin_archs
from cudaresolve.binaries.scan import read_wheel
from cudaresolve.errors import CudaResolveError
from hostile.counting import CountingFile
from hostile.elf_build import SHT_PROGBITS, build_elf, fatbin_container

if TYPE_CHECKING:
    from cudaresolve.binaries.report import BinaryReport

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
SMALL = Limits(
    max_read_bytes=128 * 1024,
    max_sections=200,
    max_shstrtab=16 * 1024,
    max_containers=64,
    max_entries=256,
    max_scan_bytes=32 * 1024,
    chunk_size=4096,
)
CODES = {"invalid-binary", "invalid-input"}


def elf_for(sm: int, suffix: str) -> bytes:
    return build_elf([(".nv_fatbin", SHT_PROGBITS, fatbin_container(sm, suffix))], strtab_at=2).data


contents = st.one_of(
    st.builds(elf_for, st.integers(10, 255), st.sampled_from(["", "a", "f"])),
    st.sampled_from([(FIXTURES / n).read_bytes() for n in ("multi.so", "nogpu.so", "sm_90a.cubin", "kernel.fatbin")]),
    st.sampled_from([b"", b"/* GNU ld script */\nINPUT(libx.so.1)\n", b"\x7fELF", b"print('hi')\n"]),
)
member_names = st.sampled_from(
    [
        "pkg/lib/libx.so",
        "pkg/lib/liby.so.12",
        "pkg/a.o",
        "pkg/k.cubin",
        "pkg/k.fatbin",
        "pkg/__init__.py",
        "pkg-1.0.dist-info/RECORD",
        "pkg/lib/",
    ]
)
members = st.dictionaries(
    member_names, st.tuples(contents, st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])), max_size=6
)


def zip_bytes(files: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, (data, method) in files.items():
            archive.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), data, compress_type=method)
    return buf.getvalue()


def read_counted(data: bytes, suffix: str) -> tuple[list[BinaryReport], int]:
    """``read_wheel`` or ``package_report`` on ``data``, the archive read through a ``CountingFile``."""
    counting = CountingFile(io.BytesIO(data))
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        patch.setattr(scan, "open_regular", lambda _path: counting)
        patch.setattr(aoti, "open_regular", lambda _path: counting)
        path = Path(tmp, "x-1.0-py3-none-any" + suffix)
        reports = read_wheel(path, limits=SMALL) if suffix == ".whl" else [package_report(path, limits=SMALL)]
    return reports, counting.bytes_read


def assert_coded(reports: list[BinaryReport]) -> None:
    """Every error is coded; every binary (a wheel member, a package's kernel) kept to its byte budget."""
    for report in reports:
        kernels = [k for m in report.package.models for k in m.kernels] if report.package else []
        for one in (report, *kernels):
            if one.error is not None:
                assert one.error.code in CODES, one.error
        for binary in kernels or [report]:  # a package's listing sums its kernels'
            assert binary.listing is None or binary.listing.bytes_read <= SMALL.max_read_bytes


@FUZZ
@given(files=members)
def test_valid_wheel_lists_each_members_device_code(files: dict[str, tuple[bytes, int]]) -> None:
    reports, _ = read_counted(zip_bytes(files), ".whl")
    assert_coded(reports)
    want: dict[str, tuple[str, ...] | None] = {}
    for name, (data, _) in files.items():
        if name.endswith("/") or not scan.is_candidate(name) or data[:4] not in (b"\x7fELF", b"\x50\xed\x55\xba"):
            continue
        try:
            listing = read_fatbin_archs(io.BytesIO(data), limits=SMALL)
        except CudaResolveError:
            want[name] = None  # an error report
            continue
        if listing.entries:
            want[name] = listing.sass
    got = {r.path.split("!", 1)[1]: (None if r.error else r.listing.sass if r.listing else ()) for r in reports}
    assert got == want


@FUZZ
@given(
    sm=st.integers(10, 255),
    suffix=st.sampled_from(["", "a", "f"]),
    capability=st.sampled_from(["80", "90", ""]),
    method=st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]),
)
def test_valid_pt2_reads_its_metadata_and_kernels(sm: int, suffix: str, capability: str, method: int) -> None:
    base = "m/data/aotinductor/model"
    meta = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": capability}
    data = zip_bytes(
        {
            "m/archive_format": (b"pt2", method),
            f"{base}/c_metadata.json": (json.dumps(meta).encode(), method),
            f"{base}/c.so": (elf_for(sm, suffix), method),
        }
    )
    [report], _ = read_counted(data, ".pt2")
    assert report.error is None and report.package is not None
    [model] = report.package.models
    assert dict(model.metadata) == meta
    assert report.sass == (f"sm_{sm}{suffix}",)


# --- damaged archives ---------------------------------------------------------------------------

INTERESTING = (0, 1, 0x800, 0xFFFF, 0xFFFFFFFF, 2**31, 30, 46, 99, 8, 12, 14, 99_999_999)


@st.composite
def damaged_zips(draw: st.DrawFn) -> bytes:
    """A valid archive (a wheel's or a .pt2's members) with a few header fields or bytes overwritten."""
    files = draw(members)
    if draw(st.booleans()):  # a .pt2 layout: its metadata and kernels are read too
        files = {f"m/data/aotinductor/model/{n.rsplit('/', 1)[-1] or 'x.so'}": v for n, v in files.items()}
        files["m/data/aotinductor/model/c_metadata.json"] = (
            draw(st.sampled_from([b'{"AOTI_DEVICE_KEY": "cuda"}', b"[" * 100, b"\xff", b"{}"])),
            zipfile.ZIP_STORED,
        )
    data = bytearray(zip_bytes(files))
    # every local header, central directory entry and end record: where the fields are
    heads = [i for sig in (b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06") for i in _find_all(data, sig)]
    for _ in range(draw(st.integers(1, 5))):
        use_head: bool = draw(st.booleans())
        if heads and use_head:
            where = draw(st.sampled_from(heads)) + draw(
                st.sampled_from([4, 6, 8, 10, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 42])
            )
        else:
            where = draw(st.integers(0, max(len(data) - 1, 0)))
        width = draw(st.sampled_from([1, 2, 4]))
        value = draw(st.one_of(st.sampled_from(INTERESTING), st.integers(0, 2**32 - 1))) % (1 << (8 * width))
        if where + width <= len(data):
            data[where : where + width] = value.to_bytes(width, "little")
    if draw(st.booleans()):  # a name flagged UTF-8 (general-purpose bit 11) that is not
        for i in _find_all(data, b"PK\x01\x02"):
            (flags,) = struct.unpack_from("<H", data, i + 8)
            struct.pack_into("<H", data, i + 8, flags | 0x800)
            if i + 47 < len(data):
                data[i + 47] = 0xFF
    return bytes(data[: draw(st.sampled_from([len(data), len(data), len(data) - 1, len(data) // 2, 22]))])


def _find_all(data: bytes | bytearray, sig: bytes) -> list[int]:
    found, at = [], data.find(sig)
    while at >= 0:
        found.append(at)
        at = data.find(sig, at + 1)
    return found


@settings(FUZZ, max_examples=300)
@given(data=damaged_zips(), suffix=st.sampled_from([".whl", ".pt2"]))
def test_damaged_archive_gives_coded_reports_within_budget(data: bytes, suffix: str) -> None:
    reports, read = read_counted(data, suffix)
    assert_coded(reports)
    # the central directory once, each member's compressed bytes once, each binary within its budget
    assert read <= 3 * len(data) + 70_000 + 8 * SMALL.max_read_bytes, (read, len(data))


def test_a_member_with_an_empty_name_is_not_a_traceback() -> None:
    """Found by this fuzzer in CI: ``ZipInfo.is_dir()`` indexes the name, and a damaged central directory can
    give a member an empty name."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("x/data/aotinductor/model/a.o", b"")
    data = buf.getvalue().replace(b"x/data/aotinductor/model/a.o", b"\0" * len("x/data/aotinductor/model/a.o"), 1)
    cd = data.rindex(b"PK\x01\x02")
    data = data[: cd + 28] + b"\0\0" + data[cd + 30 :]  # the central directory's name length: 0
    for suffix in (".whl", ".pt2"):
        reports, _ = read_counted(data, suffix)
        assert_coded(reports)
