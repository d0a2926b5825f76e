"""The HTTP client ``lock`` uses, and what one GET gives the index client. Does I/O: builds an httpx.Client.

httpx is imported inside ``make_http_client`` only, so that importing this module stays cheap;
``LazyClient`` defers even that to the first request, so a run served wholly from fresh cache
entries never imports httpx.

A deadline bounds every byte of a request, the status line and headers included: httpx's timeouts
are per read, so a server that sends one header line a second never trips them. ``bounded_by``
names the deadline of the requests the calling thread makes within it, and the client's sockets
(``_DeadlineBackend``) cut each connect, read and write to what is left of it, and fail at once
(a ``ReadTimeout``, as httpx raises) once it has passed. Outside ``bounded_by`` nothing changes.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Iterator, Mapping
    from contextlib import AbstractContextManager
    from types import TracebackType

    import httpx

__all__ = [
    "LazyClient", "Reply", "TlsAhead", "TransientError", "bounded_by", "make_http_client", "retry_after",
    "stream_within",
]


class _Remaining(Protocol):
    def remaining(self) -> float: ...


_CURRENT = threading.local()  # .deadline: what bounds this thread's requests now (None: nothing)


@contextmanager
def bounded_by(deadline: _Remaining | None) -> Iterator[None]:
    """Within the block, every request this thread makes through ``make_http_client``'s client ends by
    ``deadline`` (an ``index.limits.Deadline``), every byte included; None leaves the timeouts as given."""
    before = getattr(_CURRENT, "deadline", None)
    _CURRENT.deadline = deadline
    try:
        yield
    finally:
        _CURRENT.deadline = before


@contextmanager
def stream_within(
    http: Any, url: str, *, headers: Mapping[str, str], timeout: Any, deadline: _Remaining | None
) -> Iterator[httpx.Response]:
    """``http.stream("GET", url, ...)`` with no redirects followed, every byte of it (the status line and
    headers too, and the body read inside the block) within ``deadline`` (``bounded_by``)."""
    with bounded_by(deadline), http.stream("GET", url, headers=headers, timeout=timeout, follow_redirects=False) as r:
        yield r


def _cut(timeout: float | None, late: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of this thread's deadline; ``late`` raised once none is left."""
    deadline = getattr(_CURRENT, "deadline", None)
    if deadline is None:
        return timeout
    rest: float = deadline.remaining()
    if rest <= 0:
        raise late("the network deadline passed")
    return rest if timeout is None else min(timeout, rest)


def _tls_socket(stream: Any) -> ssl.SSLSocket | None:
    """The ``ssl`` socket ``stream`` reads, whose reads ``_read_more`` carries on; None for any other stream: a
    plain socket's read already gives all it holds, and TLS over a stream of its own (an https proxy's) is not
    read from a socket."""
    import ssl

    sock = stream.get_extra_info("socket")
    return sock if isinstance(sock, ssl.SSLSocket) else None


def _read_more(sock: ssl.SSLSocket, first: bytes, max_bytes: int) -> bytes:
    """``first`` and what the TLS socket ``sock`` holds ready beyond it, up to ``max_bytes`` in all, read without
    waiting.

    A TLS socket's read gives one record, at most 16 KB, and httpcore hands each read to h11 and up through httpx
    one by one: a cold lock's 28 MB of pages were 1,750 such trips in the page fetcher's child, a quarter of the
    time it spent reading them. Read on until the socket would wait, they are a few 64 KB reads. The socket's
    timeout is put back as it was; a failure here is httpcore's ``ReadError``, as its own read raises it."""
    import ssl

    import httpcore

    parts, total, before = [first], len(first), sock.gettimeout()
    try:
        sock.settimeout(0.0)
        while total < max_bytes:
            more = sock.recv(max_bytes - total)
            if not more:  # the end: the next read sees it again
                break
            parts.append(more)
            total += len(more)
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        pass  # nothing more ready
    except OSError as e:
        raise httpcore.ReadError(e) from e
    finally:
        sock.settimeout(before)
    return b"".join(parts) if len(parts) > 1 else first


