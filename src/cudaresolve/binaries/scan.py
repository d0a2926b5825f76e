"""Find GPU binaries on disk and list their code targets. Does I/O: reads files, wheels, directories.

Inputs: a ``.so``/``.o``/``.cubin``/``.fatbin`` file, a wheel (members are read from the zip
one at a time, never extracted), a directory (walked, symlinks not followed), an AOTInductor
``.pt2`` package (see ``aoti``), or the name of an installed distribution (its RECORD says
which files to read).  Each binary becomes one :class:`BinaryReport`; the parsing itself is
``fatbin.read_fatbin_archs``.
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from packaging.utils import canonicalize_name

from cudaresolve.binaries.fatbin import (
    DEFAULT_LIMITS,
    FatbinEntry,
    FatbinListing,
    Limits,
    SeekableReader,
    read_fatbin_archs,
)
from cudaresolve.errors import CudaResolveError, InvalidBinary, InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from cudaresolve.binaries.aoti import AotiPackage
    from cudaresolve.core.archs import Arch

__all__ = [
    "BinaryReport",
    "FileError",
    "find_distribution",
    "inspect_directory",
    "inspect_distribution",
    "inspect_file",
    "inspect_path",
    "inspect_paths",
    "inspect_wheel",
    "is_candidate",
    "open_zip_member",
]

_BINARY_MAGICS: Final = (b"\x7fELF", b"\x50\xed\x55\xba")
_SUFFIXES: Final = (".so", ".o", ".cubin", ".fatbin")
# A deflated member up to this size is decompressed once into memory; a bigger one is read
# through zipfile's seekable stream, which re-decompresses from the start on a backward seek.
_IN_MEMORY_MEMBER: Final = 32 * 1024 * 1024
# Deflate cannot do better than about 1032:1, so a member claiming more is lying about its size.
_MAX_DEFLATE_RATIO: Final = 1100
_MAX_MEMBER_SIZE: Final = 16 * 1024**3
ARCHIVE_SEPARATOR: Final = "!"  # "torch-2.7.1-...whl!torch/lib/libtorch_cuda.so"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileError:
    """Why one file could not be listed (the ``error`` object of a file in ``inspect --json``)."""

    code: str
    message: str
    hint: str | None = None

    @classmethod
    def from_exception(cls, err: CudaResolveError) -> FileError:
        return cls(code=err.code, message=err.message, hint=err.hint)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


@dataclass(frozen=True, slots=True, kw_only=True)
class BinaryReport:
    """What one file holds: SASS like ``sm_90a``, PTX like ``compute_80``, LTO-IR like ``lto_90``."""

    path: str
    listing: FatbinListing | None = None
    error: FileError | None = None
    package: AotiPackage | None = None  # set for an AOTInductor .pt2 package

    @property
    def format(self) -> str:
        if self.package is not None:
            return "aoti"
        return self.listing.format if self.listing else ""

    @property
    def sass(self) -> tuple[str, ...]:
        return self.listing.sass if self.listing else ()

    @property
    def ptx(self) -> tuple[str, ...]:
        return self.listing.ptx if self.listing else ()

    @property
    def lto(self) -> tuple[str, ...]:
        return self.listing.lto if self.listing else ()

    @property
    def entries(self) -> tuple[FatbinEntry, ...]:
        return self.listing.entries if self.listing else ()

    @property
    def archs(self) -> tuple[Arch, ...]:
        """The loadable SASS and PTX targets as ``Arch`` values, for ``archs.coverage``."""
        names = set(self.sass) | set(self.ptx)
        pool = [e for e in self.entries if e.name in names]
        return tuple(sorted({arch for e in pool if (arch := e.arch) is not None}))

    @property
    def has_device_code(self) -> bool:
        return bool(self.entries)

    def to_dict(self) -> dict[str, Any]:
        """One element of ``files`` in ``inspect --json`` (design section 4, plus extra keys)."""
        data: dict[str, Any] = {"path": self.path, "sass": list(self.sass), "ptx": list(self.ptx)}
        data["lto"] = list(self.lto)
        data["format"] = self.format
        if self.listing is not None:
            data["ptx_isa"] = self.listing.ptx_isa
            data["containers"] = len(self.listing.containers)
            data["entries"] = len(self.listing.entries)
            data["compressed"] = self.listing.compressed
            data["sections"] = [s for s in self.listing.sections if s]  # "" is the file itself
            data["bytes_read"] = self.listing.bytes_read
            data["size"] = self.listing.size
            if self.listing.notes:
                data["notes"] = list(self.listing.notes)
        if self.package is not None:
            data["aoti"] = self.package.to_dict()
        if self.error is not None:
            data["error"] = self.error.to_dict()
        return data


def is_candidate(name: str) -> bool:
    """Whether a file name looks like something that can hold GPU code (``libx.so.12`` counts)."""
    base = name.rsplit("/", 1)[-1]
    return base.endswith(_SUFFIXES) or ".so." in base


def inspect_paths(
    targets: Iterable[str | Path],
    *,
    site_packages: Sequence[str | Path] | None = None,
    include_empty: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> list[BinaryReport]:
    """``inspect_path`` for each target, in order."""
    reports: list[BinaryReport] = []
    for target in targets:
        reports += inspect_path(target, site_packages=site_packages, include_empty=include_empty, limits=limits)
    return reports


def inspect_path(
    target: str | Path,
    *,
    site_packages: Sequence[str | Path] | None = None,
    include_empty: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> list[BinaryReport]:
    """Reports for a file, wheel, ``.pt2``, directory, or installed distribution name.

    A file named explicitly is always reported (with ``error`` set if it cannot be listed);
    inside wheels, directories and distributions, files without device code are left out
    unless ``include_empty``.  Raises ``InvalidInput`` when ``target`` is neither an existing
    path nor an installed distribution, or cannot be opened.
    """
    path = Path(target)
    if path.is_dir():
        return inspect_directory(path, include_empty=include_empty, limits=limits)
    if path.is_file():
        try:
            with open(path, "rb", buffering=0):
                pass
        except OSError as exc:
            raise InvalidInput(
                f"cannot read {path}: {exc.strerror or exc}", hint="check the path and its permissions"
            ) from exc
        if path.suffix == ".whl":
            return inspect_wheel(path, include_empty=include_empty, limits=limits)
        return [inspect_file(path, limits=limits)]
    if path.exists():
        raise InvalidInput(f"not a regular file or directory: {path}", hint="give a .so, wheel, .pt2 or directory")
    dist = find_distribution(str(target), site_packages) if _looks_like_name(str(target)) else None
    if dist is None:
        where = f" in {', '.join(map(str, site_packages))}" if site_packages else ""
        raise InvalidInput(
            f"no such file, directory or installed distribution{where}: {target}",
            hint="give a path to a .so, wheel, .pt2 or directory, or the name of an installed package",
        )
    return inspect_distribution(dist, include_empty=include_empty, limits=limits)


def inspect_file(path: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> BinaryReport:
    """One file on disk; ``.pt2`` packages go to ``aoti``.  Problems end up in ``error``."""
    path = Path(path)
    if path.suffix == ".pt2":
        from cudaresolve.binaries import aoti

        return aoti.package_report(path, limits=limits)
    try:
        with open(path, "rb", buffering=0) as raw:
            return report_stream(str(path), raw, limits=limits)
    except OSError as exc:
        return BinaryReport(path=str(path), error=FileError(code="invalid-input", message=f"cannot read: {exc}"))


def report_stream(
    label: str, stream: SeekableReader, *, size: int | None = None, limits: Limits = DEFAULT_LIMITS,
    scan_rodata: bool | None = None,
) -> BinaryReport:
    """Parse one open stream; an ``InvalidBinary`` becomes the report's ``error``."""
    try:
        listing = read_fatbin_archs(stream, size=size, limits=limits, scan_rodata=scan_rodata)
        return BinaryReport(path=label, listing=listing)
    except InvalidBinary as err:
        return BinaryReport(path=label, error=FileError.from_exception(err))


