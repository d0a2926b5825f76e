"""The compatibility database: typed rows, validation that collects every problem, and queries. Pure plus one reader.

``CompatDB.from_dict`` takes any mapping (the parsed ``compat.toml``), reads it through typed
getters that record problems with dotted paths (``torch[3].build[1].sass[2]``), runs the
semantic checks (references, duplicates, order) and raises one ``InvalidCompatData`` listing
them all.  ``load_compat`` is the only function here that touches a file.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from cudaresolve.archs import Arch, ComputeCapability, parse_arch, parse_cc
from cudaresolve.errors import CudaResolveError, InvalidCompatData
from cudaresolve.models import PLATFORMS, CudaVersion, DriverVersion, canonical_name, parse_cuda_version, parse_driver

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.version import Version

__all__ = [
    "PACKAGE_KINDS",
    "Build",
    "CompatDB",
    "CudaRelease",
    "DriverSupport",
    "ForwardCompat",
    "GpuModel",
    "PackageRelease",
    "VariantInfo",
    "gpu_name_key",
    "load_compat",
]

SCHEMA_MAJOR: Final = 1
#: Every package kind the database may describe, in the order ``db show`` lists them.
PACKAGE_KINDS: Final = (
    "torch",
    "torchvision",
    "torchaudio",
    "fbgemm-gpu",
    "torchrec",
    "xformers",
    "flashinfer",
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
)
_TOP_KEYS: Final = {"schema-version", "snapshot-date", "cuda", "forward-compat", "gpu", "variant", *PACKAGE_KINDS}
_ROW_COMMON: Final = {"source", "verified", "note"}
_CUDA_KEYS: Final = {
    "version",
    "min-driver-linux",
    "min-driver-windows",
    "minor-compat-driver-linux",
    "minor-compat-driver-windows",
    "driver-branch",
    "nvcc-sm",
} | _ROW_COMMON
_FC_KEYS: Final = {"cuda-major", "package", "min-driver-branch"} | _ROW_COMMON
_GPU_KEYS: Final = {"name", "aliases", "cc", "arch", "datacenter", "tegra"} | _ROW_COMMON
_VARIANT_KEYS: Final = {"name", "cuda", "index-url"} | _ROW_COMMON
_PACKAGE_KEYS: Final = {
    "version",
    "python",
    "platforms",
    "requires",
    "constrains",
    "metadata-requires",
    "min-sm",
    "pypi-variant",
    "index",
    "index-url",
    "build",
} | _ROW_COMMON
_BUILD_KEYS: Final = {
    "variant",
    "channel",
    "index-url",
    "local",
    "sass",
    "ptx",
    "requires",
    "platforms",
} | _ROW_COMMON
_ALLOWED_HOSTS: Final = ("download.pytorch.org", "pypi.org", "files.pythonhosted.org", "flashinfer.ai")
_PYPI_SIMPLE: Final = "https://pypi.org/simple"
_PYTHON_RE: Final = re.compile(r"^3\.\d{1,2}$")
_STRIP_WORDS: Final = frozenset({"nvidia", "geforce", "tesla"})


class DriverSupport(enum.Enum):
    """How a driver runs a CUDA runtime: fully, only under minor-version compatibility, or not."""

    FULL = "full"
    MINOR = "minor"
    NONE = "none"


@dataclass(frozen=True, slots=True, kw_only=True)
class CudaRelease:
    version: CudaVersion
    min_driver_linux: DriverVersion
    min_driver_windows: DriverVersion | None
    minor_compat_driver_linux: DriverVersion
    minor_compat_driver_windows: DriverVersion | None
    driver_branch: str | None
    nvcc_sm: tuple[Arch, ...]
    source: str
    verified: bool = True

    def min_driver(self, platform: str) -> DriverVersion:
        """Full-compatibility minimum on this platform (Windows 13.x has none: its floor applies)."""
        if platform.startswith("win"):
            if self.min_driver_windows is not None:
                return self.min_driver_windows
            branch = re.sub(r"\D", "", self.driver_branch or "")  # 13.x: NVIDIA names only a branch ("R615")
            if branch:
                return parse_driver(branch)
            return self.minor_compat_driver_windows or self.min_driver_linux
        return self.min_driver_linux

    def minor_compat_driver(self, platform: str) -> DriverVersion:
        if platform.startswith("win"):
            return self.minor_compat_driver_windows or self.minor_compat_driver_linux
        return self.minor_compat_driver_linux


@dataclass(frozen=True, slots=True, kw_only=True)
class ForwardCompat:
    cuda_major: int
    package: str
    min_driver_branch: int
    source: str
    verified: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuModel:
    name: str
    aliases: tuple[str, ...]
    cc: ComputeCapability
    arch: str
    datacenter: bool
    tegra: bool
    source: str
    verified: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantInfo:
    name: str
    cuda: CudaVersion | None
    index_url: str
    source: str
    verified: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Build:
    """One published build of a release: a variant on one channel, with its code targets."""

    variant: str
    channel: str  # "index" or "pypi"
    index_url: str
    local: str  # "+cu118", "" on PyPI, "+cu124torch2.6" on flashinfer's index
    sass: tuple[Arch, ...]
    ptx: tuple[Arch, ...]
    requires: tuple[Requirement, ...]
    platforms: tuple[str, ...]
    source: str
    verified: bool = True

    @property
    def archs(self) -> tuple[Arch, ...]:
        return self.sass + self.ptx


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageRelease:
    """One release of one package; ``builds`` empty means a pure-Python wheel from PyPI."""

    name: str
    version: Version
    python: tuple[str, ...]
    platforms: tuple[str, ...]
    requires: tuple[Requirement, ...]
    constrains: tuple[Requirement, ...]
    metadata_requires: tuple[str, ...]
    min_sm: ComputeCapability | None
    pypi_variant: str | None
    builds: tuple[Build, ...]
    source: str
    verified: bool = True
    index: str = "pypi"  # pure rows: "pypi", or "pytorch" when the chosen variant's index carries it
    index_url: str | None = None  # pure rows on another index (flashinfer's own)

    @property
    def pure(self) -> bool:
        return not self.builds


def gpu_name_key(name: str) -> tuple[str, ...]:
    """Tokens of a GPU name with vendor words dropped: ``NVIDIA GeForce RTX 3090`` -> ``('rtx', '3090')``."""
    tokens = re.split(r"[^0-9a-z]+", name.lower())
    return tuple(t for t in tokens if t and t not in _STRIP_WORDS)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Collector:
    """Records problems with dotted paths; typed getters return None after recording one."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append((path, message))

    def keys(self, row: Mapping[str, Any], allowed: set[str] | frozenset[str], path: str) -> None:
        for key in row:
            if key not in allowed:
                self.add(_join(path, key), "unrecognized field")

    def get(self, row: Mapping[str, Any], key: str, kind: type, path: str, *, required: bool = False) -> Any:
        if key not in row:
            if required:
                self.add(_join(path, key), "required field is missing")
            return None
        value = row[key]
        if kind is str and not isinstance(value, str):
            self.add(_join(path, key), f"expected a string, got {type(value).__name__}")
            return None
        if kind is bool and not isinstance(value, bool):
            self.add(_join(path, key), f"expected true or false, got {type(value).__name__}")
            return None
        if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
            self.add(_join(path, key), f"expected an integer, got {type(value).__name__}")
            return None
        if kind is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                self.add(_join(path, key), "expected a list of strings")
                return None
        return value

    def table_list(self, data: Mapping[str, Any], key: str, path: str = "") -> list[Mapping[str, Any]]:
        value = data.get(key, [])
        where = _join(path, key)
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            self.add(where, "expected an array of tables")
            return []
        return value

    def parse(self, path: str, func: Any, text: str | None) -> Any:
        if text is None:
            return None
        try:
            return func(text)
        except (CudaResolveError, ValueError) as exc:
            self.add(path, getattr(exc, "message", None) or str(exc))
            return None

    def source(self, row: Mapping[str, Any], path: str, *, required: bool = True) -> str:
        text = self.get(row, "source", str, path, required=required)
        if text is not None and not text.strip():
            self.add(f"{path}.source", "must not be empty")
        return text or ""

    def url(self, row: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> str | None:
        text = self.get(row, key, str, path, required=required)
        if text is None:
            return None
        host = re.match(r"^https://([^/]+)/", text + "/")
        if not host:
            self.add(_join(path, key), f"must be an https URL: {text!r}")
        elif host.group(1) not in _ALLOWED_HOSTS:
            self.add(_join(path, key), f"host {host.group(1)!r} is not one of {', '.join(_ALLOWED_HOSTS)}")
        return str(text)


@functools.lru_cache(maxsize=4096)
def _requirement(text: str) -> Requirement:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]
        raise ValueError(f"not a PEP 508 requirement: {text!r} ({reason})") from exc


