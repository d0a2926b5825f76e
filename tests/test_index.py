"""Index parsing, the HTTP client (respx, never the network), mirrors and the fallback to embedded data."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from packaging.tags import Tag
from packaging.version import Version

from cudaresolve.errors import IndexUnavailable, InvalidInput
from cudaresolve.index.client import (
    ACCEPT,
    IndexClient,
    IndexFile,
    Listings,
    apply_mirror,
    parse_mirrors,
    parse_simple_html,
    parse_simple_json,
)
from cudaresolve.index.http_cache import HttpCache
from cudaresolve.index.listings import fetch_listings
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.text.catalogue import format_text

FIXTURES = Path(__file__).parent / "fixtures" / "indexes"
PYPI_JSON = (FIXTURES / "pypi-torch-2026-11-22.json").read_text(encoding="utf-8")
CU118_HTML = (FIXTURES / "pytorch-cu118-torch-2026-11-22.html").read_text(encoding="utf-8")
CU128_HTML = (FIXTURES / "pytorch-cu128-torch-2026-11-22.html").read_text(encoding="utf-8")

PYPI = "https://pypi.org/simple"
CU118 = "https://download.pytorch.org/whl/cu118"
CU128 = "https://download.pytorch.org/whl/cu128"
MIRROR = {"https://download.pytorch.org/whl": "https://mirror.example.org/pytorch/whl"}
MIRRORED_CU118 = "https://mirror.example.org/pytorch/whl/cu118"
JSON_TYPE = {"Content-Type": "application/vnd.pypi.simple.v1+json"}
HTML_TYPE = {"Content-Type": "text/html"}


def tag(text: str) -> frozenset[Tag]:
    interpreter, abi, platform = text.split("-")
    return frozenset({Tag(interpreter, abi, platform)})


def json_page(*files: dict[str, Any], api: str = "1.1") -> str:
    return json.dumps({"meta": {"api-version": api}, "name": "demo", "files": list(files)})


# --- parse_simple_html ----------------------------------------------------------------------


def test_parse_html_pytorch_cu118_relative_hrefs() -> None:
    files = parse_simple_html(CU118_HTML, f"{CU118}/torch/")
    assert len(files) == 12
    assert files[1] == IndexFile(
        project="torch",  # type: ignore[arg-type]
        filename="torch-2.7.0+cu118-cp311-cp311-manylinux_2_28_x86_64.whl",
        url="https://download.pytorch.org/whl/cu118/torch-2.7.0%2Bcu118-cp311-cp311-manylinux_2_28_x86_64.whl",
        version=Version("2.7.0+cu118"),
        build=(),
        tags=tag("cp311-cp311-manylinux_2_28_x86_64"),
        sha256="1aac9fc011bd46022c4f2afb86201b39f0e2ca975f350f277c566721edba61e4",
        requires_python=">=3.9.0",
    )
    assert files[1].local == "cu118"
    assert {f.version for f in files} == {Version("2.7.0+cu118"), Version("2.7.1+cu118")}


def test_parse_html_anchor_without_hash_has_no_sha256() -> None:
    files = {f.filename: f for f in parse_simple_html(CU118_HTML, f"{CU118}/torch/")}
    assert files["torch-2.7.0+cu118-cp39-cp39-manylinux_2_28_x86_64.whl"].sha256 is None
    assert sum(f.sha256 is None for f in files.values()) == 1


def test_parse_html_manage_v2_shape_absolute_r2_urls_and_metadata() -> None:
    files = parse_simple_html(CU128_HTML, f"{CU128}/torch/")
    assert len(files) == 12
    first = files[0]
    assert first.url == (
        "https://download-r2.pytorch.org/whl/cu128/torch-2.10.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    )
    assert first.filename == "torch-2.10.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert first.sha256 == "fe60194fe8967cc0eaba0e2203a3a5f65a4093bc36c38cc6d4941ae9863611b9"
    assert first.core_metadata is True
    assert first.core_metadata_sha256 == "35c4fefaa369bcde06623467bc55310829838cbb1125a58f15d10ea613a8930b"
    assert first.upload_time == datetime(2026, 1, 21, 16, 10, 20, tzinfo=UTC)
    assert first.requires_python is None
    free_threaded = [f for f in files if Tag("cp313", "cp313t", "manylinux_2_28_x86_64") in f.tags]
    assert [str(f.version) for f in free_threaded] == ["2.10.0+cu128", "2.9.1+cu128"]


def test_parse_html_attributes_base_and_non_wheels() -> None:
    page = """<!DOCTYPE html><html><head>
    <meta name="pypi:repository-version" content="1.4"><base href="https://files.example.org/pkgs/"></head><body>
    <a href="demo-0.9.tar.bz2">demo-0.9.tar.bz2</a>
    <a href="demo-0.9.egg">demo-0.9.egg</a>
    <a href="demo-1.0.tar.gz#sha256=aa">demo-1.0.tar.gz</a>
    <a href="demo-1.0-py3-none-any.whl#md5=0123" data-requires-python="&gt;=3.9,&lt;4" data-yanked>x</a>
    <a href="../other/demo-1.1-py3-none-any.whl" data-yanked="broken METADATA" data-dist-info-metadata="true">y</a>
    <a href="demo-1.2-py3-none-any.whl" data-core-metadata="sha256=BB" data-dist-info-metadata="true">z</a>
    <a href="not-a-valid-wheel.whl">bad</a>
    <a>no href</a>
    </body></html>"""
    sdist, *files = parse_simple_html(page, "https://index.example.org/simple/demo/")
    assert (sdist.url, sdist.sdist, sdist.sha256) == ("https://files.example.org/pkgs/demo-1.0.tar.gz", True, None)
    assert [(f.url, f.sha256, f.requires_python, f.yanked, f.yanked_reason) for f in files] == [
        ("https://files.example.org/pkgs/demo-1.0-py3-none-any.whl", None, ">=3.9,<4", True, None),
        ("https://files.example.org/other/demo-1.1-py3-none-any.whl", None, None, True, "broken METADATA"),
        ("https://files.example.org/pkgs/demo-1.2-py3-none-any.whl", None, None, False, None),
    ]
    # PEP 714: data-core-metadata wins over the legacy attribute; "BB" is not a sha256 digest.
    assert [(f.core_metadata, f.core_metadata_sha256) for f in files] == [(False, None), (True, None), (True, None)]


def test_parse_html_rejects_unknown_major_api_version() -> None:
    page = '<meta name="pypi:repository-version" content="2.0"><a href="demo-1.0-py3-none-any.whl">x</a>'
    with pytest.raises(IndexUnavailable, match=r"simple API version 2\.0"):
        parse_simple_html(page, "https://index.example.org/simple/demo/")


def test_parse_html_unclosed_anchor_is_still_read() -> None:
    page = '<a href="demo-1.0-py3-none-any.whl">demo-1.0<a href="demo-2.0-py3-none-any.whl">demo-2.0'
    files = parse_simple_html(page, "https://index.example.org/simple/demo/")
    assert [str(f.version) for f in files] == ["1.0", "2.0"]


# --- parse_simple_json -----------------------------------------------------------------------


def test_parse_json_pypi_snapshot() -> None:
    files = parse_simple_json(PYPI_JSON, f"{PYPI}/torch/")
    assert len(files) == 12
    assert files[1] == IndexFile(
        project="torch",  # type: ignore[arg-type]
        filename="torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        url="https://files.pythonhosted.org/packages/e5/94/34b80bd172d0072c9979708ccd279c2da2f55c3ef318eceec276ab9544a4/torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        version=Version("2.7.1"),
        build=(),
        tags=tag("cp311-cp311-manylinux_2_28_x86_64"),
        sha256="06eea61f859436622e78dd0cdd51dbc8f8c6d76917a9cf0555a333f9eac31ec1",
        requires_python=">=3.9.0",
        size=821174704,
        upload_time=datetime(2025, 6, 4, 17, 37, 3, 799452, tzinfo=UTC),
    )
    assert files[1].local is None


def test_parse_json_fields_build_tag_metadata_yanked_relative_url() -> None:
    page = json_page(
        {"filename": "demo-1.0.tar.gz", "url": "demo-1.0.tar.gz", "hashes": {}},
        {
            "filename": "torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl",
            "url": "../../files/torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=ignored",
            "hashes": {"sha256": "A" * 64},
            "core-metadata": {"sha256": "b" * 64},
            "yanked": "bad upload",
            "size": 12,
            "upload-time": "2026-03-11T10:00:00Z",
            "_private": 1,
        },
        {
            "filename": "torch-2.10.0-cp311-cp311-manylinux_2_28_x86_64.whl",
            "url": "https://files.example.org/torch-2.10.0-cp311-cp311-manylinux_2_28_x86_64.whl",
            "hashes": {"md5": "00"},
            "dist-info-metadata": True,
            "yanked": True,
            "requires-python": " ",
            "size": True,
        },
    )
    sdist, build3, plain = parse_simple_json(page, "https://index.example.org/simple/torch/")
    assert (sdist.sdist, sdist.project, str(sdist.version), sdist.tags) == (True, "demo", "1.0", frozenset())
    assert build3.build == (3, "")
    assert build3.url == "https://index.example.org/files/torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert (build3.sha256, build3.core_metadata_sha256) == ("a" * 64, "b" * 64)
    assert (build3.yanked, build3.yanked_reason, build3.size) == (True, "bad upload", 12)
    assert build3.upload_time == datetime(2026, 3, 11, 10, tzinfo=UTC)
    assert (plain.build, plain.sha256, plain.core_metadata, plain.core_metadata_sha256) == ((), None, True, None)
    assert (plain.yanked, plain.yanked_reason, plain.requires_python, plain.size) == (True, None, None, None)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", r"returned invalid JSON"),
        ('{"meta": {"api-version": "1.0"}}', r"not a PEP 691 project page"),
        (json_page(api="2.1"), r"simple API version 2\.1"),
    ],
)
def test_parse_json_errors(payload: str, message: str) -> None:
    with pytest.raises(IndexUnavailable, match=message):
        parse_simple_json(payload, "https://index.example.org/simple/demo/")


# --- mirrors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{CU118}/torch/", "https://mirror.example.org/pytorch/whl/cu118/torch/"),
        ("https://download.pytorch.org/whl", "https://mirror.example.org/pytorch/whl"),
        ("https://download.pytorch.org/whlx/torch/", "https://download.pytorch.org/whlx/torch/"),
        (f"{PYPI}/torch/", f"{PYPI}/torch/"),
        ("https://download.pytorch.org/whl/cu128/torch/", "https://cu128.example.org/torch/"),
    ],
)
def test_apply_mirror_longest_prefix_on_a_path_boundary(url: str, expected: str) -> None:
    mirrors = {**MIRROR, "https://download.pytorch.org/whl/cu128/": "https://cu128.example.org/"}
    assert apply_mirror(url, mirrors) == expected


def test_parse_mirrors_both_forms() -> None:
    expected = {"https://download.pytorch.org/whl": "https://mirror.example.org/pytorch/whl"}
    assert parse_mirrors({"https://download.pytorch.org/whl/": "https://mirror.example.org/pytorch/whl/"}) == expected
    assert parse_mirrors(["https://download.pytorch.org/whl=https://mirror.example.org/pytorch/whl"]) == expected


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["https://download.pytorch.org/whl"], "not a mirror mapping: 'https://download.pytorch.org/whl'"),
        (["https://download.pytorch.org/whl=mirror.example.org"], "mirror is not an http(s) URL: 'mirror.example.org'"),
    ],
)
def test_parse_mirrors_rejects(items: list[str], message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_mirrors(items)
    assert info.value.message == message


# --- IndexClient -------------------------------------------------------------------------------


def make_client(http: httpx.Client, sleeps: list[float] | None = None, **policy: Any) -> IndexClient:
    return IndexClient(http, IndexPolicy(**policy), sleep=(sleeps.append if sleeps is not None else lambda _: None))


def test_fetch_json_from_pypi_sends_accept_and_dispatches_on_content_type() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{PYPI}/torch/").respond(200, text=PYPI_JSON, headers=JSON_TYPE)
        files = make_client(http).fetch_project(PYPI, "torch")
    assert files == parse_simple_json(PYPI_JSON, f"{PYPI}/torch/")
    assert route.calls.last.request.headers["Accept"] == ACCEPT


def test_fetch_html_from_pytorch_index_normalizes_the_name() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        html_utf8 = {"Content-Type": "text/html; charset=utf-8"}
        router.get(f"{CU118}/torch/").respond(200, text=CU118_HTML, headers=html_utf8)
        page = make_client(http).fetch_page(CU118 + "/", "Torch")
    assert (page.project, page.index_url, page.url, page.found, page.source) == (
        "torch",
        CU118,
        f"{CU118}/torch/",
        True,
        "network",
    )
    assert page.files == tuple(parse_simple_html(CU118_HTML, f"{CU118}/torch/"))


def test_fetch_unknown_content_type_is_sniffed() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{PYPI}/torch/").respond(200, text=PYPI_JSON, headers={"Content-Type": "binary/octet-stream"})
        assert len(make_client(http).fetch_project(PYPI, "torch")) == 12


@pytest.mark.parametrize("charset", ["x-nonexistent", "idna", "rot13", "undefined"])
def test_a_charset_python_cannot_decode_with_is_read_as_utf8(charset: str) -> None:
    # A Content-Type naming a codec Python lacks, or one that is no text codec, was a LookupError or
    # UnicodeError raised from the page read: an internal error. It is read as a page with no charset.
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        headers = {"Content-Type": f"text/html; charset={charset}"}
        router.get(f"{CU118}/torch/").respond(200, content=CU118_HTML.encode(), headers=headers)
        page = make_client(http).fetch_page(CU118 + "/", "torch")
    assert page.files == tuple(parse_simple_html(CU118_HTML, f"{CU118}/torch/"))
    assert page.files


def test_fetch_404_means_not_on_this_index() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU118}/fbgemm-gpu/").respond(404)
        page = make_client(http).fetch_page(CU118, "fbgemm_gpu")
    assert (page.found, page.files, page.url) == (False, (), f"{CU118}/fbgemm-gpu/")


def test_fetch_filters_files_of_other_projects() -> None:
    page = json_page(
        {"filename": "demo-1.0-py3-none-any.whl", "url": "https://f.example.org/demo-1.0-py3-none-any.whl"},
        {"filename": "other-1.0-py3-none-any.whl", "url": "https://f.example.org/other-1.0-py3-none-any.whl"},
    )
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get("https://index.example.org/simple/demo/").respond(200, text=page, headers=JSON_TYPE)
        files = make_client(http).fetch_project("https://index.example.org/simple", "demo")
    assert [f.filename for f in files] == ["demo-1.0-py3-none-any.whl"]


def test_retries_read_errors_with_exponential_backoff() -> None:
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{PYPI}/torch/").mock(
            side_effect=[
                httpx.ReadError("connection reset"),
                httpx.ReadTimeout("slow"),
                httpx.Response(200, text=PYPI_JSON, headers=JSON_TYPE),
            ]
        )
        files = make_client(http, sleeps).fetch_project(PYPI, "torch")
    assert (len(files), route.call_count, sleeps) == (12, 3, [0.5, 1.0])


def test_retries_5xx_and_429_honouring_retry_after() -> None:
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{PYPI}/torch/").mock(
            side_effect=[
                httpx.Response(503),
                httpx.Response(429, headers={"Retry-After": "2"}),
                httpx.Response(502, headers={"Retry-After": "3600"}),
                httpx.Response(200, text=PYPI_JSON, headers=JSON_TYPE),
            ]
        )
        assert len(make_client(http, sleeps).fetch_project(PYPI, "torch")) == 12
    assert sleeps == [0.5, 2.0, 8.0]  # Retry-After is capped at max_backoff


def test_gives_up_after_retries_with_index_unavailable() -> None:
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{CU118}/torch/").mock(side_effect=httpx.ReadError("connection reset"))
        with pytest.raises(IndexUnavailable) as info:
            make_client(http, sleeps).fetch_project(CU118, "torch")
    error = info.value
    assert (route.call_count, sleeps) == (4, [0.5, 1.0, 2.0])
    assert error.code == "index-unavailable"
    assert error.message == f"could not reach {CU118}/torch/: ReadError: connection reset"
    assert isinstance(error.__cause__, httpx.ReadError)
    assert error.hint is not None
    assert "--offline" in error.hint
    assert "index-mirror" in error.hint


@pytest.mark.parametrize("failure", [httpx.ConnectError("connection refused"), httpx.ConnectTimeout("timed out")])
def test_a_refused_or_timed_out_connect_is_not_retried(failure: httpx.HTTPError) -> None:
    """A host that refuses the connection (or does not accept it within the connect timeout) is down for the
    run: no back-off sleeps, one request, and the next page on it fails without a request."""
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(url__startswith="https://download.pytorch.org/").mock(side_effect=failure)
        client = make_client(http, sleeps)
        with pytest.raises(IndexUnavailable) as info:
            client.fetch_project(CU118, "torch")
        with pytest.raises(IndexUnavailable, match=r"download\.pytorch\.org is unreachable"):
            client.fetch_project(CU128, "torch")
    assert (route.call_count, sleeps) == (1, [])
    assert info.value.message == f"could not reach {CU118}/torch/: {type(failure).__name__}: {failure}"
    assert isinstance(info.value.__cause__, type(failure))


def test_persistent_5xx_is_index_unavailable() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{CU118}/torch/").respond(500)
        with pytest.raises(IndexUnavailable, match=r"answered HTTP 500$"):
            make_client(http, retries=1).fetch_project(CU118, "torch")
    assert route.call_count == 2


def test_403_is_not_retried_and_not_treated_as_absent() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{CU118}/torch/").respond(403)
        with pytest.raises(IndexUnavailable, match=r"answered HTTP 403$"):
            make_client(http).fetch_project(CU118, "torch")
    assert route.call_count == 1


def test_unreachable_host_is_not_retried_for_the_next_project() -> None:
    sleeps: list[float] = []
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(url__startswith="https://download.pytorch.org/").mock(side_effect=httpx.ConnectError("down"))
        client = make_client(http, sleeps, retries=1)
        with pytest.raises(IndexUnavailable):
            client.fetch_project(CU118, "torch")
        with pytest.raises(IndexUnavailable) as info:
            client.fetch_project(CU128, "torchvision")
    assert (route.call_count, sleeps) == (1, [])
    assert info.value.message == "download.pytorch.org is unreachable (ConnectError: down)"


def test_mirror_is_used_for_requests_and_recorded() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{MIRRORED_CU118}/torch/").respond(200, text=CU118_HTML, headers=HTML_TYPE)
        page = make_client(http, mirrors=MIRROR).fetch_page(CU118, "torch")
    assert (page.index_url, page.served_from, page.mirrored) == (
        CU118,
        "https://mirror.example.org/pytorch/whl/cu118",
        True,
    )
    # relative hrefs resolve against the page actually fetched: the mirror serves the files too
    assert page.files[0].url == (
        "https://mirror.example.org/whl/cu118/torch-2.7.0%2Bcu118-cp310-cp310-manylinux_2_28_x86_64.whl"
    )


def test_absolute_file_urls_on_a_mirrored_host_are_rewritten() -> None:
    mirrors = {**MIRROR, "https://download-r2.pytorch.org/whl": "https://files.example.org/r2/whl"}
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        mirrored = "https://mirror.example.org/pytorch/whl/cu128/torch/"
        router.get(mirrored).respond(200, text=CU128_HTML, headers=HTML_TYPE)
        files = make_client(http, mirrors=mirrors).fetch_project(CU128, "torch")
    assert files[0].url == (
        "https://files.example.org/r2/whl/cu128/torch-2.10.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    )
    assert files[0].sha256 == "fe60194fe8967cc0eaba0e2203a3a5f65a4093bc36c38cc6d4941ae9863611b9"


def test_relative_links_resolve_against_the_final_url_after_a_same_host_redirect() -> None:
    moved = "https://download.pytorch.org/whl/moved/cu118/torch/"
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU118}/torch/").respond(301, headers={"Location": "/whl/moved/cu118/torch/"})
        router.get(moved).respond(200, text=CU118_HTML, headers=HTML_TYPE)
        page = make_client(http).fetch_page(CU118, "torch")
    assert page.url == f"{CU118}/torch/"
    assert page.files == tuple(parse_simple_html(CU118_HTML, moved))  # links resolve against where it ended
    assert page.files


def test_a_redirect_to_another_host_is_refused_not_followed() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU118}/torch/").respond(301, headers={"Location": "https://cdn.example.org/whl/cu118/torch/"})
        with pytest.raises(IndexUnavailable) as info:
            make_client(http).fetch_project(CU118, "torch")
    assert info.value.message == (
        f"{CU118}/torch/ redirects to another host, https://cdn.example.org/whl/cu118/torch/; not followed"
    )


# --- IndexClient with the cache ------------------------------------------------------------------


def test_cache_revalidates_with_etag_and_serves_304(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    headers = {**HTML_TYPE, "ETag": '"v1"', "Last-Modified": "Sat, 21 Nov 2026 10:00:00 GMT"}
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        route = router.get(f"{CU118}/torch/").mock(
            side_effect=[
                httpx.Response(200, text=CU118_HTML, headers=headers),
                httpx.Response(304, headers={"ETag": '"v2"'}),
            ]
        )
        clock = iter([100.0, 150.0, 200.0]).__next__  # fetched, freshness checked (stale: no max-age), 304
        client = IndexClient(http, IndexPolicy(cache=cache), clock=clock, sleep=lambda _: None)
        first = client.fetch_page(CU118, "torch")
        second = client.fetch_page(CU118, "torch")
    conditional = route.calls.last.request.headers
    assert (conditional["If-None-Match"], conditional["If-Modified-Since"]) == ('"v1"', "Sat, 21 Nov 2026 10:00:00 GMT")
    assert (first.source, second.source, second.files == first.files) == ("network", "revalidated", True)
    stored = cache.get(f"{CU118}/torch/")
    assert stored is not None
    assert (stored.etag, stored.fetched_at) == ('"v2"', 200.0)


def test_offline_serves_the_cache_without_any_request(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{PYPI}/torch/").respond(200, text=PYPI_JSON, headers=JSON_TYPE)
        online = make_client(http, cache=cache).fetch_page(PYPI, "torch")
    with respx.mock(assert_all_called=True, assert_all_mocked=True), httpx.Client() as http:
        offline = make_client(http, cache=cache, offline=True).fetch_page(PYPI, "torch")
        with pytest.raises(IndexUnavailable, match=r"not in the cache and --offline forbids the network"):
            make_client(http, cache=cache, offline=True).fetch_page(PYPI, "torchrec")
    assert (offline.source, offline.files) == ("cache", online.files)


def test_network_failure_serves_a_stale_copy(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU118}/torch/").mock(
            side_effect=[httpx.Response(200, text=CU118_HTML, headers=HTML_TYPE), httpx.ConnectError("refused")]
        )
        client = make_client(http, cache=cache, retries=0)
        fresh = client.fetch_page(CU118, "torch")
        stale = client.fetch_page(CU118, "torch")
    assert stale.error is not None
    assert (stale.source, format_text(stale.error), stale.files) == (
        "stale-cache",
        f"could not reach {CU118}/torch/: ConnectError: refused",
        fresh.files,
    )


def test_a_page_that_does_not_parse_is_not_cached(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{PYPI}/torch/").respond(200, text="{oops", headers=JSON_TYPE)
        with pytest.raises(IndexUnavailable, match="invalid JSON"):
            make_client(http, cache=cache).fetch_page(PYPI, "torch")
    assert cache.get(f"{PYPI}/torch/") is None


def test_404_is_cached_as_absent(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU118}/xformers/").respond(404)
        make_client(http, cache=cache).fetch_page(CU118, "xformers")
    with httpx.Client() as http:
        page = make_client(http, cache=cache, offline=True).fetch_page(CU118, "xformers")
    assert (page.found, page.files, page.source) == (False, (), "cache")


# --- fetch_listings ------------------------------------------------------------------------------


def test_fetch_listings_falls_back_with_one_notice_per_index() -> None:
    requests = [(PYPI, "torch"), (CU118, "torch"), (CU118, "torchvision"), (PYPI, "Torch")]
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{PYPI}/torch/").respond(200, text=PYPI_JSON, headers=JSON_TYPE)
        torch_sent = threading.Event()

        def refuse(request: httpx.Request) -> httpx.Response:
            # torch's request is sent, never failed unsent as "host down": torchvision's refusal waits for it
            if request.url.path.endswith("/torch/"):
                torch_sent.set()
            else:
                torch_sent.wait(10)
            raise httpx.ConnectError("refused")

        down = router.get(url__startswith=CU118).mock(side_effect=refuse)
        listings = fetch_listings(
            http, requests, IndexPolicy(offline=False, cache=None, retries=1), sleep=lambda _: None
        )
    assert down.call_count <= 2  # refused: never retried (the two pages are fetched at once, one request each at most)
    assert [(p.index_url, p.project) for p in listings.pages] == [(PYPI, "torch")]
    assert listings.unavailable == ((CU118, "torch"), (CU118, "torchvision"))
    assert [(n.code, n.message) for n in listings.notices] == [
        (
            "index-unavailable-fallback",
            f"{CU118} could not be used (could not reach {CU118}/torch/: ConnectError: refused); "
            "using the embedded data for torch, torchvision, so their wheel sha256 hashes could not be added",
        ),
    ]
    assert listings.files(CU118, "torch") is None
    assert listings.files(PYPI + "/", "TORCH") == tuple(parse_simple_json(PYPI_JSON, f"{PYPI}/torch/"))


def test_fetch_listings_offline_without_cache_is_silent(tmp_path: Path) -> None:
    with respx.mock(assert_all_called=True), httpx.Client() as http:
        listings = fetch_listings(http, [(CU118, "torch")], IndexPolicy(offline=True, cache=HttpCache(tmp_path)))
    assert listings == Listings(unavailable=((CU118, "torch"),))  # type: ignore[arg-type]


def test_fetch_listings_stale_cache_notice(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU128}/torch/").respond(200, text=CU128_HTML, headers=HTML_TYPE)
        IndexClient(http, IndexPolicy(cache=cache), clock=lambda: 1_763_700_000.0).fetch_page(CU128, "torch")
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{CU128}/torch/").respond(503)
        listings = fetch_listings(http, [(CU128, "torch")], IndexPolicy(offline=False, cache=cache, retries=0))
    assert listings.unavailable == ()
    assert [(n.code, n.message) for n in listings.notices] == [
        (
            "index-stale-cache",
            f"{CU128} could not be reached ({CU128}/torch/ answered HTTP 503); "
            "using the listing of torch cached 2025-11-21 04:40 UTC",
        ),
    ]
    assert len(listings.files(CU128, "torch") or ()) == 12


def test_fetch_listings_through_a_mirror_records_both_urls() -> None:
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        router.get(f"{MIRRORED_CU118}/torch/").respond(200, text=CU118_HTML, headers=HTML_TYPE)
        listings = fetch_listings(http, [(CU118, "torch")], IndexPolicy(offline=False, cache=None, mirrors=MIRROR))
    page = listings.page(CU118, "torch")
    assert page is not None
    assert (page.index_url, page.served_from, listings.notices) == (
        CU118,
        "https://mirror.example.org/pytorch/whl/cu118",
        (),
    )


def test_version_filter_parses_only_the_pinned_files() -> None:
    from cudaresolve.index.client import parse_simple_html, version_filter

    page = (
        '<a href="/whl/cu118/torch-2.7.1%2Bcu118-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=' + "a" * 64 + '">x</a>'
        '<a href="/whl/cu118/torch-2.7.0%2Bcu118-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=' + "b" * 64 + '">x</a>'
        '<a href="/whl/cu118/torch-2.7.1%2Bcu118-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=' + "c" * 64 + '">x</a>'
        '<a href="/whl/cu118/torchvision-2.7.1%2Bcu118-cp311-cp311-linux_x86_64.whl">x</a>'
    )
    every = parse_simple_html(page, "https://download.pytorch.org/whl/cu118/torch/")
    kept = parse_simple_html(
        page, "https://download.pytorch.org/whl/cu118/torch/", keep=version_filter("torch", ["2.7.1+cu118"])
    )
    assert len(every) == 4
    assert [f.sha256 for f in kept] == ["a" * 64, "c" * 64]


def test_version_filter_on_a_page_with_one_anchor_per_line() -> None:
    from cudaresolve.index.client import parse_simple_html, version_filter

    lines = [
        f'<A HREF="/whl/cu118/torch-2.{minor}.0%2Bcu118-cp311-cp311-linux_x86_64.whl#sha256={minor:064x}">t</A><br/>'
        for minor in range(12)
    ]
    page = "<!DOCTYPE html>\n<html><body>\n" + "\n".join(lines) + "\n</body></html>\n"
    url = "https://download.pytorch.org/whl/cu118/torch/"
    kept = parse_simple_html(page, url, keep=version_filter("torch", ["2.7.0+cu118", "2.11.0+cu118"]))
    assert [str(f.version) for f in kept] == ["2.7.0+cu118", "2.11.0+cu118"]
    assert [f.sha256 for f in kept] == [f"{7:064x}", f"{11:064x}"]


def test_http_client_verifies_https_and_sets_up_tls_only_when_needed() -> None:
    import ssl

    import respx

    from cudaresolve.index.client import make_http_client

    with respx.mock(assert_all_called=True) as mock:
        mock.get("http://127.0.0.1:9/simple/torch/").respond(200, text="")
        mock.get("https://pypi.org/simple/torch/").respond(200, text="")
        with make_http_client() as client:
            transports = client._transport._transports  # type: ignore[attr-defined]
            client.get("http://127.0.0.1:9/simple/torch/")
            assert set(transports) == {"http"}
            client.get("https://pypi.org/simple/torch/")
            contexts = {k: t._pool._ssl_context for k, t in transports.items()}
    assert contexts["https"].verify_mode == ssl.CERT_REQUIRED
    assert contexts["https"].check_hostname is True
    assert contexts["http"].verify_mode == ssl.CERT_NONE


def test_a_lone_angle_bracket_is_text_not_a_tag_the_parser_scans_again() -> None:
    """'<' with no '>' before the next '<' opens no tag: html.parser rescanned from each one to the end of the page
    (a 160 KB page of '<a ' held a lock for a minute); it is read as text, and the anchors around it stay."""
    from cudaresolve.index.anchors import AnchorParser

    parser = AnchorParser()
    parser.feed("<a <a <!-- <a href=\"f-1.0.tar.gz\" data-requires-python=\">=3.8,<4\">f-1.0.tar.gz</a> <a ")
    parser.close()
    assert [(a.get("href"), a.get("data-requires-python"), t) for a, t in parser.anchors] == [
        ("f-1.0.tar.gz", ">=3.8,<4", "f-1.0.tar.gz")]
