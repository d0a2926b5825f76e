"""Atomic file writes (a reader never sees half a file, a failed write leaves the old one), bounded reads of
regular files (a FIFO or device never blocks a read) and cache folders pruned only where this tool made them.
Does I/O: reads and writes files."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = [
    "CACHE_MARK",
    "DIST_FILES",
    "DIST_FILE_MOST",
    "SEALED_LIMIT",
    "NotRegularFile",
    "installed_entry",
    "keep_newest",
    "make_cache_dir",
    "make_dirs",
    "make_private_dirs",
    "open_regular",
    "owned_by_user",
    "private_entry",
    "read_regular_bounded",
    "read_sealed",
    "read_text_or_none",
    "remove_tree",
    "seal",
    "sealed",
    "store_bounded",
    "unsafe_member",
    "unseal",
    "walk",
    "write_bytes_atomic",
    "write_private_atomic",
    "write_sealed",
    "write_text_atomic",
]


#: The file that a cache folder this tool created holds: ``keep_newest`` prunes no folder without it.
CACHE_MARK: Final = ".cudaresolve-cache"
_MARK_TEXT: Final = b"A cache folder made by cudaresolve: it removes its own old entries here.\n"


#: The largest single read of ``read_regular_bounded`` past a file's stated size.
_READ_STEP: Final = 1 << 20
#: The largest sealed cache entry read (a parsed index page, a lock's verdict): 512 MiB.
SEALED_LIMIT: Final = 512 * 1024 * 1024
#: The files of an installed distribution's metadata folder that importlib.metadata reads whole (and would wait on,
#: were one a FIFO), and the most of one read: a bound, not a fact (``unsafe_member``).
DIST_FILES: Final = ("METADATA", "PKG-INFO", "RECORD")
DIST_FILE_MOST: Final = 64 * 1024 * 1024
#: The largest pyproject.toml read, for the project (``lock.project``) or its ``[tool.uv]`` settings
#: (``index.settings``): 64 MiB, a real one is a few KiB.
PROJECT_FILE_MOST: Final = 64 * 1024 * 1024


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a directory or a socket: refused before anything is read."""


def read_regular_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit + 1`` bytes of a regular file, never blocking: the caller refuses a longer result.

    Opened non-blocking and checked with ``fstat`` on the open descriptor (no window between a check and
    the open): a FIFO, a device such as ``/dev/zero`` or a directory raises ``NotRegularFile`` before
    anything is read. Any other failure is the ``OSError`` the system gave."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile("not a regular file")
        # each read asks at most what the file holds (and 1 byte more, to see it end) or 1 MiB: ``os.read`` allocates
        # what it is asked for, and a 4 GiB limit on an 851-byte wheel failed as a MemoryError under a memory cap
        step = max(min(os.fstat(fd).st_size + 1, _READ_STEP), 1)
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(limit + 1 - size, step))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text_or_none(path: str | os.PathLike[str], limit: int) -> str | None:
    """The UTF-8 text of a regular file of at most ``limit`` bytes; None when it is absent, no regular file (a FIFO
    never blocks), larger, unreadable or not UTF-8: a cache entry or a file of an installed distribution."""
    try:
        data = read_regular_bounded(path, limit)
        return data.decode("utf-8") if len(data) <= limit else None
    except (OSError, UnicodeDecodeError):
        return None


def unsafe_member(folder: object, names: tuple[str, ...], limit: int) -> str | None:
    """Why one of ``names`` in ``folder`` (a distribution's metadata folder) must not be read by a reader that waits
    and reads whole (importlib.metadata): a FIFO, a device, more than ``limit`` bytes; None when each is absent or a
    regular file within it. ``folder`` may be no folder (an ``.egg-info`` file, None): then None."""
    if not isinstance(folder, (str, os.PathLike)) or not os.path.isdir(folder):
        return None
    for name in names:
        try:
            found = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        if not stat.S_ISREG(found.st_mode):
            return f"{name} is not a regular file"
        if found.st_size > limit:
            return f"{name} is larger than {limit} bytes"
    return None


