"""A first run's database leaves the package tables it is not asked about as text, and answers as one read whole."""

from __future__ import annotations

import tomllib
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudaresolve.db.database import load_compat, shipped_path
from cudaresolve.db.deferred import split_tables
from cudaresolve.db.tables import LazyTables

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def _no_built_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the database built from the TOML, as a run whose package carries no ``compat.built``
    builds it (a checkout, an editable install); an installed wheel carries one (``db.built``), and it is left out."""
    from cudaresolve.db import built

    monkeypatch.setattr(built, "load_built", lambda shipped, expect: None)


_TEXT = """\
top = 1
[packages]
tables = ["a", "b"]  # a comment
[[a]]
version = "1"
[[a.build]]
x = [
  "[not a header]",
]
[[b]]
version = "2"
[other]
k = "v"
[[a]] # the same array again, after another table
version = "3"
[a.extra-is-not-read-here]
"""


def _merged(rest: str, cut: dict[str, str]) -> dict[str, object]:
    merged = tomllib.loads(rest)
    for text in cut.values():
        merged.update(tomllib.loads(text))
    return merged


def test_split_tables_cuts_each_named_table_whole_and_in_order() -> None:
    rest, cut = split_tables(_TEXT, ("a",))
    assert set(cut) == {"a"}
    assert "[[a" not in rest and "[a." not in rest and "[[b]]" in rest and "[other]" in rest
    assert [row["version"] for row in tomllib.loads(cut["a"])["a"]] == ["1", "3"]
    assert _merged(rest, cut) == tomllib.loads(_TEXT)
    rest, cut = split_tables(_TEXT, ("a", "b", "packages"))
    assert tomllib.loads(rest) == {"top": 1, "other": {"k": "v"}}
    assert _merged(rest, cut) == tomllib.loads(_TEXT)


@pytest.mark.parametrize(
    "text",
    [
        'note = """\n[[a]]\n"""\n[[a]]\nversion = "1"\n',  # a header-like line inside a multi-line string
        '[[a]]\nversion = "1"\n[ other ]\nk = 1\n',  # a header this splitter does not read: not cut
        '[[a]]\nrows = [\n[1, 2],\n]\n[other]\nk = 1\n',  # an array's row at a line's start
    ],
)
def test_a_text_it_cannot_cut_safely_is_left_whole(text: str) -> None:
    assert split_tables(text, ("a",)) == (text, {})


def test_the_shipped_file_read_by_table_answers_as_read_whole(tmp_path: Path) -> None:
    whole = load_compat(validate=True)
    built = load_compat(cache_dir=tmp_path)  # built here, most package tables left as text
    assert isinstance(built.tables, LazyTables)
    stored = {name: blob for name, _, blob in built.tables.stored()}
    text_tables = {name for name, blob in stored.items() if isinstance(blob, str)}
    assert len(text_tables) >= 5 and "torch" not in text_tables  # the anchor is read at once
    assert built.package_names == whole.package_names and built.package_kinds == whole.package_kinds
    for name in (*whole.package_names, "not-a-package"):
        assert built.packages(name) == whole.packages(name)
    assert built == whole
    text = shipped_path().read_text(encoding="utf-8")
    rest, cut = split_tables(text, text_tables)
    assert set(cut) == text_tables and _merged(rest, cut) == tomllib.loads(text)


def test_a_table_read_from_its_text_is_stored_pickled_and_the_others_stay_text(tmp_path: Path) -> None:
    built = load_compat(cache_dir=tmp_path)
    assert isinstance(built.tables, LazyTables)
    text_tables = [name for name, _, blob in built.tables.stored() if isinstance(blob, str)]
    asked, never = text_tables[0], text_tables[-1]
    rows = built.packages(asked)
    assert rows
    again = load_compat(cache_dir=tmp_path)  # the entry as stored after that question
    assert isinstance(again.tables, LazyTables)
    kinds = {name: type(blob) for name, _, blob in again.tables.stored()}
    assert kinds[asked] is bytes and kinds[never] is str
    assert again.packages(asked) == rows and again.packages(never) == load_compat(validate=True).packages(never)


def test_a_text_table_without_a_reader_is_refused() -> None:
    tables = LazyTables([("a", True, '[[a]]\nversion = "1"\n')])
    with pytest.raises(TypeError):
        tables.get("a")


_LINES = ["[a]", "[[a]]", "[a.b]", "[[b]] # note", "x = 1", "[ 'q' ]", "y = [", '  "[v]",', "]", '"""', "", "[c]\r"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_a_text_is_cut_only_where_every_bracket_line_is_a_header(lines: list[str], end: str) -> None:
    """One pass finds the headers (``_headers``): the text is cut exactly when each line that starts with ``[`` is
    a plain header and no multi-line string could hide one, and then into sections that join back to it."""
    import re

    text = end.join(lines)
    bracket_lines = re.findall(r"^\[", text, re.M)
    headers = re.findall(r"^\[\[?[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_.-]+)?\]\]?[ \t]*(?:#[^\n]*)?$", text, re.M)
    cuttable = '"""' not in text and "'''" not in text and len(bracket_lines) == len(headers)
    rest, cut = split_tables(text, ("a", "b"))
    assert bool(cut) or rest == text
    if not cuttable:
        assert (rest, cut) == (text, {})
    elif any(h.lstrip("[").startswith(("a", "b")) for h in headers):
        assert cut and len(rest) + sum(map(len, cut.values())) == len(text)


