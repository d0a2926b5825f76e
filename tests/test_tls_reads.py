"""A TLS response read a few 64 KB reads at a time (``index.transport._read_more``), against a real TLS server on
127.0.0.1 (``fixtures/tls``: a self-signed certificate for 127.0.0.1, made by ``openssl req -x509``): each read
carries on with the records the socket already holds, the body comes whole, and the end of a body, its absence
and a connection cut short read as they did."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from cudaresolve.index.transport import make_http_client

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

TLS = Path(__file__).parent / "fixtures" / "tls"
RECORD = 1024  # each write below is one TLS record of this size
RECORDS = 256


class _Trusting:
    """``TlsAhead``'s face, giving a context that trusts the fixture's certificate."""

    def verify(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(TLS / "localhost.pem"))


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[ssl.SSLSocket], None]], str]]:
    """Starts a TLS server on 127.0.0.1 that answers one request with ``answer``; gives its page's URL."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "localhost.pem", TLS / "localhost.key")
    threads: list[threading.Thread] = []

    def start(answer: Callable[[ssl.SSLSocket], None]) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(10)

        def run() -> None:
            with listener, contextlib.suppress(OSError):
                raw, _ = listener.accept()
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with context.wrap_socket(raw, server_side=True) as conn:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        request += conn.recv(4096)
                    answer(conn)

        threads.append(threading.Thread(target=run, daemon=True))
        threads[-1].start()
        return f"https://127.0.0.1:{listener.getsockname()[1]}/simple/"

    yield start
    for thread in threads:
        thread.join(10)


def _body() -> bytes:
    return bytes(range(256)) * (RECORD * RECORDS // 256)


def _in_records(conn: ssl.SSLSocket, head: bytes, body: bytes) -> None:
    conn.sendall(head)
    for at in range(0, len(body), RECORD):  # one record per write
        conn.sendall(body[at : at + RECORD])


def _chunks(url: str, *, pause: float = 0.3) -> list[bytes]:
    with make_http_client(_Trusting()) as client, client.stream("GET", url) as response:  # type: ignore[arg-type]
        assert response.status_code == 200
        time.sleep(pause)  # every record sent meanwhile: held by the socket when the body is read
        return list(response.iter_raw())


def test_a_body_of_small_records_is_read_a_few_reads_at_a_time(serve: Callable[..., str]) -> None:
    body = _body()
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    chunks = _chunks(serve(lambda conn: _in_records(conn, head, body)))
    assert b"".join(chunks) == body
    assert len(chunks) <= RECORDS // 8, len(chunks)  # one record per read was 256 of them
    assert max(len(c) for c in chunks) <= 64 * 1024  # no read past what httpcore asks for


def test_a_body_that_ends_with_the_connection_is_read_whole(serve: Callable[..., str]) -> None:
    body = _body()
    head = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
    chunks = _chunks(serve(lambda conn: _in_records(conn, head, body)))
    assert b"".join(chunks) == body


def test_a_connection_cut_short_is_still_an_error(serve: Callable[..., str]) -> None:
    body = _body()
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {2 * len(body)}\r\n\r\n".encode()
    url = serve(lambda conn: _in_records(conn, head, body))
    with pytest.raises(httpx.RemoteProtocolError):
        _chunks(url)


def test_a_slow_body_is_read_as_it_comes(serve: Callable[..., str]) -> None:
    """Records that come one at a time are read one at a time: nothing waits for more than the socket holds."""
    body = _body()[: RECORD * 8]
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()

    def slowly(conn: ssl.SSLSocket) -> None:
        conn.sendall(head)
        for at in range(0, len(body), RECORD):
            time.sleep(0.05)
            conn.sendall(body[at : at + RECORD])

    start = time.monotonic()
    chunks = _chunks(serve(slowly), pause=0.0)
    assert b"".join(chunks) == body
    assert len(chunks) >= 4  # read as they came, not held back for 64 KB
    assert time.monotonic() - start < 5


def test_certificates_that_do_not_load_are_a_connection_failure_naming_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``SSL_CERT_FILE`` naming no file, or a file that holds no certificate: every https request fails as a
    connection would, saying so and naming the variable (the lock reports it as the index's failure, one coded
    line), never an internal error."""
    from cudaresolve.index.transport import make_http_client

    not_pem = tmp_path / "not.pem"
    not_pem.write_text("no certificate here\n")
    for bundle in (str(tmp_path / "absent.pem"), str(not_pem)):
        monkeypatch.setenv("SSL_CERT_FILE", bundle)
        with make_http_client() as client, pytest.raises(httpx.ConnectError) as info:
            client.get("https://127.0.0.1:9/simple/")
        said = str(info.value)
        assert "TLS certificates could not be loaded" in said and f"SSL_CERT_FILE={bundle}" in said