def open_regular(path: str | os.PathLike[str], limit: int) -> BinaryIO:
    """``path`` opened for reading, when it is a regular file of at most ``limit`` bytes; else ``NotRegularFile``
    (a FIFO, a device such as ``/dev/zero``, a directory, or a larger file: a sparse one reads as its size), or the
    ``OSError`` the system gave. Opened non-blocking and checked on the open descriptor, as
    ``read_regular_bounded``: a cache entry made a FIFO never blocks a run."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size > limit:
            raise NotRegularFile("not a regular file of a bounded size")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def private_entry(entry: Path, limit: int) -> bool:
    """Whether the cache entry ``entry`` is a regular file (not a link) of at most ``limit`` bytes, in a real
    folder, both owned by this user and writable by nobody else: one only this user could have written."""
    return _unshared_entry(entry, limit, root_too=False)


def installed_entry(entry: Path, limit: int) -> bool:
    """Whether ``entry``, a file the package carries (``db.built``, ``core.compiled_code``), is what
    ``private_entry`` asks, but owned by this user or root: one only whoever installed the package could have
    written."""
    return _unshared_entry(entry, limit, root_too=True)


def _unshared_entry(entry: Path, limit: int, *, root_too: bool) -> bool:
    """A regular file (not a link) of at most ``limit`` bytes in a real folder, both owned by this user (or, with
    ``root_too``, root) and writable by neither group nor others. Without POSIX owners (Windows) the folder is the
    user's profile or as the package's installer left it: any regular file within the bound."""
    try:
        st = entry.lstat()  # a symbolic link is not followed: it is not a regular file
        folder = entry.parent.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or not stat.S_ISDIR(folder.st_mode) or st.st_size > limit:
        return False
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    owners = (getuid(), 0) if root_too else (getuid(),)
    others = stat.S_IWGRP | stat.S_IWOTH
    return all(found.st_uid in owners and not found.st_mode & others for found in (st, folder))


def owned_by_user(*found: os.stat_result) -> bool:
    """Whether this user owns every file or folder ``found`` describes (always, without POSIX owners)."""
    getuid = getattr(os, "getuid", None)
    return getuid is None or all(st.st_uid == getuid() for st in found)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """``write_bytes_atomic`` of ``text`` in UTF-8 (``\\n`` line ends kept as given)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def make_private_dirs(path: str | os.PathLike[str]) -> list[Path]:
    """Create ``path`` and its missing parents, each new folder 0700 whatever the umask (folders that
    exist are left as they are: the user may have chosen their modes); the folders this call made."""
    missing: list[Path] = []
    made: list[Path] = []
    folder = Path(path)
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        try:
            os.mkdir(new, 0o700)
        except FileExistsError:
            if not new.is_dir():
                raise
            continue  # another process made it in between
        os.chmod(new, 0o700)
        made.append(new)
    return made


def make_cache_dir(path: str | os.PathLike[str]) -> None:
    """``make_private_dirs(path)``; when this call made ``path`` itself, it also gets ``CACHE_MARK``, the sign
    that its files are this tool's to remove. A folder that existed gets no mark: it may be the user's."""
    folder = Path(path)
    if folder not in make_private_dirs(folder):
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    with contextlib.suppress(FileExistsError):
        fd = os.open(folder / CACHE_MARK, flags, 0o600)
        try:
            os.write(fd, _MARK_TEXT)
        finally:
            os.close(fd)


def write_private_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = False) -> None:
    """``write_bytes_atomic`` of a file only its owner may read (0600, also over an older 0644 file), its
    missing folders made 0700 (``make_private_dirs``): a cache entry may hold what a private index served.
    Not ``durable`` by default: a cache entry is still atomic (no reader sees half of one), but it is not
    synced to disk, which cost two fsyncs per page on a cold lock; one lost in a crash is fetched again, and
    one damaged is caught by its digest or shape."""
    make_private_dirs(Path(path).parent)
    write_bytes_atomic(path, data, mode=0o600, durable=durable)


def store_bounded(path: Path, data: bytes, *, keep: int, names: re.Pattern[str]) -> bool:
    """``write_private_atomic`` of a cache entry at ``path`` in a folder made by ``make_cache_dir`` when missing,
    then only the newest ``keep`` entries whose names match ``names`` left there (``keep_newest``, ``path``
    spared); False, the cache as it was, when the disk refuses (a cache is only an optimisation)."""
    try:
        make_cache_dir(path.parent)
        write_private_atomic(path, data)
        keep_newest(path.parent, keep, names, spare=path.name)
    except OSError:
        return False
    return True


def seal(data: bytes) -> bytes:
    """``data`` after one line, its SHA-256 in hex: a cache entry that ``unseal`` gives back only whole and as
    written (one written without a sync, cut short or left empty by a crash, is refused)."""
    import hashlib

    return hashlib.sha256(data).hexdigest().encode() + b"\n" + data


def unseal(blob: bytes) -> bytes | None:
    """The data ``seal`` wrote in ``blob``; None when ``blob`` is not that (cut short, edited, foreign)."""
    import hashlib

    digest, newline, data = blob.partition(b"\n")
    return data if newline and hashlib.sha256(data).hexdigest().encode() == digest else None


def sealed(payload: str) -> bytes:
    """``payload`` (a JSON text) ``seal``-ed: what ``read_sealed`` takes back only whole and as written."""
    return seal(payload.encode("utf-8"))


def write_sealed(path: str | os.PathLike[str], payload: str) -> None:
    """``write_private_atomic`` of ``payload`` ``sealed``: a cache entry that ``read_sealed`` takes back only whole
    and as written."""
    write_private_atomic(path, sealed(payload))


def read_sealed(path: str | os.PathLike[str], limit: int = SEALED_LIMIT) -> Any:
    """The JSON value of the entry ``write_sealed`` wrote at ``path``; None when there is none, or it cannot be
    read (not a regular file, over ``limit`` bytes), or it was cut short or edited (its first line is not the
    SHA-256 of the rest), or is not JSON."""
    from cudaresolve.core.decode import loads_json

    try:
        data = read_regular_bounded(path, limit)
        payload = unseal(data) if len(data) <= limit else None
        return loads_json(payload.decode("utf-8")) if payload is not None else None
    except (OSError, ValueError):  # a decoding error of the bytes or of the JSON is a ValueError
        return None


