"""Work on many items side by side in a few threads. Does no I/O of its own.

For work that waits on the kernel (making folders, linking and reading files release the GIL): each of up to
``workers`` threads takes the next item until none is left or one has failed. The first exception is raised in
the caller once every thread has stopped; the items not taken by then are not worked on. Only ``threading``:
``concurrent.futures`` imports ``logging`` and costs more to import (12-17 ms here) than a warm install saves.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["each"]

T = TypeVar("T")


def each(work: Callable[[T], object], items: Iterable[T], *, workers: int, name: str = "worker") -> None:
    """``work(item)`` for every item, in up to ``workers`` threads (one: in this thread, in order)."""
    pending = list(items)
    if workers < 2 or len(pending) < 2:
        for item in pending:
            work(item)
        return
    lock = threading.Lock()
    failed: list[BaseException] = []
    queue = iter(pending)

    def run() -> None:
        while True:
            with lock:
                if failed:
                    return
                item = next(queue, _DONE)
            if item is _DONE:
                return
            try:
                work(item)  # type: ignore[arg-type]
            except BaseException as exc:  # handed to the caller, raised there
                with lock:
                    failed.append(exc)
                return

    threads = [threading.Thread(target=run, name=f"{name}-{n}", daemon=True) for n in range(min(workers, len(pending)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise failed[0]


_DONE = object()
