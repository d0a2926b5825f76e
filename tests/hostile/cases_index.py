"""Hostile package indexes: a local server that trickles, stalls, never ends, redirects away or lists bad links.

Each case starts a ``HostileServer`` on 127.0.0.1 in ``setup``, points the PyTorch index at it
through ``[tool.cudaresolve] index-mirror`` in the case's ``pyproject.toml`` (the port is only
known then), and runs ``lock torch --cpu``. The server stops by itself after ``LIFETIME`` seconds
and every loop in it is bounded. ``check`` asserts the bound on work that does not depend on the
machine's speed: bytes the server got to send, what reached the cache, the deadline (with a wide
margin), the notice the user saw.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hostile.case import Case, Result

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

#: A server lives at most this long, whatever happens to the test that started it.
LIFETIME = 45.0
#: The network deadline the cases set, in seconds (``CUDARESOLVE_NETWORK_TIMEOUT``).
DEADLINE = 2.0
#: A wide margin over the deadline: interpreter start, resolving and a last read timeout fit in it.
MARGIN = 20.0
#: The page cap of the client (``index.limits.MAX_PAGE_BYTES``), and socket buffers on top of it.
CAP = 64 * 1024 * 1024
BUFFERS = 32 * 1024 * 1024
WHEEL = "torch-2.7.1+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
CHUNK = b"<a>" + b"x" * (64 * 1024 - 3)


@dataclass
class HostileServer:
    """Serves every connection with ``behaviour(conn, server)``; stops at ``stop()`` or after ``lifetime``."""

    behaviour: Callable[[socket.socket, HostileServer], None]
    lifetime: float = LIFETIME
    sent: int = 0
    requests: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return not self._stop.is_set() and time.monotonic() - self.started < self.lifetime

    def stop(self) -> None:
        self._stop.set()

    def send(self, conn: socket.socket, data: bytes) -> bool:
        """Send ``data``; False once the client has gone (or the server is stopping)."""
        if not self.alive():
            return False
        try:
            conn.sendall(data)
        except OSError:
            return False
        with self._lock:
            self.sent += len(data)
        return True

    def _serve(self) -> None:
        try:
            while self.alive():
                try:
                    conn, _ = self._sock.accept()
                except TimeoutError:
                    continue
                except OSError:
                    break
                threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        finally:
            self._sock.close()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5.0)
            try:
                head = conn.recv(65536).decode("latin-1")
            except OSError:
                return
            with self._lock:
                self.requests.append(head.split("\r\n", 1)[0])
            conn.settimeout(10.0)
            self.behaviour(conn, self)


def trickle(conn: socket.socket, server: HostileServer) -> None:
    """A page promised at 100 kB, sent one byte every half second (a byte every 5 s in the report)."""
    if server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"):
        for _ in range(int(LIFETIME * 2)):
            if not server.send(conn, b"<"):
                return
            time.sleep(0.5)


def slow_headers(conn: socket.socket, server: HostileServer) -> None:
    """A status line, then one header line a second for as long as it lives: no read ever waits long."""
    if server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"):
        for n in range(int(LIFETIME)):
            if not server.send(conn, f"X-Slow-{n}: {n}\r\n".encode()):
                return
            time.sleep(1.0)


def slow_status_line(conn: socket.socket, server: HostileServer) -> None:
    """The status line itself, one byte every half second, then headers one byte at a time."""
    for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"x" * int(LIFETIME * 2):
        if not server.send(conn, bytes([byte])):
            return
        time.sleep(0.5)


def redirect_to_slow_headers(conn: socket.socket, server: HostileServer) -> None:
    """The first request is redirected (same host); the second gets ``slow_headers``."""
    if len(server.requests) == 1:
        server.send(conn, b"HTTP/1.1 302 Found\r\nLocation: /whl/cpu/torch/slow/\r\nContent-Length: 0\r\n\r\n")
    else:
        slow_headers(conn, server)


def stall(conn: socket.socket, server: HostileServer) -> None:
    """Accepts the request and never answers."""
    while server.alive():
        time.sleep(0.1)


def endless(conn: socket.socket, server: HostileServer) -> None:
    """200 with no length, then 64 KiB chunks until the client hangs up (at most 1 GiB)."""
    if server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"):
        for _ in range(16 * 1024):
            if not server.send(conn, CHUNK):
                return


def huge_length(conn: socket.socket, server: HostileServer) -> None:
    """Announces a terabyte."""
    server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000000000000\r\n\r\n<a>")


def answer(
    body: str, status: str = "200 OK", extra: str = "", media: str = "text/html"
) -> Callable[[socket.socket, HostileServer], None]:
    def behaviour(conn: socket.socket, server: HostileServer) -> None:
        data = body.replace("{base}", server.base).encode()
        head = f"HTTP/1.1 {status}\r\nContent-Type: {media}\r\nContent-Length: {len(data)}\r\n{extra}"
        server.send(conn, (head.replace("{base}", server.base) + "Connection: close\r\n\r\n").encode() + data)

    return behaviour


def links(*hrefs: str) -> Callable[[socket.socket, HostileServer], None]:
    return answer("".join(f'<a href="{h}#sha256={"a" * 64}">{WHEEL}</a>\n' for h in hrefs))


_SERVERS: dict[str, HostileServer] = {}


def with_server(behaviour: Callable[[socket.socket, HostileServer], None]) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        server = HostileServer(behaviour)
        _SERVERS[str(tmp)] = server
        # PyPI on a closed loopback port: a CPU target whose PyTorch index fails falls back to PyPI's set, and the
        # test stays off the network with the hostile server the only one that answers
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        pypi = f'"https://pypi.org/simple" = "http://127.0.0.1:{port}/simple"'
        mirror = f'{{"https://download.pytorch.org/whl" = {json.dumps(server.base + "/whl")}, {pypi}}}'
        (tmp / "pyproject.toml").write_text(f"[tool.cudaresolve]\nindex-mirror = {mirror}\n")

    return setup


def direct_reference_to(behaviour: Callable[[socket.socket, HostileServer], None]) -> Callable[[Path], None]:
    """A requirements file naming a wheel by URL on a server that behaves so (the port is known only now)."""
    def setup(tmp: Path) -> None:
        server = HostileServer(behaviour)
        _SERVERS[str(tmp)] = server
        (tmp / "req.txt").write_text(f"demo @ {server.base}/files/demo-1.0-py3-none-any.whl\n")

    return setup


def bounded(*, notice: str | None = None, max_sent: int | None = None) -> Callable[[Result, Path], None]:
    """The run ended within the deadline's margin, showed ``notice``, and the server sent at most ``max_sent``."""

    def check(result: Result, tmp: Path) -> None:
        server = _SERVERS.pop(str(tmp))
        server.stop()
        elapsed = time.monotonic() - server.started
        assert elapsed < DEADLINE + MARGIN, elapsed
        assert server.requests, "the hostile server was never asked"
        if notice is not None:
            assert notice in result.stderr + result.stdout, result.stderr[-2000:]
        if max_sent is not None:
            assert server.sent < max_sent, server.sent
        cache = tmp / ".cache"
        largest = max((p.stat().st_size for p in cache.rglob("*") if p.is_file()), default=0)
        assert largest < CAP, largest  # an over-cap body never reaches the cache

    return check


