"""A wheel's METADATA by a walk of the zip's directory (``index.wheel_zip``): where it answers, it answers what
``zipfile`` reads (the way ``lazy_wheel.wheel_metadata`` used zipfile), on archives of every shape and on
archives with any byte changed; and it does answer for the plain archives wheels are."""

from __future__ import annotations

import io
import os
import re
import struct
import zipfile
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudaresolve.index.wheel_zip import find_member

NAMES = re.compile(r"[^/]+\.dist-info/METADATA")
LIMIT = 4096


def _zipfile_reads(archive: bytes) -> bytes | None:
    """What the zipfile way gives: the one matching member's bytes, None for anything it refuses."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as wheel:
            names = [n for n in wheel.namelist() if NAMES.fullmatch(n)]
            if len(names) != 1 or wheel.getinfo(names[0]).file_size > LIMIT:
                return None
            with wheel.open(names[0]) as member:
                data = member.read(LIMIT + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError, KeyError,
            OSError, RuntimeError, zlib.error, struct.error):  # fmt: skip
        return None
    return data if len(data) <= LIMIT else None


_MEMBER_NAMES = st.sampled_from([
    "demo-1.0.dist-info/METADATA", "demo-1.0.dist-info/RECORD", "demo/__init__.py", "x/demo.dist-info/METADATA",
    "démo-1.0.dist-info/METADATA", "demo.dist-info/METADATA\0.txt", "a.dist-info/METADATA", ".dist-info/METADATA",
    "METADATA", "demo-1.0.data/purelib/z.py",
])  # fmt: skip
_METHODS = st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2])
_MEMBER = st.tuples(_MEMBER_NAMES, st.binary(max_size=300), _METHODS)


def _archive(members: list[tuple[str, bytes, int]], comment: bytes, zip64: bool, before: bytes) -> bytes:
    out = io.BytesIO()
    out.write(before)
    with zipfile.ZipFile(out, "a" if before else "w") as wheel:
        for name, data, method in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            with wheel.open(info, "w", force_zip64=zip64) as handle:
                handle.write(data)
        wheel.comment = comment
    return out.getvalue()


@pytest.mark.filterwarnings("ignore:Duplicate name")
@given(
    st.lists(_MEMBER, max_size=6), st.sampled_from([b"", b"note"]), st.booleans(), st.sampled_from([b"", b"#!x\n"]),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=3),
)
@settings(max_examples=500, deadline=None)
def test_where_the_walk_answers_it_answers_what_zipfile_reads(
    members: list[tuple[str, bytes, int]], comment: bytes, zip64: bool, before: bytes, changes: list[tuple[int, int]]
) -> None:
    archive = bytearray(_archive(members, comment, zip64, before))
    for at, value in changes:
        archive[at % len(archive)] = value
    found = find_member(io.BytesIO(bytes(archive)), NAMES, LIMIT)
    if found is not None:
        assert found == _zipfile_reads(bytes(archive))


@given(st.lists(_MEMBER, max_size=6), st.binary(min_size=1, max_size=300), st.booleans(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_a_plain_wheel_is_read_by_the_walk(
    members: list[tuple[str, bytes, int]], text: bytes, deflated: bool, zip64: bool
) -> None:  # zip64 here: zip64 blocks in the local headers alone, as zipfile writes them for small members
    others = [(n, d, m) for n, d, m in members if "METADATA" not in n and m != zipfile.ZIP_BZIP2]
    method = zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED
    archive = _archive([*others, ("demo-1.0.dist-info/METADATA", text, method)], b"", zip64, b"")
    assert find_member(io.BytesIO(archive), NAMES, LIMIT) == text == _zipfile_reads(archive)


def test_what_the_walk_leaves_to_zipfile() -> None:
    plain = [("demo-1.0.dist-info/METADATA", b"Name: demo\n", zipfile.ZIP_DEFLATED)]
    assert find_member(io.BytesIO(_archive(plain, b"", False, b"")), NAMES, LIMIT) == b"Name: demo\n"
    for archive in (
        _archive(plain, b"a comment", False, b""),
        _archive([(plain[0][0], plain[0][1], zipfile.ZIP_BZIP2)], b"", False, b""),
        _archive(plain + plain, b"", False, b""),  # two of them
        _archive([("demo-1.0.dist-info/METADATA", b"x" * (LIMIT + 1), zipfile.ZIP_DEFLATED)], b"", False, b""),
    ):
        assert find_member(io.BytesIO(archive), NAMES, LIMIT) is None


def _directory(archive: bytes) -> list[int]:
    """Where each central directory record of ``archive`` starts."""
    count, _, start = struct.unpack_from("<HLL", archive, len(archive) - 12)
    found = []
    for _ in range(count):
        found.append(start)
        name, extra, note = struct.unpack_from("<3H", archive, start + 28)
        start += 46 + name + extra + note
    return found


def _patched(archive: bytes, at: int, value: bytes) -> bytes:
    return archive[:at] + value + archive[at + len(value) :]


def test_each_damage_zipfile_refuses_the_walk_refuses() -> None:
    members = [("demo/__init__.py", b"x = 1\n", zipfile.ZIP_STORED), ("demo-1.0.dist-info/METADATA", b"Name: demo\n",
               zipfile.ZIP_STORED)]  # fmt: skip
    archive = _archive(members, b"", False, b"")
    other, metadata = _directory(archive)
    data_at = archive.index(b"Name: demo")
    damaged = {
        "the member's bytes": _patched(archive, data_at, b"Nane"),
        "a newer zip version": _patched(archive, other + 6, bytes([64, 0])),
        "an extra field longer than its record": _with_extra(members, struct.pack("<HH", 0x5455, 9) + b"abcd"),
        "a name flagged UTF-8 that is not": _patched(_patched(archive, other + 8, struct.pack("<H", 0x800)),
                                                    other + 46, b"\xff"),
        "another name in the local header": _patched(archive, archive.index(b"demo-1.0.dist-info"), b"dema"),
        "a record's signature": _patched(archive, metadata, b"PK\x01\x03"),
    }  # fmt: skip
    assert find_member(io.BytesIO(archive), NAMES, LIMIT) == b"Name: demo\n" == _zipfile_reads(archive)
    for why, broken in damaged.items():
        assert _zipfile_reads(broken) is None, why
        assert find_member(io.BytesIO(broken), NAMES, LIMIT) is None, why
    accented = _archive([("démo-1.0.dist-info/METADATA", b"Name: demo\n", zipfile.ZIP_STORED)], b"", False, b"")
    header = struct.unpack_from("<L", accented, _directory(accented)[0] + 42)[0]
    assert find_member(io.BytesIO(accented), NAMES, LIMIT) == b"Name: demo\n" == _zipfile_reads(accented)
    unflagged = _patched(accented, header + 6, struct.pack("<H", 0))  # the local name then reads as cp437
    assert find_member(io.BytesIO(unflagged), NAMES, LIMIT) is None is _zipfile_reads(unflagged)
    zip64 = _with_extra(members, struct.pack("<HHQ", 1, 8, 6))  # read by zipfile, left to it
    assert find_member(io.BytesIO(zip64), NAMES, LIMIT) is None and _zipfile_reads(zip64) == b"Name: demo\n"


def _with_extra(members: list[tuple[str, bytes, int]], extra: bytes) -> bytes:
    """``members`` archived with ``extra`` as the first one's extra field, in its header and its record."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as wheel:
        for n, (name, data, method) in enumerate(members):
            info = zipfile.ZipInfo(name)
            info.compress_type, info.extra = method, extra if n == 0 else b""
            wheel.writestr(info, data)
    return out.getvalue()


