"""Atomic file writes (a reader never sees half a file, a failed write leaves the old one) and bounded reads of
regular files (a FIFO or device never blocks a read). Does I/O: reads and writes files."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = [
    "NotRegularFile",
    "keep_newest",
    "make_private_dirs",
    "read_regular_bounded",
    "write_bytes_atomic",
    "write_private_atomic",
    "write_text_atomic",
]


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
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """``write_bytes_atomic`` of ``text`` in UTF-8 (``\\n`` line ends kept as given)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def make_private_dirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and its missing parents, each new folder 0700 whatever the umask (folders that
    exist are left as they are: the user may have chosen their modes)."""
    missing: list[Path] = []
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


def write_private_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = False) -> None:
    """``write_bytes_atomic`` of a file only its owner may read (0600, also over an older 0644 file), its
    missing folders made 0700 (``make_private_dirs``): a cache entry may hold what a private index served.
    Not ``durable`` by default: a cache entry is still atomic (no reader sees half of one), but it is not
    synced to disk, which cost two fsyncs per page on a cold lock; one lost in a crash is fetched again, and
    one damaged is caught by its digest or shape."""
    make_private_dirs(Path(path).parent)
    write_bytes_atomic(path, data, mode=0o600, durable=durable)


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


def keep_newest(folder: str | os.PathLike[str], count: int, suffixes: tuple[str, ...], *, spare: str = "") -> None:
    """Remove all but the ``count`` newest files of ``folder`` (by mtime, links not followed) whose names end in
    one of ``suffixes``; ``spare`` (a name just written) always stays and counts as one. A cache's bound:
    nothing here is the user's, and a file that cannot be looked at or removed is left."""
    entries = []
    try:
        with os.scandir(folder) as found:
            for entry in found:
                if entry.name != spare and entry.name.endswith(suffixes):
                    try:
                        entries.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
                    except OSError:
                        entries.append((0, entry.path))
    except OSError:
        return
    entries.sort(reverse=True)
    for _, path in entries[count - 1 if spare else count :]:
        with contextlib.suppress(OSError):
            os.unlink(path)
