"""The compatibility database and the questions the tool asks of it, and its one reader. Pure plus one reader.

``CompatDB.from_dict`` takes any mapping (the parsed ``compat.toml``) and validates it
completely (``compat_read``); the row types live in ``compat_rows`` and are re-exported here.
``load_compat`` is the only function that touches a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.db.read import SCHEMA_MAJOR, read_database, read_package_rows
from cudaresolve.db.rows import (
    PACKAGE_KINDS,
    Build,
    CudaRelease,
    DriverSupport,
    ForwardCompat,
    GpuModel,
    PackageRelease,
    VariantInfo,
    gpu_name_key,
)
from cudaresolve.errors import InvalidCompatData

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cudaresolve.core.versions import CudaVersion, DriverVersion

__all__ = [
    "PACKAGE_KINDS",
    "SCHEMA_MAJOR",
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
        source: str = "compat.toml",
    ) -> None:
        self.source = source
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
        parts = read_database(data, source=source, lazy=lazy)
        return cls(
            schema_version=parts.schema_version,
            snapshot_date=parts.snapshot_date,
            cuda=parts.cuda,
            forward_compat=parts.forward_compat,
            gpus=parts.gpus,
            variants=parts.variants,
            packages=parts.packages,
            raw_packages=parts.raw_packages,
            source=source,
        )

    # -- queries --------------------------------------------------------------------------
    def packages(self, name: str) -> tuple[PackageRelease, ...]:
        """Releases of ``name`` (canonical), newest first; empty for a package we know nothing of."""
        if name not in self._packages and name in self._raw_packages:
            rows = self._raw_packages.pop(name)
            self._packages[name] = read_package_rows(name, rows, self._variant_by_name, source=self.source)
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
    from cudaresolve.index.http_cache import default_cache_dir

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