class _Reads(io.BytesIO):
    """A file that remembers the largest read asked of it."""

    most = 0

    def read(self, size: int | None = -1) -> bytes:
        self.most = max(self.most, size if size is not None and size >= 0 else len(self.getvalue()))
        return super().read(size)


@pytest.mark.parametrize("claimed", [0xFFFFFFF0, 200_000])
def test_a_member_claiming_a_huge_packed_size_is_not_read(claimed: int) -> None:
    members = [("demo-1.0.dist-info/METADATA", b"Name: demo\n", zipfile.ZIP_STORED),
               ("demo/big.bin", bytes(300_000), zipfile.ZIP_STORED)]  # fmt: skip
    archive = _archive(members, b"", False, b"")
    record = _directory(archive)[0]
    file = _Reads(_patched(archive, record + 20, struct.pack("<L", claimed)))  # its compressed size
    assert find_member(file, NAMES, LIMIT) is None
    assert file.most < 16 * 1024  # the directory and headers; never the claimed member


def test_an_end_record_with_a_comment_length_is_left_to_zipfile() -> None:
    archive = _archive([("demo-1.0.dist-info/METADATA", b"Name: demo\n", zipfile.ZIP_STORED)], b"", False, b"")
    end = len(archive) - 22
    crafted = _patched(archive, end + 8, struct.pack("<HH", 0x4B50, 0x0605))  # "PK\x05\x06" inside the record
    crafted = _patched(crafted, end + 20, struct.pack("<H", 1))
    assert find_member(io.BytesIO(crafted), NAMES, LIMIT) is None
    assert _zipfile_reads(crafted) is None


@pytest.mark.parametrize("separator", ["/", "\\"])
def test_names_are_read_with_the_separator_zipfile_uses(monkeypatch: pytest.MonkeyPatch, separator: str) -> None:
    members = [("evil.dist-info\\METADATA", b"Name: evil\n", zipfile.ZIP_STORED),
               ("demo-1.0.dist-info/METADATA", b"Name: demo\n", zipfile.ZIP_STORED)]  # fmt: skip
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as wheel:
        for name, data, method in members:
            wheel.writestr(zipfile.ZipInfo(name), data, method)
    monkeypatch.setattr(os, "sep", separator)  # zipfile.ZipInfo reads it when a name is read back
    expected = _zipfile_reads(out.getvalue())
    assert expected == (b"Name: demo\n" if separator == "/" else None)
    assert find_member(io.BytesIO(out.getvalue()), NAMES, LIMIT) == expected
