"""An sdist's PKG-INFO, read without unpacking anything. Does I/O through IndexClient.

When an index offers no PEP 658 ``.metadata`` file for a release that has only an sdist, the
sdist is downloaded (``IndexClient.download``: streamed into a spooled temporary file, at most
``MAX_SDIST_BYTES``, the index's sha256 checked) and only its ``<name>-<version>/PKG-INFO`` is
read: a ``.tar.gz`` in order, as a stream (at most ``MAX_SDIST_MEMBERS`` members looked at and
``MAX_SDIST_UNPACKED`` bytes unpacked on the way), a ``.zip`` through its central directory (its
member count read from the end record first). Nothing is extracted and no member name is ever used
as a path. Whatever a hostile archive holds (a gzip bomb, a million members, a PKG-INFO that is a
link or sits outside the top directory, a broken stream) is ``IndexUnavailable`` naming the URL.

Whether that metadata may be trusted without building the sdist (PEP 643) is
``metadata.static_problem``'s question. Spec:
https://packaging.python.org/en/latest/specifications/source-distribution-format/
"""

from __future__ import annotations

import gzip
import hashlib
import struct
import tarfile
import tempfile
import zipfile
import zlib
from typing import IO, TYPE_CHECKING, Final

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.digests import check_hashes
from cudaresolve.index.limits import MAX_PKG_INFO_BYTES, MAX_SDIST_BYTES, MAX_SDIST_MEMBERS, MAX_SDIST_UNPACKED
from cudaresolve.index.simple import HINT
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable

    from cudaresolve.index.client import IndexClient
    from cudaresolve.index.simple import IndexFile

__all__ = ["fetch_sdist", "pkg_info", "read_sdist_metadata"]

_SPOOL: Final = 8 * 1024 * 1024  # kept in memory up to this size, then in a temporary file
_END_RECORD: Final = b"PK\x05\x06"
_READ_ERRORS: Final = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, zlib.error,
                       struct.error, ValueError, KeyError, NotImplementedError)  # fmt: skip


def read_sdist_metadata(client: IndexClient, file: IndexFile, *, cap: int = MAX_SDIST_BYTES) -> str:
    """The PKG-INFO text of the sdist ``file`` (module docstring); a hash that differs from the index's is
    ``HashMismatch``."""
    with fetch_sdist(client, file, cap=cap) as spool:
        return pkg_info(spool, file.filename, file.url)


def fetch_sdist(client: IndexClient, file: IndexFile, *, cap: int = MAX_SDIST_BYTES) -> IO[bytes]:
    """The sdist ``file`` downloaded into a spooled temporary file (the caller closes it), its sha256 checked
    against the index's and the file positioned at its start."""
    hasher = hashlib.sha256()
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL, prefix="cudaresolve-")

    def write(chunk: bytes) -> None:
        spool.write(chunk)
        hasher.update(chunk)

    try:
        client.download(file.url, write, cap=cap)
        if file.sha256:
            check_hashes(file.url, (("sha256", file.sha256),), {"sha256": hasher.hexdigest()})
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


def pkg_info(
    archive: IO[bytes],
    filename: str,
    url: str,
    *,
    members: int = MAX_SDIST_MEMBERS,
    unpacked: int = MAX_SDIST_UNPACKED,
    size: int = MAX_PKG_INFO_BYTES,
) -> str:
    """The text of ``<top>/PKG-INFO`` (one directory deep, a regular file) in the sdist ``archive``, a seekable
    ``.tar.gz`` or ``.zip`` named ``filename``, under the bounds given."""
    try:
        if filename.endswith(".zip"):
            data = _from_zip(archive, url, members=members, size=size)
        else:
            data = _from_tar(archive, url, members=members, unpacked=unpacked, size=size)
    except IndexUnavailable:
        raise
    except _READ_ERRORS as e:
        raise _bad(url, f"not a readable sdist ({type(e).__name__})") from e
    return data.decode("utf-8", errors="replace")


def _is_pkg_info(name: str) -> bool:
    """``<top>/PKG-INFO``: one directory deep, the directory a plain name (not ``.``, ``..`` or empty)."""
    top, _, rest = name.removeprefix("./").partition("/")
    return rest == "PKG-INFO" and top not in ("", ".", "..")


def _from_tar(archive: IO[bytes], url: str, *, members: int, unpacked: int, size: int) -> bytes:
    stream = _Capped(gzip.GzipFile(fileobj=archive, mode="rb").read, unpacked, url)
    with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]  # reads .read() only
        for count, member in enumerate(tar, 1):
            if count > members:
                raise _bad(url, f"more than {members} members before its PKG-INFO")
            if not _is_pkg_info(member.name):
                continue
            if not member.isreg():
                raise _bad(url, "its PKG-INFO is not a regular file")
            if member.size > size:
                raise _bad(url, f"a PKG-INFO of {member.size} bytes")
            found = tar.extractfile(member)
            if found is None:
                raise _bad(url, "its PKG-INFO cannot be read")
            return bytes(found.read(size + 1))
    raise _bad(url, "no PKG-INFO in its top directory")


def _from_zip(archive: IO[bytes], url: str, *, members: int, size: int) -> bytes:
    count = _zip_entries(archive)
    if count is None or count > members:
        raise _bad(url, f"more than {members} members")
    archive.seek(0)
    with zipfile.ZipFile(archive) as sdist:
        info = next((i for i in sdist.infolist() if _is_pkg_info(i.filename)), None)
        if info is None:
            raise _bad(url, "no PKG-INFO in its top directory")
        if info.is_dir() or (info.external_attr >> 16) & 0o170000 == 0o120000:  # a directory or a symlink
            raise _bad(url, "its PKG-INFO is not a regular file")
        if info.file_size > size:
            raise _bad(url, f"a PKG-INFO of {info.file_size} bytes")
        with sdist.open(info) as member:
            data = member.read(size + 1)
    if len(data) > size:
        raise _bad(url, f"a PKG-INFO of more than {size} bytes")
    return data


def _zip_entries(archive: IO[bytes]) -> int | None:
    """The member count a zip's end-of-central-directory record declares, read before ``zipfile`` builds an
    entry for each one; None for a zip64 archive (no sdist needs one) or no record at all."""
    archive.seek(0, 2)
    end = archive.tell()
    archive.seek(max(0, end - 65_557))  # the record (22 bytes) plus the longest comment
    tail = archive.read()
    at = tail.rfind(_END_RECORD)
    if at < 0 or len(tail) - at < 22:
        return None
    total = struct.unpack("<H", tail[at + 10 : at + 12])[0]
    return None if total == 0xFFFF else int(total)


class _Capped:
    """A read-only stream that stops with ``IndexUnavailable`` once more than ``cap`` bytes have come out of it."""

    def __init__(self, read: Callable[[int], bytes], cap: int, url: str) -> None:
        self._inner, self._cap, self._url, self._read = read, cap, url, 0

    def read(self, size: int = -1) -> bytes:
        data = self._inner(size if size >= 0 else self._cap + 1)
        self._read += len(data)
        if self._read > self._cap:
            raise _bad(self._url, f"more than {self._cap} bytes unpacked before its PKG-INFO")
        return data


def _bad(url: str, why: str) -> IndexUnavailable:
    return IndexUnavailable(Text.of("index.bad-metadata", url=url, reason=why), hint=HINT)
