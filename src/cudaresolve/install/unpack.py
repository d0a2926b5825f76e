"""Verified wheels kept unpacked in the user cache, one folder per sha256, so that an install links their files
instead of inflating the archive again. Does I/O: reads wheels, writes and removes cache folders.

``unpacked(root, sha256, wheel)`` gives the folder holding ``wheel``'s members as the archive lays them out
(``<sha256>/``, made once: the members are written under a temporary name and the folder renamed into place,
so a folder that exists is whole). The archive is opened with ``core.archive.open_archive``'s bounds
(members, overlap, inflated size); a member whose name is absolute, has a ``..`` or an empty part, or a
backslash, is refused before anything is written. Only the wheel's own hash, checked against the lock before,
makes its members trusted.

Beside each, ``<sha256>.meta/`` keeps the metadata files installing that wheel writes (``link.apply``), by
their sha256, to be linked too.

``prune(root, wanted)`` removes the folders whose wheel the file cache no longer holds (``wheelcache.trim``
removed it), with their ``.meta`` folders (and, in the others, temporary files an interrupted install left), so
this cache is bounded as that one is. ``forget`` removes one folder: an installed file was changed in place, and
through a hard link that changed the kept copy too.
"""

from __future__ import annotations

import contextlib
import errno
import os
from typing import TYPE_CHECKING, Final

from cudaresolve.core.files import make_cache_dir, make_dirs, remove_tree
from cudaresolve.lock.fields import is_sha256

if TYPE_CHECKING:
    from collections.abc import Collection
    from pathlib import Path

__all__ = ["META", "UNPACKED", "forget", "is_kept", "prune", "unpacked"]

#: The folder under the user cache that keeps unpacked wheels.
UNPACKED: Final = "unpacked-v1"
#: The end of the name of a wheel's metadata folder beside its unpacked folder.
META: Final = ".meta"
_CHUNK: Final = 1024 * 1024
#: What writing a member into a fresh folder of ours fails with when the wheel's names cannot be a tree: a file and
#: a folder of one name, or a name too long for the file system (uv refuses such a wheel too).
_NAME_ERRORS: Final = frozenset({errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG})


def unpacked(root: Path, sha256: str, wheel: Path) -> Path:
    """The folder under ``root`` holding ``wheel``'s members (module docstring), made when missing.
    ``InvalidBinary`` for an archive past its bounds or with an unsafe member name; ``OSError`` as the system
    gave it."""
    final = root / sha256
    if is_kept(root, sha256):
        return final

    make_cache_dir(root)
    work = root / f".{sha256}.{os.urandom(4).hex()}.tmp"
    os.mkdir(work, 0o700)
    try:
        _extract(wheel, work)
        try:
            os.rename(work, final)
        except OSError:
            if not final.is_dir():  # another install made it first: theirs is as good
                raise
    finally:
        if work.exists():
            remove_tree(work)
    return final


def is_kept(root: Path, sha256: str) -> bool:
    """Whether the folder of ``sha256`` is there, as a folder of its own: anything else in its place (a file, a
    link, even one to a folder, which would install files the verified wheel never held) is removed, and the
    wheel is unpacked again."""
    import stat

    path = root / sha256
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    if stat.S_ISDIR(mode):
        return True
    with contextlib.suppress(OSError):
        os.unlink(path)
    return False


def forget(root: Path, sha256: str) -> None:
    """Remove the folder of ``sha256``, or whatever is in its place (made again from the wheel when next needed)."""
    path = root / sha256
    if not is_kept(root, sha256):  # not a folder: ``is_kept`` removed it
        return
    remove_tree(path)


def prune(root: Path, wanted: Collection[str]) -> None:
    """Remove the folders whose sha256 is not in ``wanted`` (the wheels the file cache still holds) and
    temporary folders left by an interrupted run. Never raises."""

    with contextlib.suppress(OSError), os.scandir(root) as entries:
        for entry in entries:
            name = entry.name
            sha256 = name[: -len(META)] if name.endswith(META) else name
            stale = sha256 not in wanted and is_sha256(sha256)
            if stale or (name.startswith(".") and name.endswith(".tmp") and _old(entry.path)):
                remove_tree(entry.path)
            elif name.endswith(META):  # a kept metadata file's temporary copy an interrupted install left
                _sweep(entry.path)


def _sweep(folder: str) -> None:
    """Remove the temporary files older than an hour in a wheel's metadata folder."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".tmp") and entry.is_file(follow_symlinks=False) and _old(entry.path):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _old(path: str) -> bool:
    import time

    try:
        return os.stat(path).st_mtime < time.time() - 3600  # an hour: never one a running install is writing
    except OSError:
        return False


def _extract(wheel: Path, into: Path) -> None:
    import zipfile
    import zlib

    from cudaresolve.errors import InvalidBinary
    from cudaresolve.text.model import Text

    try:
        _extract_members(wheel, into)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:  # the archive, not the disk
        raise InvalidBinary(Text.of("lock.install.bad-wheel", file=wheel.name, reason=str(exc)[:200]),
                            hint=Text("lock.install.bad-wheel.hint")) from exc
    except InvalidBinary as exc:  # an archive past ``core.archive``'s bounds, which says so without naming it
        if not exc.text.key.startswith("binaries."):
            raise
        raise InvalidBinary(Text.of("lock.install.bad-wheel", file=wheel.name, reason=exc.text),
                            hint=Text("lock.install.bad-wheel.hint")) from exc


def _extract_members(wheel: Path, into: Path) -> None:
    import shutil

    from cudaresolve.core.archive import open_archive
    from cudaresolve.errors import InvalidBinary
    from cudaresolve.install.wheel_members import safe_member
    from cudaresolve.text.model import Text

    with open(wheel, "rb") as raw, open_archive(raw) as archive:
        infos = archive.infolist()
        for info in infos:
            if not safe_member(info.filename):
                raise InvalidBinary(Text.of("lock.install.unsafe-member", file=wheel.name, member=info.filename[:200]),
                                    hint=Text("lock.install.unsafe-member.hint"))
        made: set[str] = set()
        for info in infos:
            if info.is_dir():
                continue
            target = os.path.join(into, *info.filename.split("/"))
            folder = os.path.dirname(target)
            try:
                if folder not in made:
                    make_dirs(folder)  # one level at a time: os.makedirs recurses per missing level
                    made.add(folder)
                with archive.open(info) as source, open(target, "wb") as sink:
                    shutil.copyfileobj(source, sink, _CHUNK)
            except OSError as exc:  # in a fresh private folder, these come from the member names alone
                if exc.errno not in _NAME_ERRORS:
                    raise
                raise InvalidBinary(Text.of("lock.install.bad-wheel", file=wheel.name,
                                            reason=f"{info.filename[:200]}: {exc.strerror}"),
                                    hint=Text("lock.install.bad-wheel.hint")) from exc
            os.chmod(target, 0o755 if (info.external_attr >> 16) & 0o111 else 0o644)