@functools.lru_cache(maxsize=4096)
def _version(text: str) -> Version:
    from packaging.version import Version

    version = Version(text)
    if version.local:
        raise ValueError(f"a release version has no local tag: {text!r}")
    return version


def _arch_list(c: _Collector, row: Mapping[str, Any], key: str, path: str, *, ptx: bool) -> tuple[Arch, ...]:
    items = c.get(row, key, list, path) or []
    out: list[Arch] = []
    for i, item in enumerate(items):
        where = f"{path}.{key}[{i}]"
        parsed = c.parse(where, parse_arch, item)
        if parsed is None:
            continue
        if len(parsed) != 1 or parsed[0].ptx != ptx or not item.startswith("compute_" if ptx else "sm_"):
            c.add(where, f"expected {'compute_XY' if ptx else 'sm_XY'} form, got {item!r}")
            continue
        out.append(parsed[0])
    return tuple(out)


def _python_list(c: _Collector, row: Mapping[str, Any], path: str, *, required: bool) -> tuple[str, ...]:
    items = c.get(row, "python", list, path, required=required) or []
    for i, item in enumerate(items):
        if not _PYTHON_RE.match(item):
            c.add(f"{path}.python[{i}]", f"expected 3.X, got {item!r}")
    return tuple(items)


def _platform_list(c: _Collector, row: Mapping[str, Any], path: str, default: tuple[str, ...]) -> tuple[str, ...]:
    items = c.get(row, "platforms", list, path)
    if items is None:
        return default
    for i, item in enumerate(items):
        if item != "any" and item not in PLATFORMS:
            c.add(f"{path}.platforms[{i}]", f"unknown platform {item!r}")
    return tuple(items)


