"""The walk ahead of the solver (index.source): it does not block the solver, reads each page and metadata file
once whoever asks first, and ``close`` waits for it."""

from __future__ import annotations

import hashlib
import threading

import httpx
import respx
from packaging.tags import parse_tag

from cudaresolve.index.client import IndexClient
from cudaresolve.index.source import IndexSource

PYPI = "https://pypi.org/simple"
FILES = "https://files.example.org"
METADATA = {"a": "Metadata-Version: 2.1\nName: a\nVersion: 1.0\nRequires-Dist: b\n",
            "b": "Metadata-Version: 2.1\nName: b\nVersion: 1.0\n"}  # fmt: skip


def _page(name: str) -> str:
    wheel = f"{name}-1.0-py3-none-any.whl"
    digest = hashlib.sha256(METADATA[name].encode()).hexdigest()
    return f'<a href="{FILES}/{wheel}#sha256={"0" * 64}" data-core-metadata="sha256={digest}">{wheel}</a>\n'


def test_the_walk_returns_at_once_reads_everything_once_and_close_waits_for_it() -> None:
    release_page = threading.Event()
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:

        def page_a(request: httpx.Request) -> httpx.Response:
            release_page.wait(10)  # the index is slow: the walk must not hold the caller meanwhile
            return httpx.Response(200, text=_page("a"), headers={"Content-Type": "text/html"})

        routes = [
            router.get(f"{PYPI}/a/").mock(side_effect=page_a),
            router.get(f"{PYPI}/b/").respond(200, text=_page("b"), headers={"Content-Type": "text/html"}),
            *(router.get(f"{FILES}/{n}-1.0-py3-none-any.whl.metadata").respond(200, text=METADATA[n]) for n in "ab"),
        ]
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI,
                             tags=tuple(parse_tag("py3-none-any")), python="3.11")  # fmt: skip
        source.prefetch(["a"])  # returns while page a is still on its way
        assert routes[2].call_count == 0
        release_page.set()
        (a,) = source.releases("a")  # waits for the walk's own fetch of the page, no second request
        assert [str(r) for r in source.requires(a)] == ["b"]
        source.close()  # the walk went on to b's page and metadata: close waited for it
        assert [r.call_count for r in routes] == [1, 1, 1, 1]
        source.prefetch(["c"])  # after close nothing more is started (respx would refuse a request for c)
        assert [r.call_count for r in routes] == [1, 1, 1, 1]


def test_close_on_ctrl_c_does_not_wait_for_the_walk() -> None:
    import time

    release_page = threading.Event()
    with respx.mock(assert_all_called=False) as router, httpx.Client() as http:

        def slow(request: httpx.Request) -> httpx.Response:
            release_page.wait(10)
            return httpx.Response(200, text=_page("a"), headers={"Content-Type": "text/html"})

        router.get(f"{PYPI}/a/").mock(side_effect=slow)
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI,
                             tags=tuple(parse_tag("py3-none-any")), python="3.11")  # fmt: skip
        source.prefetch(["a"])
        started = time.monotonic()
        source.close(abandon=True)  # the page is still on its way
        assert time.monotonic() - started < 1
        release_page.set()
