"""Pages fetched into the cache by the helper process, against a real server on 127.0.0.1: the page the client
reads is the page it would have fetched itself, and whatever the child does not take (another status, junk, a
filter it cannot be sent, a dead or babbling child) is left to the client, which fetches and judges it as before."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, ClassVar

import httpx
import pytest
from local_index import serving

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.fitting import tag_filter
from cudaresolve.index.http_cache import HttpCache
from cudaresolve.index.limits import Deadline
from cudaresolve.index.page_fetcher import PageFetcher
from cudaresolve.index.parsed_cache import parsed_key, parsed_path
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.retries import Hosts
from cudaresolve.target.environment import interpreter_tags

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TAGS = interpreter_tags("3.11", "linux_x86_64", "2.28")
PLATFORMS = ("cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", "cp312-cp312-win_amd64", "py3-none-any")
JSON = "application/vnd.pypi.simple.v1+json"


def json_page(name: str, versions: int = 40) -> bytes:
    files = []
    for v in range(versions):
        for platform in (*PLATFORMS, ""):
            filename = f"{name}-1.{v}.0-{platform}.whl" if platform else f"{name}-1.{v}.0.tar.gz"
            digest = hashlib.sha256(filename.encode()).hexdigest()
            files.append({
                "filename": filename, "hashes": {"sha256": digest}, "requires-python": ">=3.9", "size": 1000 + v,
                "upload-time": "2025-01-02T03:04:05.123456Z", "url": f"../../files/{filename}", "yanked": False,
            })  # fmt: skip
    return json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": files}).encode()


class _Index(BaseHTTPRequestHandler):
    """Serves ``answers``: path -> list of (status, content type, body), the last one repeated; counts requests."""

    answers: ClassVar[dict[str, list[tuple[int, str, bytes]]]] = {}
    seen: ClassVar[list[str]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()

    def do_GET(self) -> None:
        with self.lock:
            self.seen.append(self.path)
            queue = self.answers.get(self.path, [(404, "text/plain", b"")])
            status, kind, body = queue.pop(0) if len(queue) > 1 else queue[0]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if status in (301, 302):
            self.send_header("Location", "/simple/elsewhere/")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index() -> Iterator[str]:
    _Index.answers, _Index.seen = {}, []
    with serving(_Index) as root:
        yield f"{root}/simple"


@pytest.fixture
def fetcher() -> Iterator[PageFetcher]:
    with PageFetcher(start=True) as started:
        assert started._ready.wait(60)  # the child up: from now on it is asked
        yield started


def _client(cache: Path, fetcher: PageFetcher | None, http: httpx.Client, timeout: float = 30.0) -> IndexClient:
    """A lock's client: the target's file filter, a network deadline, no retries."""
    policy = IndexPolicy(cache=HttpCache(cache), retries=0, timeout=timeout, deadline=Deadline(60))
    return IndexClient(http, policy, keep=tag_filter(TAGS), fetcher=fetcher)


def test_a_page_fetched_by_the_child_is_the_page_fetched_here(
    index: str, fetcher: PageFetcher, tmp_path: Path
) -> None:
    _Index.answers["/simple/alpha/"] = [(200, JSON, json_page("alpha"))]
    with httpx.Client() as http:
        here = _client(tmp_path / "here", None, http).fetch_page(index, "alpha")
        asked = fetcher._next
        there = _client(tmp_path / "there", fetcher, http).fetch_page(index, "alpha")
        assert fetcher._next == asked + 1  # the child's
    assert _Index.seen == ["/simple/alpha/", "/simple/alpha/"]  # once each: the child's request is the only one
    assert there.files == here.files and len(here.files) == 120  # cp311, py3-none-any, the sdist: each version
    assert (there.source, there.found, there.key) == ("network", True, here.key)
    stored, mine = (HttpCache(tmp_path / where).get(f"{index}/alpha/") for where in ("there", "here"))
    assert stored is not None and mine is not None and stored.body == json_page("alpha").decode()
    differ = {"fetched_at", "date"}  # when each was fetched: all else is the same entry, headers and body
    assert {k: v for k, v in stored.to_dict().items() if k not in differ} == {
        k: v for k, v in mine.to_dict().items() if k not in differ
    }
    assert parsed_path(HttpCache(tmp_path / "there"), f"{index}/alpha/").read_bytes() == parsed_path(
        HttpCache(tmp_path / "here"), f"{index}/alpha/"
    ).read_bytes()  # the same parsed form
    assert parsed_key(stored) == there.key


def _odd_page(how: str) -> tuple[str, bytes]:
    """A page large enough to be stored apart from its head, as (Content-Type, bytes), spelled ``how``."""
    page = json.loads(json_page("gamma", versions=400))
    page["note"] = "gr\u00fc\u00dfe"
    if how == "credentials":
        page["files"][1]["url"] = "https://user:secret@files.example/gamma-1.0.0.tar.gz"
    text = json.dumps(page, ensure_ascii=False)
    if how == "latin-1":
        return f"{JSON}; charset=latin-1", text.encode("latin-1")
    data = text.encode("utf-8")
    return JSON, data.replace("gr\u00fc".encode(), b"gr\xff") if how == "invalid" else data


@pytest.mark.parametrize("how", ["utf-8", "latin-1", "invalid", "credentials"])
def test_a_body_is_stored_as_here_whatever_its_bytes(
    index: str, fetcher: PageFetcher, tmp_path: Path, how: str
) -> None:
    """UTF-8, another charset, bytes that do not decode, credentials in the body: the child's entry and body file
    are the parent's, byte for byte."""
    kind, data = _odd_page(how)
    _Index.answers["/simple/gamma/"] = [(200, kind, data)]
    url = f"{index}/gamma/"
    with httpx.Client() as http:
        here = _client(tmp_path / "here", None, http).fetch_page(index, "gamma")
        there = _client(tmp_path / "there", fetcher, http).fetch_page(index, "gamma")
    assert there.files == here.files and (there.source, there.key) == ("network", here.key)
    caches = [HttpCache(tmp_path / where) for where in ("there", "here")]
    stored, mine = (cache.get(url) for cache in caches)
    assert stored is not None and mine is not None and stored.apart_size > 64 * 1024
    differ = {"fetched_at", "date"}
    assert {k: v for k, v in stored.to_dict().items() if k not in differ} == {
        k: v for k, v in mine.to_dict().items() if k not in differ
    }
    written = [cache._body_path(url).read_bytes() for cache in caches]
    assert written[0] == written[1] == stored.body.encode("utf-8")
    assert (written[0] == data) is (how == "utf-8")  # as it came; else decoded and made UTF-8 again
    assert ("secret" in stored.body) is False


