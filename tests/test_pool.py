"""httpcore's pool with the linear assignment pass (index/pool.py): it decides what httpcore's own pass decides, and
the client a lock uses keeps its connections alive through it against a real server on 127.0.0.1."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpcore
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudaresolve.index.pool import _known, assign, use_linear_assignment
from cudaresolve.index.transport import make_http_client

ORIGINS = ("a", "b")


class FakeConnection:
    """What the pass asks of a connection, fixed for one pass."""

    def __init__(self, label: str, state: tuple[bool, bool, bool, bool, str]) -> None:
        self.label = label
        self.closed, self.expired, self.idle, self.available, self.origin = state

    def is_closed(self) -> bool:
        return self.closed

    def has_expired(self) -> bool:
        return self.expired

    def is_idle(self) -> bool:
        return self.idle

    def is_available(self) -> bool:
        return self.available

    def can_handle_request(self, origin: str) -> bool:
        return origin == self.origin


class FakeRequest:
    def __init__(self, label: str, origin: str, queued: bool) -> None:
        self.label, self.queued, self.given = label, queued, None
        self.request = type("R", (), {"url": type("U", (), {"origin": origin})()})()

    def is_queued(self) -> bool:
        return self.queued

    def assign_to_connection(self, connection: FakeConnection) -> None:
        self.given = connection.label
        self.queued = False  # as httpcore's PoolRequest: assigned, no longer queued


class FakePool:
    def __init__(self, connections: list[Any], requests: list[Any], most: int, keep: int) -> None:
        self._connections, self._requests = connections, requests
        self._max_connections, self._max_keepalive_connections = most, keep
        self.made = 0

    def create_connection(self, origin: str) -> FakeConnection:
        self.made += 1
        return FakeConnection(f"new{self.made}", (False, False, False, False, origin))


connection_states = st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.sampled_from(ORIGINS))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(connection_states, max_size=8),
    st.lists(st.tuples(st.sampled_from(ORIGINS), st.booleans()), max_size=6),
    st.integers(1, 8),
    st.integers(0, 8),
)
def test_the_pass_decides_as_httpcores_own(
    states: list[tuple[bool, bool, bool, bool, str]], asked: list[tuple[str, bool]], most: int, keep: int
) -> None:
    """Random pools and queues: the same connections left and closed, in order, and the same connection (one of
    the pool's or a new one) given to each queued request, as httpcore's own pass (the version installed here)."""

    def run(step: Any) -> tuple[list[str], list[str], list[Any], int]:
        pool = FakePool([FakeConnection(f"c{i}", s) for i, s in enumerate(states)],
                        [FakeRequest(f"r{i}", o, q) for i, (o, q) in enumerate(asked)], most, keep)  # fmt: skip
        closing = step(pool)
        given = [r.given for r in pool._requests]
        return [c.label for c in pool._connections], [c.label for c in closing], given, pool.made

    assert run(assign) == run(httpcore.ConnectionPool._assign_requests_to_connections)


def test_only_known_httpcore_versions_get_the_pass() -> None:
    assert _known("1.0.4") and _known("1.0.9") and _known("1.0.12")
    assert not _known("1.0.3") and not _known("1.1.0") and not _known("2.0.0") and not _known("1.0.9.dev1+x")
    assert not use_linear_assignment(object())  # not an httpcore pool: left as it is


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    connections: ClassVar[set[int]] = set()
    lock = threading.Lock()

    def do_GET(self) -> None:
        with self.lock:
            self.connections.add(id(self.connection))
        body = self.path.encode() * 200
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_the_lock_client_reuses_its_connections_through_the_pass() -> None:
    """Twelve threads, ten requests each, against a keep-alive server on 127.0.0.1: every body right, the pool's
    pass the linear one (httpcore 1.0.4 or later here), and no more connections than threads ever at once."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    failures: list[str] = []
    try:
        with make_http_client() as client:

            def work(thread: int) -> None:
                for n in range(10):
                    path = f"/t{thread}/n{n}"
                    if client.get(base + path).content != path.encode() * 200:
                        failures.append(path)

            threads = [threading.Thread(target=work, args=(t,)) for t in range(12)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            pool = client._transport._transports["http"]._pool
            if _known(httpcore.__version__):
                assert type(pool).__name__ == "LinearPool"
            assert len(pool.connections) <= 12
    finally:
        server.shutdown()
        server.server_close()
    assert failures == []
    assert 1 <= len(_Echo.connections) <= 12  # kept alive: 120 requests over at most one connection per thread


@pytest.mark.parametrize("version", ["1.0.4", "1.0.9"])
def test_a_pool_is_changed_only_under_a_known_version(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    monkeypatch.setattr(httpcore, "__version__", version)
    pool = httpcore.ConnectionPool()
    assert use_linear_assignment(pool) and isinstance(pool, httpcore.ConnectionPool)
    monkeypatch.setattr(httpcore, "__version__", "1.1.0")
    other = httpcore.ConnectionPool()
    assert not use_linear_assignment(other) and type(other) is httpcore.ConnectionPool
