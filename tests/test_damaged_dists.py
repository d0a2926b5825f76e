"""A damaged distribution in the environment (issue 26, item 3): ``doctor`` names it and checks the rest;
``install`` refuses the environment naming it, not with a traceback from its probe."""

from __future__ import annotations

import json
import shutil
import sys
from typing import TYPE_CHECKING, Any

import pytest
import tomlkit

from cudaresolve.cli import main
from cudaresolve.errors import InvalidInput
from cudaresolve.install.installed import read_installed
from test_doctor import DB_DATA, FIXTURES, make_dist, torch_files

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

TARGET = ["--gpu", "A100", "--driver", "535.104.05", "--python-version", "3.11", "--platform", "linux_x86_64"]


def _latin1_metadata(info: Path) -> None:
    (info / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: broken\nVersion: 1.0\nSummary: caf\xe9\n")


def _blank_record_line(info: Path) -> None:
    (info / "RECORD").write_text("broken/__init__.py,,\n\n" + (info / "RECORD").read_text())


def _four_field_record_row(info: Path) -> None:
    (info / "RECORD").write_text("broken/__init__.py,sha256=x,1,extra\n" + (info / "RECORD").read_text())


def _latin1_record(info: Path) -> None:
    (info / "RECORD").write_bytes("broken/caf\u00e9.py,,\n".encode("latin-1") + (info / "RECORD").read_bytes())


def _utf16_metadata(info: Path) -> None:
    (info / "METADATA").write_bytes("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n".encode("utf-16"))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "latin1-metadata": _latin1_metadata,
    "blank-record-line": _blank_record_line,
    "four-field-record-row": _four_field_record_row,
    "latin1-record": _latin1_record,
    "utf16-metadata": _utf16_metadata,
}


def _site(tmp_path: Path, damage: Callable[[Path], None], name: str) -> tuple[Path, Path]:
    """A good torch and fbgemm-gpu, and ``name`` damaged (a checked package's RECORD is read, any METADATA)."""
    site = tmp_path / "site-packages"
    if name != "torch":
        make_dist(site, "torch", "2.7.1+cu118", torch_files())
    make_dist(site, "fbgemm-gpu", "1.2.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "uncompressed.so"})
    info = make_dist(site, name, "2.7.1+cu118" if name == "torch" else "1.0",
                     torch_files() if name == "torch" else {"broken/__init__.py": ""})
    damage(info)
    return site, info


@pytest.mark.parametrize("kind", sorted(DAMAGE))
@pytest.mark.parametrize("name", ["torch", "broken"])
def test_doctor_names_the_damaged_dist_and_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, name: str
) -> None:
    if name == "broken" and kind in ("blank-record-line", "four-field-record-row", "latin1-record"):
        pytest.skip("the RECORD of a package doctor does not check is never read")
    compat = tmp_path / "compat.toml"
    compat.write_text(tomlkit.dumps(DB_DATA))
    site, info = _site(tmp_path, DAMAGE[kind], name)
    code = main(["doctor", "--site-packages", str(site), *TARGET, "--compat", str(compat), "--json"])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 1 and data["ok"] is False
    damaged = [p for p in data["problems"] if p["code"] == "damaged-dist"]
    assert len(damaged) == 1 and str(info) in damaged[0]["message"], data["problems"]
    checked = [p["name"] for p in data["packages"]]  # the rest is still checked
    assert "fbgemm-gpu" in checked and ("torch" in checked) == (name != "torch")


@pytest.mark.parametrize("kind", ["latin1-metadata", "latin1-record", "utf16-metadata"])
def test_install_probe_names_the_damaged_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    site, info = _site(tmp_path, DAMAGE[kind], "broken")
    monkeypatch.setenv("PYTHONPATH", str(site))  # the probe reads what this interpreter's sys.path holds
    with pytest.raises(InvalidInput) as raised:
        read_installed(sys.executable, records=["broken", "torch"])  # RECORDs are read for these names
    message = str(raised.value)
    assert str(info) in message and "Traceback" not in message and "--python" not in message
    shutil.rmtree(info)
    assert "fbgemm-gpu" in read_installed(sys.executable)  # the same environment without it is read
