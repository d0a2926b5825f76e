"""What a run read, and until when its answer holds: the record behind a replayed lock. Does I/O: an audit hook.

A lock is a function of its inputs: the command line, the environment, the files it reads (the
database, ``pyproject.toml``, requirement and settings files, the cached index pages and
metadata, its own code) and, online, the index pages, which the cache may use without asking
until their HTTP freshness runs out. ``lock.replay`` stores a run's answer with this record and
gives it again, without solving, while every recorded file is unchanged and every page it used
is still fresh.

While ``recording()`` is active:

* every file opened for reading, and every folder listed, anywhere in the process is noted (a
  ``sys.addaudithook`` hook, so a reader nobody thought of is not missed);
* ``probed(path)`` notes a path whose mere existence the run looked at (``Path.is_file``), which
  no audit event reports;
* ``fresh_until(t)`` notes that an index page used without asking the server stays fresh until
  ``t`` (a POSIX time); the record holds the earliest;
* ``volatile(why)`` marks the answer as depending on something no file holds (the GPU, an index
  that failed, a stale page served in place of a failed request, a stream written to): such a
  run is not stored.

By default nothing records, and each call costs one list lookup. The record is a plain global,
not a ContextVar, so that the index client's worker threads feed it too.
"""

from __future__ import annotations

import hashlib
import math
import os
import stat
import sys
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Journal", "Signature", "fresh_until", "probed", "recording", "signature", "unnoted", "volatile", "wrote"]

#: A file's identity and state as ``os.stat`` gives it: (mtime_ns, ctime_ns, size, inode, device, mode); a
#: folder's: ("folder", digest of its names); a link to nothing: ("link", its target); a path that cannot be
#: looked at: ("error", errno); None for a path that does not exist.
Signature = tuple[int, int, int, int, int, int] | tuple[str, str] | None

#: Audit events that name a folder the run listed.
_LISTING_EVENTS: Final = frozenset({"os.listdir", "os.scandir"})
#: Audit events of a file put in place (``os.replace`` raises ``os.rename``).
_RENAME_EVENTS: Final = frozenset({"os.rename"})
#: ``open`` flags that write.
_WRITE_FLAGS: Final = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)


class Journal:
    """One run's record (see the module docstring); filled by the hook and the calls below.

    ``read`` maps each path read or probed to its ``signature`` when it was first looked at, and
    ``opened`` holds the paths whose content was read (not only looked at); ``replaced`` holds the
    paths the run itself put in place (``os.replace``/``os.rename``: the cache's atomic writes), whose
    state at the end is the one a later run sees; ``written`` maps the lock files the run wrote
    (``wrote``) to their signature right after the write.
    """

    def __init__(self) -> None:
        self.read: dict[str, Signature] = {}
        self.opened: set[str] = set()
        self.replaced: set[str] = set()
        self.written: dict[str, Signature] = {}
        self.fresh_until = math.inf
        self.volatile: list[str] = []
        self._lock = threading.Lock()

    def note_read(self, path: str) -> None:
        if path and path not in self.read:
            self.read.setdefault(path, signature(path))  # dict.setdefault is atomic under the GIL

    def note_fresh_until(self, when: float) -> None:
        with self._lock:
            self.fresh_until = min(self.fresh_until, when)

    def note_volatile(self, why: str) -> None:
        with self._lock:
            self.volatile.append(why)

    def inputs(self) -> list[tuple[str, Signature]] | None:
        """Every path the answer depends on with its state now: what was read or probed, and every module's
        file (the code); None when a file read changed while the run went on (not one the run replaced itself),
        since the answer then belongs to neither state."""
        written = {os.path.realpath(p) for p in self.written}
        if any(os.path.realpath(p) in written for p in list(self.opened)):
            return None  # it read what it then wrote (-r reqs.txt -o reqs.txt): a full run now reads the new file
        found: dict[str, Signature] = {}
        for path, then in list(self.read.items()):
            now = signature(path)
            if now != then and path not in self.replaced:
                return None
            found[path] = now
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and file not in found:
                found[file] = signature(file)
        for folder in {os.path.abspath(p or os.curdir) for p in sys.path}:  # a new foo.py there shadows a module
            if folder not in found:
                found[folder] = signature(folder)
        return sorted((p, sig) for p, sig in found.items() if os.path.isabs(p) and p not in self.written)


