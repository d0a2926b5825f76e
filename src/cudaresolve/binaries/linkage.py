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
from cudaresolve.binaries.dynamic import DynamicSymbols, read_linkage, read_symbols
from cudaresolve.binaries.elf import DEFAULT_LIMITS, BoundedReader
from cudaresolve.binaries.scan import is_candidate, open_regular
from cudaresolve.core.archive import ARCHIVE_SEPARATOR, READ_ERRORS, open_archive, open_zip_member
from cudaresolve.core.files import DIST_FILE_MOST, DIST_FILES, unsafe_member
from cudaresolve.errors import InvalidBinary
from cudaresolve.install.installed import dist_head

if TYPE_CHECKING:
    import zipfile
    from collections.abc import Callable, Container, Iterable, Mapping, Sequence

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
            found, version, _ = dist_head(dist)
            if canonicalize_name(found) == name:
                return version
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


def _judge(info: DynamicSymbols, torch: _Torch, available: Container[str], others: frozenset[bytes]
           ) -> tuple[tuple[str, ...], tuple[bytes, ...], int]:
    """One library's CUDA libraries that nothing provides (a library torch loads counts as provided), and when
    it links torch and its symbols were read, the torch symbols it needs that neither torch nor ``others``
    export, with the number of references checked."""
    lacking: tuple[str, ...] = ()
    if lacking := cuda_libraries(info.linkage.needed, available):
        loaded = torch.get()
        lacking = cuda_libraries(lacking, loaded.needed if loaded else ())
    links = any(is_torch_library(n) for n in info.linkage.needed)
    if links and info.count and (libraries := torch.get()) is not None:
        return (lacking, *missing_symbols(info.needed, libraries, others))
    return lacking, (), 0


def _is_library(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".so") or ".so." in base


@dataclass(frozen=True, slots=True, kw_only=True)
class _Library:
    """One library of a package: how to read it, where it is shown, and the names found beside it."""

    label: str
    shown: str | None
    read: Callable[[bool], DynamicSymbols | None]
    beside: Callable[[DynamicSymbols], tuple[Container[str], ...]]  # file names in its folder and RUNPATH


def _check_package(budget: _Budget, libraries: Sequence[_Library], owner: _Owner, torch: _Torch,
                   available: set[str]) -> list[AbiFinding]:
    """The libraries of one package (a distribution, a wheel). A package's libraries are loaded into one
    process together (``torch.ops.load_library`` of each), so a name one exports meets another's need: when
    any links torch, every library's symbols are read and their exports pooled."""
    read: list[tuple[_Library, DynamicSymbols]] = []
    for library in libraries:
        if budget.spent:
            break
        if (info := library.read(False)) is not None:
            read.append((library, info))
    linking = [any(is_torch_library(n) for n in info.linkage.needed) for _, info in read]
    budget.extensions += sum(linking)
    if any(linking):
        read = [(library, library.read(True) or info) for library, info in read]
    pooled = frozenset(name for _, info in read for name in info.exported)
    judged = [(library, *_judge(info, torch, _AnyOf((available, *library.beside(info))), pooled))
              for library, info in read]  # fmt: skip
    findings: list[AbiFinding] = []
    if lacking := [(library, names) for library, names, _, _ in judged if names]:
        first = lacking[0][0]
        findings.append(cuda_library_finding(
            path=first.label, shown=first.shown, package=owner.package, version=owner.version,
            libraries=tuple(dict.fromkeys(n for _, names in lacking for n in names)),
            files=tuple(library.label for library, _ in lacking)))
    if missing := [(library, names) for library, _, names, _ in judged if names]:
        first, loaded = missing[0][0], torch.get()
        if loaded is not None:
            findings.append(abi_finding(
                path=first.label, shown=first.shown, package=owner.package, version=owner.version, torch=loaded,
                missing=tuple(dict.fromkeys(n for _, names in missing for n in names)),
                checked=sum(checked for _, _, _, checked in judged), built_for=owner.built_for,
                files=tuple(library.label for library, _ in missing)))
    return findings


def _beside_file(path: Path) -> Callable[[DynamicSymbols], tuple[Container[str], ...]]:
    def names(info: DynamicSymbols) -> tuple[Container[str], ...]:
        origin = str(path.parent)
        return tuple(_scan(folder) for folder in [origin, *_runpath_dirs(origin, info.linkage.runpath)])

    return names


@dataclass(frozen=True, slots=True)
class _AnyOf:
    """A name in any of a few sets, asked without joining them: a wheel of 30,000 libraries in one folder had
    each library's folder copied into one set, 30,000 times."""

    sets: tuple[Container[str], ...]

    def __contains__(self, name: object) -> bool:
        return any(name in found for found in self.sets)