@pytest.mark.parametrize("status", [404, 410])
def test_a_missing_page_is_stored_missing(index: str, fetcher: PageFetcher, tmp_path: Path, status: int) -> None:
    _Index.answers["/simple/absent/"] = [(status, "text/plain", b"gone")]
    with httpx.Client() as http:
        client = _client(tmp_path, fetcher, http)
        asked = fetcher._next
        page = client.fetch_page(index, "absent")
        assert fetcher._next == asked + 1
    assert (page.found, page.files, page.source) == (False, (), "network")
    assert _Index.seen == ["/simple/absent/"]


@pytest.mark.parametrize("first", [(503, "text/plain", b"busy"), (302, "text/plain", b""), (200, JSON, b"{junk")])
def test_what_the_child_declines_is_fetched_here_and_the_host_left_here(
    index: str, fetcher: PageFetcher, tmp_path: Path, first: tuple[int, str, bytes]
) -> None:
    body = json_page("beta")
    junk = first[2] == b"{junk"
    # the child's answer, then this client's
    _Index.answers["/simple/beta/"] = [first, first if junk else (200, JSON, body)]
    _Index.answers["/simple/gamma/"] = [(200, JSON, json_page("gamma"))]
    with httpx.Client() as http:
        client = _client(tmp_path, fetcher, http)
        asked = fetcher._next
        if junk:  # junk: this client says what is wrong with it, as it always did
            with pytest.raises(IndexUnavailable):
                client.fetch_page(index, "beta")
            assert HttpCache(tmp_path).get(f"{index}/beta/") is None  # and nobody cached it, nor a parsed form
            assert not parsed_path(HttpCache(tmp_path), f"{index}/beta/").exists()
        else:
            page = client.fetch_page(index, "beta")
            assert len(page.files) == 120
        assert fetcher._next == asked + 1  # the child was asked first
        before = len(_Index.seen)
        client.fetch_page(index, "gamma")
        assert fetcher._next == asked + 1 and len(_Index.seen) == before + 1
    assert len(_Index.seen) == before + 1  # the host is this client's for the rest of the run: the child was not asked
    assert _Index.seen[:2] == ["/simple/beta/", "/simple/beta/"]


