"""Keep the C heap of a run that reads many index pages in threads small. Does I/O: calls into the C library.

A lock reads pages of several megabytes (PyPI's JSON pages of packages with many wheels) on up to eight
threads at once. With glibc's defaults each of those threads gets a malloc arena of its own, and after a large
block is freed glibc raises its mmap threshold to that block's size, so the next pages are placed in the arenas
too; what they leave behind is never handed back to the system. Measured on the 189-package lock of
``bench/bench_realpypi.py`` (warm cache): a peak RSS of 216 MiB with the defaults, 137 MiB with the settings
below, for the same wall time. ``compact_heap`` asks for at most two arenas, a fixed mmap threshold (blocks from
128 KiB up are mapped on their own and unmapped when freed) and trimming of the heap top from 128 KiB.

It must run before the run's threads start (an arena, once made, stays). It does nothing where the C library is
not glibc, and leaves each setting the user made through glibc's own ``MALLOC_*_`` variables alone.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    from typing import Final

__all__ = ["compact_heap", "fewer_collections"]

_KIB: Final = 1024
#: The cyclic garbage collector's thresholds for one run (CPython's defaults are 700, 10, 10): see
#: ``fewer_collections``.
_GC_THRESHOLDS: Final = (50_000, 20, 100)
#: mallopt parameters (glibc's malloc.h) -> (value, the environment variable that sets it for the user).
_SETTINGS: Final = (
    (-8, 2, "MALLOC_ARENA_MAX"),  # M_ARENA_MAX
    (-3, 128 * _KIB, "MALLOC_MMAP_THRESHOLD_"),  # M_MMAP_THRESHOLD: fixed, no longer raised by frees
    (-1, 128 * _KIB, "MALLOC_TRIM_THRESHOLD_"),  # M_TRIM_THRESHOLD
)


def compact_heap() -> bool:
    """Apply the settings of the module docstring; whether the C library took them (False: not glibc)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError, AttributeError):  # not glibc, or no confstr at all (Windows)
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    taken = [bool(mallopt(param, value)) for param, value, variable in _SETTINGS if variable not in os.environ]
    return all(taken)  # every setting is tried, even after one the library refused


def fewer_collections() -> None:
    """Let the cyclic garbage collector run less often in this process (``_GC_THRESHOLDS``). A lock makes hundreds
    of thousands of objects that live to the end of the run (pages' files, metadata, the solver's candidates), and
    with CPython's defaults the collector ran 300 times in a warm solve of the 189-package project, each time
    walking objects that were never garbage: 0.16 s of a 0.9 s run (7 interleaved rounds on the frozen copy),
    with no change in the cold run's time and 1-2 MiB more at its peak. Little of what a run frees is a
    cycle: reference counting frees the rest at once. Only the process's entry point calls this (``cli.run``),
    never a library call."""
    import gc

    gc.set_threshold(*_GC_THRESHOLDS)
