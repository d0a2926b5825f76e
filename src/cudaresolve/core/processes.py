"""Child processes: those the tool starts in a session of their own (an sdist's build backend, doctor --run's
children) ended with what they started, and a child's output read within a bound. Does I/O: signals, pipes."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence
    from typing import IO

__all__ = ["kill_group", "run_capped"]


def kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill ``child``'s whole process group (it was started with ``start_new_session``): what it started too."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # gone already, or not ours to signal
        pass


def run_capped(argv: Sequence[str], *, timeout: float, cap: int) -> tuple[int, bytes, bytes]:
    """Run ``argv`` (no stdin) -> (exit code, stdout, stderr), each stream kept to its first ``cap`` bytes: the rest
    is read and dropped, so a child that floods its output costs no memory. ``subprocess.TimeoutExpired`` past
    ``timeout`` seconds, the child killed; ``OSError`` when it cannot start."""
    import subprocess
    import threading

    kept = (bytearray(), bytearray())

    def drain(stream: IO[bytes], into: bytearray) -> None:
        while chunk := os.read(stream.fileno(), 65536):  # what the pipe holds: read(n) waits for n bytes or EOF
            if len(into) < cap:
                into += chunk[: cap - len(into)]

    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        readers = [threading.Thread(target=drain, args=(s, k), daemon=True)
                   for s, k in ((child.stdout, kept[0]), (child.stderr, kept[1]))]  # fmt: skip
        for reader in readers:
            reader.start()
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            raise
        for reader in readers:
            reader.join(timeout)  # a grandchild holding the pipe open: left to its daemon thread
    return code, bytes(kept[0]), bytes(kept[1])
