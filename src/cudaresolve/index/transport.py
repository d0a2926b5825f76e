"""The HTTP client ``lock`` uses, and what one GET gives the index client. Does I/O: builds an httpx.Client.

httpx is imported inside ``make_http_client`` only, so that importing this module stays cheap;
``LazyClient`` defers even that to the first request, so a run served wholly from fresh cache
entries never imports httpx.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from contextlib import AbstractContextManager
    from types import TracebackType

    import httpx

__all__ = ["LazyClient", "Reply", "TransientError", "make_http_client", "retry_after"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What one GET gave: the status, headers, the URL it was served from and the decoded body."""

    status: int
    headers: Mapping[str, str]
    url: str
    body: str


class TransientError(Exception):
    """A connect or read failure; ``reason`` is what the notice shows. A read failure is worth retrying;
    ``connect`` marks a host that refused the connection or did not accept it in time, which is not."""

    def __init__(self, reason: str, *, connect: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.connect = connect


def make_http_client() -> httpx.Client:
    """The client ``lock`` uses: redirects left to ``IndexClient`` (same host only), TLS only for https.

    Loading the CA bundle costs ~30 ms of start-up; a run that talks only to plain-http mirrors
    (a local index) never needs it. Certificates are verified as usual for every https request.
    """
    import threading

    import httpx

    class _PerScheme(httpx.BaseTransport):
        def __init__(self) -> None:
            self._transports: dict[str, httpx.HTTPTransport] = {}
            self._lock = threading.Lock()  # pages are fetched from several threads

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            scheme = request.url.scheme
            with self._lock:
                if scheme not in self._transports:
                    # plain http never does TLS, so it needs no certificates; https verifies as usual
                    self._transports[scheme] = httpx.HTTPTransport(verify=scheme == "https")
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