def _requirement_list(c: _Collector, row: Mapping[str, Any], key: str, path: str) -> tuple[Requirement, ...]:
    items = c.get(row, key, list, path) or []
    parsed = (c.parse(f"{path}.{key}[{i}]", _requirement, t) for i, t in enumerate(items))
    return tuple(r for r in parsed if r is not None)


_R = TypeVar("_R")


def _rows(
    c: _Collector,
    rows: Iterable[Mapping[str, Any]],
    kind: str,
    reader: Callable[[_Collector, Mapping[str, Any], str], _R | None],
) -> list[_R]:
    """Read every row of one kind, keeping those that parsed (problems are in ``c``)."""
    out = []
    for i, row in enumerate(rows):
        value = reader(c, row, f"{kind}[{i}]")
        if value is not None:
            out.append(value)
    return out


def _read_cuda(c: _Collector, row: Mapping[str, Any], path: str) -> CudaRelease | None:
    c.keys(row, _CUDA_KEYS, path)
    version = c.parse(f"{path}.version", parse_cuda_version, c.get(row, "version", str, path, required=True))
    drivers = {}
    for key in ("min-driver-linux", "min-driver-windows", "minor-compat-driver-linux", "minor-compat-driver-windows"):
        required = key.endswith("linux")
        drivers[key] = c.parse(_join(path, key), parse_driver, c.get(row, key, str, path, required=required))
    nvcc = _arch_list(c, row, "nvcc-sm", path, ptx=False)
    if "nvcc-sm" not in row:
        c.add(f"{path}.nvcc-sm", "required field is missing")
    source = c.source(row, path)
    if version is None or drivers["min-driver-linux"] is None or drivers["minor-compat-driver-linux"] is None:
        return None
    if drivers["minor-compat-driver-linux"] > drivers["min-driver-linux"]:
        c.add(f"{path}.minor-compat-driver-linux", "is above min-driver-linux")
    return CudaRelease(
        version=version,
        min_driver_linux=drivers["min-driver-linux"],
        min_driver_windows=drivers["min-driver-windows"],
        minor_compat_driver_linux=drivers["minor-compat-driver-linux"],
        minor_compat_driver_windows=drivers["minor-compat-driver-windows"],
        driver_branch=c.get(row, "driver-branch", str, path),
        nvcc_sm=nvcc,
        source=source,
        verified=c.get(row, "verified", bool, path) is not False,
    )


