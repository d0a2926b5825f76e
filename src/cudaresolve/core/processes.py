"""Child processes: those the tool starts in a session of their own (an sdist's build backend, doctor --run's
children) ended with what they started, and a child's output read within a bound. Does I/O: signals, pipes."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import subprocess
    import threading
    from collections.abc import Sequence
    from typing import IO

__all__ = ["drain", "kill_group", "run_capped"]

#: Seconds a reader is still given, past the deadline, to read what an ended child left in its pipe.
_GRACE: Final = 0.5
#: Seconds the readers are given once the child has ended: all it wrote is in its pipes by then, read in far less
#: time; what a process it left behind writes later is not its answer, and is not waited for.
_AFTER_EXIT: Final = 2.0


def kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill ``child``'s whole process group (it was started with ``start_new_session``): what it started too."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # gone already, or not ours to signal
        pass


def drain(stream: IO[bytes], into: bytearray, *, keep: int, last: bool = False) -> threading.Thread:
    """Start a thread that reads ``stream`` to its end into ``into``, which keeps the first ``keep`` bytes (the last,
    when ``last``): a child that floods its output costs no memory. Each read takes what the pipe holds (a
    buffered read(n) waits for n bytes or the end). The thread owns ``stream`` and closes it at its end: closed
    earlier, by a caller done waiting, its descriptor's number could go to the next file opened, which the thread
    would then read."""
    import threading

    def run() -> None:
        try:
            fd = stream.fileno()
            while chunk := os.read(fd, 65536):
                if last:
                    into.extend(chunk)
                    del into[:-keep]
                elif len(into) < keep:
                    into.extend(chunk[: keep - len(into)])
        except OSError:  # the pipe broke: what was read is kept
            pass
        finally:
            stream.close()

    thread = threading.Thread(target=run, name="drain", daemon=True)
    thread.start()
    return thread


def run_capped(argv: Sequence[str], *, timeout: float, cap: int) -> tuple[int, bytes, bytes]:
    """Run ``argv`` (no stdin) -> (exit code, stdout, stderr), each stream kept to its first ``cap`` bytes: the rest
    is read and dropped. ``subprocess.TimeoutExpired`` past ``timeout`` seconds, the child killed; ``OSError`` when
    it cannot start. A process the child left holding its output holds the caller at most ``_AFTER_EXIT`` seconds
    past the child's end (never past ``timeout``, but for the reader's ``_GRACE``)."""
    import subprocess
    import time

    kept = (bytearray(), bytearray())
    deadline = time.monotonic() + timeout
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    readers = [drain(child.stdout, kept[0], keep=cap), drain(child.stderr, kept[1], keep=cap)]
    try:
        code = child.wait(timeout)
    except BaseException:
        child.kill()
        child.wait()
        raise
    ended = time.monotonic()
    for reader in readers:  # a grandchild holding a pipe open: left to its reader, which owns the pipe
        reader.join(max(min(deadline, ended + _AFTER_EXIT) - time.monotonic(), _GRACE))  # one deadline, both pipes
    return code, bytes(kept[0]), bytes(kept[1])