def inspect_directory(
    root: str | Path, *, include_empty: bool = False, limits: Limits = DEFAULT_LIMITS
) -> list[BinaryReport]:
    """Every candidate file under ``root`` (sorted; symlinks skipped), wheels and ``.pt2`` included."""
    reports: list[BinaryReport] = []
    for path in _walk(Path(root)):
        if path.suffix == ".whl":
            reports += inspect_wheel(path, include_empty=include_empty, limits=limits)
        elif path.suffix == ".pt2" or (is_candidate(path.name) and _starts_like_binary(path)):
            report = inspect_file(path, limits=limits)
            if report.has_device_code or report.error or include_empty:
                reports.append(report)
    return reports


def inspect_wheel(
    path: str | Path, *, include_empty: bool = False, limits: Limits = DEFAULT_LIMITS
) -> list[BinaryReport]:
    """Every candidate member of a wheel, read straight from the archive."""
    path = Path(path)
    try:
        with open(path, "rb") as raw, zipfile.ZipFile(raw) as archive:
            reports = []
            for info in sorted(archive.infolist(), key=lambda i: i.filename):
                if info.is_dir() or not is_candidate(info.filename):
                    continue
                report = _report_member(archive, info, f"{path}{ARCHIVE_SEPARATOR}{info.filename}", limits=limits)
                if report is not None and (report.has_device_code or report.error or include_empty):
                    reports.append(report)
            return reports
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        error = FileError(
            code=InvalidBinary.code, message=f"cannot read wheel: {exc}", hint="the wheel is damaged; download it again"
        )
        return [BinaryReport(path=str(path), error=error)]