def test_a_filter_the_child_cannot_be_sent_or_credentials_stay_here(
    index: str, fetcher: PageFetcher, tmp_path: Path
) -> None:
    _Index.answers["/simple/delta/"] = [(200, JSON, json_page("delta"))]
    policy, answered = IndexPolicy(cache=HttpCache(tmp_path), deadline=Deadline(30)), Hosts()
    answered.answered.add(index.split("/")[2])  # host and port, as ``retries`` names them
    down = Hosts(answered=set(answered.answered), down={index.split("/")[2]: "refused"})
    assert fetcher.entry(f"{index}/delta/", policy=policy, keep=None, hosts=down) is None  # down for the caller
    no_deadline = IndexPolicy(cache=HttpCache(tmp_path))
    assert fetcher.entry(f"{index}/delta/", policy=no_deadline, keep=None, hosts=answered) is None
    spent = IndexPolicy(cache=HttpCache(tmp_path), deadline=Deadline(0))
    assert fetcher.entry(f"{index}/delta/", policy=spent, keep=None, hosts=answered) is None
    assert fetcher.entry(f"{index}/delta/", policy=policy, keep=lambda name: True, hosts=answered) is None
    with_user = index.replace("http://", "http://user:secret@")
    assert fetcher.entry(f"{with_user}/delta/", policy=policy, keep=tag_filter(TAGS), hosts=answered) is None
    assert _Index.seen == []
    offline = IndexPolicy(cache=HttpCache(tmp_path), offline=True, deadline=Deadline(30))
    assert fetcher.entry(f"{index}/delta/", policy=offline, keep=None, hosts=answered) is None
    unheard = Hosts()  # a host this client has not heard from yet: the child's too
    assert fetcher.entry(f"{index}/delta/", policy=policy, keep=None, hosts=unheard) is not None  # all files: sent
    assert _Index.seen == ["/simple/delta/"]


