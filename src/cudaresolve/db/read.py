"""Reading compat.toml into typed rows, collecting every problem with a dotted path. Pure.

``read_database`` reads the ``[index]`` and ``[packages]`` tables first (they say which hosts a
URL may name and which package tables exist), then every row through ``fields.Collector``,
then, unless the file is trusted, the checks across rows (``checks.py``); it raises one
``InvalidCompatData`` listing every problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, TypeVar

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.variants import VariantKind, parse_variant
from cudaresolve.core.versions import parse_cuda_version, parse_driver
from cudaresolve.db.checks import check_driver_gpus, check_semantics
from cudaresolve.db.cudamajor import CudaMajorRule, read_cuda_major, read_cudnn_major
from cudaresolve.db.fields import Collector, join, parse_release_version
from cudaresolve.db.pages import read_pages
from cudaresolve.db.prebuilt import expand_prebuilt, read_abi, read_prebuilt
from cudaresolve.db.ptx_isa import PtxIsa, check_ptx_isa, read_ptx_isa
from cudaresolve.db.python_platforms import read_floors
from cudaresolve.db.rows import (
    CHECK_LEVELS,
    Build,
    CudaRelease,
    DriverGpu,
    ForwardCompat,
    GpuModel,
    IndexFacts,
    PackageFacts,
    PackageRelease,
    VariantInfo,
)
from cudaresolve.db.top_tables import FIXED_TOP_KEYS, read_index, read_package_facts
from cudaresolve.errors import InvalidCompatData
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["SCHEMA_MAJOR", "Parts", "read_database", "read_package_table"]

SCHEMA_MAJOR: Final = 1
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
_GPU_KEYS: Final = {"name", "aliases", "cc", "arch", "datacenter", "tegra", "sbsa-from", "host-platforms"} \
    | _ROW_COMMON
_DRIVER_GPU_KEYS: Final = {"arch", "cc", "datacenter", "gpus", "min-driver", "min-driver-windows",
                           "last-branch"} | _ROW_COMMON
_VARIANT_KEYS: Final = {"name", "cuda", "index-url"} | _ROW_COMMON
_PACKAGE_KEYS: Final = {
    "version", "python", "platforms", "requires", "constrains", "metadata-requires", "min-sm", "pypi-variant", "index",
    "index-url", "build", "floors",
} | _ROW_COMMON
_BUILD_KEYS: Final = {
    "variant", "channel", "index-url", "local", "sass", "ptx", "requires", "platforms", "checked", "scanned", "exists",
    "broken",
} | _ROW_COMMON
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_REPO_AT_TAG: Final = re.compile(r"(?<![\w.-])[\w.-]+/[\w.-]+@[^:;\s]+:\S+")  # tried once per run: linear


@dataclass(frozen=True, slots=True, kw_only=True)
class Parts:
    """What ``read_database`` read: every table, typed."""

    schema_version: int
    snapshot_date: str | None
    index: IndexFacts
    package_facts: PackageFacts
    cuda: tuple[CudaRelease, ...]
    forward_compat: tuple[ForwardCompat, ...]
    gpus: tuple[GpuModel, ...]
    driver_gpus: tuple[DriverGpu, ...]
    variants: tuple[VariantInfo, ...]
    packages: tuple[tuple[str, tuple[PackageRelease, ...]], ...]
    cuda_majors: tuple[CudaMajorRule, ...] = ()  # [[cuda-major]]: distributions tied to one CUDA major
    ptx_isa: tuple[PtxIsa, ...] = ()  # [[ptx-isa]]: the toolkit that writes each PTX ISA version


_R = TypeVar("_R")


def _rows(
    c: Collector,
    rows: Iterable[Mapping[str, Any]],
    kind: str,
    reader: Callable[[Collector, Mapping[str, Any], str], _R | None],
) -> list[_R]:
    """Read every row of one kind, keeping those that parsed (problems are in ``c``)."""
    out = []
    for i, row in enumerate(rows):
        value = reader(c, row, f"{kind}[{i}]")
        if value is not None:
            out.append(value)
    return out


def _read_cuda(c: Collector, row: Mapping[str, Any], path: str) -> CudaRelease | None:
    c.keys(row, _CUDA_KEYS, path)
    version = c.parse(f"{path}.version", parse_cuda_version, c.get(row, "version", str, path, required=True))
    drivers = {}
    for key in ("min-driver-linux", "min-driver-windows", "minor-compat-driver-linux", "minor-compat-driver-windows"):
        required = key.endswith("linux")
        drivers[key] = c.parse(join(path, key), parse_driver, c.get(row, key, str, path, required=required))
    nvcc = c.arch_list(row, "nvcc-sm", path, ptx=False)
    if "nvcc-sm" not in row:
        c.add(f"{path}.nvcc-sm", Text("db.missing-field"))
    source = c.source(row, path)
    if version is None or drivers["min-driver-linux"] is None or drivers["minor-compat-driver-linux"] is None:
        return None
    if drivers["minor-compat-driver-linux"] > drivers["min-driver-linux"]:
        c.add(f"{path}.minor-compat-driver-linux", Text("db.minor-above-full"))
    return CudaRelease(
        version=version,
        min_driver_linux=drivers["min-driver-linux"],
        min_driver_windows=drivers["min-driver-windows"],
        minor_compat_driver_linux=drivers["minor-compat-driver-linux"],
        minor_compat_driver_windows=drivers["minor-compat-driver-windows"],
        driver_branch=c.get(row, "driver-branch", str, path),
        nvcc_sm=nvcc,
        source=source,
        verified=c.verified(row, path),
    )


def _read_forward_compat(c: Collector, row: Mapping[str, Any], path: str) -> ForwardCompat | None:
    c.keys(row, _FC_KEYS, path)
    major = c.get(row, "cuda-major", int, path, required=True)
    package = c.get(row, "package", str, path, required=True)
    branch = c.get(row, "min-driver-branch", int, path, required=True)
    source = c.source(row, path)
    if major is None or package is None or branch is None:
        return None
    try:
        package.format(major=major, minor=0)
    except (KeyError, IndexError, ValueError):
        c.add(f"{path}.package", Text.of("db.package-pattern", package=repr(package)))
        return None
    return ForwardCompat(
        cuda_major=major, package=package, min_driver_branch=branch, source=source, verified=c.verified(row, path)
    )


def _read_gpu(c: Collector, row: Mapping[str, Any], path: str) -> GpuModel | None:
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
        verified=c.verified(row, path),
        sbsa_from=c.parse(join(path, "sbsa-from"), parse_cuda_version, c.get(row, "sbsa-from", str, path)),
        host_platforms=c.platform_list(row, path, (), key="host-platforms"),
    )


def _read_driver_gpu(c: Collector, row: Mapping[str, Any], path: str) -> DriverGpu | None:
    c.keys(row, _DRIVER_GPU_KEYS, path)
    arch = c.get(row, "arch", str, path, required=True)
    ccs = [c.parse(f"{path}.cc[{i}]", parse_cc, t) for i, t in enumerate(c.get(row, "cc", list, path) or ())]
    drivers = [c.parse(join(path, k), parse_driver, c.get(row, k, str, path)) for k in ("min-driver",
                                                                                      "min-driver-windows")]
    last = c.get(row, "last-branch", int, path)
    datacenter = c.get(row, "datacenter", bool, path)
    gpus = tuple(c.get(row, "gpus", list, path) or ())
    source = c.source(row, path)
    if last is not None and not 0 < last < 10_000:
        c.add(f"{path}.last-branch", Text.of("db.bad-branch", found=last))
        last = None
    if last is not None and drivers[0] is not None and drivers[0].branch > last:
        c.add(f"{path}.min-driver", Text.of("db.min-after-last", last=last))
    if "min-driver" not in row and last is None:
        c.add(path, Text("db.driver-gpu-empty"))
    if arch is None or None in ccs:
        return None
    return DriverGpu(
        arch=arch,
        cc=tuple(cc for cc in ccs if cc is not None),
        datacenter=datacenter,
        gpus=gpus,
        min_driver=drivers[0],
        min_driver_windows=drivers[1],
        last_branch=last,
        source=source,
        verified=c.verified(row, path),
    )


def _read_variant(c: Collector, row: Mapping[str, Any], path: str) -> VariantInfo | None:
    c.keys(row, _VARIANT_KEYS, path)
    name = c.get(row, "name", str, path, required=True)
    parsed = c.parse(f"{path}.name", parse_variant, name)
    cuda = c.parse(f"{path}.cuda", parse_cuda_version, c.get(row, "cuda", str, path))
    index_url = c.url(row, "index-url", path, required=True)
    source = c.source(row, path)
    if name is None or index_url is None:
        return None
    if parsed is not None and parsed.kind is VariantKind.CUDA and cuda != parsed.cuda:
        c.add(f"{path}.cuda", Text.of("db.variant-cuda", name=repr(name)))
    return VariantInfo(name=name, cuda=cuda, index_url=index_url, source=source, verified=c.verified(row, path))


def _read_build(
    c: Collector, row: Mapping[str, Any], path: str, parent: PackageRelease, variants: Mapping[str, VariantInfo],
    default_index: str,
) -> Build | None:
    c.keys(row, _BUILD_KEYS, path)
    variant = c.get(row, "variant", str, path, required=True)
    channel = c.get(row, "channel", str, path) or "index"
    if channel not in ("index", "pypi"):
        c.add(f"{path}.channel", Text.of("db.bad-choice", expected=("'index'", "'pypi'"), found=repr(channel)))
    explicit_url = c.url(row, "index-url", path)
    local = c.get(row, "local", str, path)
    sass = c.arch_list(row, "sass", path, ptx=False)
    ptx = c.arch_list(row, "ptx", path, ptx=True)
    requires = c.requirement_list(row, "requires", path)
    platforms = c.platform_list(row, path, parent.platforms)
    source = c.get(row, "source", str, path) or parent.source
    if variant is None:
        return None
    info = variants.get(variant)
    if info is None:
        c.add(f"{path}.variant", Text.of("db.unknown-variant-row", variant=repr(variant)))
        return None
    marked = not c.verified(row, path)
    checked, scanned, withdrawn = _provenance(c, row, path, marked=marked, parent_verified=parent.verified)
    if variant != "cpu" and not sass and not ptx and withdrawn is None:
        c.add(f"{path}.sass", Text.of("db.build-needs-code", variant=variant))
    return Build(
        variant=variant,
        channel=channel,
        index_url=explicit_url or (default_index if channel == "pypi" else info.index_url),
        local=("" if channel == "pypi" else f"+{variant}") if local is None else local,
        sass=sass,
        ptx=ptx,
        requires=requires,
        platforms=platforms,
        source=source,
        verified=not marked and parent.verified,
        marked_unverified=marked,
        checked=checked,
        scanned=scanned,
        withdrawn=withdrawn,
    )


def _provenance(
    c: Collector, row: Mapping[str, Any], path: str, *, marked: bool, parent_verified: bool
) -> tuple[str, str | None, str | None]:
    """``checked`` (its level), ``scanned`` and ``exists``/``broken`` of one build, validated."""
    checked = c.get(row, "checked", str, path)
    scanned = c.get(row, "scanned", str, path)
    exists = c.get(row, "exists", bool, path)
    broken = c.get(row, "broken", bool, path)
    if checked is not None and checked not in CHECK_LEVELS[:3]:
        c.add(f"{path}.checked", Text.of("db.bad-choice", expected=tuple(repr(k) for k in CHECK_LEVELS[:3]),
                                          found=repr(checked)))
    if checked is not None and marked:
        c.add(f"{path}.checked", Text("db.checked-and-unverified"))
    if (checked == "wheel") != (scanned is not None):
        c.add(f"{path}.scanned", Text("db.scanned-needs-wheel"))
    if scanned is not None and not _DATE.fullmatch(scanned):
        c.add(f"{path}.scanned", Text.of("db.bad-date", found=repr(scanned)))
    if checked == "build-script" and not _REPO_AT_TAG.search(str(row.get("source", ""))):
        c.add(f"{path}.source", Text("db.build-script-needs-source"))
    if exists is False and not str(row.get("source", "")).strip():
        c.add(f"{path}.exists", Text("db.withdrawn-needs-source"))
    if broken and not str(row.get("note", "")).strip():
        c.add(f"{path}.broken", Text("db.broken-needs-note"))
    level = checked or ("unverified" if marked or not parent_verified else "source")
    withdrawn = "never-published" if exists is False else "broken" if broken else None
    return level, scanned, withdrawn


def read_package_table(
    c: Collector, data: Mapping[str, Any], kind: str, variants: Mapping[str, VariantInfo], default_index: str
) -> tuple[PackageRelease, ...]:
    """The rows of the package table ``kind`` of ``data`` (``db.deferred`` reads one on its own)."""
    read = (_read_package(c, kind, row, f"{kind}[{i}]", variants, default_index)
            for i, row in enumerate(c.table_list(data, kind)))  # fmt: skip
    return tuple(r for r in read if r is not None)


def _read_package(
    c: Collector, kind: str, row: Mapping[str, Any], path: str, variants: Mapping[str, VariantInfo], default_index: str
) -> PackageRelease | None:
    c.keys(row, _PACKAGE_KEYS, path)
    version = c.parse(f"{path}.version", parse_release_version, c.get(row, "version", str, path, required=True))
    builds_raw = c.table_list(row, "build", path)
    release = PackageRelease(
        name=kind,
        version=version,
        python=c.python_list(row, path, required=True),
        platforms=c.platform_list(row, path, ("linux_x86_64",) if builds_raw else ("any",)),
        requires=c.requirement_list(row, "requires", path),
        constrains=c.requirement_list(row, "constrains", path),
        metadata_requires=tuple(c.get(row, "metadata-requires", list, path) or ()),
        min_sm=c.parse(f"{path}.min-sm", parse_cc, c.get(row, "min-sm", str, path)),
        pypi_variant=c.get(row, "pypi-variant", str, path),
        index=c.get(row, "index", str, path) or "pypi",
        index_url=c.url(row, "index-url", path) or None,
        builds=(),
        source=c.source(row, path),
        verified=c.verified(row, path),
        floors=read_floors(c, row, path),
    )
    if release.index not in ("pypi", "pytorch"):
        c.add(f"{path}.index", Text.of("db.bad-choice", expected=("'pypi'", "'pytorch'"), found=repr(release.index)))
    if release.pypi_variant is not None and release.pypi_variant not in variants:
        c.add(f"{path}.pypi-variant", Text.of("db.unknown-variant", variant=repr(release.pypi_variant)))
    builds = [
        _read_build(c, b, f"{path}.build[{i}]", release, variants, default_index) for i, b in enumerate(builds_raw)
    ]
    kept = tuple(b for b in builds if b is not None and b.withdrawn is None)
    withdrawn = tuple(b for b in builds if b is not None and b.withdrawn is not None)
    seen: set[tuple[str, str, str, tuple[str, ...]]] = set()
    for i, b in enumerate(kept):
        key = (b.variant, b.channel, b.local, b.platforms)
        if key in seen:
            c.add(f"{path}.build[{i}]", Text.of("db.duplicate-build", variant=b.variant, channel=b.channel))
        seen.add(key)
    if version is None:
        return None
    return replace(release, builds=kept, withdrawn=withdrawn)


def read_database(data: Mapping[str, Any], *, source: str, trusted: bool = False) -> Parts:
    """Every table of ``data``; ``trusted`` (the shipped file, validated in CI) skips the checks across rows."""
    c = Collector()
    index = read_index(c, data)
    facts = read_package_facts(c, data)
    c.keys(data, FIXED_TOP_KEYS | set(facts.tables), "")
    schema = c.get(data, "schema-version", int, "", required=True)
    if schema is not None and schema != SCHEMA_MAJOR:
        c.add("schema-version", Text.of("db.schema-version", found=schema, supported=SCHEMA_MAJOR))
    cuda_rows = c.table_list(data, "cuda")
    cuda = _rows(c, cuda_rows, "cuda", _read_cuda)
    forward = _rows(c, c.table_list(data, "forward-compat"), "forward-compat", _read_forward_compat)
    gpus = _rows(c, c.table_list(data, "gpu"), "gpu", _read_gpu)
    ptx_isa = _rows(c, c.table_list(data, "ptx-isa"), "ptx-isa", read_ptx_isa)
    driver_gpus = _rows(c, c.table_list(data, "driver-gpu"), "driver-gpu", _read_driver_gpu)
    variants = _rows(c, c.table_list(data, "variant"), "variant", _read_variant)
    majors = [*_rows(c, c.table_list(data, "cuda-major"), "cuda-major", read_cuda_major),
              *_rows(c, c.table_list(data, "cudnn-major"), "cudnn-major", read_cudnn_major)]  # fmt: skip
    by_name = {v.name: v for v in variants}
    packages: dict[str, tuple[PackageRelease, ...]] = {}
    for kind in facts.tables:
        packages[kind] = read_package_table(c, data, kind, by_name, index.default)
    abi = _rows(c, c.table_list(data, "torch-cxx11-abi"), "torch-cxx11-abi", read_abi)
    prebuilt = _rows(c, c.table_list(data, "prebuilt"), "prebuilt", read_prebuilt)
    packages.update(expand_prebuilt(prebuilt, abi, variants, packages.get("torch", ()), index.default))
    packages.update(read_pages(c, data, variants, packages.get("torch", ()), index.default))
    if not trusted:
        named = {str(t.get("version")) for t in cuda_rows}  # rows with other faults still count as named
        check_semantics(c, index, cuda, named, gpus, variants, packages)
        check_driver_gpus(c, gpus, driver_gpus)
        check_ptx_isa(c, ptx_isa)
    if c.problems:
        raise InvalidCompatData(c.problems, source=source)
    snapshot = data.get("snapshot-date")
    return Parts(
        schema_version=schema or SCHEMA_MAJOR,
        snapshot_date=snapshot if isinstance(snapshot, str) else None,
        index=index,
        package_facts=facts,
        cuda=tuple(cuda),
        forward_compat=tuple(forward),
        gpus=tuple(gpus),
        driver_gpus=tuple(driver_gpus),
        variants=tuple(variants),
        packages=tuple(packages.items()),
        cuda_majors=tuple(majors),
        ptx_isa=tuple(ptx_isa),
    )
