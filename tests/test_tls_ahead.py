"""The TLS context made ahead (``index.transport.TlsAhead``, ``lock.network.tls_ahead``): httpx's own context, made
on a thread from the start of a run that will surely send requests, and the one the https transport then uses."""

from __future__ import annotations

import ssl
from dataclasses import replace
from typing import TYPE_CHECKING

import httpx
import pytest

from cudaresolve.core.paths import use_cache_dir
from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.transport import TlsAhead, make_http_client
from cudaresolve.lock.network import helper_ahead, tls_ahead
from cudaresolve.lock.request import LockRequest
from cudaresolve.target.options import TargetOptions

if TYPE_CHECKING:
    from pathlib import Path


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_https_transport_takes_the_context_made_ahead() -> None:
    ahead = TlsAhead()
    context = ahead.verify()
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
    assert context.cert_store_stats()["x509_ca"] > 0  # the CA bundle loaded, as httpx loads it
    with make_http_client(ahead) as client, pytest.raises(httpx.ConnectError):
        client.get(f"https://127.0.0.1:{_closed_port()}/simple/")  # the transport is made, then the connect fails
    transport = client._transport._transports["https"]  # type: ignore[attr-defined]
    assert transport._pool._ssl_context is context


def test_a_context_that_cannot_be_made_is_left_to_the_transport(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-bundle.pem"))
    ahead = TlsAhead()
    assert ahead.verify() is True  # made again by httpx's transport, whose failure is the connection's
    with make_http_client(ahead) as client, pytest.raises(httpx.ConnectError) as failed:
        client.get(f"https://127.0.0.1:{_closed_port()}/simple/")
    with pytest.raises(type(failed.value.__cause__)):
        httpx.HTTPTransport(verify=True)


def test_made_ahead_only_for_a_run_that_will_send_requests(tmp_path: Path) -> None:
    online = LockRequest(requirements=("six",), target=TargetOptions())
    with use_cache_dir(tmp_path / "cache"):
        assert tls_ahead(replace(online, offline=True)) is None
        local = "https://pypi.org/simple=http://127.0.0.1:8080/simple"
        assert tls_ahead(replace(online, mirrors=(local,))) is None  # a local plain-http index needs no certificates
        assert tls_ahead(replace(online, index_url="HTTP://mirror.internal/simple")) is None
        ahead = tls_ahead(online)  # no page cached: every page is fetched
        assert isinstance(ahead, TlsAhead) and isinstance(ahead.verify(), ssl.SSLContext)
        assert isinstance(tls_ahead(replace(online, index_url="https://mirror.internal/simple")), TlsAhead)
        HttpCache(tmp_path / "cache").store(
            CachedResponse(url="https://pypi.org/simple/six/", status=200, body="{}", fetched_at=0.0)
        )
        assert tls_ahead(online) is None  # a run the cache may serve never imports httpx for it


def test_the_page_helper_is_started_ahead_only_for_a_run_that_will_fetch_pages(tmp_path: Path) -> None:
    """Online with an empty page cache, over https or a local plain-http mirror alike; never offline, nor where
    the cache may serve the run."""
    from cudaresolve.index.page_fetcher import PageFetcher

    online = LockRequest(requirements=("six",), target=TargetOptions())
    local = replace(online, mirrors=("https://pypi.org/simple=http://127.0.0.1:8080/simple",))
    with use_cache_dir(tmp_path / "cache"):
        with helper_ahead(replace(online, offline=True)) as none:
            assert none is None
        for request in (online, local):
            with helper_ahead(request) as started:
                assert isinstance(started, PageFetcher) and started._proc is not None  # started now
                assert started._ready.wait(60)
                proc = started._proc
            assert proc.returncode == 0  # and ended with the block
        HttpCache(tmp_path / "cache").store(
            CachedResponse(url="https://pypi.org/simple/six/", status=200, body="{}", fetched_at=0.0)
        )
        with helper_ahead(online) as none:
            assert none is None
