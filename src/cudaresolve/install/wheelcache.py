"""Locked files fetched from the lock's own URLs into a cache shared by every environment. Does I/O: HTTP, the
cache folder.

Each file is fetched from the ``url`` its lock names (mirrors applied by the caller: they map
URLs, never add sources), in parallel, and kept under its sha256: ``<cache>/files-v1/<sha256>/<file
name>``. A file is streamed into a temporary name inside its entry's folder, hashed on the way,
and renamed into place only when the sha256 is the locked one; so an entry holds exactly the bytes
its name says, and a second environment installing the same lock downloads nothing. Folders are
private (0700); a file of another size than the lock records is fetched again.

Bounded: a file is at most ``MAX_DIRECT_BYTES`` and ``FILE_DEADLINE`` seconds (as a direct
reference); after each install the cache is trimmed to ``MAX_CACHE_BYTES``, least recently used
first (an entry's folder is touched when used). Trimming removes only what this module made: a
folder named by a sha256 directly under ``files-v1`` holding one file named like a wheel or sdist;
anything else there is left alone.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote, urlsplit

from cudaresolve.core.files import make_private_dirs
from cudaresolve.errors import IndexUnavailable, InvalidInput, InvalidLockfile
from cudaresolve.lock.model import REGENERATE_HINT, is_sha256
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from cudaresolve.index.client import IndexClient
    from cudaresolve.resolve.model import LockedPackage

__all__ = ["FILES", "MAX_CACHE_BYTES", "WORKERS", "cache_path", "cached_file", "fetch_files", "split_direct", "trim"]

#: The folder under the user cache that holds the verified files.
FILES: Final = "files-v1"
#: The most the cache keeps after an install (the CUDA 12 torch stack is about 4 GB).
MAX_CACHE_BYTES: Final = 32 * 1024**3
#: Downloads at once.
WORKERS: Final = 8
_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+!-]*\.(?:whl|tar\.gz|zip)$")
_CHUNK: Final = 1024 * 1024


def cache_path(root: Path, package: LockedPackage) -> Path | None:
    """Where ``package``'s file lives in the cache; None without a sha256 or a safe file name."""
    name = _file_name(package)
    if not package.sha256 or not is_sha256(package.sha256) or name is None:
        return None
    return root / package.sha256 / name


def split_direct(
    packages: Sequence[LockedPackage], root: Path
) -> tuple[list[LockedPackage], list[LockedPackage]]:
    """``packages`` as (those fetched from their own URL into the cache under ``root``: a URL, a sha256 and a safe
    file name; the rest), each in order. Split by identity: comparing the dataclasses pairwise is quadratic."""
    direct = [p for p in packages if p.url and p.sha256 and cache_path(root, p) is not None]
    taken = {id(p) for p in direct}
    return direct, [p for p in packages if id(p) not in taken]


def cached_file(root: Path, package: LockedPackage) -> Path | None:
    """The verified file of ``package`` when the cache holds it (a regular file of the locked size, when
    the lock records one), its folder touched as used; else None."""
    path = cache_path(root, package)
    if path is None:
        return None
    try:
        info, folder = os.lstat(path), os.lstat(path.parent)
    except OSError:
        return None
    if not stat.S_ISDIR(folder.st_mode) or not stat.S_ISREG(info.st_mode):
        return None
    if package.size is not None and info.st_size != package.size:
        return None
    try:
        os.utime(path.parent)
    except OSError:
        pass
    return path


def fetch_files(
    packages: Sequence[LockedPackage], root: Path, client: IndexClient, *, workers: int = WORKERS
) -> dict[str, Path]:
    """Name -> the verified file of each package (each with a URL and a sha256), from the cache or fetched
    in parallel from its URL. A hash that differs is ``HashMismatch``, a file that cannot be had is
    ``IndexUnavailable`` (the first failure, after the other downloads ended); nothing half-written stays."""
    found: dict[str, Path] = {}
    todo: list[LockedPackage] = []
    for package in packages:
        path = cache_path(root, package)
        if path is None or not package.url:
            raise InvalidLockfile(Text.of("lock.install.no-file", name=package.name), hint=REGENERATE_HINT)
        hit = cached_file(root, package)
        if hit is not None:
            found[package.name] = hit
        else:
            todo.append(package)
    if todo:
        from concurrent.futures import ThreadPoolExecutor  # only when something is fetched

        largest_first = sorted(todo, key=lambda p: -(p.size or 0))  # the longest download is not left to the end
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo))), thread_name_prefix="fetch") as pool:
            submitted = {p.name: pool.submit(_fetch, p, root, client) for p in largest_first}
            futures = [(p, submitted[p.name]) for p in todo]  # answered in the lock's order
            errors = []
            for package, future in futures:
                try:
                    found[package.name] = future.result()
                except Exception as exc:  # re-raised below, the first one
                    errors.append(exc)
            if errors:
                raise errors[0]
    return {p.name: found[p.name] for p in packages}


