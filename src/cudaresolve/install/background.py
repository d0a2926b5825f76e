"""Work begun in a thread and waited for where its answer is needed. Pure apart from the thread it starts.

``install`` spends most of its wall time waiting for other processes (the probe of the target
interpreter, the installer unpacking wheels) while work it needs later (loading the database for the
doctor pass, importing the doctor's modules) could run meanwhile: ``begin(work)`` starts ``work`` in
a daemon thread at once and returns a function that waits for it, then gives its value or raises
its exception in the caller's thread. A value never asked for is simply dropped with the thread.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["begin"]

T = TypeVar("T")


def begin(work: Callable[[], T], *, name: str = "background") -> Callable[[], T]:
    """``work()`` started in a thread; the function returned waits for it and gives its value or raises its
    error (every time it is called: the answer is kept)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller, raised there
            box["error"] = exc

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]  # type: ignore[no-any-return]

    return result
