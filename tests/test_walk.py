"""The walk ahead of the solver (index.source): it does not block the solver, reads each page and metadata file
once whoever asks first, and ``close`` waits for it."""

from __future__ import annotations

import hashlib
import threading
from typing import TYPE_CHECKING

import httpx
import pytest
import respx
from packaging.tags import parse_tag
from packaging.version import Version

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.source import IndexSource

if TYPE_CHECKING:
    from pathlib import Path

PYPI = "https://pypi.org/simple"
FILES = "https://files.example.org"
METADATA = {"a": "Metadata-Version: 2.1\nName: a\nVersion: 1.0\nRequires-Dist: b\n",
            "b": "Metadata-Version: 2.1\nName: b\nVersion: 1.0\n",
            "c": "Metadata-Version: 2.1\nName: c\nVersion: 1.0\n",
            "e": "Metadata-Version: 2.1\nName: e\nVersion: 1.0\nRequires-Dist: c; extra == 'x'\n",
            "t": "Metadata-Version: 2.1\nName: t\nVersion: 1.0\nRequires-Dist: b\n",
            "w": "Metadata-Version: 2.1\nName: w\nVersion: 1.0\nRequires-Dist: t\nRequires-Dist: b\n"}  # fmt: skip


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


def _walk_threads() -> int:
    return sum(t.name.startswith("walk") for t in threading.enumerate())


def test_a_warm_cache_starts_no_walk_and_a_page_the_cache_lacks_is_walked_again(tmp_path: Path) -> None:
    """What the cache holds fresh (listing and metadata) is left to the solver: no thread, no request. Where
    the cache lacks a page, the walk ahead comes back, from the solver's own pins."""
    from cudaresolve.index.http_cache import HttpCache

    cache = HttpCache(tmp_path)
    fresh = {"Content-Type": "text/html", "Cache-Control": "max-age=600"}
    tags = tuple(parse_tag("py3-none-any"))
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        pages = [router.get(f"{PYPI}/{n}/").respond(200, text=_page(n), headers=fresh) for n in "ab"]
        files = [router.get(f"{FILES}/{n}-1.0-py3-none-any.whl.metadata").respond(200, text=METADATA[n]) for n in "ab"]
        cold = IndexSource(IndexClient(http, IndexPolicy(cache=cache), sleep=lambda _: None),
                           default_index=PYPI, tags=tags, python="3.11")  # fmt: skip
        cold.prefetch(["a"])
        cold.close()
        assert [r.call_count for r in (*pages, *files)] == [1, 1, 1, 1]  # the walk read a, then b

        before = _walk_threads()
        warm = IndexSource(IndexClient(http, IndexPolicy(cache=cache), sleep=lambda _: None),
                           default_index=PYPI, tags=tags, python="3.11")  # fmt: skip
        warm.prefetch(["a"])
        assert _walk_threads() == before  # nothing to wait for: no thread
        (a,) = warm.releases("a")
        warm.prefetch(warm.requires(a))  # as the solver does for what a pinned release requires
        assert _walk_threads() == before
        warm.close()
        assert [r.call_count for r in (*pages, *files)] == [1, 1, 1, 1]  # no request at all

        cache.path_for(f"{PYPI}/b/").unlink()  # the cache lacks b's page now
        partial = IndexSource(IndexClient(http, IndexPolicy(cache=cache), sleep=lambda _: None),
                              default_index=PYPI, tags=tags, python="3.11")  # fmt: skip
        partial.prefetch(["a"])
        (a,) = partial.releases("a")
        partial.prefetch(partial.requires(a))  # b's page must be fetched: the walk does it on its thread
        partial.close()
        assert [r.call_count for r in (*pages, *files)] == [1, 2, 1, 1]


def test_a_pages_releases_are_built_once_whoever_asks() -> None:
    with respx.mock() as router, httpx.Client() as http:
        page = router.get(f"{PYPI}/a/").respond(200, text=_page("a"), headers={"Content-Type": "text/html"})
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI,
                             tags=tuple(parse_tag("py3-none-any")), python="3.11")  # fmt: skip
        first = source.releases("a")
        assert [str(r.version) for r in first] == ["1.0"]
        assert source.releases("A") is first  # the same objects again: not rebuilt per question
        assert source.build_release("a", "1.0", PYPI) == first[0]
        assert page.call_count == 1


def _routes(router: respx.MockRouter, names: str) -> list[respx.Route]:
    html = {"Content-Type": "text/html"}
    pages = [router.get(f"{PYPI}/{n}/").respond(200, text=_page(n), headers=html) for n in names]
    return [*pages, *(router.get(f"{FILES}/{n}-1.0-py3-none-any.whl.metadata").respond(200, text=METADATA[n])
                      for n in names)]  # fmt: skip