def _report_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, *, limits: Limits
) -> BinaryReport | None:
    """One zip member, or ``None`` when it is plainly not a binary (a text linker script)."""
    try:
        with open_zip_member(archive, info) as stream:
            head = stream.read(4)
            if head not in _BINARY_MAGICS:
                return None
            return report_stream(label, stream, size=info.file_size, limits=limits)
    except InvalidBinary as err:
        return BinaryReport(path=label, error=FileError.from_exception(err))
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        return BinaryReport(path=label, error=FileError(code=InvalidBinary.code, message=f"cannot read member: {exc}"))


def open_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> _MemberStream:
    """A seekable, bounded reader over one member, without extracting it.

    A stored member (AOTInductor packages store theirs) is a window onto the archive file, so
    seeks cost nothing.  A small deflated member is inflated once into memory; a large one is
    read through zipfile's own stream.  Decompression errors surface as ``OSError``.
    """
    if info.flag_bits & 0x1:
        raise InvalidBinary(f"{info.filename} is encrypted", hint="inspect the installed files instead")
    if info.file_size > _MAX_MEMBER_SIZE or (
        info.compress_type != zipfile.ZIP_STORED and info.file_size > _MAX_DEFLATE_RATIO * max(info.compress_size, 1)
    ):
        raise InvalidBinary(
            f"{info.filename} claims an implausible size {info.file_size}", hint="the archive is damaged"
        )
    fp = archive.fp
    if info.compress_type == zipfile.ZIP_STORED and fp is not None and fp.seekable():
        fp.seek(info.header_offset)
        local = fp.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise InvalidBinary(f"bad local header for {info.filename}", hint="the archive is damaged")
        name_len, extra_len = struct.unpack_from("<HH", local, 26)
        start = info.header_offset + 30 + name_len + extra_len
        return _MemberStream(_Window(fp, start, info.file_size))
    ext = archive.open(info)
    if info.file_size <= _IN_MEMORY_MEMBER:
        with _MemberStream(ext) as whole:
            data = whole.read(info.file_size + 1)
        return _MemberStream(io.BytesIO(data))
    return _MemberStream(_TailCache(ext, info.file_size))


