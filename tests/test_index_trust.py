"""Index listings are not trusted blindly: file links by scheme and host, redirects, cache digests (respx)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from cudaresolve.db.database import load_compat
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.listings import fetch_listings
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.trust import FileTrust, is_same_host_redirect
from cudaresolve.text.catalogue import format_text

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.index.simple import IndexFile

CPU = "https://download.pytorch.org/whl/cpu"
PYPI = "https://pypi.org/simple"
WHEEL = "torch-2.7.1+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
SHA = "a" * 64
DECLARED = ("download.pytorch.org", "download-r2.pytorch.org", "pypi.org", "files.pythonhosted.org", "flashinfer.ai")
HTML = {"Content-Type": "text/html"}


def page(*hrefs: str) -> str:
    return "".join(f'<a href="{h}#sha256={SHA}">{WHEEL}</a>\n' for h in hrefs)


def client(http: httpx.Client | None, **policy: Any) -> IndexClient:
    return IndexClient(http, IndexPolicy(allowed_hosts=DECLARED, **policy), sleep=lambda _: None)


@pytest.mark.parametrize(
    ("href", "why"),
    [
        (f"file:///etc/{WHEEL}", "scheme file:"),
        (f"javascript:alert(1)//{WHEEL}", "scheme javascript:"),
        (f"data:text/plain,x/{WHEEL}", "scheme data:"),
        (f"ftp://download.pytorch.org/{WHEEL}", "scheme ftp:"),
        (f"http://download.pytorch.org/whl/{WHEEL}", "plain http to download.pytorch.org"),
        (f"https://evil.example.org/{WHEEL}", "host evil.example.org"),
        (f"https://pytorch.org.evil.example/{WHEEL}", "host pytorch.org.evil.example"),
    ],
)
def test_hostile_file_links_are_dropped_with_a_notice(href: str, why: str) -> None:
    good = f"/whl/cpu/{WHEEL}"
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CPU}/torch/").respond(200, text=page(href, good), headers=HTML)
        listings = fetch_listings(
            http, [(CPU, "torch")], IndexPolicy(offline=False, cache=None, allowed_hosts=DECLARED), sleep=lambda _: None
        )
    files = listings.files(CPU, "torch")
    assert files is not None
    assert [f.url for f in files] == [f"https://download.pytorch.org/whl/cpu/{WHEEL}"]
    (notice,) = listings.notices
    assert notice.code == "index-file-refused"
    assert f"({why})" in format_text(notice.text)


def test_a_page_whose_every_link_is_refused_says_so_not_no_wheel() -> None:
    """Found by the hostile-index hunt: with every link refused, the lock said the package had no wheel for the
    target, and the refusals were heard nowhere. The page is now unusable, and its error names a refused link."""
    bad = [f"https://evil.example.org/{WHEEL}", f"file:///etc/{WHEEL}"]
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CPU}/torch/").respond(200, text=page(*bad), headers=HTML)
        listings = fetch_listings(
            http, [(CPU, "torch")], IndexPolicy(offline=False, cache=None, allowed_hosts=DECLARED), sleep=lambda _: None
        )
    assert listings.files(CPU, "torch") is None
    (notice,) = listings.notices
    told = format_text(notice.text)
    assert "lists 2 file link(s) and none may be used" in told and "(host evil.example.org)" in told


@pytest.mark.parametrize(
    ("page_url", "url", "ok"),
    [
        (f"{PYPI}/torch/", f"https://files.pythonhosted.org/packages/ab/{WHEEL}", True),  # declared host
        (f"{CPU}/torch/", f"https://download-r2.pytorch.org/whl/cpu/{WHEEL}", True),  # declared host
        (f"{CPU}/torch/", f"https://evil.pytorch.org/whl/cpu/{WHEEL}", False),  # undeclared sibling
        (f"{CPU}/torch/", f"https://DOWNLOAD-R2.pytorch.org/whl/cpu/{WHEEL}", True),  # hosts are case-blind
        (f"{CPU}/torch/", f"https://x.download-r2.pytorch.org/whl/cpu/{WHEEL}", False),  # exact, not a suffix
        ("http://127.0.0.1:8080/whl/cpu/torch/", f"http://127.0.0.1:8080/whl/{WHEEL}", True),
        ("http://localhost:8080/whl/cpu/torch/", f"http://localhost:9/whl/{WHEEL}", True),
        ("http://10.0.0.5/whl/cpu/torch/", f"http://10.0.0.5/whl/{WHEEL}", False),  # http off this machine
        (f"{PYPI}/torch/", f"https://evil.org/{WHEEL}", False),
    ],
)
def test_file_trust_rules(page_url: str, url: str, ok: bool) -> None:
    trust = FileTrust.for_page(page_url=page_url, index_url=page_url, allowed_hosts=DECLARED)
    assert (trust.check(url) is None) == ok


_HOSTS = st.sampled_from(["files.pythonhosted.org", "FILES.pythonhosted.org", "evil.org", "127.0.0.1", "localhost",
                          "pypi.org", "x.pypi.org", "a-b.example", "", "[::1]", "h:80", "u@pypi.org"])
_PATHS = st.sampled_from(["", "/", "/a/b.whl", "/a%2Bb.whl", "/x y.whl", "/a?b", "/a#b", "/a@b", "/a:b", "/\t"])
_URLS = st.builds(lambda scheme, host, path: f"{scheme}://{host}{path}",
                  st.sampled_from(["https", "http", "https", "http", "HTTPS", "file"]), _HOSTS, _PATHS)


@given(urls=st.lists(_URLS, max_size=12), mirror=st.booleans(), any_host=st.booleans())
def test_a_page_split_judges_each_link_as_its_own_check(urls: list[str], mirror: bool, any_host: bool) -> None:
    # split remembers the verdict of a plain URL's origin: it must be that of each URL's own check
    trust = FileTrust.for_page(
        page_url=f"{PYPI}/x/", index_url=PYPI, allowed_hosts=None if any_host else DECLARED,
        mirror_urls=("http://a-b.example/simple",) if mirror else (),
    )
    files = [cast("IndexFile", SimpleNamespace(url=u)) for u in urls]
    kept, refused = trust.split(files)
    assert [f.url for f in kept] == [u for u in urls if trust.check(u) is None]
    assert [(f.url, why) for f, why in refused] == [(u, trust.check(u)) for u in urls if trust.check(u) is not None]


def test_only_declared_hosts_of_the_shipped_database_are_trusted() -> None:
    # the PyTorch index links its wheels on download-r2.pytorch.org: declared, not inferred
    hosts = load_compat().allowed_hosts
    assert "download-r2.pytorch.org" in hosts
    trust = FileTrust.for_page(page_url=f"{CPU}/torch/", index_url=CPU, allowed_hosts=hosts)
    assert trust.check(f"https://download-r2.pytorch.org/whl/cpu/{WHEEL}") is None
    assert trust.check(f"https://evil.pytorch.org/whl/cpu/{WHEEL}") == "host evil.pytorch.org"


def test_a_mirror_does_not_open_its_parent_domain() -> None:
    mirror = "https://pypi.mirror.example.com/simple"
    trust = FileTrust.for_page(page_url=f"{mirror}/torch/", index_url=CPU, allowed_hosts=DECLARED,
                               mirror_urls=(mirror,))
    assert trust.check(f"https://pypi.mirror.example.com/files/{WHEEL}") is None
    assert trust.check(f"https://other.mirror.example.com/files/{WHEEL}") == "host other.mirror.example.com"


def test_a_named_http_mirror_and_its_files_are_accepted() -> None:
    mirror = "http://mirror.internal/whl"
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{mirror}/cpu/torch/").respond(200, text=page(f"/whl/cpu/{WHEEL}"), headers=HTML)
        files = client(http, mirrors={"https://download.pytorch.org/whl": mirror}).fetch_project(CPU, "torch")
    assert [f.url for f in files] == [f"http://mirror.internal/whl/cpu/{WHEEL}"]


def test_without_declared_hosts_only_the_scheme_is_checked() -> None:
    trust = FileTrust.for_page(page_url=f"{PYPI}/x/", index_url=PYPI, allowed_hosts=None)
    assert trust.check(f"https://anywhere.example/{WHEEL}") is None
    assert trust.check(f"file:///{WHEEL}") == "scheme file:"


@pytest.mark.parametrize(
    ("source", "target", "follow"),
    [
        ("https://a.org/x/", "https://a.org/y/", True),
        ("http://a.org/x/", "https://a.org/y/", True),
        ("https://a.org/x/", "http://a.org/y/", False),  # never down to plain http
        ("https://a.org/x/", "https://b.org/x/", False),
        ("https://a.org/x/", "https://a.org:8443/x/", False),
        ("https://a.org/x/", "file:///etc/passwd", False),
        ("https://a.org/x/", "https://[::1/", False),  # malformed
    ],
)
def test_which_redirects_are_followed(source: str, target: str, follow: bool) -> None:
    assert is_same_host_redirect(source, target) == follow


def test_redirect_loop_on_the_same_host_stops() -> None:
    with respx.mock() as router, httpx.Client() as http:
        route = router.get(url__startswith=CPU).respond(302, headers={"Location": f"{CPU}/torch/"})
        with pytest.raises(IndexUnavailable) as info:
            client(http).fetch_project(CPU, "torch")
    assert route.call_count == 6
    assert "redirected more than 5 times" in info.value.message


# --- the cache verifies its own digest ------------------------------------------------------------


def poison(cache: HttpCache, url: str) -> None:
    path = cache.path_for(url)
    head = json.loads(path.read_bytes().partition(b"\n")[0])
    body = page("https://evil.example.org/" + WHEEL).encode()
    head["size"] = len(body)  # the stored sha256 still names the old body
    path.write_bytes(json.dumps(head).encode() + b"\n" + body)


def test_a_hand_poisoned_cache_body_is_never_served_offline(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    url = f"{CPU}/torch/"
    cache.store(CachedResponse(url=url, status=200, body=page(f"/whl/cpu/{WHEEL}"), fetched_at=1.0))
    good = client(None, cache=cache, offline=True).fetch_project(CPU, "torch")
    poison(cache, url)
    assert cache.get(url) is None
    # Its head still names the good body, whose parsed form is kept: that is what is served, never the body there
    assert client(None, cache=cache, offline=True).fetch_project(CPU, "torch") == good
    for parsed in (tmp_path / "parsed-v2").iterdir():
        parsed.unlink()  # with no parsed form, the body must be read: it is not the one its head names
    with pytest.raises(IndexUnavailable) as info:
        client(None, cache=cache, offline=True).fetch_project(CPU, "torch")
    assert info.value.message.endswith("lost its body to another run; run the command again")


def test_a_hand_poisoned_cache_body_is_not_revalidated_by_a_304(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    url = f"{CPU}/torch/"
    good = page(f"/whl/cpu/{WHEEL}")
    cache.store(CachedResponse(url=url, status=200, body=good, etag='"v1"', fetched_at=1.0))
    poison(cache, url)
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(url).mock(
            side_effect=lambda request: httpx.Response(304)
            if "If-None-Match" in request.headers
            else httpx.Response(200, text=good, headers={**HTML, "ETag": '"v1"'})
        )
        result = client(http, cache=cache).fetch_page(CPU, "torch")
    assert "If-None-Match" not in route.calls.last.request.headers  # no copy to revalidate: fetched whole
    assert result.source == "network"
    assert [f.url for f in result.files] == [f"https://download.pytorch.org/whl/cpu/{WHEEL}"]
    stored = cache.get(url)
    assert stored is not None
    assert stored.body == good


def test_an_entry_without_a_digest_is_missing(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    url = f"{CPU}/torch/"
    cache.store(CachedResponse(url=url, status=200, body="x", fetched_at=1.0))
    path = cache.path_for(url)
    line, _, body = path.read_bytes().partition(b"\n")
    head = json.loads(line)
    del head["sha256"]
    path.write_bytes(json.dumps(head).encode() + b"\n" + body)
    assert cache.get(url) is None


@given(st.text(alphabet="htps:/abc.-_~%+?#@[]16053 ", max_size=30).map(lambda t: "https://" + t if t[:1] == "a" else t))
def test_the_plain_url_pattern_says_what_a_plain_one_would_only_faster(url: str) -> None:
    # possessive quantifiers, so that a URL that is not plain fails at once: the same matches, the same origin
    import re
    from urllib.parse import urljoin

    from cudaresolve.core.urls import PLAIN_URL, split_url

    port = r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})(?![0-9]))?"
    backtracking = re.compile(rf"(https?://[A-Za-z0-9.-]+{port})(?:/[A-Za-z0-9._~%+-]*)*\Z")
    ours, theirs = PLAIN_URL.match(url), backtracking.match(url)
    assert (ours and ours[1]) == (theirs and theirs[1])
    if ours:  # what a plain URL stands for: itself joined to any page, and its origin as split_url reads it
        parts = split_url(url)
        assert parts is not None and f"{parts.scheme}://{parts.netloc}" == ours[1]
        assert urljoin("http://127.0.0.1:8080/simple/demo/", url) == url
