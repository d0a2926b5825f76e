"""A page's releases and a package's candidates made as the solver reads them (``fitting.LazyReleases``,
``core.ondemand.MadeOnRead``): the same objects and the same answer as made at once, only the few read are made."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from packaging.version import Version

from cudaresolve.core.ondemand import MadeOnRead
from cudaresolve.index.fitting import LazyReleases, index_release
from cudaresolve.index.simple import wheel_file
from cudaresolve.resolve.catalog import Candidate
from cudaresolve.resolve.matches import preferred_first
from cudaresolve.resolve.source import IndexRelease
from test_source_solve import PYPI, DictSource, pins

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cudaresolve.index.simple import IndexFile


def _best(versions: list[str]) -> list[tuple[Version, tuple[IndexFile, bool]]]:
    out = []
    for i, text in enumerate(versions):
        name = f"demo-{text}-py3-none-any.whl"
        file = wheel_file(name, f"https://files.example.org/{name}", sha256=f"{i:064x}", yanked=i == 1)
        assert file is not None
        out.append((file.version, (file, i == 1)))
    return out


def test_lazy_releases_are_the_releases_made_at_once_each_made_once() -> None:
    best = _best(["3.0", "2.0", "1.0", "0.9"])
    lazy = LazyReleases("demo", PYPI, best)
    assert len(lazy) == 4
    assert lazy.version(2) == Version("1.0") and lazy.yanked(1) and not lazy.yanked(0)
    assert lazy._made == [None] * 4  # reading versions and flags made nothing
    eager = [index_release("demo", v, PYPI, f, yanked=y) for v, (f, y) in best]
    assert list(lazy) == eager
    assert lazy[0] is lazy[0] and lazy[-1] is lazy[3]  # one object per release
    assert lazy[1:3] == tuple(eager[1:3])
    with pytest.raises(IndexError):
        lazy[4]


def test_made_on_read_makes_a_candidate_once_and_knows_its_position() -> None:
    made: list[int] = []

    def make(i: int) -> Candidate:
        made.append(i)
        return Candidate(name="demo", version=Version(f"{9 - i}.0"), variant=None, index_url=PYPI)

    lazy = MadeOnRead(5, make)
    assert len(lazy) == 5 and made == []
    first, last = lazy[0], lazy[-1]
    assert lazy[0] is first and lazy[4] is last and made == [0, 4]
    assert lazy.ids == {id(first): 0, id(last): 4}
    assert [c.version for c in lazy] == [Version(f"{v}.0") for v in (9, 8, 7, 6, 5)]
    assert made == [0, 4, 1, 2, 3]
    with pytest.raises(IndexError):
        lazy[5]


def test_the_previous_locks_release_goes_first_as_it_is_spelled() -> None:
    lazy = LazyReleases("demo", PYPI, _best(["3.0", "2.0", "1.0"]))
    assert preferred_first(lazy, "2.0") == [1, 0, 2]
    assert lazy._made == [None] * 3  # read by version, none made
    assert preferred_first(lazy, "2") is None  # the same version spelled otherwise is no pin of the lock's
    assert preferred_first(lazy, "4.0") is None and preferred_first(lazy, None) is None
    assert preferred_first(lazy, "not a version") is None
    assert preferred_first(list(lazy), "1.0") == [2, 0, 1]  # any sequence of releases


class _Counted(list[IndexRelease]):
    """A page's releases that count which of them the solver reads."""

    def __init__(self, items: Sequence[IndexRelease]) -> None:
        super().__init__(items)
        self.read: set[int] = set()

    def __getitem__(self, index):
        if isinstance(index, int):
            self.read.add(index % len(self))
        return super().__getitem__(index)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class _CountingSource(DictSource):
    def __init__(self, projects: dict[str, list[tuple[str, list[str], bool]]]) -> None:
        super().__init__(projects)
        self.given: dict[str, _Counted] = {}

    def releases(self, name: str) -> Sequence[IndexRelease]:
        return self.given.setdefault(name, _Counted(super().releases(name)))


def test_a_solve_reads_the_few_releases_it_tries_of_a_package_with_hundreds() -> None:
    many = [(f"1.{i}", [], False) for i in range(300)]
    source = _CountingSource({"app": [("1.0", ["lib>=1.100,<1.200"], False)], "lib": many})
    assert pins(["app"], source) == {"app": "1.0", "lib": "1.199"}
    assert len(source.given["lib"].read) <= 101  # the 100 above the cap are read to be passed over, and 1.199
    source = _CountingSource({"app": [("1.0", ["lib"], False)], "lib": many})
    assert pins(["app"], source) == {"app": "1.0", "lib": "1.299"}
    assert len(source.given["lib"].read) <= 2
