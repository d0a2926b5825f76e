"""``core.files.read_regular_bounded`` asks the system for what the file holds, never for its whole limit.

Found by the adversarial hunt: ``install --from`` reads a ``file:///`` wheel with a 4 GiB limit, and ``os.read``
allocates what it is asked for: an 851-byte wheel failed as ``internal-error: MemoryError`` under a 4 GB
address-space cap."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from cudaresolve.core import files
from cudaresolve.core.files import NotRegularFile, read_regular_bounded

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("size", [0, 851, (1 << 20) + 5])
def test_reads_ask_for_what_the_file_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    path = tmp_path / "f.whl"
    path.write_bytes(b"x" * size)
    asked: list[int] = []
    real = os.read

    def recorded(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, n)

    monkeypatch.setattr(files.os, "read", recorded)
    assert read_regular_bounded(path, 4 << 30) == b"x" * size
    assert max(asked) <= min(size + 1, 1 << 20), asked
    assert read_regular_bounded(path, 10) == b"x" * min(size, 11)  # a limit still cuts at limit + 1


def test_a_fifo_is_refused_before_any_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        read_regular_bounded(fifo, 1 << 20)


def test_a_fifo_given_as_the_interpreter_is_no_script_and_is_not_opened(tmp_path: Path) -> None:
    """Found by the adversarial hunt: ``install --python FIFO`` hung in ``open``, reading for a ``#!`` line."""
    from cudaresolve.install.probecache import _is_script

    fifo = tmp_path / "python"
    os.mkfifo(fifo)
    assert _is_script(str(fifo)) is False
