"""Large index pages parsed in a helper process. Does I/O: one child process and its pipes.

A cold lock is bound by the interpreter lock, not by the network: PyPI sends pydantic-core's 7 MB page in
25 ms, but a thread reading it waits for the lock at every socket read while other threads parse pages,
up to the switch interval each time (a 16 KB TLS record per read). Parsing the large pages in a second
process takes that work off the lock and onto another core. ``PageWorker`` is the parent's handle: the
child is started on the first page the run parses (that page is parsed here meanwhile) and serves once it
says it is ready; it parses a body as ``parsed_cache.parse_stored`` does, stores the parsed form where the
parent would, and sends back its rows. Whatever goes wrong on the way (no child, a dead or silent one, a
page the child cannot parse) answers None, and the caller parses the page itself, as it did before: the
worker only moves work, it never decides an answer or an error.

Frames: a request is ``<II`` (lengths of the JSON head and of the body) then both; a reply is ``<I`` then
that many bytes, empty for "parse it yourself". The child reads only its stdin, ignores SIGINT (Ctrl-C
is the parent's to handle) and ends at the end of its input, so it never outlives its parent.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.index.pipes import end_child, python_command, read_exactly, readable, write_all

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence
    from types import TracebackType

__all__ = ["PageWorker", "serve"]

_REQUEST: Final = struct.Struct("<II")
_REPLY: Final = struct.Struct("<I")
_READY: Final = b"R"
#: The longest the parent waits for one page (a bound, not a fact): far beyond the seconds the largest page
#: takes; past it the child is stopped and the page parsed in the parent.
_REPLY_SECONDS: Final = 120.0
#: What the child answers with by default: a page parsed and stored as ``parse_files`` would (named, not imported:
#: that module uses this one).
_HANDLER: Final = "cudaresolve.index.parsed_cache:parse_stored"


class PageWorker:
    """The parent's end of the helper process; threads share it, one request at a time. A context manager:
    leaving it ends the child."""

    def __init__(
        self, handler: str = _HANDLER, *, command: Sequence[str] | None = None, timeout: float = _REPLY_SECONDS
    ) -> None:
        """``handler``: what the child answers a request with (``module:function``, given the request and the
        body, returning the reply); ``command``: what starts the child (default: this interpreter running
        ``serve(handler)``); ``timeout``: seconds to wait for a reply."""
        self._command = list(command) if command is not None else _serve_command(handler)
        self._timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._broken = False  # failed once: never asked again this run

    def __enter__(self) -> PageWorker:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def parse(self, request: dict[str, Any], body: str, *, per_byte: int) -> bytes | None:
        """The child's reply to ``request`` with ``body`` (sent as UTF-8, surrogates kept), at most ``per_byte``
        bytes per byte of it; None when the caller is to parse the page itself: the child is only being started
        now, is not ready yet, or failed (then it is stopped for the run). Anything that stops a request half way
        (Ctrl-C too) stops the child, whose next reply would otherwise answer the wrong page. The body is encoded
        only once the child is free: threads waiting their turn hold no copy of their page."""
        with self._lock:
            if self._broken:
                return None
            try:
                if not self._started():
                    return None
                data = body.encode("utf-8", errors="surrogatepass")
                return self._ask(request, data, per_byte * len(data) + 4096)
            except (OSError, ValueError, struct.error, TimeoutError):
                self._fail()
                return None
            except BaseException:
                self._fail()
                raise

    def refuse(self) -> None:
        """The last reply was of no use (not rows): the child is stopped for the run."""
        with self._lock:
            self._fail()

    def _fail(self) -> None:
        self._broken = True
        self._stop()

    def _started(self) -> bool:
        """Whether the child is up and has said it is ready; starts it on the first call."""
        import subprocess

        if self._proc is None:
            self._proc = subprocess.Popen(
                self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
            )
            assert self._proc.stdin is not None
            os.set_blocking(self._proc.stdin.fileno(), False)  # a child that stops reading cannot hold a write
            return False
        if not self._ready:
            assert self._proc.stdout is not None
            if not readable(self._proc.stdout, 0.0):
                return False
            if read_exactly(self._proc.stdout, len(_READY), self._deadline()) != _READY:
                raise ValueError("the page worker did not start")
            self._ready = True
        return True

    def _ask(self, request: dict[str, Any], body: bytes, limit: int) -> bytes | None:
        assert self._proc is not None and self._proc.stdin is not None and self._proc.stdout is not None
        head = json.dumps(request).encode("utf-8")
        deadline = self._deadline()
        write_all(self._proc.stdin, _REQUEST.pack(len(head), len(body)) + head, deadline)
        write_all(self._proc.stdin, body, deadline)
        (size,) = _REPLY.unpack(read_exactly(self._proc.stdout, _REPLY.size, deadline))
        if size > limit:
            raise ValueError(f"a reply of {size} bytes")
        reply = read_exactly(self._proc.stdout, size, deadline)
        return reply or None

    def _deadline(self) -> float:
        return time.monotonic() + self._timeout

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()

    def close(self) -> None:
        """End the child: its input closed, it exits; one that does not at once is killed."""
        with self._lock:
            self._broken = True
            proc, self._proc = self._proc, None
        if proc is not None:
            end_child(proc)


def _serve_command(handler: str) -> list[str]:
    """This interpreter running ``serve(handler)`` with this process's module path (``pipes.python_command``)."""
    return python_command(f"from cudaresolve.index.page_worker import serve; serve({handler!r})")


def serve(handler: str) -> None:
    """The child's loop: one reply per request on stdin, each ``handler``'s (``module:function``), until stdin
    ends."""
    import importlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    module, _, name = handler.partition(":")
    answer = getattr(importlib.import_module(module), name)

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(_READY)
    stdout.flush()
    while True:
        head = stdin.read(_REQUEST.size)
        if len(head) < _REQUEST.size:
            return
        head_size, body_size = _REQUEST.unpack(head)
        request, body = stdin.read(head_size), stdin.read(body_size)
        if len(request) < head_size or len(body) < body_size:
            return
        try:
            reply = answer(json.loads(request), body.decode("utf-8", errors="surrogatepass"))
        except Exception:  # the parent parses the page itself and says what is wrong with it
            reply = b""
        stdout.write(_REPLY.pack(len(reply)) + reply)
        stdout.flush()
