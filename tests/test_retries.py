"""When a request is sent again (``index.retries``): a TLS handshake that broke, a connect to a host that has
answered, a range read; and when it is not: a refused connect to a host never reached, a certificate that does
not verify. The handshake alert is a real one, sent by a server on 127.0.0.1 to httpx's real TLS client."""

from __future__ import annotations

import socket
import ssl
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import respx

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.retries import handshake_glitch

if TYPE_CHECKING:
    from collections.abc import Iterator

PYPI = "https://pypi.org/simple"
FILES = "https://files.pythonhosted.org/packages/ab/cd"
PAGE = '{"meta": {"api-version": "1.1"}, "name": "x", "files": []}'
JSON = {"Content-Type": "application/vnd.pypi.simple.v1+json"}
#: A TLS record holding a fatal ``decode_error`` alert: what a server sends when it cannot read a ClientHello.
DECODE_ERROR_ALERT = b"\x15\x03\x03\x00\x02\x02\x32"


def client(http: httpx.Client, sleeps: list[float], retries: int = 2) -> IndexClient:
    return IndexClient(http, IndexPolicy(retries=retries), sleep=sleeps.append)


def broke_in_handshake(cause: ssl.SSLError) -> httpx.ConnectError:
    """The error httpx raises when the handshake fails: httpx's, from httpcore's, from the ``ssl`` one."""
    error = httpx.ConnectError(str(cause))
    error.__cause__ = httpcore_error = httpx.ConnectError(str(cause))  # stands for httpcore.ConnectError
    httpcore_error.__cause__ = cause
    return error


@contextmanager
def alerting_server() -> Iterator[tuple[str, list[int]]]:
    """A server that reads each ClientHello and answers it with a decode_error alert; yields (its https URL,
    the connections it took, as a one-item counter)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    taken, stop = [0], threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                taken[0] += 1
                conn.recv(65536)
                conn.sendall(DECODE_ERROR_ALERT)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}/simple", taken
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_a_real_handshake_alert_is_sent_again_then_named() -> None:
    sleeps: list[float] = []
    with alerting_server() as (index, taken), httpx.Client() as http:
        with pytest.raises(IndexUnavailable) as info:
            client(http, sleeps, retries=2).fetch_project(index, "x")
    assert taken[0] == 3 and sleeps == [0.5, 1.0]  # the first try and two more, with the back-off between
    assert "TLSV1_ALERT_DECODE_ERROR" in info.value.message and info.value.message.startswith("could not reach")
    assert isinstance(info.value.__cause__, httpx.ConnectError) and handshake_glitch(info.value.__cause__)


def answering(*answers: httpx.Response | Exception) -> tuple[httpx.Client, list[httpx.Request]]:
    """A client whose requests get ``answers`` in turn (an error is raised as it is: respx would put itself in
    the error's chain of causes, which is what is read here); and the requests it took."""
    taken: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        given = answers[min(len(taken), len(answers) - 1)]
        taken.append(request)
        if isinstance(given, Exception):
            raise given
        return given

    return httpx.Client(transport=httpx.MockTransport(answer)), taken


def test_a_handshake_glitch_then_an_answer_gives_the_page() -> None:
    sleeps: list[float] = []
    glitch = broke_in_handshake(ssl.SSLEOFError(8, "[SSL: UNEXPECTED_EOF_WHILE_READING] EOF in violation of protocol"))
    http, taken = answering(glitch, httpx.Response(200, text=PAGE, headers=JSON))
    with http:
        page = client(http, sleeps).fetch_page(PYPI, "x")
    assert (page.found, len(taken), sleeps) == (True, 2, [0.5])


def test_a_certificate_that_does_not_verify_is_final() -> None:
    sleeps: list[float] = []
    refused = broke_in_handshake(ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] self-signed"))
    http, taken = answering(refused)
    with http:
        index = client(http, sleeps)
        with pytest.raises(IndexUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
            index.fetch_page(PYPI, "x")
        with pytest.raises(IndexUnavailable, match=r"pypi\.org is unreachable"):
            index.fetch_page(PYPI, "y")  # the host is down for the run: nothing sent
    assert (len(taken), sleeps) == (1, [])


def test_a_refused_connect_to_a_host_that_answered_is_sent_again() -> None:
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{PYPI}/x/").respond(200, text=PAGE, headers=JSON)
        again = router.get(f"{PYPI}/y/").mock(
            side_effect=[httpx.ConnectError("connection refused"), httpx.Response(200, text=PAGE, headers=JSON)]
        )
        index = client(http, sleeps)
        index.fetch_page(PYPI, "x")
        page = index.fetch_page(PYPI, "y")
    assert (page.found, again.call_count, sleeps) == (True, 2, [0.5])


def test_a_real_refused_connect_to_a_host_never_reached_is_final() -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]  # closed below: nothing listens there any more
    sleeps: list[float] = []
    with httpx.Client() as http:
        index = client(http, sleeps)
        with pytest.raises(IndexUnavailable, match="ConnectError"):
            index.fetch_page(f"https://127.0.0.1:{port}/simple", "x")
        with pytest.raises(IndexUnavailable, match="is unreachable"):
            index.fetch_page(f"https://127.0.0.1:{port}/simple", "y")
    assert sleeps == []


@pytest.mark.parametrize(
    "first",
    [httpx.Response(503), httpx.Response(429, headers={"Retry-After": "2"}), httpx.ReadError("connection reset")],
    ids=["503", "429", "reset"],
)
def test_a_range_read_is_sent_again(first: Any) -> None:
    sleeps: list[float] = []
    tail = httpx.Response(206, content=b"PK\x05\x06", headers={"Content-Range": "bytes 96-99/100"})
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{FILES}/x-1-py3-none-any.whl").mock(side_effect=[first, tail])
        got = client(http, sleeps).fetch_range(f"{FILES}/x-1-py3-none-any.whl", None, 4, cap=1 << 20)
    assert got == (206, "bytes 96-99/100", b"PK\x05\x06")
    assert route.call_count == 2 and route.calls[1].request.headers["Range"] == "bytes=-4"
    assert sleeps == ([2.0] if getattr(first, "status_code", None) == 429 else [0.5])


def test_a_range_read_that_keeps_failing_names_the_status() -> None:
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{FILES}/x-1-py3-none-any.whl").respond(503)
        with pytest.raises(IndexUnavailable, match=r"answered HTTP 503$"):
            client(http, sleeps, retries=1).fetch_range(f"{FILES}/x-1-py3-none-any.whl", 0, 9, cap=1 << 20)
    assert (route.call_count, sleeps) == (2, [0.5])


def test_handshake_glitch_reads_the_chain_only() -> None:
    assert not handshake_glitch(httpx.ConnectError("connection refused"))
    assert not handshake_glitch(broke_in_handshake(ssl.SSLCertVerificationError(1, "no")))
    assert handshake_glitch(broke_in_handshake(ssl.SSLError(1, "[SSL: TLSV1_ALERT_DECODE_ERROR]")))
    looped = httpx.ConnectError("loop")
    looped.__cause__ = looped  # a chain that never ends is read a bounded way
    assert not handshake_glitch(looped)