class _TailCache:
    """Keeps the last MiB of a large deflated member in memory once it is reached.

    An ELF's section table and section names sit at its end, so without this every listing
    would inflate the member twice more (zipfile rewinds and re-inflates on a backward seek).
    """

    _TAIL: Final = 1024 * 1024

    def __init__(self, inner: Any, size: int) -> None:
        self._inner, self._size, self._pos = inner, size, 0
        self._tail_start = max(size - self._TAIL, 0)
        self._tail: bytes | None = None

    def seek(self, offset: int, whence: int = 0, /) -> int:
        self._pos = max({0: 0, 1: self._pos, 2: self._size}[whence] + offset, 0)
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        if self._pos >= self._tail_start:
            if self._tail is None:
                self._inner.seek(self._tail_start)
                self._tail = bytes(self._inner.read(self._size - self._tail_start))
            at = self._pos - self._tail_start
            data = self._tail[at:] if size < 0 else self._tail[at:at + size]
        else:
            self._inner.seek(self._pos)
            data = bytes(self._inner.read(size))
        self._pos += len(data)
        return data

    def close(self) -> None:
        self._inner.close()


class _Window:
    """Bytes ``[start, start + size)`` of a seekable file, as a file of its own."""

    def __init__(self, fp: IO[bytes], start: int, size: int) -> None:
        self._fp, self._start, self._size, self._pos = fp, start, size, 0

    def seek(self, offset: int, whence: int = 0, /) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def read(self, size: int = -1, /) -> bytes:
        count = self._size - self._pos if size < 0 else min(size, self._size - self._pos)
        if count <= 0:
            return b""
        self._fp.seek(self._start + self._pos)
        data = self._fp.read(count)
        self._pos += len(data)
        return data

    def close(self) -> None:
        pass


class _MemberStream:
    """Wraps a member reader so that zlib and zip errors read as ``OSError`` (a context manager)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return int(self._call(self._inner.seek, offset, whence))

    def read(self, size: int = -1, /) -> bytes:
        return bytes(self._call(self._inner.read, size))

    def _call(self, func: Any, *args: Any) -> Any:
        try:
            return func(*args)
        except (zlib.error, zipfile.BadZipFile, EOFError) as exc:
            raise OSError(f"damaged archive member: {exc}") from exc

    def __enter__(self) -> _MemberStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()


def find_distribution(
    name: str, site_packages: Sequence[str | Path] | None = None
) -> importlib.metadata.Distribution | None:
    """The installed distribution called ``name`` (any spelling), in ``site_packages`` or ``sys.path``."""
    wanted = canonicalize_name(name)
    where: dict[str, Any] = {} if site_packages is None else {"path": [str(p) for p in site_packages]}
    for dist in importlib.metadata.distributions(**where):
        if canonicalize_name(dist.metadata["Name"] or "") == wanted:
            return dist
    return None


def inspect_distribution(
    dist: importlib.metadata.Distribution, *, include_empty: bool = False, limits: Limits = DEFAULT_LIMITS
) -> list[BinaryReport]:
    """The binaries an installed distribution's RECORD lists; a listed file that is gone is an error."""
    files = dist.files
    if files is None:
        raise InvalidInput(f"{dist.metadata['Name']} has no RECORD of its files", hint="reinstall it with pip")
    reports = []
    for record in sorted(files, key=str):
        if not is_candidate(str(record)) and record.suffix != ".pt2":
            continue
        path = Path(str(dist.locate_file(record)))
        if not path.is_file():
            reports.append(BinaryReport(path=str(path), error=FileError(
                code=InvalidBinary.code, message="listed in RECORD but missing", hint="reinstall the package",
            )))
            continue
        if path.suffix != ".pt2" and not _starts_like_binary(path):
            continue
        report = inspect_file(path, limits=limits)
        if report.has_device_code or report.error or include_empty:
            reports.append(report)
    return reports


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder, name)
            if not path.is_symlink():
                yield path


def _starts_like_binary(path: Path) -> bool:
    try:
        with open(path, "rb", buffering=0) as raw:
            return raw.read(4) in _BINARY_MAGICS
    except OSError:
        return True  # let inspect_file report why it cannot be read


def _looks_like_name(text: str) -> bool:
    return bool(text) and "/" not in text and os.sep not in text and not text.startswith(".")