def test_the_walk_follows_a_requirements_extras_as_the_solver_will() -> None:
    from packaging.requirements import Requirement

    tags = tuple(parse_tag("py3-none-any"))
    for request, walked in (("e[x]", True), ("e", False)):
        with respx.mock(assert_all_called=False) as router, httpx.Client() as http:
            e_page, c_page, e_meta, c_meta = _routes(router, "ec")
            source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI, tags=tags, python="3.11")
            source.prefetch([Requirement(request)])
            source.close()
            assert (e_page.call_count, e_meta.call_count) == (1, 1)
            assert (c_page.call_count, c_meta.call_count) == ((1, 1) if walked else (0, 0)), request


def test_a_database_package_is_walked_from_the_first_build_its_index_lists() -> None:
    """A database package (``skip``) is walked only along the builds the solver will try: the first build's
    index is down, so the walk reads the next build's listing and metadata, then what that build requires."""
    from packaging.requirements import Requirement

    down = "https://down.example.org/simple"
    chain = [("t", "1.0+cu1", down), ("t", "1.0", PYPI), ("t", "0.9", PYPI)]
    asked: list[str] = []

    def builds(req: Requirement) -> list[tuple[str, str, str]]:
        asked.append(str(req))
        return chain if req.name == "t" else []

    tags = tuple(parse_tag("py3-none-any"))
    with respx.mock(assert_all_called=False) as router, httpx.Client() as http:
        gone = router.get(f"{down}/t/").mock(side_effect=httpx.ConnectError("down"))
        t_page, b_page, t_meta, b_meta = _routes(router, "tb")
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI, tags=tags, python="3.11",
                             skip=["t"])  # fmt: skip
        source.prefetch(["t"], builds=builds)  # a bare name gives no requirement to ask about: not walked
        source.prefetch([Requirement("t>=0.5")])  # no builds: left for a later prefetch that has them
        assert (gone.call_count, t_page.call_count, asked) == (0, 0, [])
        source.prefetch([Requirement("t>=0.5")], builds=builds)
        source.prefetch([Requirement("t>=0.5")], builds=builds)  # the same chain: walked once
        source.close()
        assert asked and set(asked) == {"t>=0.5"}
        assert gone.call_count >= 1
        assert [r.call_count for r in (t_page, t_meta, b_page, b_meta)] == [1, 1, 1, 1]
        assert source.failures() == {}  # only the walk asked the index that is down: nothing to report yet
        with pytest.raises(IndexUnavailable):
            source.build_release("t", "1.0+cu1", down)  # the solver asks: the kept failure, reported now
        assert list(source.failures()) == [down]


def test_the_catalog_is_read_on_the_solvers_thread_only_and_a_guess_that_fails_is_not_reported() -> None:
    """``builds`` reads the solver's catalog, which is not safe to share: a database package met in a release the
    walk guessed is worked out at the solver's next ``prefetch``, on its thread. The guess can be wrong (the solver
    may take an older ``w``): a page of an index that is down, read for that guess alone, is no failure of the lock."""
    from packaging.requirements import Requirement

    down = "https://down.example.org/simple"
    threads: list[str] = []

    def builds(req: Requirement) -> list[tuple[str, str, str]]:
        threads.append(threading.current_thread().name)
        return [("t", "1.0+cu1", down)] if req.name == "t" else []

    tags = tuple(parse_tag("py3-none-any"))
    with respx.mock(assert_all_called=False) as router, httpx.Client() as http:
        gone = router.get(f"{down}/t/").mock(side_effect=httpx.ConnectError("down"))
        w_page, w_meta = _routes(router, "w")
        b_page = router.get(f"{PYPI}/b/").mock(side_effect=httpx.ConnectError("down too"))  # w's other dependency
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI, tags=tags, python="3.11",
                             skip=["t"])  # fmt: skip
        source.prefetch([Requirement("w")], builds=builds)
        for _ in range(500):  # the walk reads w's metadata on its thread, meets t (kept), then b (walked)
            if b_page.call_count:
                break
            threading.Event().wait(0.01)
        assert gone.call_count == 0 and not threads
        source.prefetch([], builds=builds)  # the solver's next hint: t's builds are worked out here
        source.close()
        assert threads and set(threads) == {threading.current_thread().name}
        assert gone.call_count >= 1 and (w_page.call_count, w_meta.call_count) == (1, 1)
        assert source.failures() == {}  # t's and b's pages failed for the walk's guesses only
        assert source.notices() == []


def test_an_extra_index_that_fails_for_a_guess_alone_is_not_reported() -> None:
    extra = "https://extra.example.org/simple"
    tags = tuple(parse_tag("py3-none-any"))
    with respx.mock(assert_all_called=False) as router, httpx.Client() as http:
        down = router.get(f"{extra}/zz/").mock(side_effect=httpx.ConnectError("down"))
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI, tags=tags, python="3.11",
                             extra_indexes=[extra])  # fmt: skip
        source.prefetch(["zz"])  # the walk's guess: the extra index is asked first (uv's first-index rule)
        source.close()
        assert down.call_count >= 1
        assert (source.failures(), source.notices()) == ({}, [])
        with pytest.raises(IndexUnavailable):
            source.releases("zz")  # the solver asks: the kept failure is its, and reported now
        assert list(source.failures()) == [extra]


