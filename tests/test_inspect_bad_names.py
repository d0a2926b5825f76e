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


def test_a_wheel_of_very_many_binaries_draws_a_bounded_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the adversarial hunt: a wheel of 20,000 ``.so`` members took 39 s to draw (rich lays out a row in
    about 3 ms; 100,000, the bound on members, minutes). The table and the error lines below it stop at
    ``MAX_ROWS`` (made small here), each with the count left out; ``--json`` still lists every file."""
    from cudaresolve.render import inspect as view

    monkeypatch.setattr(view, "MAX_ROWS", 5)
    wheel = tmp_path / "many-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for i in range(12):
            archive.writestr(f"many/m{i:02}.so", b"\x7fELF")
        archive.writestr("many-1.0.dist-info/METADATA", "Name: many\nVersion: 1.0\n")
    assert main(["inspect", str(wheel)]) == 1
    out = capsys.readouterr().out
    assert out.count("invalid-binary") == 5 + 5  # five rows, then five error lines
    assert "m04.so" in out and "m05.so" not in out
    assert "... and 7 more files, not shown here (--json lists every one)" in out
    assert "... and 7 more files with errors, not shown here (--json lists every one)" in out
    assert main(["inspect", str(wheel), "--json"]) == 1
    import json

    assert len(json.loads(capsys.readouterr().out)["files"]) == 12
