"""Reading compat.toml rows into typed values, collecting every problem with a dotted path. Pure.

Typed getters record a problem (``torch[3].build[1].sass[2]: expected sm_XY form``) and return
None instead of raising; ``read_database`` then runs the checks across rows (references,
duplicates, order) and raises one ``InvalidCompatData`` listing them all (pylock's and
trove-classifiers' approach).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, TypeVar

from cudaresolve.core.archs import Arch, parse_arch, parse_cc
from cudaresolve.core.platforms import PLATFORMS, canonical_name
from cudaresolve.core.versions import parse_cuda_version, parse_driver
from cudaresolve.db.rows import (
    PACKAGE_KINDS,
    Build,
    CudaRelease,
    ForwardCompat,
    GpuModel,
    PackageRelease,
    VariantInfo,
    gpu_name_key,
)
from cudaresolve.errors import CudaResolveError, InvalidCompatData

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.version import Version

__all__ = ["SCHEMA_MAJOR", "Parts", "read_database", "read_package_rows"]

SCHEMA_MAJOR: Final = 1
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Parts:
    """What ``read_database`` read: the typed rows, plus package rows still raw when read lazily."""

    schema_version: int
    snapshot_date: str | None
    cuda: tuple[CudaRelease, ...]
    forward_compat: tuple[ForwardCompat, ...]
    gpus: tuple[GpuModel, ...]
    variants: tuple[VariantInfo, ...]
    packages: Mapping[str, tuple[PackageRelease, ...]]
    raw_packages: Mapping[str, list[Mapping[str, Any]]]


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

    return replace(release, builds=kept)


def _read_package_row(
    c: _Collector, row: Mapping[str, Any], path: str, *, kind: str, variants: Mapping[str, VariantInfo]
) -> PackageRelease | None:
    return _read_package(c, kind, row, path, variants)


def read_package_rows(
    kind: str, rows: Iterable[Mapping[str, Any]], variants: Mapping[str, VariantInfo], *, source: str
) -> tuple[PackageRelease, ...]:
    """Rows of one package kind (read lazily from a trusted file); problems raise at once."""
    c = _Collector()
    releases = _rows(c, rows, kind, functools.partial(_read_package_row, kind=kind, variants=variants))
    if c.problems:
        raise InvalidCompatData(c.problems, source=source)
    return tuple(releases)


def read_database(data: Mapping[str, Any], *, source: str, lazy: bool) -> Parts:
    """Every row of ``data``; ``lazy`` leaves package rows raw and skips the cross-row checks."""
    c = _Collector()
    if not lazy:
        c.keys(data, _TOP_KEYS, "")
    schema = c.get(data, "schema-version", int, "", required=not lazy)
    if schema is not None and schema != SCHEMA_MAJOR:
        c.add("schema-version", f"unsupported schema version {schema} (this cudaresolve reads {SCHEMA_MAJOR})")
    cuda_rows = c.table_list(data, "cuda")
    cuda = _rows(c, cuda_rows, "cuda", _read_cuda)
    forward = _rows(c, c.table_list(data, "forward-compat"), "forward-compat", _read_forward_compat)
    gpus = _rows(c, c.table_list(data, "gpu"), "gpu", _read_gpu)
    variants = _rows(c, c.table_list(data, "variant"), "variant", _read_variant)
    packages: dict[str, tuple[PackageRelease, ...]] = {}
    raw: dict[str, list[Mapping[str, Any]]] = {}
    if lazy:
        raw = {kind: list(c.table_list(data, kind)) for kind in PACKAGE_KINDS}
    else:
        by_name = {v.name: v for v in variants}
        for kind in PACKAGE_KINDS:
            reader = functools.partial(_read_package_row, kind=kind, variants=by_name)
            packages[kind] = tuple(_rows(c, c.table_list(data, kind), kind, reader))
        named = {str(t.get("version")) for t in cuda_rows}  # rows with other faults still count as named
        _check_semantics(c, cuda, named, gpus, variants, packages)
    if c.problems:
        raise InvalidCompatData(c.problems, source=source)
    snapshot = data.get("snapshot-date")
    return Parts(
        schema_version=schema or SCHEMA_MAJOR,
        snapshot_date=snapshot if isinstance(snapshot, str) else None,
        cuda=tuple(cuda),
        forward_compat=tuple(forward),
        gpus=tuple(gpus),
        variants=tuple(variants),
        packages=packages,
        raw_packages=raw,
    )


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