def test_tables_read_while_stores_are_held_are_stored_once_at_the_end(tmp_path: Path) -> None:
    from cudaresolve.db.cache import SUBDIR
    from cudaresolve.db.deferred import stores_held

    built = load_compat(cache_dir=tmp_path)
    assert isinstance(built.tables, LazyTables)
    (entry,) = (tmp_path / SUBDIR).glob("*.pickle")
    first = entry.read_bytes()
    text_tables = [name for name, _, blob in built.tables.stored() if isinstance(blob, str)]
    with stores_held(built.tables):
        for name in text_tables[:2]:
            assert built.packages(name)
        assert entry.read_bytes() == first  # nothing stored yet: each store pickles every table
    again = load_compat(cache_dir=tmp_path)  # stored once as the block ended, with both tables read
    assert isinstance(again.tables, LazyTables)
    kinds = {name: type(blob) for name, _, blob in again.tables.stored()}
    assert kinds[text_tables[0]] is bytes and kinds[text_tables[1]] is bytes and kinds[text_tables[-1]] is str
    with stores_held(again.tables):  # nothing read: nothing stored
        pass
    assert again.tables.after_text_read is not None  # the store is back for later reads


def test_a_database_built_with_its_store_held_is_stored_once_as_the_block_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load_compat(store=False)`` (a lock's ``prepare``): nothing written before the solve; the ``stores_held``
    block stores the value once at its end, a table read in it or none; a value read back is not stored again."""
    from cudaresolve.db import cache
    from cudaresolve.db.cache import SUBDIR
    from cudaresolve.db.deferred import stores_held

    stores: list[object] = []
    real_store = cache.store_entry
    monkeypatch.setattr(cache, "store_entry", lambda *a, **k: (stores.append(a), real_store(*a, **k)))
    for read in (True, False):
        folder = tmp_path / str(read)
        built = load_compat(cache_dir=folder, store=False)
        assert isinstance(built.tables, LazyTables) and built.tables.built
        assert not list((folder / SUBDIR).glob("*.pickle")) and not stores  # nothing written in ``prepare``
        text_tables = [name for name, _, blob in built.tables.stored() if isinstance(blob, str)]
        with stores_held(built.tables):
            if read:
                assert built.packages(text_tables[0])
        assert len(stores) == 1  # once, as the block ended
        again = load_compat(cache_dir=folder, store=False)  # read back, not built
        assert isinstance(again.tables, LazyTables) and not again.tables.built
        kinds = {name: type(blob) for name, _, blob in again.tables.stored()}
        assert (kinds[text_tables[0]] is bytes) is read
        with stores_held(again.tables):
            pass
        assert len(stores) == 1  # nothing read, nothing built: nothing stored
        stores.clear()
