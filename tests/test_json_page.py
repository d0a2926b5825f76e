"""A PEP 691 page read one entry at a time (``index.json_page``): the same answer as ``json.loads``, less memory."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudaresolve.index.json_page import scan_page
from cudaresolve.index.simple import parse_simple_json

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_ENTRY = st.fixed_dictionaries({"filename": st.text(max_size=12)}, optional={"url": st.text(), "x": _VALUES})
_PAGE = st.fixed_dictionaries({"files": st.lists(_ENTRY | _VALUES, max_size=8)}, optional={"meta": _VALUES})


def _odd(name: str) -> bool:
    return len(name) % 2 == 1


@given(_PAGE, st.booleans(), st.sampled_from([None, 0, 2]))
@settings(max_examples=200, deadline=None)
def test_the_scan_keeps_what_json_loads_gives(page: dict[str, Any], filtered: bool, indent: int | None) -> None:
    wanted = _odd if filtered else None
    members, files = scan_page(json.dumps(page, indent=indent), wanted)
    judged = [e for e in page["files"] if isinstance(e, dict) and isinstance(e.get("filename"), str)]
    expected = [e for e in page["files"] if wanted is None or e not in judged or wanted(e["filename"])]
    assert files == expected
    assert members == {k: v for k, v in page.items() if k != "files"}


@pytest.mark.parametrize(
    "text",
    ["", "{", '{"files": [1,]}', '{"files": [1] ', '{"files": [1]} x', '{"a" 1}', '{"files": [{} {}]}', '{"a": 1,}'],
)
def test_what_json_loads_refuses_the_scan_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        scan_page(text, None)


def test_duplicate_members_and_other_shapes_read_as_json_loads_reads_them() -> None:
    assert scan_page('{"files": [1], "files": {}}', None)[1] == {}  # the later member wins
    assert scan_page('{"files": {}, "files": [{"filename": "a"}]}', None)[1] == [{"filename": "a"}]
    assert scan_page("[1]", None) == ([1], None)  # not an object: the caller refuses the page
    assert scan_page('{"meta": {}}', None) == ({"meta": {}}, None)


def test_an_entry_nested_too_deep_is_a_decode_error_of_the_page() -> None:
    deep = '{"files": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    with pytest.raises(ValueError, match="nested deeper than"):
        scan_page(deep, None)


def _big_page(count: int) -> str:
    files = [
        {
            "filename": f"demo-1.{i}-cp311-cp311-{'manylinux_2_28_x86_64' if i % 50 == 0 else 'win_amd64'}.whl",
            "url": f"https://files.example.org/demo-1.{i}.whl",
            "hashes": {"sha256": f"{i:064x}"},
            "requires-python": ">=3.9",
            "size": 1000 + i,
            "upload-time": "2025-01-01T00:00:00.000000Z",
            "yanked": False,
            "core-metadata": {"sha256": f"{i:064x}"},
        }
        for i in range(count)
    ]
    return json.dumps({"meta": {"api-version": "1.1"}, "name": "demo", "files": files})


def test_a_filtered_page_holds_only_its_kept_entries_in_memory() -> None:
    text = _big_page(20_000)  # about 7 MB, as PyPI's largest pages
    linux = "manylinux_2_28_x86_64"

    def peak(read: Any) -> int:
        tracemalloc.start()
        try:
            read()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    whole = peak(lambda: json.loads(text))
    scanned = peak(lambda: parse_simple_json(text, "https://pypi.org/simple/demo/", keep=lambda n: linux in n))
    assert len(parse_simple_json(text, "https://pypi.org/simple/demo/", keep=lambda n: linux in n)) == 400
    assert scanned < whole / 5, (scanned, whole)
    assert scanned < len(text) / 2, (scanned, len(text))


def test_core_metadata_is_read_from_its_header_block_only() -> None:
    from cudaresolve.index.metadata import parse_core_metadata

    head = (
        "Metadata-Version: 2.4\nName: demo\nVersion: 1.0\nSummary: a summary folded\n  over two lines\n"
        "Requires-Dist: numpy>=2\nRequires-Dist: rich; extra == \"cli\"\nRequires-Python: >=3.10\n"
    )
    body = "\n# Demo\n\nRequires-Dist: evil\n\n" + "text " * 50_000
    meta = parse_core_metadata(head + body, source="demo.metadata")
    assert [str(r) for r in meta.requires_dist] == ["numpy>=2", 'rich; extra == "cli"']
    assert meta.requires_python == ">=3.10"
    assert parse_core_metadata(head, source="demo.metadata") == meta  # no body at all: the same


@pytest.mark.parametrize("where", ["entry", "member"])
def test_a_bracket_bound_refuses_what_might_nest_too_deep_whatever_the_stack(where: str) -> None:
    from cudaresolve.core.decode import TooDeep

    def page(depth: int) -> str:
        nested = "[" * depth + "]" * depth
        entry = {"filename": "a-1.0-py3-none-any.whl", "url": "https://h/a-1.0-py3-none-any.whl"}
        if where == "entry":
            return json.dumps({"files": [entry]})[:-3] + f', "x": {nested}' + "}]}"
        return json.dumps({"files": [entry]})[:-1] + f', "x": {nested}' + "}"

    refused = 63 if where == "entry" else 64  # an entry's own brace counts
    for depth in (1, 10, refused - 1):
        assert scan_page(page(depth), None, brackets=64) == scan_page(page(depth), None)
    with pytest.raises(TooDeep):
        scan_page(page(refused), None, brackets=64)
    assert scan_page(page(refused), None) == scan_page(page(refused), None, brackets=None)  # unbounded: the stack
    with pytest.raises(TooDeep):  # brackets in strings count too: the bound only ever errs on the safe side
        scan_page('{"files": [{"filename": "[[[[{{{{"}]}', None, brackets=4)


@settings(max_examples=60, deadline=None)
@given(depths=st.lists(st.integers(0, 20), min_size=1, max_size=120), bound=st.integers(3, 24))
def test_the_bracket_bound_holds_for_each_entry_of_a_long_page(depths: list[int], bound: int) -> None:
    """Entries are counted by runs (``json_page._bounded_run``): a page is refused exactly when one entry holds
    ``bound`` brackets or more, however many entries there are, wherever that one stands."""
    from cudaresolve.core.decode import TooDeep

    entries = [{"filename": f"a-{i}.0-py3-none-any.whl", "x": json.loads("[" * d + "]" * d or "0")}
               for i, d in enumerate(depths)]  # fmt: skip
    text = json.dumps({"files": entries})
    held = [json.dumps(e).count("[") + json.dumps(e).count("{") for e in entries]
    if max(held) >= bound:
        with pytest.raises(TooDeep):
            scan_page(text, None, brackets=bound)
    else:
        assert scan_page(text, None, brackets=bound) == scan_page(text, None)
