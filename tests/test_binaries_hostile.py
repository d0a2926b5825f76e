"""Hostile files for inspect: empty paths, FIFOs, deep .pt2 metadata, zip members read in one pass."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from cudaresolve.binaries.aoti import package_report
from cudaresolve.binaries.inspect import inspect_path
from cudaresolve.errors import InvalidInput

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
