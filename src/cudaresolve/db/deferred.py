"""The shipped database built with most package tables left unparsed until asked for. Pure.

Parsing ``compat.toml`` (pure-Python ``tomllib``) and typing its rows is most of a first run's database
cost, and most of that is package tables a run never asks about: a lock of ``torch numpy`` reads one of
fifteen. ``split_tables`` cuts the ``[[name]]`` sections of the package tables out of the text before it is
parsed (every header line of a section whose first key is ``name``, up to the next header of another name;
an array of tables keeps its order, so the parsed value is the same); ``build_deferred`` parses the rest and
hands ``LazyTables`` the cut text of each table, which ``read_table_text`` parses and types on its first
question; ``load_shipped`` then stores the entry again (``db.cache``) with that table pickled, so a later
run unpickles it. The anchor table (``[packages] anchor``: torch) is read at once: the ``[[prebuilt]]`` and
``[[wheel-page]]`` rows expand against it. Only the shipped file, trusted (validated in CI), is read so: a
``--compat`` file or a validating read parses everything at once and checks across rows.
``tests/test_db_deferred.py`` holds the shipped file to being read alike both ways.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TypeVar

from cudaresolve.core.decode import TooDeep, loads_toml
from cudaresolve.errors import InvalidCompatData
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
    from pathlib import Path

    from cudaresolve.db.read import Parts
    from cudaresolve.db.rows import PackageRelease, VariantInfo
    from cudaresolve.db.tables import LazyTables, Stored

    Reader = Callable[[str, str], tuple[PackageRelease, ...]]  # (table name, its text) -> its releases

__all__ = [
    "build_deferred", "load_shipped", "parse_toml", "read_table_text", "split_tables", "stores_held", "table_reader",
]  # fmt: skip

T = TypeVar("T")

#: A table header on a line of its own, at the line's start: ``[name]``, ``[[name]]``, ``[name.sub]`` ...
_HEADER: Final = re.compile(r"^\[\[?(?P<name>[A-Za-z0-9_-]+)(?:\.[A-Za-z0-9_.-]+)?\]\]?[ \t]*(?:#[^\n]*)?$", re.M)


def split_tables(text: str, names: Collection[str]) -> tuple[str, dict[str, str]]:
    """``text`` without the sections of the tables ``names``, and each such table's sections (in order).

    A text holding a multi-line string (where a line that looks like a header may be inside a value), or a
    line starting with ``[`` that is not a plain header (``[ "quoted" ]``, an array's row), is left whole."""
    return _split(text, _headers(text), names)


def _headers(text: str) -> list[re.Match[str]] | None:
    """The header lines of ``text``, in order: one pass over it, which every split of one text shares; None when
    it is not to be cut (``split_tables``), every line that starts with ``[`` being a header otherwise."""
    if '"""' in text or "'''" in text:
        return None
    found = list(_HEADER.finditer(text))
    starts = text.count("\n[") + text.startswith("[")  # the lines that start with "[", as ``^\[`` finds them
    return found if starts == len(found) else None


def _split(text: str, headers: list[re.Match[str]] | None, names: Collection[str]) -> tuple[str, dict[str, str]]:
    if headers is None:
        return text, {}
    kept: list[str] = []
    cut: dict[str, list[str]] = {}
    start, owner = 0, None
    for header in headers:
        _add(kept, cut, owner, text[start : header.start()])
        start, owner = header.start(), header["name"] if header["name"] in names else None
    _add(kept, cut, owner, text[start:])
    return "".join(kept), {name: "".join(parts) for name, parts in cut.items()}


def _add(kept: list[str], cut: dict[str, list[str]], owner: str | None, part: str) -> None:
    if owner is None:
        kept.append(part)
    else:
        cut.setdefault(owner, []).append(part)


def read_table_text(
    name: str, text: str, *, variants: Sequence[VariantInfo], default_index: str, source: str
) -> tuple[PackageRelease, ...]:
    """The releases of the package table ``name`` from its cut ``text`` (as ``read.read_database`` reads them)."""
    from cudaresolve.db.fields import Collector
    from cudaresolve.db.read import read_package_table

    c = Collector()
    rows = read_package_table(c, parse_toml(text, source), name, {v.name: v for v in variants}, default_index)
    if c.problems:
        raise InvalidCompatData(c.problems, source=source)
    return rows


def table_reader(variants: Sequence[VariantInfo], default_index: str, source: str) -> Reader:
    """``read_table_text`` for a database of these variants and default index."""
    return partial(read_table_text, variants=variants, default_index=default_index, source=source)


def build_deferred(text: str, source: str) -> tuple[Parts, LazyTables]:
    """The parts of the trusted database ``text`` and its package tables, those other than the anchor left as
    text (module docstring)."""
    from cudaresolve.db.read import read_database
    from cudaresolve.db.tables import LazyTables

    headers = _headers(text)
    rest, cut = _split(text, headers, _listed_tables(text, headers))
    parts = read_database(parse_toml(rest, source), source=source, trusted=True)
    tables: list[tuple[str, bool, Stored]] = []
    for name, rows in parts.packages:
        later = cut.get(name) if not rows else None  # rows read now (the anchor, expanded rows) stand as read
        tables.append((name, True, later) if later else (name, bool(rows), rows))
    return parts, LazyTables(tables, table_reader(parts.variants, parts.index.default, source), built=True)


def load_shipped(shipped: Path, cache: Path, build: Callable[[], T], *, expect: type[T], store: bool = True) -> T:
    """``db.cache.cached_build`` of ``shipped``, keyed by the modules of ``db.built.BUILT_FROM``; where the cache
    has no entry, the database the wheel carries built (``db.built``), else ``build()``. When a package table of
    the value is then read from its text, the entry is stored again with that table pickled, so a later run
    unpickles it. ``store`` False: a value built now is not stored at once, but by the ``stores_held`` block its
    caller runs next (``LazyTables.built``)."""
    from cudaresolve.db.built import built_folders
    from cudaresolve.db.cache import cached_build, code_key, store_entry
    from cudaresolve.db.tables import LazyTables

    code = code_key(built_folders(shipped))
    value = cached_build(shipped, cache, partial(_built_or, shipped, build, expect), expect=expect, code=code,
                         store=store)  # fmt: skip
    tables = getattr(value, "tables", None)
    if isinstance(tables, LazyTables):
        tables.after_text_read = partial(store_entry, shipped, cache, value, code=code)
    return value


def _built_or(shipped: Path, build: Callable[[], T], expect: type[T]) -> T:
    """The database the package carries built beside ``shipped`` (``db.built``), else ``build()``."""
    from cudaresolve.db.built import load_built

    built = load_built(shipped, expect)
    return build() if built is None else built


@contextmanager
def stores_held(tables: object) -> Iterator[None]:
    """Within the block, a package table of ``tables`` (``CompatDB.tables``) read from its text does not store the
    cache entry again at once (``load_shipped``): the block's end stores it once, with every table read in it, and
    stores a value built in this run and not stored yet (``load_shipped``'s ``store``) even when none was read. A
    lock reads several tables, in the first tenths of a second, and each store pickles and writes every table."""
    from cudaresolve.db.tables import LazyTables

    store = tables.after_text_read if isinstance(tables, LazyTables) else None
    if not isinstance(tables, LazyTables) or store is None:
        yield
        return
    read: list[bool] = []
    tables.after_text_read = partial(read.append, True)
    try:
        yield
    finally:
        tables.after_text_read = store
        if read or tables.built:
            store()


def parse_toml(text: str, label: str) -> Mapping[str, Any]:
    """``text`` parsed; ``InvalidCompatData`` naming ``label`` when it is not TOML or nests too deep."""
    import tomllib  # its error type only: the text itself is parsed by core.decode

    try:
        return loads_toml(text)
    except TooDeep as exc:  # tomllib recurses once per nesting level
        raise InvalidCompatData([("", Text("db.too-deep"))], source=label) from exc
    except tomllib.TOMLDecodeError as exc:
        raise InvalidCompatData([("", Text.of("db.bad-toml", detail=literal(str(exc))))], source=label) from exc


def _listed_tables(text: str, headers: list[re.Match[str]] | None) -> frozenset[str]:
    """The package tables ``[packages] tables`` names, less the anchor (read at once); none when unclear.
    ``headers``: the text's (``_headers``)."""
    import tomllib  # its error type only: the text itself is parsed by core.decode

    _, found = _split(text, headers, ("packages",))
    try:
        row = loads_toml(found.get("packages", "")).get("packages")
    except (TooDeep, tomllib.TOMLDecodeError):  # the full read reports it, with its path
        return frozenset()
    if not isinstance(row, dict):
        return frozenset()
    listed, anchor = row.get("tables"), row.get("anchor")
    if not isinstance(listed, list) or not all(isinstance(n, str) for n in listed):
        return frozenset()
    return frozenset(listed) - {anchor}
