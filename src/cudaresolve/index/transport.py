"""The HTTP client ``lock`` uses, and what one GET gives the index client. Does I/O: builds an httpx.Client.

httpx is imported inside ``make_http_client`` only, so that importing this module stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

__all__ = ["Reply", "TransientError", "make_http_client"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What one GET gave: the status, headers, the URL it was served from and the decoded body."""

    status: int
    headers: Mapping[str, str]
    url: str
    body: str


class TransientError(Exception):
    """A connect or read failure worth retrying; ``reason`` is what the notice shows."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
