"""``core.parallel.each``: every item worked on once, in threads; the first failure raised after all stop."""

from __future__ import annotations

import threading
import time

import pytest

from cudaresolve.core.parallel import each


def test_every_item_once_across_threads() -> None:
    seen: list[int] = []
    names: set[str] = set()

    def work(item: int) -> None:
        time.sleep(0.001)
        seen.append(item)
        names.add(threading.current_thread().name)

    each(work, range(50), workers=4, name="t")
    assert sorted(seen) == list(range(50)) and len(names) > 1 and all(n.startswith("t-") for n in names)


def test_one_worker_runs_in_order_in_this_thread() -> None:
    seen: list[tuple[int, str]] = []
    each(lambda i: seen.append((i, threading.current_thread().name)), [3, 1, 2], workers=1)
    assert seen == [(3, threading.current_thread().name), (1, threading.current_thread().name),
                    (2, threading.current_thread().name)]


def test_the_first_failure_is_raised_and_the_rest_not_taken() -> None:
    taken: list[int] = []

    def work(item: int) -> None:
        taken.append(item)
        if item == 2:
            raise ValueError("two")
        time.sleep(0.01)

    with pytest.raises(ValueError, match="two"):
        each(work, range(100), workers=3)
    assert len(taken) < 100
