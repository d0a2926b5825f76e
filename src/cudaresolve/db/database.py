"""The compatibility database, the questions the tool asks of it, and its one loader. Pure plus one reader.

``CompatDB.from_dict`` validates any mapping (the parsed ``compat.toml``) completely (``read.py``, ``checks.py``);
the row types live in ``rows.py`` (``[[ptx-isa]]``: ``ptx_isa.py``). A ``CompatDB`` is a frozen value: every table
is read when it is built. ``load_compat`` is the only function that touches a file; for the shipped file it goes
through the parse cache in the user cache directory (``cache.py``), and each call returns a new database.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.paths import default_cache_dir
from cudaresolve.db.cudamajor import tie_counts
from cudaresolve.db.deferred import parse_toml as _parse_toml
from cudaresolve.db.gpu_names import GpuListing, GpuMatch, GpuNames, MatchKind, gpu_name_key
from cudaresolve.db.gpudriver import GpuDriverCheck, check_gpu, gpu_arch, match_row
from cudaresolve.db.rows import (
    CHECK_LEVELS,
    Build,
    CudaRelease,
    DriverGpu,
    DriverSupport,
    ForwardCompat,
    GpuModel,
    IndexFacts,
    PackageFacts,
    PackageRelease,
    VariantInfo,
)
from cudaresolve.db.tables import LazyTables, pickled_tables, table_names
from cudaresolve.errors import InvalidCompatData, InvalidInput
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.core.versions import CudaVersion, DriverVersion
    from cudaresolve.db.cudamajor import CudaMajorRule
    from cudaresolve.db.ptx_isa import PtxIsa
    from cudaresolve.db.python_platforms import PythonPlatform
    from cudaresolve.db.read import Parts

__all__ = [
    "SHIPPED_LABEL",
    "Build",
    "CompatDB",
    "CudaRelease",
    "DriverGpu",
    "DriverSupport",
    "ForwardCompat",
    "GpuDriverCheck",
    "GpuListing",
    "GpuMatch",
    "GpuModel",
    "IndexFacts",
    "MatchKind",
    "PackageFacts",
    "PackageRelease",
    "PackageSummary",
    "Summary",
    "VariantInfo",
    "gpu_name_key",
    "load_compat",
    "shipped_path",
]

SHIPPED_LABEL = "compat.toml (shipped)"


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageSummary:
    """One package table in the summary."""

    name: str
    releases: int
    newest: str
    oldest: str
    variants: tuple[str, ...]
    unverified: int  # releases and builds marked ``verified = false``

    def to_dict(self) -> dict[str, Any]:
        return {
            "releases": self.releases,
            "newest": self.newest,
            "oldest": self.oldest,
            "variants": list(self.variants),
            "unverified": self.unverified,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """What ``db show`` and ``db check`` report: counts and ranges per table, and every unverified row."""

    schema_version: int
    snapshot_date: str | None
    cuda_releases: int
    cuda_newest: str | None
    cuda_oldest: str | None
    gpus: int
    variants: tuple[str, ...]
    packages: tuple[PackageSummary, ...]
    unverified_rows: int  # rows marked ``verified = false`` in every table, builds included
    checked: tuple[tuple[str, int], ...] = ()  # builds per provenance level (CHECK_LEVELS order)
    withdrawn: int = 0  # builds marked exists = false or broken = true
    majors: tuple[tuple[str, str, int, int], ...] = ()  # [[cuda-major]]/[[cudnn-major]] rows: ``tie_counts``

    @property
    def package_releases(self) -> int:
        return sum(p.releases for p in self.packages)

    def to_dict(self) -> dict[str, Any]:
        """The ``summary`` object of ``db show --json`` and ``db check --json``."""
        return {
            "schema_version": self.schema_version,
            "snapshot_date": self.snapshot_date,
            "cuda": {"releases": self.cuda_releases, "newest": self.cuda_newest, "oldest": self.cuda_oldest},
            "gpus": self.gpus,
            "variants": list(self.variants),
            "packages": {p.name: p.to_dict() for p in self.packages},
            "unverified_rows": self.unverified_rows,
            "checked": dict(self.checked),
            "withdrawn_builds": self.withdrawn,
            "majors": [{"names": n, "library": lib, "rows": c, "unverified": u} for n, lib, c, u in self.majors],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CompatDB:
    """The parsed, validated database and the questions the rest of the tool asks of it."""

    schema_version: int
    snapshot_date: str | None
    index: IndexFacts
    package_facts: PackageFacts
    cuda: tuple[CudaRelease, ...]
    forward_compat: tuple[ForwardCompat, ...]
    gpus: tuple[GpuModel, ...]
    variants: tuple[VariantInfo, ...]
    tables: tuple[tuple[str, tuple[PackageRelease, ...]], ...]  # (package, releases newest first)
    source: str = "compat.toml"
    driver_gpus: tuple[DriverGpu, ...] = ()  # the [[driver-gpu]] rows: which drivers know which GPUs
    cuda_majors: tuple[CudaMajorRule, ...] = ()  # the [[cuda-major]] rows: distributions tied to one CUDA major
    ptx_isa: tuple[PtxIsa, ...] = ()  # [[ptx-isa]]: the toolkit that writes each PTX ISA (``db.ptx_isa``)
    _packages: Mapping[str, tuple[PackageRelease, ...]] = field(init=False, repr=False, compare=False)
    _variant_by_name: Mapping[str, VariantInfo] = field(init=False, repr=False, compare=False)
    _cuda_by_version: Mapping[CudaVersion, CudaRelease] = field(init=False, repr=False, compare=False)
    _gpu_names: GpuNames = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # indexes derived from the fields, built once
        lazy = isinstance(self.tables, LazyTables)  # read back from the cache (``db.tables``)
        object.__setattr__(self, "_packages", self.tables if lazy else dict(self.tables))
        object.__setattr__(self, "_variant_by_name", {v.name: v for v in self.variants})
        object.__setattr__(self, "_cuda_by_version", {r.version: r for r in self.cuda})

    def __reduce__(self) -> tuple[Any, ...]:  # each package table pickled on its own (``db.tables``)
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.init and f.name != "tables"}
        return (_restored, (state, pickled_tables(self.tables), self._names()))  # the names index as built

    def _names(self) -> GpuNames:
        """The GPU names index, built when first asked for (or restored with a cached database)."""
        try:
            return self._gpu_names
        except AttributeError:  # not built yet
            names = GpuNames(self.gpus)
            object.__setattr__(self, "_gpu_names", names)
            return names

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "compat.toml", trusted: bool = False) -> CompatDB:
        """Validate ``data`` completely; raise one ``InvalidCompatData`` with every problem.

        ``trusted=True`` is for a file already validated (the shipped one, checked by the test
        suite and ``db check``): every row is still read and typed, but the checks across rows
        are skipped, which keeps start-up fast.
        """
        from cudaresolve.db.read import read_database  # only when built: a warm start unpickles the database

        return cls.from_parts(read_database(data, source=source, trusted=trusted), source=source)

    @classmethod
    def from_parts(cls, parts: Parts, *, source: str, tables: LazyTables | None = None) -> CompatDB:
        """The database of ``parts`` (``read.read_database``), its package tables ``tables`` when given."""
        return cls(schema_version=parts.schema_version, snapshot_date=parts.snapshot_date, index=parts.index,
            package_facts=parts.package_facts, cuda=parts.cuda, forward_compat=parts.forward_compat, gpus=parts.gpus,
            variants=parts.variants, tables=parts.packages if tables is None else tables,  # type: ignore[arg-type]
            source=source, driver_gpus=parts.driver_gpus, cuda_majors=parts.cuda_majors,
            ptx_isa=parts.ptx_isa)  # fmt: skip

    # -- facts of the [index] and [packages] tables ----------------------------------------
    @property
    def default_index(self) -> str:
        """The index of every package the database does not place elsewhere (PyPI's simple API)."""
        return self.index.default

    @property
    def pytorch_index_root(self) -> str:
        """The PyTorch index root; a variant's index is ``<root>/<variant>``."""
        return self.index.pytorch_root

    @property
    def jetson_wheels(self) -> str | None:
        """NVIDIA's source of CUDA wheels for Jetson, which the PyTorch index and PyPI do not serve."""
        return self.index.jetson_wheels

    @property
    def allowed_hosts(self) -> tuple[str, ...]:
        return self.index.allowed_hosts

    @property
    def assumed_glibc(self) -> str | None:
        """The glibc a declared Linux target is assumed to have (``manylinux_2_N`` wheels up to it fit)."""
        return self.index.manylinux_glibc

    def python_platform(self, name: str) -> PythonPlatform | None:
        """What uv's ``--python-platform NAME`` stands for (``[index.python-platform]``, else an
        ``ARCH-manylinux_2_N`` spelling); None for a name this database does not know."""
        from cudaresolve.db.python_platforms import parse_manylinux_name

        key = name.strip().lower()
        return next((p for p in self.index.python_platforms if p.name == key), None) or parse_manylinux_name(key)

    @property
    def python_platform_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.index.python_platforms)

    @property
    def assumed_macos(self) -> str | None:
        """The macOS version a declared Mac target is assumed to run."""
        return self.index.macos_version

    @property
    def anchor(self) -> str:
        """The package the solver pins first and why-not asks about when no context is given (torch)."""
        return self.package_facts.anchor

    def operating_systems(self, name: str) -> tuple[str, ...] | None:
        """The operating systems package ``name`` serves (``linux``, ``windows``, ``macos``); None: not said."""
        return self.package_facts.operating_systems(name)

    def cpu_package(self, name: str) -> str | None:
        """The PyPI project that is the CPU-only build of ``name`` (``[packages.cpu-package]``); None: none known."""
        return self.package_facts.cpu_package(name)

    @property
    def package_kinds(self) -> tuple[str, ...]:
        """Every package table the database may hold, in the order ``db show`` lists them ([[prebuilt]] last)."""
        known = self.package_facts.tables
        return (*known, *(n for n, _ in table_names(self.tables) if n not in known))

    # -- queries --------------------------------------------------------------------------
    def packages(self, name: str) -> tuple[PackageRelease, ...]:
        """Releases of ``name`` (canonical), newest first; empty for a package we know nothing of."""
        return self._packages.get(name, ())

    @property
    def package_names(self) -> tuple[str, ...]:
        """The package tables that have rows, in ``package_kinds`` order."""
        return tuple(name for name, filled in table_names(self.tables) if filled)

    def min_sm(self, name: str) -> ComputeCapability | None:
        """The lowest compute capability any release of ``name`` supports; None when a release states none."""
        floors = [r.min_sm for r in self.packages(name)]
        if not floors or any(f is None for f in floors):
            return None
        return min(f for f in floors if f is not None)

    def variant(self, name: str) -> VariantInfo | None:
        return self._variant_by_name.get(name)

    def cuda_release(self, version: CudaVersion) -> CudaRelease | None:
        return self._cuda_by_version.get(version)

    def find_gpu(self, name: str) -> GpuModel | None:
        """The one GPU ``name`` names (``db.gpu_names``: case, punctuation, vendor words, memory
        and form-factor words ignored), else None: unknown, ambiguous, or several GPUs."""
        return self._names().find(name)

    def match_gpu(self, name: str) -> GpuMatch:
        """What ``name`` names: one GPU, several candidates, several GPUs in a row, or none."""
        return self._names().match(name)

    def list_gpus(self, pattern: str | None = None) -> GpuListing:
        """The GPUs whose names hold ``pattern`` (normalised), or whose arch or cc it is; all without one."""
        return GpuListing(pattern=pattern, gpus=self._names().filter(pattern))

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

    def driver_supports_gpu(
        self,
        name: str,
        cc: ComputeCapability,
        driver: DriverVersion,
        *,
        datacenter: bool = False,
        tegra: bool = False,
        platform: str = "linux_x86_64",
    ) -> GpuDriverCheck:
        """Whether the kernel driver ``driver`` knows the GPU ``name`` (compute capability ``cc``):
        ``ok``, the lowest driver that does (``needed``) and the last branch that does
        (``last_branch``). A Jetson (``tegra``), or a GPU whose architecture has no
        ``[[driver-gpu]]`` row, is never refused."""
        model = self.find_gpu(name)
        arch = gpu_arch(model, cc, self.gpus, self.driver_gpus)
        if tegra or arch is None:
            return GpuDriverCheck(gpu=name, arch=arch, ok=True)
        row = match_row(self.driver_gpus, arch, cc, datacenter, model)
        branches = tuple(c.min_driver_linux.branch for c in self.cuda)
        return check_gpu(row, gpu=name, arch=arch, driver=driver, platform=platform, branches=branches)

    def forward_compat_for(self, cuda_major: int) -> ForwardCompat | None:
        return next((f for f in self.forward_compat if f.cuda_major == cuda_major), None)

    def summary(self) -> Summary:
        """Counts and ranges per table, and how many rows of every table are marked unverified."""
        packages: list[PackageSummary] = []
        for name in self.package_names:
            releases = self.packages(name)
            unverified = sum(not r.verified for r in releases)
            unverified += sum(b.marked_unverified for r in releases for b in r.builds)
            packages.append(PackageSummary(
                name=name,
                releases=len(releases),
                newest=str(releases[0].version),
                oldest=str(releases[-1].version),
                variants=tuple(sorted({b.variant for r in releases for b in r.builds})),
                unverified=unverified,
            ))
        builds = [b for n in self.package_names for r in self.packages(n) for b in r.builds]
        rows: tuple[CudaRelease | ForwardCompat | GpuModel | DriverGpu | VariantInfo, ...] = (
            *self.cuda, *self.forward_compat, *self.gpus, *self.driver_gpus, *self.variants
        )
        return Summary(
            schema_version=self.schema_version,
            snapshot_date=self.snapshot_date,
            cuda_releases=len(self.cuda),
            cuda_newest=str(max(r.version for r in self.cuda)) if self.cuda else None,
            cuda_oldest=str(min(r.version for r in self.cuda)) if self.cuda else None,
            gpus=len(self.gpus),
            variants=tuple(v.name for v in self.variants),
            packages=tuple(packages),
            unverified_rows=sum(not r.verified for r in rows) + sum(p.unverified for p in packages),
            checked=tuple((level, sum(b.checked == level for b in builds)) for level in CHECK_LEVELS),
            withdrawn=sum(len(r.withdrawn) for n in self.package_names for r in self.packages(n)),
            majors=tie_counts(self.cuda_majors),
        )


