"""A sequence whose items are made when first read. Pure.

``MadeOnRead`` stands for a list of ``size`` items that ``make(i)`` would give, each made on its first read and
then kept, so every read of a position gives the same object: a page's releases (``index.fitting``), a package's
candidates (``resolve.provider``), of which a lock reads the newest few of hundreds.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar, overload

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MadeOnRead"]

T = TypeVar("T")


class MadeOnRead(Sequence[T]):
    """``make(i)`` for each position below ``size`` (never None), made on first read and kept; ``ids`` maps each
    item made to its position (``resolve.matches.MatchCache`` indexes a base so). Threads may read it together:
    one item is kept per position."""

    __slots__ = ("_lock", "_made", "_make", "ids")

    def __init__(self, size: int, make: Callable[[int], T]) -> None:
        self._make = make
        self._made: list[T | None] = [None] * size
        self._lock = threading.Lock()
        self.ids: dict[int, int] = {}  # id(item) -> position; the items are kept, so no id is reused

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        made = self._made[index]  # raises IndexError past the end, which ends an iteration
        if made is None:
            index %= len(self._made)
            item = self._make(index)
            with self._lock:
                made = self._made[index]
                if made is None:
                    made = self._made[index] = item
                    self.ids[id(item)] = index
        return made