def _read_forward_compat(c: _Collector, row: Mapping[str, Any], path: str) -> ForwardCompat | None:
    c.keys(row, _FC_KEYS, path)
    major = c.get(row, "cuda-major", int, path, required=True)
    package = c.get(row, "package", str, path, required=True)
    branch = c.get(row, "min-driver-branch", int, path, required=True)
    source = c.source(row, path)
    if major is None or package is None or branch is None:
        return None
    return ForwardCompat(
        cuda_major=major,
        package=package,
        min_driver_branch=branch,
        source=source,
        verified=c.get(row, "verified", bool, path) is not False,
    )


def _read_gpu(c: _Collector, row: Mapping[str, Any], path: str) -> GpuModel | None:
    c.keys(row, _GPU_KEYS, path)
    name = c.get(row, "name", str, path, required=True)
    cc = c.parse(f"{path}.cc", parse_cc, c.get(row, "cc", str, path, required=True))
    arch = c.get(row, "arch", str, path, required=True)
    datacenter = c.get(row, "datacenter", bool, path, required=True)
    aliases = tuple(c.get(row, "aliases", list, path) or ())
    source = c.source(row, path)
    if name is None or cc is None or arch is None or datacenter is None:
        return None
    return GpuModel(
        name=name,
        aliases=aliases,
        cc=cc,
        arch=arch,
        datacenter=datacenter,
        tegra=bool(c.get(row, "tegra", bool, path)),
        source=source,
        verified=c.get(row, "verified", bool, path) is not False,
    )


def _read_variant(c: _Collector, row: Mapping[str, Any], path: str) -> VariantInfo | None:
    c.keys(row, _VARIANT_KEYS, path)
    name = c.get(row, "name", str, path, required=True)
    cuda = c.parse(f"{path}.cuda", parse_cuda_version, c.get(row, "cuda", str, path))
    index_url = c.url(row, "index-url", path, required=True)
    source = c.source(row, path)
    if name is None or index_url is None:
        return None
    if name != "cpu" and not name.startswith("rocm") and (cuda is None or cuda.tag != name):
        c.add(f"{path}.cuda", f"variant {name!r} needs cuda = the version its tag names")
    return VariantInfo(
        name=name,
        cuda=cuda,
        index_url=index_url.rstrip("/"),
        source=source,
        verified=c.get(row, "verified", bool, path) is not False,
    )