def _deadline_backend(inner: Any) -> Any:
    """``inner`` (httpcore's socket backend) with every connect, read and write cut by ``_cut``, each read
    carrying on with what the socket holds ready (``_read_more``)."""
    import httpcore

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream: Any) -> None:
            self._stream = stream
            self._socket = _tls_socket(stream)

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data = bytes(self._stream.read(max_bytes, _cut(timeout, httpcore.ReadTimeout)))
            if not data or len(data) >= max_bytes or self._socket is None:
                return data
            return _read_more(self._socket, data, max_bytes)

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, _cut(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._stream.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> httpcore.NetworkStream:
            return Stream(self._stream.start_tls(ssl_context, server_hostname, _cut(timeout, httpcore.ConnectTimeout)))

        def get_extra_info(self, info: str) -> Any:
            return self._stream.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                        socket_options: Any = None) -> httpcore.NetworkStream:
            cut = _cut(timeout, httpcore.ConnectTimeout)
            return Stream(inner.connect_tcp(host, port, cut, local_address, socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: Any = None) -> httpcore.NetworkStream:
            return Stream(inner.connect_unix_socket(path, _cut(timeout, httpcore.ConnectTimeout), socket_options))

        def sleep(self, seconds: float) -> None:
            inner.sleep(seconds)

    return Backend()


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What one GET gave: the status, headers, the URL it was served from and the decoded body."""

    status: int
    headers: Mapping[str, str]
    url: str
    body: str
    sha256: str | None = None  # of the bytes as served, when asked for (``IndexClient.fetch_text``)


class TransientError(Exception):
    """A connect or read failure; ``reason`` is what the notice shows. A read failure is worth retrying;
    ``connect`` marks a host that refused the connection or did not accept it in time, which is not, unless it
    answered earlier in the run (``index.retries``)."""

    def __init__(self, reason: str, *, connect: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.connect = connect


class TlsAhead:
    """The TLS context of a run's https transport, made on a thread of its own from the moment this is made.

    Loading the CA bundle is about 30 ms of OpenSSL work that holds no GIL. Made on the first https request, it
    held every walk thread at the transport's lock while the run's start waited on it; made from the start of a
    run that will surely send requests (``lock.flow``: an empty cache), it is done while the run builds its
    database. The context is httpx's own (``httpx.create_ssl_context``: ``SSL_CERT_FILE``, ``SSL_CERT_DIR``,
    else certifi's bundle), as ``HTTPTransport(verify=True)`` makes it; when making it failed, the transport
    makes it again, and fails as it always did.
    """

    def __init__(self) -> None:
        self._made = threading.Event()
        self._context: Any = None
        threading.Thread(target=self._make, name="tls-ahead", daemon=True).start()

    def _make(self) -> None:
        try:
            import httpx

            self._context = httpx.create_ssl_context()
        except Exception:  # made again by the transport, whose error is the one users see
            pass
        finally:
            self._made.set()

    def verify(self) -> Any:
        """What the https transport is given as ``verify``: the context once made, else True."""
        self._made.wait()
        return self._context if self._context is not None else True


def _no_certificates(error: OSError) -> str:
    """Why https cannot be used: the CA certificates did not load (said as a connection's failure, the index's)."""
    import os

    named = [f"{name}={os.environ[name][:200]}" for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if name in os.environ]
    where = f" ({', '.join(named)})" if named else ""
    return f"the TLS certificates could not be loaded{where}: {error.strerror or error}"


def make_http_client(tls: TlsAhead | None = None) -> httpx.Client:
    """The client ``lock`` uses: redirects left to ``IndexClient`` (same host only), TLS only for https.

    Loading the CA bundle costs ~30 ms of start-up; a run that talks only to plain-http mirrors
    (a local index) never needs it. Certificates are verified as usual for every https request. ``tls``:
    the TLS context made ahead (``TlsAhead``), else made here on the first https request.
    """
    import threading

    import httpx

    from cudaresolve.index.pool import use_linear_assignment

    class _PerScheme(httpx.BaseTransport):
        def __init__(self) -> None:
            self._transports: dict[str, httpx.HTTPTransport] = {}
            self._lock = threading.Lock()  # pages are fetched from several threads

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            scheme = request.url.scheme
            with self._lock:
                if scheme not in self._transports:
                    # plain http never does TLS, so it needs no certificates; https verifies as usual
                    verify = (tls.verify() if tls is not None else True) if scheme == "https" else False
                    try:
                        transport = httpx.HTTPTransport(verify=verify)
                    except OSError as e:  # ssl.SSLError too: SSL_CERT_FILE or SSL_CERT_DIR naming no usable bundle
                        raise httpx.ConnectError(_no_certificates(e), request=request) from e
                    # httpx takes no network backend: its pool's is wrapped so that a deadline bounds headers too
                    pool = transport._pool
                    pool._network_backend = _deadline_backend(pool._network_backend)
                    use_linear_assignment(pool)  # httpcore's own pass is quadratic in its connections (``index.pool``)
                    self._transports[scheme] = transport
                transport = self._transports[scheme]
            return transport.handle_request(request)

        def close(self) -> None:
            for transport in self._transports.values():
                transport.close()

    return httpx.Client(follow_redirects=False, transport=_PerScheme())


class LazyClient:
    """An ``httpx.Client`` built on the first request, by ``factory``, and closed with this holder.

    ``IndexClient`` takes it where it takes a client: it offers the one method the index code
    calls (``stream``). Safe to share between the threads ``fetch_listings`` starts.
    """

    def __init__(self, factory: Callable[[], httpx.Client] = make_http_client) -> None:
        self._factory = factory
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def started(self) -> bool:
        """Whether a client was built (a request was really sent)."""
        return self._client is not None

    def get_client(self) -> httpx.Client:
        """The client, built now if no request was sent before."""
        with self._lock:
            if self._closed:
                raise RuntimeError("LazyClient used after close()")
            if self._client is None:
                self._client = self._factory()
            return self._client

    def stream(self, method: str, url: str, **kwargs: Any) -> AbstractContextManager[httpx.Response]:
        """``httpx.Client.stream`` on the client (built now if needed)."""
        return self.get_client().stream(method, url, **kwargs)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> LazyClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (RFC 9110 section 10.2.3); the HTTP-date form is ignored."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())
