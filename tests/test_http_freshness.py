"""HTTP freshness of cached index pages (RFC 9111): fresh pages cost no request, stale ones one conditional GET."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.freshness import (
    CacheControl,
    current_age,
    freshness_lifetime,
    parse_cache_control,
    parse_http_date,
)
from cudaresolve.index.http_cache import CachedResponse, HttpCache, entry_bytes
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.simple import parse_simple_html

FIXTURES = Path(__file__).parent / "fixtures" / "indexes"
CU118_HTML = (FIXTURES / "pytorch-cu118-torch-2026-11-22.html").read_text(encoding="utf-8")
CU118 = "https://download.pytorch.org/whl/cu118"
PAGE = f"{CU118}/torch/"
T0 = 1_800_000_000.0
FILENAMES = [f.filename for f in parse_simple_html(CU118_HTML, PAGE)]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def client(http: httpx.Client | None, cache: HttpCache, clock: Clock, **policy: Any) -> IndexClient:
    return IndexClient(http, IndexPolicy(cache=cache, retries=0, **policy), clock=clock, sleep=lambda _: None)


def page(status: int = 200, /, **headers: str) -> httpx.Response:
    all_headers = {"Content-Type": "text/html", "ETag": '"v1"', **{k.replace("_", "-"): v for k, v in headers.items()}}
    return httpx.Response(status, text=CU118_HTML if status == 200 else "", headers=all_headers)


# --- the directives and the arithmetic (pure) ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, CacheControl()),
        ("max-age=600, public", CacheControl(max_age=600)),
        ("MAX-AGE=600", CacheControl(max_age=600)),
        ('max-age="600"', CacheControl(max_age=600)),
        ("no-cache", CacheControl(no_cache=True)),
        ('no-cache="Set-Cookie", max-age=60', CacheControl(max_age=60, no_cache=True)),
        ("no-store", CacheControl(no_store=True)),
        ("max-age=0, must-revalidate", CacheControl(max_age=0, must_revalidate=True)),
        ("max-age=60, max-age=60", CacheControl(max_age=60)),
        ("max-age=60, max-age=120", CacheControl(conflict=True)),
        ("max-age=soon", CacheControl(conflict=True)),
        ("max-age=-1", CacheControl(conflict=True)),
        ("max-age", CacheControl(conflict=True)),
        ("max-age=99999999999999", CacheControl(max_age=2**31)),
        ("s-maxage=600, private, immutable", CacheControl()),  # a private cache ignores s-maxage
    ],
)
def test_parse_cache_control(value: str | None, expected: CacheControl) -> None:
    assert parse_cache_control(value) == expected


def test_parse_http_date_all_three_forms_and_junk() -> None:
    expected = 784111777.0  # RFC 9110 section 5.6.7's example
    assert parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == expected
    assert parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == expected
    assert parse_http_date("Sun Nov  6 08:49:37 1994") == expected
    assert [parse_http_date(v) for v in (None, "", "0", "-1", "yesterday")] == [None] * 5


def test_freshness_lifetime_max_age_then_expires_minus_date() -> None:
    date, expires = "Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 09:49:37 GMT"
    assert freshness_lifetime(CacheControl(max_age=60), expires=expires, date=date, response_time=0) == 60
    assert freshness_lifetime(CacheControl(), expires=expires, date=date, response_time=0) == 3600
    # no Date: counted from when the response arrived
    assert freshness_lifetime(CacheControl(), expires=expires, date=None, response_time=784111777.0 + 600) == 3000
    assert freshness_lifetime(CacheControl(), expires="0", date=date, response_time=0) == 0  # already expired
    assert freshness_lifetime(CacheControl(), expires=None, date=date, response_time=0) == 0  # no heuristics
    assert freshness_lifetime(CacheControl(conflict=True), expires=expires, date=date, response_time=0) == 0


def test_current_age_adds_the_age_header() -> None:
    assert current_age(None, response_time=100.0, now=130.0) == 30.0
    assert current_age("500", response_time=100.0, now=130.0) == 530.0
    assert current_age("junk", response_time=100.0, now=130.0) == 30.0
    assert current_age(None, response_time=100.0, now=50.0) == 0.0  # the clock went back


# --- IndexClient: fresh, stale, 304 --------------------------------------------------------------


def test_a_fresh_entry_is_used_with_no_request_at_all(tmp_path: Path) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(return_value=page(Cache_Control="max-age=600"))
        first = client(http, cache, clock).fetch_page(CU118, "torch")
        clock.now += 599
        second = client(http, cache, clock).fetch_page(CU118, "torch")
    assert route.call_count == 1
    assert (first.source, second.source, second.files == first.files) == ("network", "cache", True)


def test_a_stale_entry_is_revalidated_once_and_a_304_refreshes_time_and_headers(tmp_path: Path) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(
            side_effect=[
                page(Cache_Control="max-age=600", Last_Modified="Sat, 21 Nov 2026 10:00:00 GMT"),
                httpx.Response(304, headers={"ETag": '"v2"', "Cache-Control": "max-age=3600"}),
            ]
        )
        client(http, cache, clock).fetch_page(CU118, "torch")
        clock.now += 601
        revalidated = client(http, cache, clock).fetch_page(CU118, "torch")
        clock.now += 3599  # fresh again, for the 304's max-age, counted from the 304
        again = client(http, cache, clock).fetch_page(CU118, "torch")
    assert route.call_count == 2
    conditional = route.calls.last.request.headers
    assert (conditional["If-None-Match"], conditional["If-Modified-Since"]) == ('"v1"', "Sat, 21 Nov 2026 10:00:00 GMT")
    assert (revalidated.source, again.source) == ("revalidated", "cache")
    stored = cache.get(PAGE)
    assert stored is not None
    assert (stored.etag, stored.cache_control, stored.fetched_at) == ('"v2"', "max-age=3600", T0 + 601)
    assert (stored.last_modified, stored.content_type) == ("Sat, 21 Nov 2026 10:00:00 GMT", "text/html")


@pytest.mark.parametrize("cache_control", ["no-cache", "max-age=0", "no-cache, max-age=600", None])
def test_no_cache_max_age_0_and_no_lifetime_revalidate_every_time(tmp_path: Path, cache_control: str | None) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    headers = {} if cache_control is None else {"Cache_Control": cache_control}
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(side_effect=[page(**headers), httpx.Response(304)])
        client(http, cache, clock).fetch_page(CU118, "torch")
        second = client(http, cache, clock).fetch_page(CU118, "torch")  # no time has passed
    assert (route.call_count, second.source) == (2, "revalidated")


def test_the_age_header_counts_towards_the_age(tmp_path: Path) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(side_effect=[page(Cache_Control="max-age=600", Age="590"), httpx.Response(304)])
        client(http, cache, clock).fetch_page(CU118, "torch")
        clock.now += 9
        assert client(http, cache, clock).fetch_page(CU118, "torch").source == "cache"
        clock.now += 2  # 590 + 11 > 600
        assert client(http, cache, clock).fetch_page(CU118, "torch").source == "revalidated"
    assert route.call_count == 2


def test_expires_is_the_fallback_lifetime(tmp_path: Path) -> None:
    cache, clock = HttpCache(tmp_path), Clock(parse_http_date("Sun, 06 Nov 2026 08:00:00 GMT") or 0.0)
    dated = {"Date": "Sun, 06 Nov 2026 08:00:00 GMT", "Expires": "Sun, 06 Nov 2026 08:10:00 GMT"}
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(side_effect=[page(**dated), httpx.Response(304)])
        client(http, cache, clock).fetch_page(CU118, "torch")
        clock.now += 599
        assert client(http, cache, clock).fetch_page(CU118, "torch").source == "cache"
        clock.now += 2
        assert client(http, cache, clock).fetch_page(CU118, "torch").source == "revalidated"
    assert route.call_count == 2


def test_no_store_is_not_written_and_drops_the_entry_it_replaces(tmp_path: Path) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(PAGE).mock(side_effect=[page(), page(Cache_Control="no-store")])
        client(http, cache, clock).fetch_page(CU118, "torch")
        assert cache.get(PAGE) is not None
        stored = client(http, cache, clock).fetch_page(CU118, "torch")
    assert stored.source == "network"  # the page itself is used for this run
    assert cache.get(PAGE) is None
    assert not cache.path_for(PAGE).exists()


def test_refresh_revalidates_even_a_fresh_entry_and_offline_still_reads_it(tmp_path: Path) -> None:
    clock = Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(side_effect=[page(Cache_Control="max-age=600"), httpx.Response(304)])
        client(http, HttpCache(tmp_path), clock).fetch_page(CU118, "torch")
        refreshed = client(http, HttpCache(tmp_path, refresh=True), clock).fetch_page(CU118, "torch")
    offline = client(None, HttpCache(tmp_path, refresh=True), clock, offline=True).fetch_page(CU118, "torch")
    assert (route.call_count, refreshed.source, offline.source) == (2, "revalidated", "cache")


@pytest.mark.parametrize("cache_control", ["max-age=0", "no-cache", "max-age=60, must-revalidate", "no-store"])
def test_offline_reads_the_cache_whatever_its_freshness(tmp_path: Path, cache_control: str) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    # written by hand: a no-store response never reaches the cache through IndexClient
    entry = CachedResponse(
        url=PAGE, status=200, body=CU118_HTML, content_type="text/html", fetched_at=T0, cache_control=cache_control
    )
    path = cache.path_for(PAGE)
    path.parent.mkdir(parents=True)
    path.write_bytes(entry_bytes(entry.to_dict()))
    clock.now += 86400 * 365
    offline = client(None, cache, clock, offline=True).fetch_page(CU118, "torch")
    assert (offline.source, [f.filename for f in offline.files]) == ("cache", FILENAMES)


@pytest.mark.parametrize(("cache_control", "served"), [("max-age=60", True), ("max-age=60, must-revalidate", False),
                                                       ("no-cache", False)])  # fmt: skip
def test_must_revalidate_and_no_cache_never_serve_a_stale_copy_when_the_network_fails(
    tmp_path: Path, cache_control: str, served: bool
) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(PAGE).mock(side_effect=[page(Cache_Control=cache_control), httpx.ConnectError("refused")])
        client(http, cache, clock).fetch_page(CU118, "torch")
        clock.now += 61
        if served:
            assert client(http, cache, clock).fetch_page(CU118, "torch").source == "stale-cache"
        else:
            with pytest.raises(IndexUnavailable, match="could not reach"):
                client(http, cache, clock).fetch_page(CU118, "torch")


def test_an_entry_written_before_freshness_headers_were_stored_reads_as_stale(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    old = CachedResponse(url=PAGE, status=200, body="<html></html>", etag='"e"', fetched_at=T0).to_dict()
    for key in ("cache_control", "expires", "date", "age_header"):
        del old[key]
    path = cache.path_for(PAGE)
    path.parent.mkdir(parents=True)
    path.write_bytes(entry_bytes(old))
    entry = cache.get(PAGE)
    assert entry is not None
    assert (entry.etag, entry.cache_control, cache.is_fresh(entry, T0)) == ('"e"', None, False)
    assert cache.is_fresh(entry, T0 + 5, max_age=10)  # the caller's own max_age still applies


def test_the_callers_max_age_still_serves_without_asking(tmp_path: Path) -> None:
    cache, clock = HttpCache(tmp_path), Clock()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(PAGE).mock(return_value=page())
        client(http, cache, clock, max_age=60.0).fetch_page(CU118, "torch")
        clock.now += 30
        assert client(http, cache, clock, max_age=60.0).fetch_page(CU118, "torch").source == "cache"
    assert route.call_count == 1