def _file_library(budget: _Budget, path: Path, limits: Limits, shown: str | None) -> _Library:
    return _Library(label=str(path), shown=shown, read=lambda symbols: budget.read_path(path, limits, symbols=symbols),
                    beside=_beside_file(path))


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
        if unsafe_member(getattr(dist, "_path", None), DIST_FILES, DIST_FILE_MOST) is not None:
            continue  # a FIFO or /dev/zero for a file importlib would wait on or read whole: doctor names it damaged
        try:
            raw_name, version, requires = dist_head(dist)
            name, files = canonicalize_name(raw_name), dist.files or []
        except (OSError, ValueError, TypeError, LookupError):
            continue  # doctor names a damaged distribution on its own
        if not name or name in seen:
            continue
        seen.add(name)
        if name == "torch":
            continue  # checked against itself it says nothing; torch's own import is doctor's other checks
        owner = _Owner(package=name, version=version, built_for=built_for_torch(version, requires))
        # named in sentences as RECORD names them: fbgemm_gpu/fbgemm_gpu_py.so
        libraries = [_file_library(budget, Path(str(dist.locate_file(r))), limits, str(r))
                     for r in sorted(files, key=str) if _is_library(str(r))]
        findings += _check_package(budget, libraries, owner, torch, provided)
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


def _check_wheel(budget: _Budget, wheel: Path, torch: _Torch, limits: Limits, provided: set[str]
                 ) -> list[AbiFinding]:
    with open_regular(wheel) as raw, open_archive(raw) as archive:
        owner = _wheel_owner(archive, wheel)
        infos = [i for i in sorted(archive.infolist(), key=lambda i: i.filename)
                 if not i.filename.endswith("/") and _is_library(i.filename)]
        in_folder: dict[str, set[str]] = {}  # folder -> the names of its members: made once, not per library
        for member in archive.namelist():
            in_folder.setdefault(posixpath.dirname(member), set()).add(posixpath.basename(member))

        def library(info: zipfile.ZipInfo) -> _Library:
            def beside(data: DynamicSymbols) -> tuple[Container[str], ...]:
                origin = posixpath.dirname(info.filename)
                folders = {origin, *_runpath_dirs(origin, data.linkage.runpath)}
                return tuple(in_folder.get(folder, ()) for folder in folders)

            return _Library(label=f"{wheel}{ARCHIVE_SEPARATOR}{info.filename}", shown=None, beside=beside,
                            read=lambda symbols: _member(budget, archive, info, limits, symbols=symbols))

        return _check_package(budget, [library(i) for i in infos], owner, torch, provided)


def check_paths(
    paths: Sequence[str | Path], *, site_packages: Sequence[str | Path] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> AbiCheck:
    """Wheels and ``.so`` files checked against the torch wheel among ``paths``, else the torch of
    ``site_packages`` (default: this interpreter's path), whose CUDA libraries (``nvidia/*/lib``) then count
    as provided. With no torch found, nothing is said about CUDA libraries: there is nothing to hold them
    against. Directories and names are left to ``inspect``'s listing."""
    budget = _Budget()
    targets = [Path(p) for p in paths if str(p) and Path(p).is_file()]
    torch_wheels = [p for p in targets if _is_torch_wheel(p)]
    site = [] if torch_wheels else [Path(p) for p in (site_packages or sys.path) if p and Path(p).is_dir()]

    def load() -> TorchLibraries | None:
        if torch_wheels:
            with contextlib.suppress(*READ_ERRORS, InvalidBinary):
                return _torch_wheel(budget, torch_wheels[0], limits)
            return None
        return _torch_in(site, budget, limits)

    torch = _Torch(load)
    provided = _provided(site, {}) if site else set()
    findings: list[AbiFinding] = []
    for target in targets:
        if _is_torch_wheel(target) or budget.spent:
            continue
        if target.suffix == ".whl":
            with contextlib.suppress(*READ_ERRORS, InvalidBinary):
                findings += _check_wheel(budget, target, torch, limits, provided)
        elif _is_library(target.name):
            owner = _Owner(package=target.name, version=None, built_for=None)
            findings += _check_package(budget, [_file_library(budget, target, limits, None)], owner, torch, provided)
    if torch.loaded and torch.value is None:  # loaded whenever a CUDA library was found lacking
        findings = [f for f in findings if f.code != "missing-cuda-library"]
    return budget.result(findings, torch)