MAX_COMPAT_BYTES: Final = 16 * 1024 * 1024
"""A ``--compat`` file is read up to this many bytes (the shipped one is about 0.4 MB); a longer one is refused."""


def _read_bounded(path: str | Path, label: str) -> str:
    """The text of ``path``: at most ``MAX_COMPAT_BYTES`` read (a device such as /dev/zero never ends), UTF-8."""
    try:  # non-blocking: a FIFO is refused at once instead of waiting for a writer (a device is read up to the cap)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            if stat.S_ISFIFO(os.fstat(handle.fileno()).st_mode):
                raise OSError(errno.EINVAL, "a FIFO, not a regular file")
            raw = handle.read(MAX_COMPAT_BYTES + 1)
    except OSError as exc:
        raise InvalidInput(
            Text.of("db.unreadable", path=label, reason=literal(exc.strerror or str(exc))),
            hint=Text("db.unreadable.hint"),
        ) from exc
    if len(raw) > MAX_COMPAT_BYTES:
        raise InvalidCompatData([("", Text.of("db.too-large", limit=MAX_COMPAT_BYTES))], source=label)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidCompatData([("", Text.of("db.not-utf8", offset=exc.start))], source=label) from exc


def _restored(
    state: dict[str, Any], tables: tuple[tuple[str, bool, bytes | str], ...], names: GpuNames | None = None
) -> CompatDB:
    from cudaresolve.db.deferred import table_reader  # a table stored as its text (``db.deferred``)

    reader = table_reader(state["variants"], state["index"].default, state["source"])
    db = CompatDB(**state, tables=LazyTables(tables, reader))  # type: ignore[arg-type]
    if isinstance(names, GpuNames) and names.gpus == db.gpus:  # the index pickled with it: not built again
        object.__setattr__(db, "_gpu_names", names)
    return db


