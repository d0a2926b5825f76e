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
    """What the pass asks of a connection. ``slots``: requests it can still take (more than one: HTTP/2); taking one
    makes it busy at once. The calls with side effects in httpcore (``is_closed``, ``has_expired``, which polls the
    socket) are logged, in order, on the pool."""

    def __init__(self, pool: FakePool, label: str, state: tuple[bool, bool, bool, int, str]) -> None:
        self.pool, self.label = pool, label
        self.closed, self.expired, self.idle, self.slots, self.origin = state

    def is_closed(self) -> bool:
        self.pool.log.append(("closed?", self.label))
        return self.closed

    def has_expired(self) -> bool:
        self.pool.log.append(("expired?", self.label))
        return self.expired

    def is_idle(self) -> bool:
        return self.idle and self.slots > 0

    def is_available(self) -> bool:
        return self.slots > 0

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
        connection.slots -= 1
        connection.idle = False


class FakePool:
    def __init__(self, most: int, keep: int, made_slots: list[int]) -> None:
        self._connections: list[FakeConnection] = []
        self._requests: list[FakeRequest] = []
        self._max_connections, self._max_keepalive_connections = most, keep
        self.made_slots = list(made_slots)
        self.log: list[tuple[str, str]] = []

    def create_connection(self, origin: str) -> FakeConnection:
        self.log.append(("create", origin))
        slots = self.made_slots.pop(0) if self.made_slots else 0  # HTTP/2 not yet negotiated: may take several
        return FakeConnection(self, f"new{len(self.log)}", (False, False, False, slots, origin))


connection_states = st.tuples(
    st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3), st.sampled_from(ORIGINS)
)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(connection_states, max_size=8),
    st.lists(st.tuples(st.sampled_from(ORIGINS), st.booleans()), max_size=8),
    st.integers(0, 6),
    st.integers(0, 6),
    st.lists(st.integers(0, 3), max_size=8),
)
def test_the_pass_decides_as_httpcores_own(
    states: list[tuple[bool, bool, bool, int, str]], asked: list[tuple[str, bool]], most: int, keep: int,
    made_slots: list[int],
) -> None:  # fmt: skip
    """Random pools and queues, limits from 0, connections that taking a request changes and new ones that may take
    several (HTTP/2): the same connections left and closed, in order, the same connection (the pool's or a new
    one) given to each queued request, and the same socket polls and connections made, in the same order, as
    httpcore's own pass (the version installed here)."""

    def run(step: Any) -> tuple[list[str], list[str], list[Any], list[tuple[str, str]]]:
        pool = FakePool(most, keep, made_slots)
        pool._connections = [FakeConnection(pool, f"c{i}", s) for i, s in enumerate(states)]
        pool._requests = [FakeRequest(f"r{i}", o, q) for i, (o, q) in enumerate(asked)]
        closing = step(pool)
        given = [r.given for r in pool._requests]
        return [c.label for c in pool._connections], [c.label for c in closing], given, pool.log

    assert run(assign) == run(httpcore.ConnectionPool._assign_requests_to_connections)


def test_only_known_httpcore_versions_get_the_pass() -> None:
    assert _known("1.0.4") and _known("1.0.9")
    assert not any(_known(v) for v in ("1.0.3", "1.0.10", "1.1.0", "2.0.0", "1.0.9.dev1+x", "1.0", ""))
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
    _Echo.connections.clear()  # this run's connections only
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
    monkeypatch.setattr(httpcore, "__version__", "1.0.10")
    other = httpcore.ConnectionPool()
    assert not use_linear_assignment(other) and type(other) is httpcore.ConnectionPool
