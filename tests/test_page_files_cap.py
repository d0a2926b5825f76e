"""An index page is read for at most ``MAX_PAGE_FILES`` file entries: past them it is refused with one coded line,
HTML or JSON, before the parser has held them all (found by the hostile-index hunt: a 62 MB page of bare links
held a lock at 0.9 GB for 45 s, and five such pages ended Python itself)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index import anchors, json_page
from cudaresolve.index.limits import MAX_PAGE_FILES
from cudaresolve.index.simple import parse_body

if TYPE_CHECKING:
    from collections.abc import Callable

URL = "https://example.test/simple/foo/"


def _html(count: int) -> str:
    links = "".join(f'<a href="/f/foo-0.{k}-py3-none-any.whl">foo-0.{k}-py3-none-any.whl</a>\n' for k in range(count))
    return f"<html><body>{links}</body></html>"


def _json(count: int) -> str:
    files = [{"filename": f"foo-0.{k}-py3-none-any.whl", "url": f"/f/foo-0.{k}-py3-none-any.whl", "hashes": {}}
             for k in range(count)]  # fmt: skip
    return json.dumps({"meta": {"api-version": "1.1"}, "name": "foo", "files": files})


@pytest.fixture
def cap_of_five(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(anchors, "MAX_PAGE_FILES", 5)
    monkeypatch.setattr(json_page, "MAX_PAGE_FILES", 5)
    return 5


@pytest.mark.parametrize(("body", "kind"), [(_html, "text/html"), (_json, "application/vnd.pypi.simple.v1+json")])
def test_a_page_at_the_cap_is_read_and_one_past_it_is_refused(
    cap_of_five: int, body: Callable[[int], str], kind: str
) -> None:
    assert len(parse_body(body(cap_of_five), kind, URL)) == cap_of_five
    with pytest.raises(IndexUnavailable) as refused:
        parse_body(body(cap_of_five + 1), kind, URL)
    assert refused.value.text.key == "index.page-too-many-files"
    assert refused.value.message == f"{URL} lists more than 5 files; stopped reading it"


def test_the_json_cap_counts_the_entries_a_filter_drops_too(cap_of_five: int) -> None:
    """The work is in reading the entries, kept or not: a page of another project's names is refused alike."""
    with pytest.raises(IndexUnavailable):
        parse_body(_json(cap_of_five + 1), "application/json", URL, keep=lambda name: name.startswith("bar-"))


def test_the_cap_is_well_above_the_largest_real_page() -> None:
    assert MAX_PAGE_FILES >= 5 * 46_724  # ddtrace, PyPI's largest page by files (2026-11)
