"""The run's network deadline and the page cap, against hostile servers on 127.0.0.1 started here.

Bounds are asserted in bytes (counted by the client's transport) or against the deadline with a
wide margin, never against the machine's speed.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

import httpx
import pytest

from cudaresolve.errors import IndexUnavailable, InvalidInput
from cudaresolve.index.client import IndexClient
from cudaresolve.index.http_cache import HttpCache
from cudaresolve.index.limits import DEFAULT_DEADLINE, Deadline, deadline_from_env, read_capped
from cudaresolve.index.listings import fetch_listings
from cudaresolve.index.policy import IndexPolicy
from hostile.cases_index import HostileServer, answer, endless, huge_length, stall, trickle

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

CPU = "https://download.pytorch.org/whl/cpu"
CHUNK_MAX = 64 * 1024  # httpcore reads at most this much at a time


class Counting(httpx.BaseTransport):
    """An HTTP transport that counts the body bytes the client actually pulled from the socket."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.read = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        stream = response.stream
        assert isinstance(stream, httpx.SyncByteStream)

        def counted() -> Iterator[bytes]:
            for chunk in stream:
                self.read += len(chunk)
                yield chunk

        wrapped = _Stream(counted(), stream)
        return httpx.Response(response.status_code, headers=response.headers, stream=wrapped,
                              extensions=response.extensions)


class _Stream(httpx.SyncByteStream):
    def __init__(self, chunks: Iterator[bytes], inner: httpx.SyncByteStream) -> None:
        self._chunks, self._inner = chunks, inner

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        self._inner.close()


@contextmanager
def serve(behaviour: Callable[..., None]) -> Iterator[HostileServer]:
    server = HostileServer(behaviour, lifetime=30.0)
    try:
        yield server
    finally:
        server.stop()


def mirrored(server: HostileServer) -> dict[str, str]:
    return {"https://download.pytorch.org/whl": f"{server.base}/whl"}


@pytest.mark.parametrize("behaviour", [trickle, stall], ids=["trickle", "stall"])
def test_the_deadline_bounds_a_trickling_or_stalled_server(behaviour: Callable[..., None], tmp_path: Path) -> None:
    deadline = 1.5
    with serve(behaviour) as server:
        start = time.monotonic()
        with httpx.Client() as http:
            listings = fetch_listings(
                http,
                [(CPU, "torch"), (CPU, "torchvision")],
                IndexPolicy(cache=HttpCache(tmp_path), mirrors=mirrored(server), deadline=Deadline(deadline)),
            )
        elapsed = time.monotonic() - start
    # deadline + at most one read timeout cut to the deadline's rest; the old client took 30 s x 4 attempts
    assert elapsed < 2 * deadline + 5, elapsed
    assert set(listings.unavailable) == {(CPU, "torch"), (CPU, "torchvision")}
    (notice,) = listings.notices
    assert notice.code == "index-unavailable-fallback"


def test_a_stalled_server_costs_the_deadline_not_four_read_timeouts() -> None:
    sleeps: list[float] = []
    with serve(stall) as server:
        start = time.monotonic()
        with httpx.Client() as http, pytest.raises(IndexUnavailable):
            IndexClient(
                http, IndexPolicy(mirrors=mirrored(server), deadline=Deadline(1.0), timeout=30.0), sleep=sleeps.append
            ).fetch_project(CPU, "torch")
        elapsed = time.monotonic() - start
    assert elapsed < 1.0 + 5, elapsed


def test_an_endless_page_stops_at_the_cap_and_is_not_cached(tmp_path: Path) -> None:
    cap = 1024 * 1024
    transport = Counting()
    cache = HttpCache(tmp_path)
    with serve(endless) as server:
        with httpx.Client(transport=transport) as http, pytest.raises(IndexUnavailable) as info:
            IndexClient(
                http, IndexPolicy(cache=cache, mirrors=mirrored(server), max_page_bytes=cap, deadline=Deadline(20.0))
            ).fetch_project(CPU, "torch")
    assert transport.read <= cap + CHUNK_MAX, transport.read
    assert info.value.message.endswith("is larger than 1 MiB; stopped reading it")
    assert info.value.code == "index-unavailable"
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_an_announced_huge_length_is_refused_before_reading() -> None:
    transport = Counting()
    with serve(huge_length) as server:
        with httpx.Client(transport=transport) as http, pytest.raises(IndexUnavailable) as info:
            IndexClient(http, IndexPolicy(mirrors=mirrored(server), deadline=Deadline(20.0))).fetch_project(
                CPU, "torch"
            )
    assert transport.read == 0
    assert "larger than 64 MiB" in info.value.message


