"""Pages parsed once per body: the stored rows give what a parse gives, filtered or not, and damage means a re-parse."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.parsed_cache import parse_files, parsed_key, parsed_path
from cudaresolve.index.simple import parse_body, version_filter

FIXTURES = Path(__file__).parent / "fixtures" / "indexes"
PAGES = {
    "json": (
        "https://pypi.org/simple/torch/",
        "application/vnd.pypi.simple.v1+json",
        (FIXTURES / "pypi-torch-2026-11-22.json").read_text(encoding="utf-8"),
    ),
    "html": (
        "https://download.pytorch.org/whl/cu118/torch/",
        "text/html",
        (FIXTURES / "pytorch-cu118-torch-2026-11-22.html").read_text(encoding="utf-8"),
    ),
    "html-128": (
        "https://download.pytorch.org/whl/cu128/torch/",
        "text/html",
        (FIXTURES / "pytorch-cu128-torch-2026-11-22.html").read_text(encoding="utf-8"),
    ),
}


def entry(kind: str, **overrides: object) -> CachedResponse:
    url, content_type, body = PAGES[kind]
    fields: dict[str, object] = {
        "url": url,
        "status": 200,
        "body": body,
        "content_type": content_type,
        "fetched_at": 1.0,
    }
    fields.update(overrides)
    return CachedResponse(**fields)  # type: ignore[arg-type]


def versions(kind: str) -> list[str]:
    _, content_type, body = PAGES[kind]
    return sorted({str(f.version) for f in parse_body(body, content_type, PAGES[kind][0])})


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_stored_rows_give_exactly_what_a_parse_gives(tmp_path: Path, kind: str) -> None:
    cache, page = HttpCache(tmp_path), entry(kind)
    expected = parse_body(page.body, page.content_type, page.page_url)
    assert expected  # the fixture has wheels
    cold = parse_files(cache, page, None)
    assert parsed_path(cache, page.url).is_file()
    warm = parse_files(cache, page, None)
    assert cold == warm == expected
    assert [f.upload_time for f in warm] == [f.upload_time for f in expected]  # same instant and zone


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_filter_on_stored_rows_gives_what_a_filtered_parse_gives(tmp_path_factory: pytest.TempPathFactory,
                                                                    data: st.DataObject) -> None:  # fmt: skip
    kind = data.draw(st.sampled_from(sorted(PAGES)))
    wanted = data.draw(st.lists(st.sampled_from([*versions(kind), "9.9.9"]), max_size=4))
    cache, page = HttpCache(tmp_path_factory.mktemp("parsed")), entry(kind)
    keep = version_filter("torch", wanted)
    expected = parse_body(page.body, page.content_type, page.page_url, keep)
    first = data.draw(st.booleans())  # the stored form written by a filtered or an unfiltered caller
    parse_files(cache, page, keep if first else None)
    assert parse_files(cache, page, keep) == expected
    assert parse_files(cache, page, None) == parse_body(page.body, page.content_type, page.page_url)


def rewrite(path: Path, change: object) -> None:
    """Edit a stored form's rows and write it back with a correct digest (``change`` edits the dict)."""
    _, _, payload = path.read_text(encoding="utf-8").partition("\n")
    data = json.loads(payload)
    change(data)  # type: ignore[operator]
    payload = json.dumps(data)
    path.write_text(hashlib.sha256(payload.encode()).hexdigest() + "\n" + payload, encoding="utf-8")


def test_a_stored_form_is_what_a_warm_run_reads(tmp_path: Path) -> None:
    cache, page = HttpCache(tmp_path), entry("html")
    parse_files(cache, page, None)

    def set_hash(data: dict[str, list[list[object]]]) -> None:
        data["files"][0][2] = "f" * 64

    rewrite(parsed_path(cache, page.url), set_hash)
    assert parse_files(cache, page, None)[0].sha256 == "f" * 64  # read, not parsed again


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text.replace('"https://', '"https://evil.', 1),  # a row edited, digest not updated
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "",
        lambda text: "\n" + text,
        lambda text: "\xff" + text,
    ],
)
def test_a_damaged_stored_form_is_parsed_again_and_replaced(tmp_path: Path, damage: object) -> None:
    cache, page = HttpCache(tmp_path), entry("html")
    expected = parse_files(cache, page, None)
    path = parsed_path(cache, page.url)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    assert parse_files(cache, page, None) == expected
    assert parse_files(cache, page, None) == expected


@pytest.mark.parametrize(
    "row_change",
    [
        lambda row: row.__setitem__(8, True),  # size: a bool is not an int
        lambda row: row.__setitem__(0, "not-a-wheel.tar.gz"),
        lambda row: row.__setitem__(9, "not a date"),
        lambda row: row.append("extra"),
        lambda row: row.__setitem__(4, "yes"),
    ],
)
def test_a_stored_row_of_the_wrong_shape_means_a_reparse(tmp_path: Path, row_change: object) -> None:
    cache, page = HttpCache(tmp_path), entry("html")
    expected = parse_files(cache, page, None)
    rewrite(parsed_path(cache, page.url), lambda data: row_change(data["files"][0]))  # type: ignore[operator]
    assert parse_files(cache, page, None) == expected