def shipped_path() -> Path:
    """The compat.toml inside the installed package."""
    return (Path(__file__).parent.parent / "data" / "compat.toml").resolve()


def load_compat(
    path: str | Path | None = None, *, validate: bool = False, cache_dir: Path | None = None, store: bool = True
) -> CompatDB:
    """Read ``path`` (always fully validated), or the database shipped inside the package.

    The shipped file is trusted (CI validates it): the checks across rows run only with
    ``validate``. The built value is cached under ``cache_dir`` (default: the user cache; ``db.cache``): at once,
    or with ``store`` False by the caller's ``db.deferred.stores_held`` (a lock: the entry pickled once, not twice).
    """
    if path is None:
        shipped = shipped_path()
        if shipped.is_file():  # an ordinary install or checkout

            if validate:
                text = _read_bounded(shipped, SHIPPED_LABEL)
                return CompatDB.from_dict(_parse_toml(text, SHIPPED_LABEL), source=SHIPPED_LABEL)
            from cudaresolve.db.deferred import build_deferred, load_shipped

            def build() -> CompatDB:  # package tables read when first asked for (``db.deferred``)
                parts, tables = build_deferred(_read_bounded(shipped, SHIPPED_LABEL), SHIPPED_LABEL)
                return CompatDB.from_parts(parts, source=SHIPPED_LABEL, tables=tables)

            cache = default_cache_dir() if cache_dir is None else cache_dir
            return load_shipped(shipped, cache, build, expect=CompatDB, store=store)
        else:  # a zipped or otherwise unusual install: ask importlib.resources
            from importlib.resources import files

            text = (files("cudaresolve") / "data" / "compat.toml").read_text(encoding="utf-8")
            data = _parse_toml(text, SHIPPED_LABEL)
        return CompatDB.from_dict(data, source=SHIPPED_LABEL, trusted=not validate)
    label = str(path)
    text = _read_bounded(path, label)
    return CompatDB.from_dict(_parse_toml(text, label), source=label)