def test_a_normal_page_still_arrives_whole(tmp_path: Path) -> None:
    wheel = "torch-2.7.1+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    with serve(answer(f'<a href="/whl/cpu/{wheel}#sha256={"b" * 64}">{wheel}</a>')) as server:
        with httpx.Client() as http:
            page = IndexClient(
                http, IndexPolicy(cache=HttpCache(tmp_path), mirrors=mirrored(server), deadline=Deadline(20.0))
            ).fetch_page(CPU, "torch")
    assert [f.url for f in page.files] == [f"{server.base}/whl/cpu/{wheel}"]
    assert page.files[0].sha256 == "b" * 64


def test_read_capped_counts_decoded_bytes() -> None:
    chunks = iter([b"a" * 10] * 100)
    with pytest.raises(IndexUnavailable):
        read_capped(chunks, url="u", cap=55, deadline=None)
    assert len(list(chunks)) == 94  # stopped after the sixth chunk
    assert read_capped(iter([b"ab", b"c"]), url="u", cap=3, deadline=None) == b"abc"


def test_an_expired_deadline_fails_at_once() -> None:
    now = [0.0]
    deadline = Deadline(5.0, clock=lambda: now[0])
    deadline.check("u")
    with deadline.busy():
        now[0] = 5.0
    with pytest.raises(IndexUnavailable) as info:
        deadline.check("https://pypi.org/simple/torch/")
    assert info.value.message.startswith("gave up on https://pypi.org/simple/torch/: the network deadline of 5 s")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, DEFAULT_DEADLINE), ("", DEFAULT_DEADLINE), ("2.5", 2.5), (" 120 ", 120.0)],
)
def test_deadline_from_env(value: str | None, expected: float) -> None:
    env = {} if value is None else {"CUDARESOLVE_NETWORK_TIMEOUT": value}
    assert deadline_from_env(env) == expected


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon", "٤٥", "1e400"])
def test_a_bad_deadline_is_invalid_input(value: str) -> None:
    with pytest.raises(InvalidInput) as info:
        deadline_from_env({"CUDARESOLVE_NETWORK_TIMEOUT": value})
    assert "CUDARESOLVE_NETWORK_TIMEOUT must be a positive number of seconds" in info.value.message


def test_the_deadline_counts_network_time_only() -> None:
    # solving, building or a busy CPU between requests never spends it; overlapping requests count once
    now = [0.0]
    deadline = Deadline(10.0, clock=lambda: now[0])
    now[0] = 100.0  # a long CPU-bound stretch with nothing in flight
    assert deadline.remaining() == 10.0
    with deadline.busy():
        now[0] += 3.0
        with deadline.busy():  # a second request on another thread, at the same time
            now[0] += 2.0
        assert deadline.remaining() == 5.0
    now[0] += 50.0
    assert deadline.remaining() == 5.0
    with deadline.busy():
        now[0] += 6.0
        assert deadline.remaining() == 0.0
        with pytest.raises(IndexUnavailable):
            deadline.check("https://pypi.org/simple/x/")


@pytest.mark.parametrize("behaviour", [endless, huge_length], ids=["endless", "announced"])
def test_a_file_over_its_cap_says_so_with_a_hint_for_files(behaviour: Callable[..., None]) -> None:
    """Found against uv on real PyPI: pyspark's 434 MiB sdist, over the then 256 MiB cap, was refused with the hint
    for an index page ("not a normal listing: check the index URL"). A file's hint names the limit instead."""
    with serve(behaviour) as server, httpx.Client() as http, pytest.raises(IndexUnavailable) as info:
        client = IndexClient(http, IndexPolicy(mirrors=mirrored(server), deadline=Deadline(20.0)))
        client.download(f"{server.base}/whl/cpu/big-1.0.tar.gz", lambda chunk: None, cap=1024 * 1024)
    assert "is larger than 1 MiB" in info.value.message
    assert info.value.hint_text is not None and info.value.hint_text.key == "index.file-too-large.hint"


def test_a_file_host_that_cannot_be_reached_is_not_asked_again_in_the_run() -> None:
    """A release asset's host that cannot be resolved (github.com from a closed network) was asked once per build
    the solver tried, 726 lookups in one lock; now its first connect failure marks it down for the run, as a page's
    does, while a host that has answered is asked again."""
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.host)
        if request.url.host == "down.example":
            raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)
        return httpx.Response(200, stream=httpx.ByteStream(b"wheel"))

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        client = IndexClient(http, IndexPolicy(deadline=Deadline(20.0)))
        for name in ("a", "b", "c"):
            with pytest.raises(IndexUnavailable) as info:
                client.download(f"https://down.example/{name}.whl", lambda chunk: None, cap=1024)
        assert "Name or service not known" in info.value.message
        for name in ("a", "b"):
            client.download(f"https://up.example/{name}.whl", lambda chunk: None, cap=1024)
    assert asked == ["down.example", "up.example", "up.example"]
