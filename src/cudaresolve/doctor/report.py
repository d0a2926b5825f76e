"""What ``doctor`` reads and what it reports: frozen values and their JSON. Pure.

``environment.py`` fills an ``Environment`` from disk; ``check.diagnose`` turns it into a
``DoctorReport``. Sentences are ``Text`` values (a catalogue key and its fields); ``to_dict``
puts them in the JSON as they are and ``render`` formats them in the chosen language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cudaresolve.binaries.report import BinaryReport
    from cudaresolve.core.archs import ComputeCapability, Coverage
    from cudaresolve.core.versions import CudaVersion
    from cudaresolve.db.database import DriverSupport
    from cudaresolve.doctor.ptxjit import StalePtx
    from cudaresolve.doctor.smoke import RunReport
    from cudaresolve.target.model import Target
    from cudaresolve.text.model import Text

__all__ = [
    "DoctorReport",
    "Environment",
    "InstalledPackage",
    "LibraryCheck",
    "PackageCheck",
    "Problem",
    "Pt2Check",
    "RuntimeCheck",
    "RuntimePackage",
]


# -- facts read from disk (environment.py fills these) ----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class InstalledPackage:
    """One distribution of the environment: read from its files, never imported."""

    name: str  # canonical: "fbgemm-gpu"
    version: str  # as installed, with any local tag: "2.7.1+cu118"
    variant: str | None = None  # "cu118", "cpu", "rocm6.2"; None when nothing on disk says
    libraries: tuple[BinaryReport, ...] = ()  # its binaries with GPU code (or a read error)
    record_missing: bool = False  # no RECORD: its files could not be listed
    bundles_runtime: bool = False  # its RECORD lists a libcudart of its own (older torch wheels)


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimePackage:
    """An ``nvidia-cuda-runtime-cu12`` style package: 12.6.77 ships the CUDA 12.6 runtime."""

    name: str
    version: str
    cuda: CudaVersion


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    paths: tuple[str, ...]  # the site-packages directories read, in import order
    packages: tuple[InstalledPackage, ...] = ()
    runtimes: tuple[RuntimePackage, ...] = ()
    cuda_packages: tuple[tuple[str, str], ...] = ()  # every nvidia-* distribution: (name, version)
    python: str | None = None  # "3.11", when the interpreter was asked
    damaged: tuple[tuple[str, str], ...] = ()  # (dist-info folder, what could not be read) per damaged dist


# -- the report -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One finding: a reason code (``text/en/reason.toml``) or a doctor code, its sentence and its fixes."""

    code: str
    text: Text
    severity: str = "error"  # "error" makes the environment not ok; "warning" does not
    fixes: tuple[Text, ...] = ()
    package: str | None = None
    required: str | None = None
    found: str | None = None
    libraries: tuple[str, ...] = ()
    symbols: tuple[tuple[str, str | None], ...] = ()  # abi-mismatch: (mangled, demangled) of the first missing

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> dict[str, Any]:
        """``message`` and ``fixes`` hold ``Text`` values that render formats."""
        data: dict[str, Any] = {"code": self.code, "message": self.text, "severity": self.severity}
        for key in ("package", "required", "found"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.libraries:
            data["libraries"] = list(self.libraries)
        if self.symbols:
            data["symbols"] = [{"mangled": m, "demangled": d} for m, d in self.symbols]
        data["fixes"] = list(self.fixes)
        return data


def _coverage_dict(pairs: Iterable[tuple[ComputeCapability, Coverage]]) -> dict[str, str]:
    return {str(cc): cov.value for cc, cov in pairs}


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryCheck:
    path: str
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    coverage: tuple[tuple[ComputeCapability, Coverage], ...] = ()
    has_code: bool = False
    arch_specific: bool = False  # only sm_XYa code: decides nothing while other libraries exist
    stale_ptx: tuple[StalePtx, ...] = ()  # PTX whose ISA is newer than the driver JIT-compiles (``ptxjit``)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "sass": list(self.sass), "ptx": list(self.ptx),
                                "coverage": _coverage_dict(self.coverage)}
        if self.arch_specific:
            data["arch_specific"] = True
        if self.stale_ptx:
            data["ptx_too_new"] = [s.to_dict() for s in self.stale_ptx]
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageCheck:
    name: str
    version: str
    variant: str | None
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    coverage: tuple[tuple[ComputeCapability, Coverage], ...] = ()  # empty: no GPU code at all
    libraries: tuple[LibraryCheck, ...] = ()
    problems: tuple[Problem, ...] = ()
    notes: tuple[Text, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "version": self.version, "variant": self.variant,
            "sass": list(self.sass), "ptx": list(self.ptx), "coverage": _coverage_dict(self.coverage),
            "libraries": [lib.to_dict() for lib in self.libraries],
            "problems": [p.to_dict() for p in self.problems],
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeCheck:
    name: str
    version: str
    cuda: CudaVersion
    support: DriverSupport | None  # None: driver unknown, or a CUDA the database lacks

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "cuda": str(self.cuda),
                "driver_support": self.support.value if self.support else None}


@dataclass(frozen=True, slots=True, kw_only=True)
class Pt2Check:
    path: str
    devices: tuple[str, ...] = ()
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "devices": list(self.devices), "sass": list(self.sass), "ptx": list(self.ptx),
                "problems": [p.to_dict() for p in self.problems]}


@dataclass(frozen=True, slots=True, kw_only=True)
class DoctorReport:
    target: Target
    paths: tuple[str, ...] = ()
    packages: tuple[PackageCheck, ...] = ()
    runtimes: tuple[RuntimeCheck, ...] = ()
    cuda_packages: tuple[tuple[str, str], ...] = ()
    pt2: tuple[Pt2Check, ...] = ()
    problems: tuple[Problem, ...] = ()  # environment-level: runtime vs driver, arch lists
    notes: tuple[Text, ...] = ()
    run: RunReport | None = None  # ``doctor --run``: the operations run on each GPU

    @property
    def all_problems(self) -> tuple[Problem, ...]:
        nested = [p for pkg in self.packages for p in pkg.problems] + [p for c in self.pt2 for p in c.problems]
        return (*nested, *self.problems)

    @property
    def ok(self) -> bool:
        return not any(p.is_error for p in self.all_problems) and (self.run is None or self.run.ok)

    def to_dict(self) -> dict[str, Any]:
        """``doctor --json``: the contract's keys plus extra ones; sentences are ``Text`` values."""
        fixes = list(dict.fromkeys(f for p in self.all_problems for f in p.fixes))
        return {
            "target": self.target.to_dict(), "ok": self.ok, "site_packages": list(self.paths),
            "packages": [p.to_dict() for p in self.packages],
            "runtimes": [r.to_dict() for r in self.runtimes],
            "cuda_packages": [{"name": n, "version": v} for n, v in self.cuda_packages],
            "pt2": [c.to_dict() for c in self.pt2],
            "problems": [p.to_dict() for p in self.problems],
            "notes": list(self.notes),
            "fixes": fixes,
            **(self.run.to_dict() if self.run is not None else {}),
        }