_ACTIVE: list[Journal | None] = [None]
#: Set while the journal lists a folder itself (``_listing``), so that its own listing is not noted.
_GUARD = threading.local()
_HOOKED: list[bool] = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: reads and listings go to the active journal, if any."""
    active = _ACTIVE[0]
    if active is None or getattr(_GUARD, "active", False):
        return
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int) or path is None:
            return
        if mode is not None and any(c in str(mode) for c in "wax+"):
            return
        if mode is None and isinstance(flags, int) and flags & (_WRITE_FLAGS | _DIRECTORY):
            return  # a write, or a folder opened to sync a rename: listings come as their own events
        opened = _absolute(path)
        active.note_read(opened)
        active.opened.add(opened)
    elif event in _LISTING_EVENTS and args and args[0] is not None and not isinstance(args[0], int):
        active.note_read(_absolute(args[0]))
    elif event in _RENAME_EVENTS and len(args) >= 2 and isinstance(args[1], str | bytes | os.PathLike):
        _put_in_place(active, _absolute(args[1]))
    elif event == "os.mkdir" and args and isinstance(args[0], str | bytes | os.PathLike):
        _put_in_place(active, _absolute(args[0]))


def _put_in_place(active: Journal, path: str) -> None:
    """The run made ``path``, which changes its folder's listing too: both are the run's own doing."""
    active.replaced.add(path)
    active.replaced.add(os.path.dirname(path))


def _absolute(path: Any) -> str:
    try:
        return os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return ""


@contextmanager
def recording() -> Iterator[Journal]:
    """Within the block, the process's reads and the calls below go to the returned journal."""
    if not _HOOKED[0]:
        sys.addaudithook(_hook)  # cannot be removed; it does nothing while no journal is active
        _HOOKED[0] = True
    journal = Journal()
    before, _ACTIVE[0] = _ACTIVE[0], journal
    try:
        yield journal
    finally:
        _ACTIVE[0] = before


def probed(path: str | os.PathLike[str]) -> None:
    """The run looked at whether ``path`` exists (or is a file): its state is an input."""
    active = _ACTIVE[0]
    if active is not None:
        active.note_read(_absolute(path))


def fresh_until(when: float) -> None:
    """An index page was used without a request; it stays fresh until ``when`` (POSIX time)."""
    active = _ACTIVE[0]
    if active is not None:
        active.note_fresh_until(when)


def volatile(why: str) -> None:
    """The answer depends on something no file holds; the run must not be replayed."""
    active = _ACTIVE[0]
    if active is not None:
        active.note_volatile(why)


def wrote(path: str | os.PathLike[str]) -> None:
    """The run wrote its output to ``path`` (a regular file, right after the write: its signature then is
    the one a record may vouch for, whatever another process writes there later)."""
    active = _ACTIVE[0]
    if active is not None:
        active.written[_absolute(path)] = signature(os.path.realpath(path))


@contextmanager
def unnoted() -> Iterator[None]:
    """Within the block, this thread's reads are not noted (a look the run itself accounts for otherwise, or
    the journal's own listing of a folder)."""
    before, _GUARD.active = getattr(_GUARD, "active", False), True
    try:
        yield
    finally:
        _GUARD.active = before


def signature(path: str) -> Signature:
    """``path``'s identity and state now (symlinks followed); None when absent. A folder's state is the
    digest of the names in it (``_listing``), not its mtime: a lock file written beside it is no change."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        try:  # absent, or a link to nothing, which the default-output check tells apart
            return ("link", os.readlink(path))
        except (OSError, ValueError):
            return None
    except OSError as e:  # a link loop, no permission: not "absent", which a reader treats otherwise
        return ("error", str(e.errno))
    except ValueError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return ("folder", _listing(path))
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode)


def _listing(path: str) -> str:
    """The SHA-256 of the sorted names in ``path``; for a folder Python imports from (``sys.path``, the
    working folder under ``python -m``) only the names an import could find (``foo.py``, ``foo/``,
    ``foo.cpython-311-x86_64-linux-gnu.so``, ``foo.pth``), so new lock files and caches beside them are
    no change, a ``rich.py`` that would shadow a module is."""
    try:
        with unnoted():  # this listing is the journal's own, not the run's
            names = sorted(os.listdir(path))
    except OSError:
        names = []
    if os.path.abspath(path) in {os.path.abspath(p or os.curdir) for p in sys.path}:
        names = [n for n in names if _importable(n)]
    return hashlib.sha256("\0".join(names).encode("utf-8", errors="surrogateescape")).hexdigest()


def _importable(name: str) -> bool:
    stem, dot, rest = name.partition(".")
    if not stem.isidentifier():
        return False
    suffix = dot + rest
    return suffix in ("", ".py", ".pyc", ".pyw", ".pth") or suffix.endswith((".so", ".pyd"))

