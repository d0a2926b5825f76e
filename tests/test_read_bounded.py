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


def test_a_child_that_floods_its_output_costs_at_most_the_cap() -> None:
    """Found by the adversarial hunt: an ``nvidia-smi`` or ``--python`` that floods its output was read whole
    (several GB before its timeout) and ended in a raw ``MemoryError``."""
    import subprocess
    import sys
    import time

    from cudaresolve.core.processes import run_capped

    flood = "import sys; sys.stdout.write('x' * 5_000_000); sys.stderr.write('e' * 3_000_000); sys.exit(3)"
    code, out, err = run_capped([sys.executable, "-c", flood], timeout=60, cap=1000)
    assert (code, out, err) == (3, b"x" * 1000, b"e" * 1000)
    with pytest.raises(subprocess.TimeoutExpired):
        run_capped([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('y' * 65536)"], timeout=1, cap=10)
    # a child that prints, then leaves a process holding its output open: what it printed is still read (a
    # buffered read(65536) had waited for 64 KiB or the end, which never came, and returned nothing)
    left = ("import subprocess, sys; print('hi', flush=True); "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(20)'])")
    start = time.monotonic()
    assert run_capped([sys.executable, "-c", left], timeout=3, cap=1000)[:2] == (0, b"hi\n")
    assert time.monotonic() - start < 5  # not held until the left process ends (20 s), nor a timeout per pipe (6 s)


def test_nvidia_smi_output_that_is_not_utf8_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cudaresolve.target.detect import run_nvidia_smi

    smi = tmp_path / "nvidia-smi"
    smi.write_bytes(b"#!/bin/sh\nprintf 'A100\\377, 8.0'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert run_nvidia_smi(["-L"]) == (0, "A100\ufffd, 8.0")


def test_an_ended_child_is_not_waited_on_for_the_process_it_left_holding_its_output() -> None:
    """Found by the adversarial hunt: an interpreter (``install --python``, ``doctor --python``) that printed its
    answer and ended, leaving a process behind with its stdout, held the run until that process ended or the
    whole timeout passed (30 s for a probe, 120 s for doctor's). Its answer is all in the pipe once it ends: what
    the left process writes later ("late", seconds after) is not waited for."""
    import sys

    from cudaresolve.core.processes import run_capped

    left = ("import subprocess, sys; print('hi', flush=True); subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(8); print(\"late\", flush=True)'])")  # fmt: skip
    assert run_capped([sys.executable, "-c", left], timeout=60, cap=1000)[:2] == (0, b"hi\n")


def test_a_reader_left_on_a_held_pipe_never_fails_nor_reads_another_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by CI: ``run_capped`` closed the child's pipes while a reader still read one that a grandchild held.
    The reader then failed (``I/O operation on closed file``), or read the next file given the freed number: an
    ``nvidia-smi`` run after it came back empty."""
    import sys
    import threading
    import time

    from cudaresolve.core.processes import run_capped

    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    late = ("import subprocess, sys; print('hi', flush=True); subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(4); print(\"late\", flush=True)'])")  # fmt: skip
    assert run_capped([sys.executable, "-c", late], timeout=1, cap=1000)[:2] == (0, b"hi\n")
    later = [run_capped([sys.executable, "-c", f"print({n})"], timeout=30, cap=1000)[1] for n in range(8)]
    time.sleep(4)  # the grandchild printed and ended: its reader read it and stopped
    assert later == [f"{n}\n".encode() for n in range(8)]
    assert failures == []
