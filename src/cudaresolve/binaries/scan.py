"""Read one binary file or one wheel and list its GPU code. Does I/O: opens files and wheels.

A ``.so``/``.o``/``.a``/``.cubin``/``.fatbin`` (or Windows ``.pyd``/``.dll``) file is parsed in place; a
wheel's members are read from the zip one at a time, never extracted (``archive.open_zip_member``). Each
binary becomes one ``BinaryReport``; the parsing itself is ``staticlib.read_code``
(``fatbin.read_fatbin_archs``, and a static library's members). ``inspect`` sends each
path the user names here, to ``aoti`` or through a directory or distribution.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

from cudaresolve.binaries.elf import DEFAULT_LIMITS, invalid_binary
from cudaresolve.binaries.report import BinaryReport, FileError
from cudaresolve.binaries.staticlib import read_code
from cudaresolve.core.archive import ARCHIVE_SEPARATOR, READ_ERRORS, open_archive, open_zip_member
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    import zipfile

    from cudaresolve.binaries.elf import Limits, SeekableReader

__all__ = ["is_candidate", "open_regular", "read_binary", "read_wheel", "report_stream", "starts_like_binary"]

_BINARY_MAGICS: Final = (b"\x7fELF", b"\x50\xed\x55\xba", b"!<ar", b"MZ")  # ELF, fatbin, static library, PE
_SUFFIXES: Final = (".so", ".o", ".cubin", ".fatbin")
_WINDOWS_SUFFIXES: Final = (".pyd", ".dll")
_WIDE_SUFFIXES: Final = (".a", *_WINDOWS_SUFFIXES)


def is_candidate(name: str, *, wide: bool = False, windows: bool = False) -> bool:
    """Whether a file name looks like something that can hold GPU code (``libx.so.12`` counts).

    ``wide``: static libraries (``libx.a``) and Windows modules (``.pyd``, ``.dll``) too, which ``inspect``
    lists; ``windows``: the Windows modules alone, which a Windows runtime loads (doctor of a Windows environment).
    """
    base = name.rsplit("/", 1)[-1]
    lower = base.lower()
    return (base.endswith(_SUFFIXES) or ".so." in base or (wide and lower.endswith(_WIDE_SUFFIXES))
            or (windows and lower.endswith(_WINDOWS_SUFFIXES)))


def starts_like_binary(path: Path) -> bool:
    """Whether the file starts with an ELF or fatbin magic (an unreadable one counts: its report says why)."""
    try:
        with open_regular(path) as raw:
            return raw.read(4).startswith(_BINARY_MAGICS)
    except (OSError, InvalidBinary):
        return True  # let read_binary report why it cannot be read


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for reading only if it is a regular file (checked on the open descriptor).

    It is opened non-blocking, so a FIFO named ``libx.so`` cannot stall the open itself, and
    ``fstat`` then refuses anything but a regular file before a byte is read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise invalid_binary("binaries.not-regular")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def read_binary(path: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> BinaryReport:
    """One binary file on disk.  Problems end up in ``error``."""
    try:
        with open_regular(path) as raw:
            return report_stream(str(path), raw, limits=limits)
    except InvalidBinary as err:
        return BinaryReport(path=str(path), error=FileError.from_exception(err))
    except OSError as exc:
        return BinaryReport(path=str(path), error=FileError(
            code="invalid-input", text=Text.of("binaries.file-unreadable", error=str(exc))))


def report_stream(
    label: str, stream: SeekableReader, *, size: int | None = None, limits: Limits = DEFAULT_LIMITS,
    scan_rodata: bool | None = None,
) -> BinaryReport:
    """Parse one open stream; an ``InvalidBinary`` becomes the report's ``error``."""
    try:
        listing = read_code(stream, size=size, limits=limits, scan_rodata=scan_rodata)
        return BinaryReport(path=label, listing=listing)
    except InvalidBinary as err:
        return BinaryReport(path=label, error=FileError.from_exception(err))


def read_wheel(
    path: str | Path, *, include_empty: bool = False, limits: Limits = DEFAULT_LIMITS
) -> list[BinaryReport]:
    """Every candidate member of a wheel, read straight from the archive."""
    path = Path(path)
    try:
        with open_regular(path) as raw, open_archive(raw) as archive:
            reports = []
            for info in sorted(archive.infolist(), key=lambda i: i.filename):
                # is_dir() fails on an empty name
                if info.filename.endswith("/") or not is_candidate(info.filename, wide=True):
                    continue
                report = _report_member(archive, info, f"{path}{ARCHIVE_SEPARATOR}{info.filename}", limits=limits)
                if report is not None and (report.has_device_code or report.error or include_empty):
                    reports.append(report)
            return reports
    except InvalidBinary as err:
        return [BinaryReport(path=str(path), error=FileError.from_exception(err))]
    except (*READ_ERRORS, ValueError) as exc:
        error = FileError(code=InvalidBinary.code, text=Text.of("binaries.wheel-unreadable", error=str(exc)),
                          hint=Text("binaries.wheel-unreadable.hint"))
        return [BinaryReport(path=str(path), error=error)]


def _report_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, *, limits: Limits
) -> BinaryReport | None:
    """One zip member, or ``None`` when it is plainly not a binary (a text linker script)."""
    try:
        with open_zip_member(archive, info) as stream:
            head = stream.read(4)
            if not head.startswith(_BINARY_MAGICS):
                return None
            return report_stream(label, stream, size=info.file_size, limits=limits)
    except InvalidBinary as err:
        return BinaryReport(path=label, error=FileError.from_exception(err))
    except READ_ERRORS as exc:
        return BinaryReport(path=label, error=FileError(
            code=InvalidBinary.code, text=Text.of("binaries.member-read-failed", error=str(exc))))