def case(id: str, behaviour: Callable[[socket.socket, HostileServer], None], **check: object) -> Case:
    return Case(
        f"index-{id}",
        ["lock", "torch==2.7.1", "--cpu", "--python-version", "3.11", "--platform", "linux_x86_64",
         "--format", "requirements", "-o", "{tmp}/out.txt"],
        setup=with_server(behaviour),
        codes=(0, 1, 2),
        check=bounded(**check),  # type: ignore[arg-type]
        env={"CUDARESOLVE_NETWORK_TIMEOUT": str(DEADLINE)},
    )


CASES = [
    case("trickle", trickle, notice="index-unavailable-fallback"),
    case("stall", stall, notice="index-unavailable-fallback"),
    case("slow-headers", slow_headers, notice="index-unavailable-fallback"),
    case("slow-status-line", slow_status_line, notice="index-unavailable-fallback"),
    case("redirect-to-slow-headers", redirect_to_slow_headers, notice="index-unavailable-fallback"),
    case("endless-body", endless, notice="larger than 64 MiB", max_sent=CAP + BUFFERS),
    case("huge-content-length", huge_length, notice="larger than 64 MiB", max_sent=1024),
    case("redirect-other-host", answer("", "302 Found", "Location: http://localhost:9/whl/cpu/torch/\r\n"),
         notice="redirects to another host"),
    case("file-url", links(f"file:///etc/{WHEEL}"), notice="none may be used"),
    case("javascript-url", links(f"javascript:alert(1)//{WHEEL}"), notice="none may be used"),
    case("data-url", links(f"data:text/plain,x/{WHEEL}"), notice="none may be used"),
    case("other-host-url", links(f"https://evil.example.org/whl/{WHEEL}"), notice="none may be used"),
    case("plain-http-other-host", links(f"http://10.0.0.1/whl/{WHEEL}"), notice="none may be used"),
    case("retry-after-forever", answer("", "503 Service Unavailable", "Retry-After: 999999\r\n"),
         notice="index-unavailable-fallback"),
    case("bad-json", answer("{oops", media="application/vnd.pypi.simple.v1+json"), notice="returned invalid JSON"),
    case("deep-json-arrays", answer("[" * 200_000 + "]" * 200_000, media="application/vnd.pypi.simple.v1+json"),
         notice="nested deeper"),
    case("deep-json-files", answer('{"meta": {"api-version": "1.0"}, "files": ' + '[{"a": ' * 50_000 + "1"
         + "}]" * 50_000 + "}", media="application/vnd.pypi.simple.v1+json"), notice="nested deeper"),
    case("deep-json-meta", answer('{"meta": ' + '{"m": ' * 100_000 + "0" + "}" * 100_000 + ', "files": []}',
         media="application/json"), notice="nested deeper"),
    case("api-version-9", answer('{"meta": {"api-version": "9.0"}, "files": []}', media="application/json"),
         notice="simple API version 9.0"),
    *(Case(f"index-direct-reference-{name}", ["lock", "-r", "{tmp}/req.txt", "--cpu", "--python-version", "3.11",
           "-o", "{tmp}/pylock.toml"], setup=direct_reference_to(behaviour), codes=(1,),
           check=bounded(notice="could not fetch"), env={"CUDARESOLVE_NETWORK_TIMEOUT": str(DEADLINE)})
      for name, behaviour in (("slow-headers", slow_headers), ("slow-status-line", slow_status_line),
                              ("trickled-body", trickle))),
    Case("index-bad-deadline-env", ["lock", "torch==2.7.1", "--cpu", "--python-version", "3.11", "--platform",
         "linux_x86_64", "--index-mirror", "https://download.pytorch.org/whl=http://127.0.0.1:9/whl"],
         codes=(1,), env={"CUDARESOLVE_NETWORK_TIMEOUT": "soon"},
         check=lambda result, tmp: _assert_in("CUDARESOLVE_NETWORK_TIMEOUT must be", result.stderr)),
    Case("index-bad-deadline-env-offline", ["lock", "torch==2.7.1", "--cpu", "--python-version", "3.11",
         "--platform", "linux_x86_64", "--offline", "--format", "requirements", "-o", "{tmp}/out.txt"],
         codes=(0,), env={"CUDARESOLVE_NETWORK_TIMEOUT": "soon"}),
]


def _assert_in(needle: str, text: str) -> None:
    assert needle in text, text[-2000:]