def test_a_changed_body_content_type_or_base_url_is_parsed_again(tmp_path: Path) -> None:
    cache, page = HttpCache(tmp_path), entry("html")
    parse_files(cache, page, None)
    newer = entry("html", body=page.body.replace("2.7.1", "2.7.9"))
    assert parsed_key(newer) != parsed_key(page)
    assert any(str(f.version).startswith("2.7.9") for f in parse_files(cache, newer, None))
    moved = entry("html", final_url="https://cdn.example.org/whl/cu118/torch/")
    assert parsed_key(moved) != parsed_key(page)
    assert all(f.url.startswith("https://") for f in parse_files(cache, moved, None))
    assert parsed_key(entry("html", content_type="text/html; charset=utf-8")) != parsed_key(page)


def test_a_page_that_does_not_parse_stores_nothing(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    broken = entry("json", body="{oops")
    with pytest.raises(IndexUnavailable, match="invalid JSON"):
        parse_files(cache, broken, None)
    assert not parsed_path(cache, broken.url).exists()


def test_an_unwritable_cache_still_parses(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x", encoding="utf-8")
    page = entry("html")
    assert parse_files(HttpCache(blocker), page, None) == parse_body(page.body, page.content_type, page.page_url)


def stored(cache: HttpCache, url: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(parsed_path(cache, url).read_text(encoding="utf-8").partition("\n")[2])
    return data


def test_a_filtered_caller_stores_what_it_kept_and_only_the_same_filter_reads_it(tmp_path: Path) -> None:
    cache, page = HttpCache(tmp_path), entry("html")
    wanted, other = versions("html")[:1], versions("html")[1:2]
    keep = version_filter("torch", wanted)
    first = parse_files(cache, page, keep)
    form = stored(cache, page.url)
    assert form["kept"] == f"torch=={wanted[0]}"
    assert [row[0] for row in form["files"]] == [f.filename for f in first]  # type: ignore[attr-defined]

    def set_hash(data: dict[str, list[list[object]]]) -> None:
        data["files"][0][2] = "f" * 64

    rewrite(parsed_path(cache, page.url), set_hash)
    assert parse_files(cache, page, version_filter("torch", wanted))[0].sha256 == "f" * 64  # same filter: read
    # another filter, or every wheel: parsed again (the stored rows lack them) and the form replaced
    assert parse_files(cache, page, version_filter("torch", other)) == parse_body(
        page.body, page.content_type, page.page_url, version_filter("torch", other)
    )
    assert stored(cache, page.url)["kept"] == f"torch=={other[0]}"
    assert parse_files(cache, page, None) == parse_body(page.body, page.content_type, page.page_url)
    assert stored(cache, page.url)["kept"] == "all"
    # a form holding every wheel serves any filter, and stays as it is
    assert parse_files(cache, page, keep) == parse_body(page.body, page.content_type, page.page_url, keep)
    assert stored(cache, page.url)["kept"] == "all"


def test_a_filter_without_a_key_is_parsed_for_and_never_stored(tmp_path: Path) -> None:
    cache, page = HttpCache(tmp_path), entry("html")
    files = parse_files(cache, page, lambda name: "cp311" in name)
    assert files
    assert all("cp311" in f.filename for f in files)
    assert not parsed_path(cache, page.url).exists()


def test_a_version_filter_within_a_tag_filter_reads_the_tag_filters_form(tmp_path: Path) -> None:
    from packaging.tags import Tag

    from cudaresolve.index.fitting import tag_filter

    cache, page = HttpCache(tmp_path), entry("json")
    tags = tag_filter((Tag("cp311", "cp311", "manylinux_2_28_x86_64"), Tag("py3", "none", "any")))
    solved = parse_files(cache, page, tags)  # what a lock's solve reads and stores
    assert stored(cache, page.url)["kept"] == tags.key  # type: ignore[attr-defined]
    pinned = str(solved[-1].version)
    narrow = version_filter("torch", [pinned], within=tags)

    def set_hash(data: dict[str, list[list[object]]]) -> None:
        for row in data["files"]:
            row[2] = "f" * 64

    rewrite(parsed_path(cache, page.url), set_hash)
    checked = parse_files(cache, page, narrow)  # a lock's check: read from that form, not parsed again
    assert checked and all(f.sha256 == "f" * 64 and str(f.version) == pinned for f in checked)
    assert [f.filename for f in checked] == [f.filename for f in solved if str(f.version) == pinned]
    assert stored(cache, page.url)["kept"] == tags.key  # type: ignore[attr-defined]  # the solve's form stays
    # without that form the narrow filter parses for itself, and stores under its own key
    parsed_path(cache, page.url).unlink()
    fresh = parse_files(cache, page, narrow)
    assert fresh == parse_body(page.body, page.content_type, page.page_url, narrow)
    assert stored(cache, page.url)["kept"] == narrow.key  # type: ignore[attr-defined]
    assert parse_files(cache, page, tags) == solved  # ...which no wider filter takes: it parses again


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_a_page_stored_apart_is_read_only_when_its_stored_form_misses(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.index import http_cache

    monkeypatch.setattr(http_cache, "APART_BYTES", 1024)  # the fixture pages are a few KB; PyPI's run to MBs
    cache, page = HttpCache(tmp_path), entry(kind)
    expected = parse_body(page.body, page.content_type, page.page_url)
    cache.store(page)
    light = cache.get(page.url, body=False)
    assert light is not None and light.apart
    assert parse_files(cache, light, None) == expected  # no stored form yet: the body is read for the parse
    cache.path_for(page.url).with_suffix(".body").unlink()
    assert parse_files(cache, light, None) == expected  # the stored form stands for it: no body needed
    parsed_path(cache, page.url).unlink()
    with pytest.raises(IndexUnavailable):  # neither: the page is had no more (its run fetches it again)
        parse_files(cache, light, None)


_JSONISH = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                     st.sampled_from(["", "a"]), st.just([]), st.just({}))  # fmt: skip
_FIELD_RULES = (str, str, (str, type(None)), (str, type(None)), bool, (str, type(None)), bool, (str, type(None)),
                (int, type(None)), (str, type(None)))  # fmt: skip


@given(st.one_of(st.lists(_JSONISH, min_size=9, max_size=11), _JSONISH))
@settings(max_examples=400, deadline=None)
def test_a_stored_row_is_taken_exactly_when_each_field_has_its_type(row: object) -> None:
    from cudaresolve.index.simple import row_file
    from cudaresolve.index.wheel_names import WheelNames

    fits = (
        isinstance(row, list) and len(row) == len(_FIELD_RULES)
        and all(isinstance(v, t) for v, t in zip(row, _FIELD_RULES, strict=True)) and not isinstance(row[8], bool)
    )  # fmt: skip
    if isinstance(row, list) and row and fits:
        row = ["a-1.0-py3-none-any.whl", *row[1:]]  # a name the parser takes: the row's shape alone decides
        row[9] = None if row[9] == "" else row[9] and None
    file = row_file(row, WheelNames())
    assert (file is not None) == fits


_NAMES = st.sampled_from([
    "alpha-1.0-py3-none-any.whl", "alpha-2.0rc1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "alpha-1.0-1-py3-none-any.whl", "alpha-1.0.tar.gz", "alpha-1.0.zip", "alpha_beta-3-py2.py3-none-any.whl",
    "alpha-1.0.exe", "alpha.whl", "alpha-nope-py3-none-any.whl", "alpha-1.0-py3-none.whl", "Alpha-1.0.tar.gz",
    "alpha-1.0-py3-none-any.whl.metadata", "beta-1.0.tar.gz",
])  # fmt: skip
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 10**12), st.sampled_from([
    "", " ", "true", ">=3.8", " >=3.9 ", "bad", "sha256=" + "a" * 64, "2024-01-02T03:04:05", "2024-01-02T03:04:05Z",
    "2024-01-02T03:04:05.123456+02:00", "not a time", "A" * 64, "a" * 64,
]), st.just({"sha256": "b" * 64}), st.just({"sha256": " " + "C" * 64}), st.just({}), st.just([]))  # fmt: skip
_ENTRY = st.fixed_dictionaries(
    {"filename": _NAMES},
    optional={
        "url": st.sampled_from(["../../f/x.whl", "https://files.example.org/x.whl#sha256=00", "x y.whl",
                                "https://u:p@files.example.org/x.whl", "https://[", ""]),
        "hashes": _VALUES, "requires-python": _VALUES, "yanked": _VALUES, "size": _VALUES, "upload-time": _VALUES,
        "core-metadata": _VALUES, "dist-info-metadata": _VALUES,
    },
)  # fmt: skip


@given(st.lists(st.one_of(_ENTRY, _VALUES), max_size=12))
@settings(max_examples=300, deadline=None)
def test_a_json_pages_rows_are_the_rows_of_its_files(entries: list[object]) -> None:
    """What the page fetcher's child stores (``json_rows``, no file made) is what a parse here stores, file for file,
    and each row makes its file again (``row_file``) whatever a page's entries hold."""
    from cudaresolve.index.simple import file_row, json_rows, parse_body, parse_body_rows, row_file
    from cudaresolve.index.wheel_names import WheelNames

    body = json.dumps({"meta": {"api-version": "1.1"}, "name": "alpha", "files": entries})
    url, kind = "https://example.org/simple/alpha/", "application/vnd.pypi.simple.v1+json"
    files = parse_body(body, kind, url)
    rows = parse_body_rows(body, kind, url)
    assert rows == [file_row(f) for f in files] == json_rows(body, url)
    names = WheelNames()
    assert [row_file(r, names) for r in json.loads(json.dumps(rows))] == files  # as stored and read back