class _Counting(httpx.HTTPTransport):
    """A transport that counts the requests this side sends itself."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        return super().handle_request(request)


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_host_the_child_cannot_reach_is_down_here_as_if_its_connect_had_failed_here(
    fetcher: PageFetcher, tmp_path: Path
) -> None:
    nowhere = f"http://127.0.0.1:{_closed_port()}/simple"
    outcomes = []
    for helper in (None, fetcher):  # this client alone, then with the child asked first
        transport = _Counting()
        with httpx.Client(transport=transport) as http:
            client = _client(tmp_path / ("here" if helper is None else "there"), helper, http)
            asked = fetcher._next
            with pytest.raises(IndexUnavailable) as info:
                client.fetch_page(nowhere, "theta")
            with pytest.raises(IndexUnavailable) as again:  # down for the run: not sent again, by either side
                client.fetch_page(nowhere, "iota")
        outcomes.append((str(info.value), str(again.value), dict(client._hosts.down), transport.sent))
        assert fetcher._next == asked + (helper is not None)  # the child asked once, for the first page only
    (mine, mine_again, my_down, my_sent), (theirs, their_again, their_down, their_sent) = outcomes
    assert theirs == mine and their_again == mine_again and their_down == my_down  # the same errors, the same verdict
    assert "could not reach" in mine and "ConnectError" in mine and list(my_down) == [nowhere.split("/")[2]]
    assert (my_sent, their_sent) == (1, 0)  # with the child, no connect of this side's own


def test_a_host_that_answered_is_tried_here_after_the_childs_failed_connect(
    index: str, fetcher: PageFetcher, tmp_path: Path
) -> None:
    """A connect that fails to a host that has answered is no verdict (``retries``): the child's failure only
    declines the page, which this client then fetches itself."""
    _Index.answers["/simple/kappa/"] = [(200, JSON, json_page("kappa"))]
    policy = IndexPolicy(cache=HttpCache(tmp_path), deadline=Deadline(30))
    nowhere = f"http://127.0.0.1:{_closed_port()}/simple/kappa/"
    heard = Hosts(answered={nowhere.split("/")[2]})
    assert fetcher.entry(nowhere, policy=policy, keep=None, hosts=heard) is None and heard.down == {}
    assert fetcher.entry(f"{index}/kappa/", policy=policy, keep=None, hosts=heard) is not None  # another host: sent


def test_a_page_over_the_cap_fails_as_it_would_here_and_is_not_read_again(
    index: str, fetcher: PageFetcher, tmp_path: Path
) -> None:
    _Index.answers["/simple/lambda/"] = [(200, JSON, json_page("lambda"))]
    errors = []
    for helper in (None, fetcher):
        policy = IndexPolicy(cache=HttpCache(tmp_path / str(helper is None)), retries=0, deadline=Deadline(60),
                             max_page_bytes=1000)  # fmt: skip
        with httpx.Client() as http:
            client = IndexClient(http, policy, keep=tag_filter(TAGS), fetcher=helper)
            with pytest.raises(IndexUnavailable) as info:
                client.fetch_page(index, "lambda")
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "larger than 1000 B" in errors[0]
    assert _Index.seen == ["/simple/lambda/"] * 2  # once here, once by the child: not again here after it


@pytest.mark.parametrize(
    "script",
    [
        "pass",  # dies at once
        "import sys; sys.stdout.buffer.write(b'X'); sys.stdout.flush(); sys.stdin.read()",  # not ready
        "import sys, struct; o = sys.stdout.buffer; o.write(b'R' + struct.pack('<I', 2**31) + b'x'); o.flush();"
        " sys.stdin.read()",  # a reply far too large
        "import sys; o = sys.stdout.buffer; o.write(b'R'); o.flush(); sys.stdin.read()  # never answers",
    ],
)
def test_a_failing_child_leaves_every_page_here(index: str, tmp_path: Path, script: str) -> None:
    _Index.answers["/simple/epsilon/"] = [(200, JSON, json_page("epsilon"))]
    with PageFetcher(command=[sys.executable, "-c", script], start=True) as broken, httpx.Client() as http:
        ready = broken._ready.wait(2)
        client = _client(tmp_path, broken, http, timeout=1.0)
        started = time.monotonic()
        page = client.fetch_page(index, "epsilon")
        waited = time.monotonic() - started
        asked = broken._next
        again = client.fetch_page(index, "zeta")  # and the next page is not sent at all
    assert len(page.files) == 120 and page.source == "network" and not again.found
    assert _Index.seen == ["/simple/epsilon/", "/simple/zeta/"]
    if ready and "never" in script:  # up, asked, silent: the wait ended with the read timeout and a bound more
        assert asked == 1 and 1.0 <= waited < 1.0 + 10
    assert broken._next == asked and broken._broken


def test_closing_ends_the_child_and_a_lazy_one_starts_on_the_first_page() -> None:
    with PageFetcher(start=True) as started:
        assert started._ready.wait(60)
        proc = started._proc
    assert proc is not None and proc.returncode == 0  # it ended at the end of its input, not killed
    with PageFetcher() as lazy:
        assert lazy._proc is None
        assert lazy.fetch({"url": "http://127.0.0.1:9/"}, wait=1) is None  # not asked: being started now
        assert lazy._proc is not None


def test_the_child_stores_the_form_a_parse_here_stores_and_leaves_deep_nesting_here(tmp_path: Path) -> None:
    from cudaresolve.index.http_cache import CachedResponse
    from cudaresolve.index.parsed_cache import parse_files, store_parsed

    def entry(body: str) -> CachedResponse:
        return CachedResponse.from_headers(
            url="https://example.org/simple/alpha/", status=200, body=body, final_url=None, fetched_at=0.0,
            headers={"Content-Type": JSON},
        )  # fmt: skip

    page, keep = entry(json_page("alpha").decode()), tag_filter(TAGS)
    store_parsed(HttpCache(tmp_path / "child"), page, keep)
    assert parsed_path(HttpCache(tmp_path / "child"), page.url).is_file()
    here = parse_files(HttpCache(tmp_path / "here"), page, keep)
    assert here == parse_files(HttpCache(tmp_path / "child"), page, keep)
    assert parsed_path(HttpCache(tmp_path / "child"), page.url).read_bytes() == parsed_path(
        HttpCache(tmp_path / "here"), page.url
    ).read_bytes()
    nested: object = 1
    for _ in range(70):  # an entry of 70 brackets: past the child's bound, well within this thread's stack
        nested = [nested]
    files = json.loads(json_page("alpha", 1))
    files["files"][0]["provenance"] = nested
    deep = entry(json.dumps(files))
    with pytest.raises(IndexUnavailable):
        store_parsed(HttpCache(tmp_path / "deep"), deep, keep)  # left to the parent, with its deeper stack
    assert not parsed_path(HttpCache(tmp_path / "deep"), deep.url).exists()
    assert len(parse_files(HttpCache(tmp_path / "deep-here"), deep, keep)) == 3


def test_the_child_makes_a_filter_once_and_reads_every_page_with_it(index: str, tmp_path: Path) -> None:
    from cudaresolve.index.page_fetcher import fetch_into_cache

    keep = tag_filter(TAGS)
    filters: dict[str, object] = {}
    for name in ("alpha", "beta"):
        _Index.answers[f"/simple/{name}/"] = [(200, JSON, json_page(name))]
    with httpx.Client() as http:
        for name in ("alpha", "beta"):
            request = {
                "url": f"{index}/{name}/", "headers": {"Accept": JSON}, "timeout": 30, "connect": 30, "cap": 10**7,
                "cache": str(tmp_path), "tags": sorted(keep.tags), "kept": keep.key,
            }  # fmt: skip
            assert fetch_into_cache(http, request, end=time.monotonic() + 60, filters=filters)
            assert list(filters) == [keep.key]
            if name == "alpha":
                made = filters[keep.key]
        assert filters[keep.key] is made  # beta read with alpha's filter
        here = IndexClient(http, IndexPolicy(cache=HttpCache(tmp_path / "here"), retries=0), keep=keep)
        child = IndexClient(None, IndexPolicy(cache=HttpCache(tmp_path), offline=True), keep=keep)
        assert child.fetch_page(index, "beta").files == here.fetch_page(index, "beta").files

