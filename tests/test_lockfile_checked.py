"""A lock text ``packaging.pylock`` found valid is marked in the user cache and not validated again
(``lock.lockfile._validate_pylock``); any other text still is."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import InvalidLockfile
from cudaresolve.lock.lockfile import PYLOCK_CHECKED, dumps_pylock, loads_pylock
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import LockedPackage

if TYPE_CHECKING:
    from pathlib import Path

pylock = pytest.importorskip("packaging.pylock")


def _text(version: str) -> str:
    package = LockedPackage(name="demo", version=version, index="https://example.invalid/simple",
                            url=f"https://example.invalid/demo-{version}-py3-none-any.whl",
                            filename=f"demo-{version}-py3-none-any.whl", sha256="ab" * 32)
    return dumps_pylock(Lock(packages=(package,), index_url="https://example.invalid/simple"))


def _markers(cache: Path) -> list[Path]:
    return [p for p in (cache / PYLOCK_CHECKED).iterdir() if len(p.name) == 64]


def test_a_text_found_valid_is_not_validated_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path))
    text = _text("1.0")
    first = loads_pylock(text)
    (marker,) = _markers(tmp_path)
    assert marker.stat().st_mode & 0o077 == 0

    def refuse(data: object) -> None:
        raise pylock.PylockValidationError("validated again")

    monkeypatch.setattr(pylock.Pylock, "from_dict", staticmethod(refuse))
    assert loads_pylock(text) == first  # marked: packaging.pylock is not asked
    with pytest.raises(InvalidLockfile, match="validated again"):  # another text is
        loads_pylock(_text("2.0"))
    assert _markers(tmp_path) == [marker]  # nothing marked for a text that failed