def _read_build(
    c: _Collector, row: Mapping[str, Any], path: str, parent: PackageRelease, variants: Mapping[str, VariantInfo]
) -> Build | None:
    c.keys(row, _BUILD_KEYS, path)
    variant = c.get(row, "variant", str, path, required=True)
    channel = c.get(row, "channel", str, path) or "index"
    if channel not in ("index", "pypi"):
        c.add(f"{path}.channel", f"expected 'index' or 'pypi', got {channel!r}")
    explicit_url = c.url(row, "index-url", path)
    local = c.get(row, "local", str, path)
    sass = _arch_list(c, row, "sass", path, ptx=False)
    ptx = _arch_list(c, row, "ptx", path, ptx=True)
    requires = _requirement_list(c, row, "requires", path)
    platforms = _platform_list(c, row, path, parent.platforms)
    source = c.get(row, "source", str, path) or parent.source
    if variant is None:
        return None
    info = variants.get(variant)
    if info is None:
        c.add(f"{path}.variant", f"unknown variant {variant!r} (no [[variant]] row)")
        return None
    if variant != "cpu" and not sass and not ptx:
        c.add(f"{path}.sass", f"a {variant} build needs at least one sass or ptx entry")
    if channel == "pypi":
        index_url = explicit_url or _PYPI_SIMPLE
        default_local = ""
    else:
        index_url = explicit_url or info.index_url
        default_local = f"+{variant}"
    return Build(
        variant=variant,
        channel=channel,
        index_url=index_url.rstrip("/"),
        local=default_local if local is None else local,
        sass=sass,
        ptx=ptx,
        requires=requires,
        platforms=platforms,
        source=source,
        verified=c.get(row, "verified", bool, path) is not False and parent.verified,
    )


def _read_package(
    c: _Collector, kind: str, row: Mapping[str, Any], path: str, variants: Mapping[str, VariantInfo]
) -> PackageRelease | None:
    c.keys(row, _PACKAGE_KEYS, path)
    version = c.parse(f"{path}.version", _version, c.get(row, "version", str, path, required=True))
    builds_raw = c.table_list(row, "build", path)
    release = PackageRelease(
        name=kind,
        version=version,
        python=_python_list(c, row, path, required=True),
        platforms=_platform_list(c, row, path, ("linux_x86_64",) if builds_raw else ("any",)),
        requires=_requirement_list(c, row, "requires", path),
        constrains=_requirement_list(c, row, "constrains", path),
        metadata_requires=tuple(c.get(row, "metadata-requires", list, path) or ()),
        min_sm=c.parse(f"{path}.min-sm", parse_cc, c.get(row, "min-sm", str, path)),
        pypi_variant=c.get(row, "pypi-variant", str, path),
        index=c.get(row, "index", str, path) or "pypi",
        index_url=(c.url(row, "index-url", path) or "").rstrip("/") or None,
        builds=(),
        source=c.source(row, path),
        verified=c.get(row, "verified", bool, path) is not False,
    )
    if release.index not in ("pypi", "pytorch"):
        c.add(f"{path}.index", f"expected 'pypi' or 'pytorch', got {release.index!r}")
    if release.pypi_variant is not None and release.pypi_variant not in variants:
        c.add(f"{path}.pypi-variant", f"unknown variant {release.pypi_variant!r}")
    builds = [_read_build(c, b, f"{path}.build[{i}]", release, variants) for i, b in enumerate(builds_raw)]
    kept = tuple(b for b in builds if b is not None)
    seen: set[tuple[str, str, str, tuple[str, ...]]] = set()
    for i, b in enumerate(kept):
        key = (b.variant, b.channel, b.local, b.platforms)
        if key in seen:
            c.add(f"{path}.build[{i}]", f"duplicate build {b.variant} on {b.channel}")
        seen.add(key)
    if version is None:
        return None
    from dataclasses import replace

    return replace(release, builds=kept)


def _read_package_row(
    c: _Collector, row: Mapping[str, Any], path: str, *, kind: str, variants: Mapping[str, VariantInfo]
) -> PackageRelease | None:
    return _read_package(c, kind, row, path, variants)


