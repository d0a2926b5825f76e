"""A helper process's command line, its pipes written within a deadline and read, and its end. Does I/O.

What the page fetcher (``page_fetcher``) needs of its child, apart from what it says: this interpreter started on the
parent's module path, requests written to the child's stdin without ever blocking on a child that stopped reading,
replies read from its stdout, and the child ended by closing its input.
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    import threading

__all__ = ["end_child", "python_command", "read_all", "write_all"]


def python_command(call: str) -> list[str]:
    """This interpreter running ``call`` (Python statements) with this process's module path, so that the child
    imports what the parent imports: ``-P`` keeps ``-c`` from putting the working directory first, ``-E`` ignores
    ``PYTHONPATH`` and the like, and the path is then set to the parent's own."""
    path = [os.path.abspath(entry) for entry in sys.path]  # "" (the working directory) as the folder it names now
    return [sys.executable, "-E", "-P", "-c", f"import sys; sys.path[:] = {path!r}; {call}"]


def write_all(stream: IO[bytes], data: bytes, deadline: float) -> None:
    """All of ``data`` to the non-blocking ``stream`` by ``deadline`` (``time.monotonic``), else ``TimeoutError``."""
    import select

    view = memoryview(data)
    while view:
        if not select.select([], [stream], [], max(0.0, deadline - time.monotonic()))[1]:
            raise TimeoutError("the helper process did not read in time")
        try:
            view = view[os.write(stream.fileno(), view) :]
        except BlockingIOError:
            continue


def read_all(stream: IO[bytes], size: int) -> bytes:
    """``size`` bytes of ``stream`` (unbuffered), waiting as long as the child lives (a thread of its own reads
    them); ``OSError`` when the stream ends first."""
    parts: list[bytes] = []
    while size > 0:
        chunk = os.read(stream.fileno(), min(size, 1 << 20))
        if not chunk:
            raise OSError("the helper process ended")
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def end_child(proc: subprocess.Popen[bytes], *, reader: threading.Thread | None = None) -> None:
    """End the child: its input closed, it exits; one that does not at once is killed. ``reader``: a thread that
    reads the child's output, which sees it end and is waited for before that pipe is closed."""
    import subprocess

    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=1.0)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    finally:
        if reader is not None:
            reader.join(timeout=1.0)
        if proc.stdout is not None:
            proc.stdout.close()
