"""The shortcuts of page parsing say what the long way says: ``WheelNames`` what packaging's
``parse_wheel_filename`` and ``parse_sdist_filename`` say of each name, one page's names sharing one memo;
the plain-URL test of ``parse_simple_json`` what ``urljoin`` and ``split_url`` make of a file's URL; one name
filter (``fitting.tag_filter``) the same of a name the hundredth time as the first."""

from __future__ import annotations

import json
from urllib.parse import urldefrag

from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion

from cudaresolve.index import simple
from cudaresolve.index.fitting import tag_filter
from cudaresolve.index.wheel_names import WheelNames
from cudaresolve.target.environment import wheel_tags
from cudaresolve.target.model import Target

_PARTS = st.sampled_from(
    ["demo", "Demo_Pkg", "a__b", "", "1.0", "2.7.1+cu118", "1.0.post1", "bad version", "1", "12abc", "x", "cp311",
     "cp311.cp312", "abi3", "none", "py3", "py2.py3", "manylinux_2_28_x86_64", "any", "win_amd64", ".", "cp311..x",
     "CP311", "ü", "0"]
)  # fmt: skip


def _expected(name: str) -> object:
    try:
        return parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion):
        return None


@given(st.lists(st.lists(_PARTS, min_size=1, max_size=7).map(lambda p: "-".join(p) + ".whl"), max_size=12))
@settings(max_examples=400, deadline=None)
def test_one_pages_names_parse_as_packaging_parses_each(names: list[str]) -> None:
    memo = WheelNames()
    for name in names + names:  # the second time from the memo
        assert memo.parse(name) == _expected(name), name


def _expected_sdist(name: str) -> object:
    try:
        return parse_sdist_filename(name)
    except (InvalidSdistFilename, InvalidVersion):
        return None


_ENDS = st.sampled_from([".whl", ".tar.gz", ".zip", ".tar", "", ".ZIP"])


@given(st.lists(st.tuples(st.lists(_PARTS, min_size=1, max_size=7).map("-".join), _ENDS), max_size=12))
@settings(max_examples=400, deadline=None)
def test_one_pages_wheels_and_sdists_parse_as_packaging_parses_each(names: list[tuple[str, str]]) -> None:
    memo = WheelNames()  # wheels and sdists of one page share the memo of versions
    for stem, end in names + names:
        name = stem + end
        if end == ".whl":
            assert memo.parse(name) == _expected(name), name
        elif end in (".tar.gz", ".zip"):
            assert memo.sdist(name) == _expected_sdist(name), name


def test_names_sharing_a_version_or_tags_share_the_parsed_parts() -> None:
    memo = WheelNames()
    a = memo.parse("demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    b = memo.parse("demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")
    c = memo.parse("demo-2.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert a is not None and b is not None and c is not None
    assert a[1] is b[1] and a[3] is c[3] and a[3] != b[3]
    assert memo.parse("demo-1.0.tar.gz") is None and memo.parse("demo-1.0-x-cp311-none-any.whl") is None
    sdist = memo.sdist("Demo-1.0.tar.gz")
    assert sdist is not None and sdist[1] is a[1] and sdist[0] == "demo"  # the wheels' version, read once
    assert memo.sdist("demo-1.0.tgz") is None and memo.sdist("-1.0.zip") is None


def test_pages_share_the_tag_sets_they_name() -> None:
    """Two pages (two memos) naming the same tags get the very same set: parsed once per process, and ranked once
    against the target's tags (``tag_priority`` remembers a set's rank)."""
    first = WheelNames().parse("demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    second = WheelNames().parse("other-3.2-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert first is not None and second is not None and first[3] is second[3]


_URL_TEXT = st.text(alphabet="aZ09.-_~%+/:?#;@[]=& \tü", max_size=30)
_SCHEMES = st.sampled_from(["https://", "http://", "HTTPS://", "ftp://", "//", "/", ""])
_BASES = st.sampled_from(
    ["https://pypi.org/simple/demo/", "http://127.0.0.1:8080/simple/demo/", "https://[::1/simple/", "https://h/x?q#f"]
)


_NEAR_PLAIN = st.builds(
    lambda scheme, host, path: scheme + host + path,
    st.sampled_from(["https://", "http://"]),
    st.text(alphabet="ab09.-:@[", max_size=6),
    st.text(alphabet="/a._~%+-?#;=", max_size=12),
)


@given(_BASES, _SCHEMES, _URL_TEXT)
@settings(max_examples=600, deadline=None)
@example("https://pypi.org/simple/demo/", "https://", "files.example/packages/aa/demo-1.0-py3-none-any.whl")
@example("https://pypi.org/simple/demo/", "https://", "h/a/../b")
@example("https://pypi.org/simple/demo/", "https://", "h/?")
@example("https://pypi.org/simple/demo/", "https://", "h/a#")
def test_a_files_url_is_joined_as_urljoin_and_split_url_join_it(base: str, scheme: str, rest: str) -> None:
    _same_join(base, scheme + rest)


@given(_BASES, _NEAR_PLAIN)
@settings(max_examples=600, deadline=None)
def test_a_url_near_the_plain_form_is_joined_as_urljoin_joins_it(base: str, url: str) -> None:
    _same_join(base, url)


def _same_join(base: str, url: str) -> None:
    page = {"meta": {"api-version": "1.1"}, "files": [{"filename": "demo-1.0-py3-none-any.whl", "url": url}]}
    joined = simple._join(base, url)
    expected = [urldefrag(joined)[0]] if joined is not None else []
    assert [f.url for f in simple.parse_simple_json(json.dumps(page), base)] == expected


def test_one_name_filter_judges_a_name_alike_every_time() -> None:
    tags = wheel_tags(Target(gpus=(), driver=None, python="3.11", platform="linux_x86_64"), glibc="2.28")
    keep, wanted = tag_filter(tags), {str(t) for t in tags}
    names = [
        f"demo-1.0-{py}-{abi}-{plat}.whl"
        for py in ("cp311", "CP311", "py3", "cp312") for abi in ("cp311", "none", "ABI3")
        for plat in ("manylinux_2_17_x86_64.manylinux2014_x86_64", "any", "win_amd64", "MANYLINUX_2_28_X86_64")
    ]  # fmt: skip
    for name in names * 3:
        py, abi, plat = name[:-4].lower().split("-")[-3:]
        expected = any(f"{x}-{y}-{z}" in wanted for x in py.split(".") for y in abi.split(".") for z in plat.split("."))
        assert keep(name) is expected, name