class CompatDB:
    """The parsed, validated database and the questions the rest of the tool asks of it."""

    def __init__(
        self,
        *,
        schema_version: int,
        snapshot_date: str | None,
        cuda: Sequence[CudaRelease],
        forward_compat: Sequence[ForwardCompat],
        gpus: Sequence[GpuModel],
        variants: Sequence[VariantInfo],
        packages: Mapping[str, Sequence[PackageRelease]],
        raw_packages: Mapping[str, list[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.schema_version = schema_version
        self.snapshot_date = snapshot_date
        self.cuda = tuple(cuda)
        self.forward_compat = tuple(forward_compat)
        self.gpus = tuple(gpus)
        self.variants = tuple(variants)
        self._packages = {k: tuple(v) for k, v in packages.items()}
        self._raw_packages = dict(raw_packages or {})  # trusted rows, read on first use
        self._variant_by_name = {v.name: v for v in self.variants}
        self._cuda_by_version = {r.version: r for r in self.cuda}
        self._gpu_keys: dict[tuple[str, ...], GpuModel] = {}
        for gpu in self.gpus:
            for label in (gpu.name, *gpu.aliases):
                self._gpu_keys.setdefault(gpu_name_key(label), gpu)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "compat.toml", lazy: bool = False) -> CompatDB:
        """Validate ``data`` completely; raise one ``InvalidCompatData`` with every problem.

        ``lazy=True`` is for a file already validated (the shipped one, checked by the test
        suite and ``db check``): package rows are read on first use and the cross-row
        reference checks are skipped, which keeps start-up fast.
        """
        if lazy:
            return cls._trusted(data, source=source)
        c = _Collector()
        c.keys(data, _TOP_KEYS, "")
        schema = c.get(data, "schema-version", int, "", required=True)
        if schema is not None and schema != SCHEMA_MAJOR:
            c.add("schema-version", f"unsupported schema version {schema} (this cudaresolve reads {SCHEMA_MAJOR})")
        cuda_rows = c.table_list(data, "cuda")
        cuda = _rows(c, cuda_rows, "cuda", _read_cuda)
        forward = _rows(c, c.table_list(data, "forward-compat"), "forward-compat", _read_forward_compat)
        gpus = _rows(c, c.table_list(data, "gpu"), "gpu", _read_gpu)
        variants = _rows(c, c.table_list(data, "variant"), "variant", _read_variant)
        by_name = {v.name: v for v in variants}
        packages: dict[str, list[PackageRelease]] = {}
        for kind in PACKAGE_KINDS:
            packages[kind] = _rows(
                c, c.table_list(data, kind), kind, functools.partial(_read_package_row, kind=kind, variants=by_name)
            )
        named = {str(t.get("version")) for t in cuda_rows}  # rows with other faults still count as named
        _check_semantics(c, cuda, named, gpus, variants, packages)
        if c.problems:
            raise InvalidCompatData(c.problems, source=source)
        return cls(
            schema_version=schema or SCHEMA_MAJOR,
            snapshot_date=data.get("snapshot-date") if isinstance(data.get("snapshot-date"), str) else None,
            cuda=cuda,
            forward_compat=forward,
            gpus=gpus,
            variants=variants,
            packages=packages,
        )

    @classmethod
    def _trusted(cls, data: Mapping[str, Any], *, source: str) -> CompatDB:
        c = _Collector()
        cuda = _rows(c, data.get("cuda", []), "cuda", _read_cuda)
        forward = _rows(c, data.get("forward-compat", []), "forward-compat", _read_forward_compat)
        gpus = _rows(c, data.get("gpu", []), "gpu", _read_gpu)
        variants = _rows(c, data.get("variant", []), "variant", _read_variant)
        if c.problems:
            raise InvalidCompatData(c.problems, source=source)
        raw = {kind: list(data.get(kind, [])) for kind in PACKAGE_KINDS}
        return cls(
            schema_version=data.get("schema-version", SCHEMA_MAJOR),
            snapshot_date=data.get("snapshot-date"),
            cuda=cuda,
            forward_compat=forward,
            gpus=gpus,
            variants=variants,
            packages={},
            raw_packages=raw,
        )

    # -- queries --------------------------------------------------------------------------
    def packages(self, name: str) -> tuple[PackageRelease, ...]:
        """Releases of ``name`` (canonical), newest first; empty for a package we know nothing of."""
        if name not in self._packages and name in self._raw_packages:
            c = _Collector()
            rows = self._raw_packages.pop(name)
            reader = functools.partial(_read_package_row, kind=name, variants=self._variant_by_name)
            releases = _rows(c, rows, name, reader)
            if c.problems:
                raise InvalidCompatData(c.problems, source="compat.toml")
            self._packages[name] = tuple(releases)
        return self._packages.get(name, ())

    @property
    def package_names(self) -> tuple[str, ...]:
        names = [k for k, v in self._packages.items() if v] + [k for k, v in self._raw_packages.items() if v]
        return tuple(k for k in PACKAGE_KINDS if k in names)

    def variant(self, name: str) -> VariantInfo | None:
        return self._variant_by_name.get(name)

    def cuda_release(self, version: CudaVersion) -> CudaRelease | None:
        return self._cuda_by_version.get(version)

    def find_gpu(self, name: str) -> GpuModel | None:
        """A GPU by name or alias, ignoring case, punctuation and the words NVIDIA/GeForce/Tesla.

        A name that extends a known one by whole tokens (NVML's ``A100-SXM4-80GB``) matches
        the longest known prefix; nothing else is guessed.
        """
        key = gpu_name_key(name)
        if not key:
            return None
        if key in self._gpu_keys:
            return self._gpu_keys[key]
        for size in range(len(key) - 1, 0, -1):
            found = self._gpu_keys.get(key[:size])
            if found is not None:
                return found
        return None

    def driver_support(self, cuda: CudaVersion, driver: DriverVersion, platform: str) -> DriverSupport:
        """Whether ``driver`` runs the CUDA ``cuda`` runtime fully, under minor-version compatibility, or not."""
        release = self.cuda_release(cuda)
        if release is None:
            return DriverSupport.NONE
        if driver >= release.min_driver(platform):
            return DriverSupport.FULL
        if driver >= release.minor_compat_driver(platform):
            return DriverSupport.MINOR
        return DriverSupport.NONE

    def max_cuda_for_driver(self, driver: DriverVersion, platform: str = "linux_x86_64") -> CudaVersion | None:
        """The newest toolkit whose full-compatibility minimum this driver meets."""
        fitting = [r.version for r in self.cuda if driver >= r.min_driver(platform)]
        return max(fitting) if fitting else None

    def forward_compat_for(self, cuda_major: int) -> ForwardCompat | None:
        return next((f for f in self.forward_compat if f.cuda_major == cuda_major), None)


def _check_semantics(
    c: _Collector,
    cuda: Sequence[CudaRelease],
    named_cuda: set[str],
    gpus: Sequence[GpuModel],
    variants: Sequence[VariantInfo],
    packages: Mapping[str, Sequence[PackageRelease]],
) -> None:
    """References, duplicates and ordering across rows (trove-classifiers' semantic checks)."""
    _check_order(c, "cuda", [r.version for r in cuda])
    for i, v in enumerate(variants):
        if v.cuda is not None and str(v.cuda) not in named_cuda:
            c.add(f"variant[{i}].cuda", f"no [[cuda]] row for {v.cuda}")
    _check_unique(c, "variant", [v.name for v in variants], "name")
    labels: dict[tuple[str, ...], str] = {}
    for i, gpu in enumerate(gpus):
        for label in (gpu.name, *gpu.aliases):
            tokens = gpu_name_key(label)
            if not tokens:
                c.add(f"gpu[{i}]", f"name or alias {label!r} has no letters or digits")
            elif tokens in labels and labels[tokens] != gpu.name:
                c.add(f"gpu[{i}]", f"name or alias {label!r} also names {labels[tokens]!r}")
            labels.setdefault(tokens, gpu.name)
    for kind, releases in packages.items():
        _check_order(c, kind, [r.version for r in releases])
        for i, release in enumerate(releases):
            for key, reqs in (("requires", release.requires), ("constrains", release.constrains)):
                for j, req in enumerate(reqs):
                    _check_reference(c, f"{kind}[{i}].{key}[{j}]", req, packages)
            for j, build in enumerate(release.builds):
                for k, req in enumerate(build.requires):
                    _check_reference(c, f"{kind}[{i}].build[{j}].requires[{k}]", req, packages)


def _check_reference(
    c: _Collector, path: str, req: Requirement, packages: Mapping[str, Sequence[PackageRelease]]
) -> None:
    
    name = canonical_name(req.name)
    if name not in packages:
        return  # a dependency the database does not model (numpy, triton …)
    if not any(req.specifier.contains(r.version, prereleases=True) for r in packages[name]):
        c.add(path, f"{req} matches no [[{name}]] row")


def _check_order(c: _Collector, kind: str, versions: Iterable[Any]) -> None:
    listed = [v for v in versions if v is not None]
    for i in range(1, len(listed)):
        if listed[i] == listed[i - 1]:
            c.add(f"{kind}[{i}].version", f"duplicate version {listed[i]}")
        elif listed[i] > listed[i - 1]:
            c.add(f"{kind}[{i}].version", f"rows must be newest first: {listed[i]} comes after {listed[i - 1]}")


def _check_unique(c: _Collector, kind: str, values: Sequence[str], key: str) -> None:
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value in seen:
            c.add(f"{kind}[{i}].{key}", f"duplicate {key} {value!r}")
        seen.add(value)


_SHIPPED_CACHE: dict[str, CompatDB] = {}
_PARSED_FORMAT: Final = 1  # bump when the cached JSON's meaning changes


def _parse_toml(text: str, label: str) -> Mapping[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidCompatData([("", f"not valid TOML: {exc}")], source=label) from exc


def _parse_shipped(path: Path, label: str) -> Mapping[str, Any]:
    """tomllib's result for the shipped file, kept as JSON in the user cache (json parses ~10x faster).

    The entry is named after the file's path, size and modification time, so an edited or
    upgraded file is parsed anew without reading or hashing it first; an unreadable or
    unwritable cache is simply skipped.
    """
    import json
    import os
    import zlib

    stat = path.stat()
    name = f"{zlib.crc32(str(path).encode()):08x}-{stat.st_size}-{stat.st_mtime_ns}-v{_PARSED_FORMAT}.json"
    from cudaresolve.cache import default_cache_dir

    entry = default_cache_dir() / "compat" / name
    try:
        cached = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(cached, dict):
            return cached
    except (OSError, ValueError):
        pass
    data = _parse_toml(path.read_text(encoding="utf-8"), label)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        pass
    return data


def load_compat(path: str | Path | None = None, *, validate: bool = False) -> CompatDB:
    """Read ``path`` (always fully validated), or the database shipped inside the package.

    The shipped file is trusted (CI validates it) and read lazily unless ``validate`` is set.
    """
    from cudaresolve.errors import InvalidInput

    if path is None:
        key = "validated" if validate else "shipped"
        if key in _SHIPPED_CACHE:
            return _SHIPPED_CACHE[key]
        label = "compat.toml (shipped)"
        shipped = Path(__file__).parent / "data" / "compat.toml"
        if shipped.is_file():  # an ordinary install or checkout
            data = _parse_shipped(shipped.resolve(), label)
        else:  # a zipped or otherwise unusual install: ask importlib.resources
            from importlib.resources import files

            data = _parse_toml((files("cudaresolve") / "data" / "compat.toml").read_text(encoding="utf-8"), label)
        db = CompatDB.from_dict(data, source=label, lazy=not validate)
        _SHIPPED_CACHE[key] = db
        return db
    label = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(
            f"cannot read {label}: {exc.strerror}", hint="check that the file exists and is readable"
        ) from exc
    return CompatDB.from_dict(_parse_toml(text, label), source=label)
