"""Which of a locked package's wheels goes into the target interpreter. Pure.

A PEP 751 lock may list several wheels of one package, one per platform and Python (``uv export`` writes them
so); a cudaresolve lock lists the one it chose. The wheel installed is the one whose best tag ranks highest among
the interpreter's (``target.environment``'s order, as ``packaging.tags.sys_tags`` gives it: the newest manylinux
floor the glibc allows first, pure-Python wheels last); a wheel whose name does not parse, or whose tags the
interpreter does not support, is never chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cudaresolve.lock.model import WheelChoice
    from cudaresolve.target.interpreter import Interpreter

__all__ = ["best_wheel", "wheel_choice"]


def wheel_choice(interpreter: Callable[[], Interpreter]) -> WheelChoice:
    """A ``WheelChoice`` for the interpreter ``interpreter()`` gives, asked only when a package has several wheels
    (the probe of the target runs while the lock is read)."""

    def choose(name: str, filenames: Sequence[str]) -> int | None:
        return best_wheel(filenames, interpreter())

    return choose


def best_wheel(filenames: Sequence[str], interpreter: Interpreter) -> int | None:
    """The index of the wheel in ``filenames`` that fits ``interpreter`` best; None when none fits."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    from cudaresolve.target.environment import interpreter_tags, tag_priority

    supported = interpreter_tags(interpreter.python, interpreter.platform, interpreter.glibc)
    best: tuple[int, int] | None = None
    for index, filename in enumerate(filenames):
        try:
            tags = parse_wheel_filename(filename)[3]
        except InvalidWheelFilename:
            continue
        rank = tag_priority(tags, supported)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, index)
    return None if best is None else best[1]
