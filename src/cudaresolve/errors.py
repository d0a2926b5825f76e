"""The whole exception tree of cudaresolve. Pure.

    CudaResolveError(Exception)          code, message, hint
    ├── InvalidInput(ValueError)         "invalid-input"        bad flag, spec or requirement
    │   ├── InvalidArch                  "invalid-arch"         "sm_9x", "8.z"
    │   ├── InvalidDriver                "invalid-driver"       "abc"
    │   └── UnknownGpu                   "unknown-gpu"          a name the database lacks
    ├── InvalidCompatData(ValueError)    "invalid-compat-data"  .problems: [(path, message)]
    ├── InvalidLockfile(ValueError)      "invalid-lockfile"
    ├── InvalidBinary(ValueError)        "invalid-binary"       corrupt ELF or fatbin
    ├── DetectionError                   "nvml-failed"          NVML present but failing
    ├── IndexUnavailable                 "index-unavailable"    network or index failure
    ├── NoSolution                       "no-solution"          .findings
    └── PipFailed                        "pip-failed"           .returncode

Exceptions carry data only; ``render`` lays them out. Nothing here imports the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CudaResolveError",
    "DetectionError",
    "IndexUnavailable",
    "InvalidArch",
    "InvalidBinary",
    "InvalidCompatData",
    "InvalidDriver",
    "InvalidInput",
    "InvalidLockfile",
    "NoSolution",
    "PipFailed",
    "UnknownGpu",
]


class CudaResolveError(Exception):
    """Base of every error the CLI turns into a one-line message and an exit code."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` object of the JSON contract (design section 4)."""
        return {"code": self.code, "message": self.message, "hint": self.hint, "findings": []}


class InvalidInput(CudaResolveError, ValueError):
    code = "invalid-input"


class InvalidArch(InvalidInput):
    code = "invalid-arch"


class InvalidDriver(InvalidInput):
    code = "invalid-driver"


class UnknownGpu(InvalidInput):
    code = "unknown-gpu"


class InvalidCompatData(CudaResolveError, ValueError):
    """Every problem found in a compatibility database, each with a dotted path."""

    code = "invalid-compat-data"

    def __init__(self, problems: Sequence[tuple[str, str]], *, source: str = "compat.toml") -> None:
        self.problems = list(problems)
        self.source = source
        count = len(self.problems)
        first = f"{self.problems[0][0]}: {self.problems[0][1]}" if self.problems else ""
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(
            f"{source} has {count} problem{'s' if count != 1 else ''}: {first}{more}",
            hint="run 'cudaresolve db check PATH' to list them all",
        )

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["problems"] = [{"path": p, "message": m} for p, m in self.problems]
        return data


class InvalidLockfile(CudaResolveError, ValueError):
    code = "invalid-lockfile"


class InvalidBinary(CudaResolveError, ValueError):
    code = "invalid-binary"


class DetectionError(CudaResolveError):
    code = "nvml-failed"
    exit_code = 2


class IndexUnavailable(CudaResolveError):
    code = "index-unavailable"
    exit_code = 2


class NoSolution(CudaResolveError):
    """Nothing fits; ``findings`` are ordered most basic cause first (explain.py)."""

    code = "no-solution"

    def __init__(self, message: str, *, findings: Sequence[Any] = (), hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.findings = list(findings)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["findings"] = [f.to_dict() if hasattr(f, "to_dict") else dict(f) for f in self.findings]
        return data


class PipFailed(CudaResolveError):
    code = "pip-failed"

    def __init__(self, returncode: int, *, command: Sequence[str] = ()) -> None:
        super().__init__(f"pip exited with code {returncode}", hint="read pip's output above")
        self.returncode = returncode
        self.command = list(command)

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return self.returncode
