"""The package tables of a database loaded from its cache, each unpickled when first asked for. Pure.

A built database is pickled into the user cache (``db.cache``) so that a start reads one file instead of
parsing ``compat.toml``. Unpickling every package table costs a command that asks no package question
(``detect``, ``gpus``) most of its start-up: the rows hold ``packaging`` requirements and specifiers, whose
modules alone take tens of milliseconds to import. ``CompatDB.__reduce__`` therefore pickles each table on
its own (``pickled_tables``), and the database read back holds a ``LazyTables``: the table names and which
have rows are at hand at once, a table's releases are unpickled on the first question about that package.
A first run's database, built with its package tables left as text (``db.deferred``), is a ``LazyTables``
too: a table's text is parsed on its first question, and a table never asked for is stored as its text.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    from collections.abc import Callable

    from cudaresolve.db.rows import PackageRelease

    Rows = tuple[PackageRelease, ...]
    #: A table as held: its releases pickled (bytes), its text in ``compat.toml`` (str), or read (a tuple).
    Stored = bytes | str | Rows

__all__ = ["LazyTables", "pickled_tables", "table_names"]

Table = tuple[str, tuple["PackageRelease", ...]]


def pickled_tables(tables: Sequence[Table]) -> tuple[tuple[str, bool, bytes | str], ...]:
    """(name, whether it has rows, its releases pickled) per table, in order; a ``LazyTables``' table not read
    yet stays as it is stored (pickled, or its text: a table no run asked for is never read to be stored)."""
    if isinstance(tables, LazyTables):
        return tables.stored()
    return tuple((name, bool(rows), pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)) for name, rows in tables)


def table_names(tables: Sequence[Table]) -> tuple[tuple[str, bool], ...]:
    """(name, whether it has rows) per table, without unpickling a ``LazyTables``."""
    if isinstance(tables, LazyTables):
        return tables.names
    return tuple((name, bool(rows)) for name, rows in tables)


class LazyTables(Sequence[Table]):
    """``CompatDB.tables`` read back from the cache: a sequence of (name, releases), each table unpickled once,
    on first use (thread-safe: the solver's threads may ask together). ``get`` serves ``CompatDB.packages``."""

    def __init__(
        self, pickled: Sequence[tuple[str, bool, Stored]], reader: Callable[[str, str], Rows] | None = None, *,
        built: bool = False,
    ) -> None:
        """``pickled``: (name, whether it has rows, the table as stored) each; ``reader``: (name, text) -> rows;
        ``built``: made from the shipped text in this run (``db.deferred.build_deferred``), not unpickled."""
        self.names = tuple((name, filled) for name, filled, _ in pickled)
        self._blobs = {name: blob for name, _, blob in pickled if not isinstance(blob, tuple)}
        self._order = tuple(name for name, _, _ in pickled)
        self._loaded: dict[str, tuple[PackageRelease, ...]] = {n: b for n, _, b in pickled if isinstance(b, tuple)}
        self._reader = reader
        self._lock = threading.Lock()
        self.after_text_read: Callable[[], None] | None = None  # called once a table has been read from its text
        self.built = built  # a value built now and not stored yet is stored as ``db.deferred.stores_held`` ends

    def stored(self) -> tuple[tuple[str, bool, bytes | str], ...]:
        """Each table as ``pickled_tables`` stores it: pickled once read (or when read back pickled), else its text."""
        out: list[tuple[str, bool, bytes | str]] = []
        for name, filled in self.names:
            blob = self._blobs.get(name)
            if not isinstance(blob, bytes) and name in self._loaded:  # pickled once, for every later store
                blob = self._blobs[name] = pickle.dumps(self._loaded[name], protocol=pickle.HIGHEST_PROTOCOL)
            out.append((name, filled, blob if blob is not None else pickle.dumps((), protocol=pickle.HIGHEST_PROTOCOL)))
        return tuple(out)

    def get(self, name: str, default: tuple[PackageRelease, ...] = ()) -> tuple[PackageRelease, ...]:
        rows = self._loaded.get(name)
        if rows is not None:
            return rows
        blob = self._blobs.get(name)
        if blob is None:
            return default
        read_text = False
        with self._lock:
            rows = self._loaded.get(name)
            if rows is None:
                if isinstance(blob, str):
                    if self._reader is None:
                        raise TypeError(f"no reader for the text of table {name!r}")
                    rows = self._loaded[name] = self._reader(name, blob)
                    read_text = True
                else:
                    rows = self._loaded[name] = pickle.loads(blob)
        if read_text and self.after_text_read is not None:
            self.after_text_read()
        return rows

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> Table: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Table]: ...
    def __getitem__(self, index: int | slice) -> Table | Sequence[Table]:
        if isinstance(index, slice):
            return tuple(self)[index]
        name = self._order[index]
        return name, self.get(name)

    def __iter__(self) -> Iterator[Table]:
        return ((name, self.get(name)) for name in self._order)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]