def _fetch(package: LockedPackage, root: Path, client: IndexClient) -> Path:
    from cudaresolve.index.digests import check_hashes
    from cudaresolve.index.limits import MAX_DIRECT_BYTES

    path = cache_path(root, package)
    assert path is not None and package.url and package.sha256  # fetch_files checked
    try:
        make_private_dirs(path.parent)
        if not stat.S_ISDIR(os.lstat(path.parent).st_mode):  # a link planted there: nothing is written through it
            raise NotADirectoryError(f"{path.parent} is a symbolic link")
    except OSError as exc:
        raise _unusable(path.parent, exc) from exc
    # a body past the locked size cannot hash to the locked sha256: read no more than that (an endless body)
    cap = MAX_DIRECT_BYTES if package.size is None else min(MAX_DIRECT_BYTES, max(package.size, 0))
    import hashlib  # here: a warm install downloads nothing

    hasher = hashlib.sha256()
    part = path.parent / f".{path.name}.{os.getpid()}.{id(package)}.part"
    try:
        with open(part, "wb") as out:

            def write(chunk: bytes) -> None:
                out.write(chunk)
                hasher.update(chunk)

            try:
                if package.url.startswith("file://"):
                    _read_local(package.url, write, cap=cap)
                else:
                    client.download(package.url, write, cap=cap, any_host=True)
            except IndexUnavailable as exc:  # past the size the lock records: the lock is wrong, not the download
                if package.size is None or package.size >= MAX_DIRECT_BYTES or exc.text.key != "index.page-too-large":
                    raise
                raise InvalidLockfile(Text.of("lock.install.size-mismatch", url=package.url, size=package.size),
                                      hint=REGENERATE_HINT) from None  # fmt: skip
        check_hashes(package.url, (("sha256", package.sha256),), {"sha256": hasher.hexdigest()})
        if package.size is not None and (found := os.path.getsize(part)) != package.size:  # PEP 751: the exact size
            raise InvalidLockfile(Text.of("lock.install.size-differs", url=package.url, size=package.size, found=found),
                                  hint=REGENERATE_HINT)  # fmt: skip
        os.chmod(part, 0o600)
        os.replace(part, path)
    except OSError as exc:
        raise _unusable(path, exc) from exc
    finally:
        part.unlink(missing_ok=True)
    return path


def _unusable(path: Path, exc: OSError) -> InvalidInput:
    """The cache entry ``path`` cannot be made or written: one coded line naming it, never a traceback."""
    reason = str(exc.strerror or exc)
    return InvalidInput(Text.of("lock.install.cache-unusable", path=str(path), reason=reason),
                        hint=Text.of("lock.install.cache-unusable.hint", path=str(path)))


def _read_local(url: str, write: Callable[[bytes], None], *, cap: int) -> None:
    from urllib.request import url2pathname  # only for a file:// URL: urllib.request is a large import

    from cudaresolve.core.files import NotRegularFile, read_regular_bounded
    from cudaresolve.index.limits import too_large

    try:
        data = read_regular_bounded(url2pathname(urlsplit(url).path), cap)
    except (NotRegularFile, OSError) as exc:
        raise InvalidLockfile(
            Text.of("index.direct-cannot-read", path=url, reason=str(getattr(exc, "strerror", None) or exc)),
            hint=Text("index.direct-cannot-read.hint"),
        ) from exc
    if len(data) > cap:
        raise too_large(url, cap, file=True)
    write(data)


def trim(root: Path, *, limit: int = MAX_CACHE_BYTES, keep: Iterable[Path] = ()) -> None:
    """Remove the least recently used entries (module docstring) until the cache holds at most ``limit``
    bytes; ``keep`` (the files just installed) stay. Never raises: a cache that cannot be trimmed stays."""
    kept = {Path(p).parent for p in keep}
    entries: list[tuple[float, int, Path, Path]] = []
    try:
        listed = [Path(item.path) for item in os.scandir(root)]
    except OSError:
        return
    for path in listed:
        entry = _entry(path)
        if entry is not None:
            entries.append(entry)
    total = sum(size for _, size, _, _ in entries)
    for _, size, folder, file in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            return
        if folder in kept:
            continue
        try:
            file.unlink()
            folder.rmdir()
        except OSError:
            continue
        total -= size


def _entry(folder: Path) -> tuple[float, int, Path, Path] | None:
    """(last use, size, folder, file) of an entry this module made, else None (left alone)."""
    if not is_sha256(folder.name):
        return None
    try:
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode):
            return None
        names = os.listdir(folder)
        if len(names) != 1 or not _NAME.match(names[0]):
            return None
        file = folder / names[0]
        found = os.lstat(file)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return info.st_mtime, found.st_size, folder, file


def _file_name(package: LockedPackage) -> str | None:
    name = package.filename
    if not name and package.url:
        name = unquote(urlsplit(package.url).path.rsplit("/", 1)[-1])
    return name if name and _NAME.match(name) and name not in (".", "..") else None