def write_bytes_atomic(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Write ``data`` through a temporary file in the same directory,
    fsync it (unless not ``durable``), then ``os.replace`` it over ``path`` (and fsync the folder). On any
    failure the old file is untouched and the temporary file is removed. An existing file's permission bits
    are kept, unless ``mode`` is given: the file then has exactly that mode (the temporary file is created
    with it, so it is never wider)."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")  # os, not secrets: no extra import
    created = 0o666 if mode is None else mode
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), created)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and os.name == "posix":  # make the rename itself durable
        with contextlib.suppress(OSError):
            dir_fd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def keep_newest(folder: str | os.PathLike[str], count: int, names: re.Pattern[str], *, spare: str = "") -> None:
    """Remove all but the ``count`` newest files of ``folder`` (by mtime) whose whole name matches ``names``,
    the pattern of the names this tool gives its entries; ``spare`` (a name just written) always stays and
    counts as one. A cache's bound, so it touches only what is surely the tool's own: nothing unless ``folder``
    is a real folder (not a symbolic link) that ``make_cache_dir`` made (it holds ``CACHE_MARK``), owned by this
    user; in it only regular files, never a link or a folder. A file that cannot be looked at or removed is
    left. The folder is opened once and every look and removal goes through that descriptor where the system
    allows, so a folder swapped for a link meanwhile is not followed."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow)
    except OSError:
        return
    try:
        if not _owned_cache_folder(fd, folder):
            return
        at_fd = os.unlink in os.supports_dir_fd and os.scandir in os.supports_fd
        entries = []
        with os.scandir(fd if at_fd else folder) as found:
            for entry in found:
                if entry.name == spare or not names.fullmatch(entry.name):
                    continue
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        entries.append((st.st_mtime_ns, entry.name))
        entries.sort(reverse=True)
        for _, name in entries[count - 1 if spare else count :]:
            with contextlib.suppress(OSError):
                if at_fd:
                    os.unlink(name, dir_fd=fd)
                else:
                    os.unlink(os.path.join(folder, name))
    except OSError:
        return
    finally:
        os.close(fd)


def _owned_cache_folder(fd: int, folder: str | os.PathLike[str]) -> bool:
    """Whether the open ``fd`` is a folder of this user (POSIX) holding this tool's ``CACHE_MARK`` file."""
    here = os.fstat(fd)
    if not stat.S_ISDIR(here.st_mode) or os.path.islink(folder):
        return False
    if os.stat in os.supports_dir_fd:
        mark = os.stat(CACHE_MARK, dir_fd=fd, follow_symlinks=False)
    else:
        mark = os.lstat(os.path.join(folder, CACHE_MARK))
    return stat.S_ISREG(mark.st_mode) and owned_by_user(here, mark)


def walk(top: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` (top-down, links to folders listed but not entered, unreadable folders skipped), with a list
    for a stack: Python 3.11's ``os.walk`` recurses, one frame per level, and a tree ~1,000 folders deep (a hostile
    wheel's members, a directory given to ``inspect``) was a ``RecursionError``. Python 3.12's is this loop."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                found = list(entries)
        except OSError:
            continue
        dirs: list[str] = []
        names: list[str] = []
        for entry in found:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else names).append(entry.name)
        yield folder, dirs, names  # the caller may sort or prune ``dirs`` in place, as with os.walk
        for name in reversed(dirs):
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                stack.append(path)


def make_dirs(path: str | os.PathLike[str]) -> None:
    """``os.makedirs(path, exist_ok=True)`` one level at a time from the deepest folder that exists: Python's
    recurses once per missing level, a ``RecursionError`` for a wheel member ~1,000 folders deep."""
    missing: list[str] = []
    folder = os.fspath(path)
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for level in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(level)
        if not os.path.isdir(level):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), level)


def remove_tree(path: str | os.PathLike[str]) -> None:
    """``shutil.rmtree(path, ignore_errors=True)`` with a list for a stack (Python 3.11's recurses per level and
    raised ``RecursionError`` past ~1,000, which ``ignore_errors`` does not catch): links are removed, never
    followed; what cannot be removed is left."""
    stack: list[tuple[str, bool]] = [(os.fspath(path), False)]
    while stack:
        entry, emptied = stack.pop()
        if emptied:
            with contextlib.suppress(OSError):
                os.rmdir(entry)
            continue
        try:
            is_dir = stat.S_ISDIR(os.lstat(entry).st_mode)
        except OSError:
            continue
        if not is_dir:
            with contextlib.suppress(OSError):
                os.unlink(entry)
            continue
        stack.append((entry, True))
        try:
            with os.scandir(entry) as found:
                stack.extend((os.path.join(entry, e.name), False) for e in found)
        except OSError:
            continue