def test_a_cached_build_the_walk_cannot_read_is_left_to_the_solver() -> None:
    """A database build whose cached metadata is dynamic (an sdist, ``--no-build``) or damaged raises for the walk;
    ``prefetch`` says nothing of it: the solver meets it, and passes that build over as it always has."""
    from types import SimpleNamespace

    from packaging.requirements import Requirement

    from cudaresolve.errors import DynamicMetadata
    from cudaresolve.index.walk import WalkAhead
    from cudaresolve.text.model import Text

    class Cached:  # every page fresh in the cache; the build's metadata raises when read
        _client = SimpleNamespace(offline=False, needs_request=lambda index, name: False)

        def _settled(self, index: str, name: str) -> bool:  # no listing read in this run yet
            return False

        def _build_release(self, name: str, version: str, index_url: str, *, quiet: bool) -> object:
            return SimpleNamespace(name=name, version=version, index_url=index_url)

        def _cached_requires(self, release: object) -> bool:
            raise DynamicMetadata(Text.of("index.sdist-dynamic", fields="Requires-Dist"))

    walk = WalkAhead(Cached(), skip=["t"], environment={})  # type: ignore[arg-type]
    walk.prefetch([Requirement("t")], builds=lambda req: [("t", "1.0", PYPI)])  # raised out of here before
    walk.close()


def test_the_solvers_thread_works_out_what_the_walk_met_while_it_waits_for_a_page() -> None:
    """A database package the walk's threads meet (``t``, which ``w`` requires) waits for the solver's thread, the
    only one that reads the catalog. While that thread is blocked on a page another thread is reading (``c``), it
    works the package out then, not at its next ``prefetch``: ``t``'s page is asked for before ``c``'s arrives."""
    from packaging.requirements import Requirement

    threads: list[str] = []

    def builds(req: Requirement) -> list[tuple[str, str, str]]:
        threads.append(threading.current_thread().name)
        return [("t", "1.0", PYPI)] if req.name == "t" else []

    html = {"Content-Type": "text/html"}
    t_asked, c_asked, early = threading.Event(), threading.Event(), []

    def t_page(request: httpx.Request) -> httpx.Response:
        t_asked.set()
        return httpx.Response(200, text=_page("t"), headers=html)

    def c_page(request: httpx.Request) -> httpx.Response:
        c_asked.set()
        early.append(t_asked.wait(5))  # slow until t's page is asked for: without the work, 5 s and False
        return httpx.Response(200, text=_page("c"), headers=html)

    tags = tuple(parse_tag("py3-none-any"))
    with respx.mock(assert_all_called=False) as router, httpx.Client() as http:
        _w_page, b_page, *_ = _routes(router, "wb")
        router.get(f"{PYPI}/t/").mock(side_effect=t_page)
        c_route = router.get(f"{PYPI}/c/").mock(side_effect=c_page)
        source = IndexSource(IndexClient(http, sleep=lambda _: None), default_index=PYPI, tags=tags, python="3.11",
                             skip=["t"])  # fmt: skip
        source.prefetch([Requirement("w"), Requirement("c")], builds=builds)
        for _ in range(500):  # a walk thread is reading c's page, and the walk met t (then walked b)
            if c_asked.is_set() and b_page.call_count:
                break
            threading.Event().wait(0.01)
        assert c_asked.is_set() and not threads
        assert [str(r.version) for r in source.releases("c")] == ["1.0"]  # waits on the walk's read of c
        source.close()
        assert early == [True] and set(threads) == {threading.current_thread().name}
        assert c_route.call_count == 1


def test_a_listing_read_in_this_run_is_not_looked_up_in_the_cache_again() -> None:
    """A name the walk meets again (numpy, which fifty packages require, each with its own specifier) after the run
    read its listing: the walk asked the client whether that page needs a request, which read its cache entry's head
    again and left it in the client's peek table, where no one took it. It now knows the page is read."""
    from types import SimpleNamespace

    from packaging.requirements import Requirement

    from cudaresolve.index.walk import WalkAhead

    asked: list[str] = []

    def needs_request(index: str, name: str) -> bool:
        asked.append(name)
        return False

    release = SimpleNamespace(yanked=False, version=Version("2.0"))

    class Read:  # numpy's listing read already; its newest release's metadata at hand
        _client = SimpleNamespace(offline=False, needs_request=needs_request)

        def index_for(self, name: str, *, quiet: bool = False) -> str:
            return PYPI

        def _settled(self, index: str, name: str) -> bool:
            return name == "numpy"

        def _releases_of(self, name: str, *, quiet: bool) -> list[object]:
            return [release]

        def _cached_requires(self, release: object) -> bool:
            return True

    walk = WalkAhead(Read(), skip=(), environment={})  # type: ignore[arg-type]
    walk.prefetch([Requirement("numpy>=1"), Requirement("numpy>=1.5"), Requirement("scipy")])
    walk.close()
    assert asked == ["scipy"]
