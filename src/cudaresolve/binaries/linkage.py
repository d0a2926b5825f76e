"""Check extension modules against the torch beside them before anything is imported. Does I/O: reads
files, wheels and installed distributions' RECORD.

Two places hold extensions and a torch:

* an environment (``check_environment``): every ``.so`` its distributions' RECORDs list, against
  ``torch/lib/*.so`` of its site-packages; CUDA libraries are looked for in ``torch/lib``,
  ``nvidia/*/lib`` (and ``nvidia/*/*/lib``), the extension's RUNPATH (``$ORIGIN`` expanded) and
  ``LD_LIBRARY_PATH``, and any library a torch library needs counts as loaded;
* wheels and files named to ``inspect`` (``check_paths``): a torch wheel among them gives the torch
  libraries, else the environment's; members of a wheel are read in place (``archive``).

Each file is read through ``dynamic`` under ``Limits``; ``MAX_FILES`` files and ``MAX_TOTAL_BYTES``
bytes at most per call. Only files that link a torch library have their whole symbol table read.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import posixpath
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from packaging.utils import canonicalize_name

from cudaresolve.binaries.abi import (
    TorchLibraries,
    abi_finding,
    built_for_torch,
    cuda_libraries,
    cuda_library_finding,
    is_torch_library,
    missing_symbols,
)
from cudaresolve.binaries.archive import ARCHIVE_SEPARATOR, READ_ERRORS, open_archive, open_zip_member
from cudaresolve.binaries.dynamic import DynamicSymbols, read_linkage, read_symbols
from cudaresolve.binaries.elf import DEFAULT_LIMITS, BoundedReader
from cudaresolve.binaries.scan import is_candidate, open_regular
from cudaresolve.errors import InvalidBinary

if TYPE_CHECKING:
    import zipfile
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from cudaresolve.binaries.abi import AbiFinding
    from cudaresolve.binaries.elf import Limits, SeekableReader

__all__ = ["MAX_FILES", "MAX_TOTAL_BYTES", "AbiCheck", "check_environment", "check_paths"]

#: ``.so`` files looked at in one check (an environment with torch and its CUDA wheels has about 150).
MAX_FILES: Final = 20_000
#: Bytes read from all files of one check; torch's own symbol tables are about 20 MiB.
MAX_TOTAL_BYTES: Final = 1024**3
_TORCH_FILES: Final = 200  # torch/lib/*.so files read
_PROVIDER_GLOBS: Final = ("torch/lib", "nvidia/*/lib", "nvidia/*/*/lib")
_ELF_MAGIC: Final = b"\x7fELF"
_MAX_METADATA: Final = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class AbiCheck:
    """What one check found, and how much it read (``torch`` None: no torch libraries to check against)."""

    findings: tuple[AbiFinding, ...] = ()
    torch: str | None = None
    torch_found: bool = False
    files: int = 0  # .so files whose dynamic section was read
    extensions: int = 0  # of them, those linking a torch library
    bytes_read: int = 0
    stopped: bool = False  # MAX_FILES or MAX_TOTAL_BYTES reached: the rest was not read

    def to_dict(self) -> dict[str, Any]:
        """``problems`` (each finding) and ``abi`` (what was read) of ``inspect --json``."""
        return {"problems": [f.to_dict() for f in self.findings],
                "abi": {"torch": self.torch, "torch_found": self.torch_found, "files": self.files,
                        "extensions": self.extensions, "bytes_read": self.bytes_read, "stopped": self.stopped}}


class _Budget:
    """Files and bytes read so far in one check."""

    def __init__(self) -> None:
        self.files = self.extensions = self.bytes = 0

    @property
    def spent(self) -> bool:
        return self.files >= MAX_FILES or self.bytes >= MAX_TOTAL_BYTES

    def read(self, stream: SeekableReader, size: int | None, limits: Limits, *, symbols: bool) -> DynamicSymbols | None:
        """The dynamic linkage (and symbol tables when ``symbols``) of one open file; None when it is no ELF
        or is damaged (``inspect`` reports a damaged file; this check only skips it)."""
        self.files += 1
        reader = BoundedReader(stream, size, limits)
        try:
            if reader.size < 4 or reader.read_at(0, 4) != _ELF_MAGIC:
                return None
            return read_symbols(reader) if symbols else DynamicSymbols(linkage=read_linkage(reader))
        except InvalidBinary:
            return None
        finally:
            self.bytes += reader.bytes_read

    def read_path(self, path: Path, limits: Limits, *, symbols: bool) -> DynamicSymbols | None:
        try:
            with open_regular(path) as raw:
                return self.read(raw, None, limits, symbols=symbols)
        except (OSError, InvalidBinary):
            return None

    def result(self, findings: list[AbiFinding], torch: _Torch) -> AbiCheck:
        found = torch.value if torch.loaded else None
        return AbiCheck(findings=tuple(findings), torch=found.version if found else None,
                        torch_found=found is not None, files=self.files, extensions=self.extensions,
                        bytes_read=self.bytes, stopped=self.spent)


class _Torch:
    """The torch libraries, read the first time a library needs them (an environment without
    extensions, or ``inspect`` of a torch wheel alone, never reads torch's symbol tables)."""

    def __init__(self, load: Callable[[], TorchLibraries | None]) -> None:
        self._load = load
        self.loaded = False
        self.value: TorchLibraries | None = None

    def get(self) -> TorchLibraries | None:
        if not self.loaded:
            self.value, self.loaded = self._load(), True
        return self.value


def _torch_from(version: str | None, libraries: Iterable[tuple[str, DynamicSymbols | None]]) -> TorchLibraries:
    exported: set[bytes] = set()
    needed: set[str] = set()
    names = []
    for name, info in libraries:
        if info is not None:
            names.append(name)
            exported |= info.exported
            needed |= set(info.linkage.needed)
    return TorchLibraries.of(version, exported, needed, names)


def _torch_in(site: Sequence[Path], budget: _Budget, limits: Limits) -> TorchLibraries | None:
    """The torch libraries of the first site-packages holding ``torch/lib``."""
    for root in site:
        lib = root / "torch" / "lib"
        if not lib.is_dir():
            continue
        paths = sorted(p for p in lib.iterdir() if is_candidate(p.name) and p.is_file())[:_TORCH_FILES]
        return _torch_from(_dist_version(root, "torch"),
                           ((p.name, budget.read_path(p, limits, symbols=True)) for p in paths))
    return None


def _dist_version(root: Path, name: str) -> str | None:
    for dist in importlib.metadata.distributions(path=[str(root)]):
        with contextlib.suppress(OSError, ValueError, TypeError, LookupError):
            if canonicalize_name(dist.metadata["Name"] or "") == name:
                return dist.version
    return None


def _scan(folder: str | Path) -> set[str]:
    """The names in ``folder`` (the first 10,000); none when it cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return {e.name for _, e in zip(range(10_000), entries, strict=False)}
    except OSError:
        return set()


def _provided(site: Sequence[Path], environ: Mapping[str, str]) -> set[str]:
    """The library names the environment's packages install where the loader finds them, and LD_LIBRARY_PATH's."""
    dirs = [d for root in site for pattern in _PROVIDER_GLOBS for d in root.glob(pattern)]
    dirs += [Path(d) for d in environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    return {name for folder in dirs[:1000] for name in _scan(folder)}


def _runpath_dirs(origin: str, runpath: Sequence[str]) -> list[str]:
    return [posixpath.normpath(p.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)) for p in runpath[:100]]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Owner:
    package: str
    version: str | None
    built_for: str | None


def _judge(label: str, info: DynamicSymbols, owner: _Owner, torch: _Torch, available: set[str], *,
           shown: str | None = None) -> list[AbiFinding]:
    """The findings for one library: CUDA libraries nothing provides (a library torch loads counts as
    provided); when it links torch and its symbols were read, the torch symbols it needs that torch lacks."""
    findings = []
    if lacking := cuda_libraries(info.linkage.needed, available):
        loaded = torch.get()
        if lacking := cuda_libraries(lacking, loaded.needed if loaded else ()):
            findings.append(cuda_library_finding(path=label, package=owner.package, version=owner.version,
                                                 libraries=lacking, shown=shown))
    links = any(is_torch_library(n) for n in info.linkage.needed)
    if links and info.count and (libraries := torch.get()) is not None:
        missing, checked = missing_symbols(info.needed, libraries)
        if missing:
            findings.append(abi_finding(path=label, package=owner.package, version=owner.version, missing=missing,
                                        checked=checked, torch=libraries, built_for=owner.built_for, shown=shown))
    return findings


def _is_library(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".so") or ".so." in base


def _check_file(budget: _Budget, path: Path, owner: _Owner, torch: _Torch, limits: Limits,
                available: set[str], shown: str | None = None) -> list[AbiFinding]:
    info = budget.read_path(path, limits, symbols=False)
    if info is None:
        return []
    links = any(is_torch_library(n) for n in info.linkage.needed)
    if links:
        budget.extensions += 1
        info = budget.read_path(path, limits, symbols=True) or info
    origin = str(path.parent)
    here = {name for folder in [origin, *_runpath_dirs(origin, info.linkage.runpath)] for name in _scan(folder)}
    return _judge(str(path), info, owner, torch, available | here, shown=shown)


def check_environment(
    site_packages: Sequence[str | Path], *, environ: Mapping[str, str] | None = None, limits: Limits = DEFAULT_LIMITS,
) -> AbiCheck:
    """Every extension module the distributions of ``site_packages`` install (the first of each name, as
    ``import`` sees them), checked against that environment's torch and CUDA libraries."""
    site = [Path(p) for p in site_packages]
    budget = _Budget()
    torch = _Torch(lambda: _torch_in(site, budget, limits))
    provided = _provided(site, environ or {})
    findings: list[AbiFinding] = []
    seen: set[str] = set()
    for dist in importlib.metadata.distributions(path=[str(p) for p in site]):
        try:
            name = canonicalize_name(dist.metadata["Name"] or "")
            files, requires, version = dist.files or [], dist.requires or [], dist.version
        except (OSError, ValueError, TypeError, LookupError):
            continue  # doctor names a damaged distribution on its own
        if not name or name in seen:
            continue
        seen.add(name)
        if name == "torch":
            continue  # checked against itself it says nothing; torch's own import is doctor's other checks
        owner = _Owner(package=name, version=version, built_for=built_for_torch(version, requires))
        for record in sorted(files, key=str):
            if budget.spent:
                break
            if _is_library(str(record)):  # named in sentences as RECORD names it: fbgemm_gpu/fbgemm_gpu_py.so
                findings += _check_file(budget, Path(str(dist.locate_file(record))), owner, torch, limits, provided,
                                        shown=str(record))
    return budget.result(findings, torch)


# -- wheels and files named to inspect ---------------------------------------------------------


def _wheel_owner(archive: zipfile.ZipFile, wheel: Path) -> _Owner:
    """A wheel's project name and version (its file name) and the torch it was built for (those and METADATA)."""
    stem = wheel.name.removesuffix(".whl").split("-")
    name, version = canonicalize_name(stem[0]), stem[1] if len(stem) > 1 else None
    requires: list[str] = []
    for info in archive.infolist():
        if info.filename.endswith(".dist-info/METADATA") and info.filename.count("/") == 1:
            if info.file_size < _MAX_METADATA:
                with contextlib.suppress(*READ_ERRORS, InvalidBinary), open_zip_member(archive, info) as stream:
                    text = stream.read(info.file_size).decode("utf-8", "replace")
                    requires = [line.split(":", 1)[1].strip() for line in text.splitlines()
                                if line.startswith("Requires-Dist:")]
            break
    return _Owner(package=name, version=version, built_for=built_for_torch(version, requires))


def _member(budget: _Budget, archive: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits, *, symbols: bool
            ) -> DynamicSymbols | None:
    try:
        with open_zip_member(archive, info) as stream:
            return budget.read(stream, info.file_size, limits, symbols=symbols)
    except (*READ_ERRORS, InvalidBinary):
        return None


def _is_torch_wheel(path: Path) -> bool:
    return path.suffix == ".whl" and canonicalize_name(path.name.split("-", 1)[0]) == "torch"


def _torch_wheel(budget: _Budget, wheel: Path, limits: Limits) -> TorchLibraries:
    version = wheel.name.split("-")[1] if wheel.name.count("-") >= 2 else None
    with open_regular(wheel) as raw, open_archive(raw) as archive:
        members = [i for i in sorted(archive.infolist(), key=lambda i: i.filename)
                   if i.filename.startswith("torch/lib/") and _is_library(i.filename)][:_TORCH_FILES]
        return _torch_from(version, ((i.filename.rsplit("/", 1)[-1], _member(budget, archive, i, limits, symbols=True))
                                     for i in members))


def _check_wheel(budget: _Budget, wheel: Path, torch: _Torch, limits: Limits) -> list[AbiFinding]:
    findings: list[AbiFinding] = []
    with open_regular(wheel) as raw, open_archive(raw) as archive:
        owner = _wheel_owner(archive, wheel)
        infos = sorted(archive.infolist(), key=lambda i: i.filename)
        members = {i.filename for i in infos}
        for info in infos:
            if budget.spent:
                break
            if info.filename.endswith("/") or not _is_library(info.filename):
                continue
            data = _member(budget, archive, info, limits, symbols=False)
            if data is None:
                continue
            links = any(is_torch_library(n) for n in data.linkage.needed)
            if links:
                budget.extensions += 1
                data = _member(budget, archive, info, limits, symbols=True) or data
            origin = posixpath.dirname(info.filename)
            folders = {origin, *_runpath_dirs(origin, data.linkage.runpath)}
            inside = {posixpath.basename(m) for m in members if posixpath.dirname(m) in folders}
            findings += _judge(f"{wheel}{ARCHIVE_SEPARATOR}{info.filename}", data, owner, torch, inside)
    return findings


def check_paths(
    paths: Sequence[str | Path], *, site_packages: Sequence[str | Path] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> AbiCheck:
    """Wheels and ``.so`` files checked against the torch wheel among ``paths``, else the torch of
    ``site_packages`` (default: this interpreter's path). Directories and names are left to ``inspect``'s listing."""
    budget = _Budget()
    targets = [Path(p) for p in paths if str(p) and Path(p).is_file()]
    torch_wheels = [p for p in targets if _is_torch_wheel(p)]

    def load() -> TorchLibraries | None:
        if torch_wheels:
            with contextlib.suppress(*READ_ERRORS, InvalidBinary):
                return _torch_wheel(budget, torch_wheels[0], limits)
            return None
        site = [Path(p) for p in (site_packages or sys.path) if p and Path(p).is_dir()]
        return _torch_in(site, budget, limits)

    torch = _Torch(load)
    findings: list[AbiFinding] = []
    for target in targets:
        if _is_torch_wheel(target) or budget.spent:
            continue
        if target.suffix == ".whl":
            with contextlib.suppress(*READ_ERRORS, InvalidBinary):
                findings += _check_wheel(budget, target, torch, limits)
        elif _is_library(target.name):
            owner = _Owner(package=target.name, version=None, built_for=None)
            findings += _check_file(budget, target, owner, torch, limits, set())
    return budget.result(findings, torch)
