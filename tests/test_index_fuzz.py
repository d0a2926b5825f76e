"""Property tests: the simple-API parsers, mirror mappings, link checks and cache entries take any input.

Whatever a server or a user sends, only a ``CudaResolveError`` (``IndexUnavailable``,
``InvalidInput``) may come out; every file that does come out has an absolute http(s) URL.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudaresolve.errors import CudaResolveError
from cudaresolve.index.client import parse_mirrors, parse_simple_html, parse_simple_json
from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.simple import parse_body, version_filter
from cudaresolve.index.trust import FileTrust, is_same_host_redirect

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cudaresolve.index.simple import IndexFile

PAGE = "https://download.pytorch.org/whl/cu128/torch/"
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

wheel_names = st.builds(
    lambda name, ver, tag: f"{name}-{ver}-{tag}.whl",
    st.sampled_from(["torch", "Torch", "fbgemm_gpu", "x", "", "-", "a.b"]),
    st.sampled_from(["2.7.1", "2.7.1+cu118", "1!2", "x", "", "2.10.0-3"]),
    st.sampled_from(["cp311-cp311-linux_x86_64", "py3-none-any", "a-b", "", "cp311-cp311-manylinux_2_28_x86_64"]),
)
hrefs = st.one_of(
    st.text(max_size=80),
    st.builds(lambda scheme, rest, name: f"{scheme}{rest}{name}",
              st.sampled_from(["", "/", "https://", "http://", "file://", "javascript:", "data:", "//", "https://[::1"]),
              st.text(max_size=20), wheel_names),
)
anchors = st.builds(
    lambda href, frag, attrs, text: f'<a href="{href}{frag}" {attrs}>{text}</a>',
    hrefs,
    st.sampled_from(["", "#sha256=" + "a" * 64, "#sha256=zz", "#md5=1", "#"]),
    st.sampled_from(["", "data-yanked", 'data-yanked="r"', 'data-requires-python="&gt;=3.9"',
                     'data-core-metadata="sha256=' + "b" * 64 + '"', 'data-upload-time="x"', "<", '"']),
    st.one_of(wheel_names, st.text(max_size=20)),
)
html_pages = st.builds(
    lambda head, parts: head + "\n".join(parts),
    st.sampled_from(["", "<base href='https://x.org/'>", "<meta name='pypi:repository-version' content='2.0'>",
                     "<base href='javascript:'>", "<!DOCTYPE html><html><body>"]),
    st.lists(st.one_of(anchors, st.text(max_size=40)), max_size=12),
)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30))
json_values = st.recursive(
    json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner,
                                                                                      max_size=4)),
    max_leaves=20,
)
file_entries = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"filename": st.one_of(wheel_names, json_values), "url": st.one_of(hrefs, json_values)},
        optional={"hashes": st.one_of(json_values, st.just({"sha256": "c" * 64})), "yanked": json_values,
                  "requires-python": json_values, "size": json_values, "core-metadata": json_values,
                  "upload-time": json_values},
    ),
)
json_pages = st.one_of(
    json_values,
    st.fixed_dictionaries({"files": st.lists(file_entries, max_size=8)},
                          optional={"meta": st.one_of(json_values, st.just({"api-version": "1.1"}))}),
)


def only_coded(call: Callable[[], list[IndexFile]]) -> None:
    try:
        files = call()
    except CudaResolveError:
        return
    for file in files:
        assert file.filename.endswith(".whl")
        assert "#" not in file.url


@FUZZ
@given(page=html_pages, keep=st.booleans())
def test_parse_simple_html_never_crashes(page: str, keep: bool) -> None:
    only_coded(lambda: parse_simple_html(page, PAGE, keep=version_filter("torch", ["2.7.1"]) if keep else None))


@FUZZ
@given(payload=json_pages)
def test_parse_simple_json_never_crashes(payload: Any) -> None:
    try:
        text = json.dumps(payload)
    except ValueError:
        return
    only_coded(lambda: parse_simple_json(text, PAGE))
    if isinstance(payload, dict):
        only_coded(lambda: parse_simple_json(payload, PAGE))


@FUZZ
@given(body=st.one_of(st.text(max_size=200), html_pages), media=st.sampled_from(
    [None, "", "text/html", "application/vnd.pypi.simple.v1+json", "application/json; charset=x", "x/y"]))
def test_parse_body_never_crashes(body: str, media: str | None) -> None:
    only_coded(lambda: parse_body(body, media, PAGE))


@FUZZ
@given(raw=st.binary(max_size=200))
def test_parse_body_on_undecodable_bytes(raw: bytes) -> None:
    only_coded(lambda: parse_simple_json(raw, PAGE))


mirror_items = st.one_of(
    st.text(max_size=60),
    st.builds(lambda a, b: f"{a}={b}", st.one_of(hrefs, st.text(max_size=30)), st.one_of(hrefs, st.text(max_size=30))),
)


@FUZZ
@given(items=st.one_of(st.lists(mirror_items, max_size=5), st.dictionaries(st.text(max_size=30), st.text(max_size=30),
                                                                           max_size=4)))
def test_parse_mirrors_gives_http_urls_or_invalid_input(items: list[str] | dict[str, str]) -> None:
    try:
        mirrors = parse_mirrors(items)
    except CudaResolveError:
        return
    for original, mirror in mirrors.items():
        assert original.split("://", 1)[0].lower() in ("http", "https")
        assert mirror.split("://", 1)[0].lower() in ("http", "https")


@FUZZ
@given(page=hrefs, url=hrefs, target=hrefs)
def test_link_and_redirect_checks_never_crash(page: str, url: str, target: str) -> None:
    trust = FileTrust.for_page(page_url=page, index_url=PAGE, allowed_hosts=("pypi.org",), mirror_urls=(url,))
    why = trust.check(url)
    if why is None:
        assert url.split(":", 1)[0].lower() in ("http", "https")
    assert isinstance(is_same_host_redirect(page, target), bool)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=100), json_values.map(lambda v: json.dumps(v) + "\n"),
                         st.builds(lambda body, digest, size, apart: json.dumps({
                             "format": 3, "url": PAGE, "status": 200, "fetched_at": 1.0, "size": size, "apart": apart,
                             "sha256": digest}) + "\n" + body, st.text(max_size=30),
                             st.one_of(st.none(), st.text(max_size=64)), st.one_of(st.none(), st.integers(-1, 40)),
                             st.one_of(st.booleans(), st.none()))))
def test_any_cache_file_reads_as_an_entry_or_missing(content: bytes | str, tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    path = cache.path_for(PAGE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    entry = cache.get(PAGE)
    assert entry is None or isinstance(entry, CachedResponse)
    light = cache.get(PAGE, body=False)
    assert light is None or isinstance(cache.with_body(light), CachedResponse | None)
