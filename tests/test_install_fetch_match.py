"""The wheel pip leaves is matched to its locked package as PEP 440 compares versions, and a package pip gave no
wheel of is a coded error (found by this stop's hostile-input hunt: a requirements lock pinning falpha==1.0.0,
whose file is falpha-1.0-...whl, and a locked sdist whose build makes another project, both ended in KeyError)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cudaresolve.install.fetch import _downloaded, _matched
from cudaresolve.install.pip import wheel_dir

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(("locked", "file"), [("1.0.0", "1.0"), ("1.0", "1.0.0"), ("2.7.1+cu118", "2.7.1+cu118"),
                                              ("1.0.post0", "1.0.post0")])  # fmt: skip
def test_a_locked_version_finds_the_file_pep_440_calls_equal(tmp_path: Path, locked: str, file: str) -> None:
    folder = tmp_path / wheel_dir("w")
    folder.mkdir(parents=True)
    (folder / f"Falpha-{file}-py3-none-any.whl").write_bytes(b"")
    found = _downloaded(str(tmp_path / "w"))
    assert found[_matched("falpha", locked)].name == f"Falpha-{file}-py3-none-any.whl"
    assert _matched("falpha", "9.9") not in found
