"""Tasks on a few threads, all waited for at the end: the walk ahead of the solver runs on one. Does I/O: threads.

A ``TaskPool`` makes its threads on the first task. ``close`` waits until no task is left (each task may
submit more while it runs), then stops the threads; ``close(abandon=True)`` (Ctrl-C) starts nothing more,
drops what waits in the queue and returns at once. A task submitted once ``close`` has begun is dropped.
A task's exceptions are its own to handle: the pool only counts it done.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["TaskPool"]


class TaskPool:
    """Up to ``threads`` threads named ``name``_N, made on first use; safe to share between threads."""

    def __init__(self, threads: int, name: str) -> None:
        self._threads = threads
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._pending = 0  # tasks submitted and not finished
        self._closing = False
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified when no task is left

    def submit(self, task: Callable[..., None], *args: Any) -> None:
        """Run ``task(*args)`` on the pool's threads; nothing once ``close`` has begun."""
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            if self._closing:
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix=self._name)
            self._pending += 1
            self._pool.submit(self._run, task, *args)

    def _run(self, task: Callable[..., None], *args: Any) -> None:
        try:
            task(*args)
        finally:
            with self._lock:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.notify_all()

    def close(self, *, abandon: bool = False) -> None:
        """Wait for every task, those that tasks submitted included, then stop the threads; ``abandon``: drop
        what waits in the queue and return at once."""
        with self._lock:
            while self._pending and not abandon:
                self._idle.wait()
            self._closing = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=not abandon, cancel_futures=abandon)
