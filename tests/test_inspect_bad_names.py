"""``inspect`` of a wheel whose member name claims UTF-8 but is not: a coded ``invalid-binary``, never an internal
error (found by the adversarial hunt: ``zipfile`` raises ``UnicodeDecodeError`` reading such a name)."""

from __future__ import annotations

import struct
import zipfile
from typing import TYPE_CHECKING

import pytest

from cudaresolve.cli import main

if TYPE_CHECKING:
    from pathlib import Path


def _flagged(path: Path, member: bytes, where: str) -> None:
    """Set the UTF-8 flag of ``member``'s header (``local`` or ``central``) and make its last name byte 0xff."""
    data = bytearray(path.read_bytes())
    sig, name_at, flag_at, head = (b"PK\x03\x04", 26, 6, 30) if where == "local" else (b"PK\x01\x02", 28, 8, 46)
    at = data.find(sig)
    while at >= 0:
        size = struct.unpack_from("<H", data, at + name_at)[0]
        if bytes(data[at + head : at + head + size]) == member:
            struct.pack_into("<H", data, at + flag_at, struct.unpack_from("<H", data, at + flag_at)[0] | 0x800)
            data[at + head + size - 1] = 0xFF
            break
        at = data.find(sig, at + 4)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["central", "local"])
def test_a_member_name_flagged_utf8_that_is_not(tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    wheel = tmp_path / "demo-1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo/lib.so", b"\x7fELF" + b"\0" * 60)
        archive.writestr("demo-1.0.dist-info/METADATA", "Name: demo\nVersion: 1.0\n")
    _flagged(wheel, b"demo/lib.so", where)
    code = main(["inspect", str(wheel)])
    out = capsys.readouterr()
    assert code == 1 and "invalid-binary" in out.out + out.err and "internal" not in out.out + out.err
