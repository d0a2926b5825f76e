"""What ``cudaresolve inspect`` reads: each path or name the user gives, sent to the reader that fits.
Does I/O: walks directories, reads installed distributions' RECORD.

A path is a binary file or a wheel (``scan``), an AOTInductor ``.pt2`` package (``aoti``), or a
directory (walked, symlinks not followed); a name is an installed distribution, whose RECORD
says which files to read.  This module sits above ``scan`` and ``aoti``, which know nothing of
each other beyond ``aoti`` reading its kernels through ``scan.report_stream``.
"""

from __future__ import annotations

import importlib.metadata
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name

from cudaresolve.binaries.aoti import package_report
from cudaresolve.binaries.elf import DEFAULT_LIMITS
from cudaresolve.binaries.report import BinaryReport, FileError
from cudaresolve.binaries.scan import is_candidate, read_binary, read_wheel, starts_like_binary
from cudaresolve.core.files import walk
from cudaresolve.errors import InvalidBinary, InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from cudaresolve.binaries.elf import Limits

__all__ = [
    "find_distribution",
    "inspect_directory",
    "inspect_distribution",
    "inspect_file",
    "inspect_path",
    "inspect_paths",
]


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
    if not str(target):  # Path("") is ".": an empty argument must not scan the working directory
        raise InvalidInput(Text("binaries.empty-path"), hint=Text("binaries.no-such-path.hint"))
    path = Path(target)
    try:
        kind = "dir" if path.is_dir() else "file" if path.is_file() else "other" if path.exists() else None
    except OSError as exc:  # a name the system refuses (too long)
        raise InvalidInput(Text.of("binaries.path-unreadable", path=str(path)[:300], error=exc.strerror or str(exc)),
                           hint=Text("binaries.path-unreadable.hint")) from exc  # fmt: skip
    if kind == "dir":
        return inspect_directory(path, include_empty=include_empty, limits=limits)
    if kind == "file":
        try:
            with open(path, "rb", buffering=0):
                pass
        except OSError as exc:
            raise InvalidInput(Text.of("binaries.path-unreadable", path=str(path), error=exc.strerror or str(exc)),
                               hint=Text("binaries.path-unreadable.hint")) from exc
        if path.suffix == ".whl":
            return read_wheel(path, include_empty=include_empty, limits=limits)
        return [inspect_file(path, limits=limits)]
    if kind == "other":
        raise InvalidInput(Text.of("binaries.not-a-file", path=str(path)), hint=Text("binaries.not-a-file.hint"))
    dist = find_distribution(str(target), site_packages) if _looks_like_name(str(target)) else None
    if dist is None:
        raise InvalidInput(
            Text.of("binaries.no-such-path-in", target=str(target), paths=tuple(map(str, site_packages)))
            if site_packages else Text.of("binaries.no-such-path", target=str(target)),
            hint=Text("binaries.no-such-path.hint"),
        )
    return inspect_distribution(dist, include_empty=include_empty, limits=limits, wide=True)


def inspect_file(path: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> BinaryReport:
    """One file on disk: a ``.pt2`` package or a binary.  Problems end up in ``error``."""
    if Path(path).suffix == ".pt2":
        return package_report(path, limits=limits)
    return read_binary(path, limits=limits)


def inspect_directory(
    root: str | Path, *, include_empty: bool = False, limits: Limits = DEFAULT_LIMITS
) -> list[BinaryReport]:
    """Every candidate file under ``root`` (sorted; regular files only), wheels and ``.pt2`` included."""
    reports: list[BinaryReport] = []
    for path in _walk(Path(root)):
        if path.suffix == ".whl":
            reports += read_wheel(path, include_empty=include_empty, limits=limits)
        elif path.suffix == ".pt2" or (is_candidate(path.name, wide=True) and starts_like_binary(path)):
            report = inspect_file(path, limits=limits)
            if report.has_device_code or report.error or include_empty:
                reports.append(report)
    return reports


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
    dist: importlib.metadata.Distribution, *, include_empty: bool = False, limits: Limits = DEFAULT_LIMITS,
    wide: bool = False, windows: bool = False,
) -> list[BinaryReport]:
    """The binaries an installed distribution's RECORD lists; a listed file that is gone is an error.

    ``wide``: its static libraries and Windows modules too (``scan.is_candidate``); ``windows``: its Windows
    modules (doctor reads what the environment's runtime loads: ELF modules, and on Windows ``.pyd``/``.dll``).
    """
    files = dist.files
    if files is None:
        raise InvalidInput(Text.of("binaries.no-record", name=str(dist.metadata["Name"])),
                           hint=Text("binaries.no-record.hint"))
    reports = []
    for record in sorted(files, key=str):
        if not is_candidate(str(record), wide=wide, windows=windows) and record.suffix != ".pt2":
            continue
        path = Path(str(dist.locate_file(record)))
        if not path.is_file():
            reports.append(BinaryReport(path=str(path), error=FileError(
                code=InvalidBinary.code, text=Text("binaries.record-file-missing"),
                hint=Text("binaries.record-file-missing.hint"),
            )))
            continue
        if path.suffix != ".pt2" and not starts_like_binary(path):
            continue
        report = inspect_file(path, limits=limits)
        if report.has_device_code or report.error or include_empty:
            reports.append(report)
    return reports


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder, name)
            try:
                mode = path.lstat().st_mode
            except OSError:
                yield path  # its report says why it cannot be read
                continue
            if stat.S_ISREG(mode):  # never a symlink, FIFO, device or socket: opening a FIFO blocks
                yield path


def _looks_like_name(text: str) -> bool:
    return bool(text) and "/" not in text and os.sep not in text and not text.startswith(".")
