"""The whole exception tree of cudaresolve. Pure.

    CudaResolveError(Exception)          code, message, hint
    ├── InvalidInput(ValueError)         "invalid-input"        bad flag, spec or requirement
    │   ├── InvalidArch                  "invalid-arch"         "sm_9x", "8.z"
    │   ├── InvalidDriver                "invalid-driver"       "abc"
    │   ├── UnknownGpu                   "unknown-gpu"          a name the database lacks
    │   ├── UnsupportedReference         "unsupported-reference" a direct URL that is no wheel (sdist, VCS, dir)
    │   ├── UnsupportedPlatform          "unsupported-platform" a platform no GPU wheel is built for (musl)
    │   ├── NoEnvironment                "no-environment"       install: no VIRTUAL_ENV, no ./.venv
    │   └── UsageError                   "usage"                flags argparse refuses (exit 2)
    ├── InvalidCompatData(ValueError)    "invalid-compat-data"  .problems: [(path, message)]
    ├── InvalidLockfile(ValueError)      "invalid-lockfile"
    │   └── IncompleteLock               "lock-incomplete"      a locked wheel needs what the lock lacks
    ├── InvalidBinary(ValueError)        "invalid-binary"       corrupt ELF or fatbin
    ├── DetectionError                   "nvml-failed"          NVML present but failing
    ├── IndexUnavailable                 "index-unavailable"    network or index failure
    ├── HashMismatch                     "hash-mismatch"        a file's bytes differ from the hash given
    ├── DynamicMetadata                  "dynamic-metadata"     an sdist's dependencies known only by building it
    ├── NoSolution                       "no-solution"          .findings
    ├── InternalError                    "internal-error"       an unexpected exception (a bug)
    ├── NoKnownError                     "no-known-error"       explain-error found no known message
    └── PipFailed                        "pip-failed"           .returncode

Exceptions carry data only: a ``Text`` message and hint that ``render`` formats in the user's
language. ``str(err)``, ``err.message`` and ``err.hint`` give the English words (logs, tracebacks,
tests). This module imports only ``text``, the one layer below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CudaResolveError",
    "DetectionError",
    "DynamicMetadata",
    "HashMismatch",
    "IncompleteLock",
    "IndexUnavailable",
    "InternalError",
    "InvalidArch",
    "InvalidBinary",
    "InvalidCompatData",
    "InvalidDriver",
    "InvalidInput",
    "InvalidLockfile",
    "NoEnvironment",
    "NoKnownError",
    "NoSolution",
    "PipFailed",
    "UnknownGpu",
    "UnsupportedPlatform",
    "UnsupportedReference",
    "UsageError",
]


class CudaResolveError(Exception):
    """Base of every error the CLI turns into a one-line message and an exit code."""

    code: ClassVar[str] = "error"
    exit_code: ClassVar[int] = 1

    def __init__(self, message: Text, *, hint: Text | None = None) -> None:
        self.text = message
        self.hint_text = hint
        super().__init__(self.text)

    def __str__(self) -> str:
        return self.message

    @property
    def message(self) -> str:
        """The message in English."""
        from cudaresolve.text.catalogue import format_text

        return format_text(self.text)

    @property
    def hint(self) -> str | None:
        """The hint in English, if any."""
        from cudaresolve.text.catalogue import format_text

        return format_text(self.hint_text) if self.hint_text is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` object of the JSON contract (README, "Exit codes and JSON"); render formats its Texts."""
        return {"code": self.code, "message": self.text, "hint": self.hint_text, "findings": []}


class InvalidInput(CudaResolveError, ValueError):
    code = "invalid-input"


class InvalidArch(InvalidInput):
    code = "invalid-arch"


class InvalidDriver(InvalidInput):
    code = "invalid-driver"


class UnknownGpu(InvalidInput):
    code = "unknown-gpu"


class UnsupportedPlatform(InvalidInput):
    """A real platform the database has no wheels for (musllinux): refused, never read as another."""

    code = "unsupported-platform"


class UnsupportedReference(InvalidInput):
    """A direct reference cudaresolve cannot lock: an sdist, a VCS or directory URL, another scheme."""

    code = "unsupported-reference"


class NoEnvironment(InvalidInput):
    """``install`` without ``--python``: no active virtual environment, no ``./.venv`` (or, with ``--system``, no
    Python on PATH)."""

    code = "no-environment"


class UsageError(InvalidInput):
    """Flags the parser refuses: exit 2, as argparse, pip and uv exit on a usage error."""

    code = "usage"
    exit_code = 2


class InvalidCompatData(CudaResolveError, ValueError):
    """Every problem found in a compatibility database, each with a dotted path."""

    code = "invalid-compat-data"

    def __init__(self, problems: Sequence[tuple[str, Text]], *, source: str = "compat.toml") -> None:
        self.problems = list(problems)
        self.source = source
        first = Text.of("db.problem-at", path=self.problems[0][0], problem=self.problems[0][1]) if self.problems else ""
        super().__init__(
            Text.of("error.compat-problems" if len(self.problems) > 1 else "error.compat-problem",
                    source=source, count=len(self.problems), first=first, more=len(self.problems) - 1),
            hint=Text("error.compat-problems.hint"),
        )

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["problems"] = [{"path": p, "message": m} for p, m in self.problems]
        return data


class InvalidLockfile(CudaResolveError, ValueError):
    code = "invalid-lockfile"


class IncompleteLock(InvalidLockfile):
    """A locked file needs, on the target interpreter, a package the lock does not hold (install follows no
    dependency, so the lock is refused before anything is installed)."""

    code = "lock-incomplete"


class InvalidBinary(CudaResolveError, ValueError):
    code = "invalid-binary"


class DetectionError(CudaResolveError):
    code = "nvml-failed"
    exit_code = 2


class IndexUnavailable(CudaResolveError):
    code = "index-unavailable"
    exit_code = 2


class BadMetadata(IndexUnavailable):
    """A release's core metadata that was read but cannot be used (a malformed field, another project's): pip
    and uv pass such a release over for another."""


class HashMismatch(CudaResolveError):
    """A downloaded file whose hash differs from the one its URL or index gave: never locked or installed."""

    code = "hash-mismatch"


class DynamicMetadata(CudaResolveError):
    """A release with only an sdist whose PKG-INFO does not promise its dependencies (PEP 643)."""

    code = "dynamic-metadata"


class NoSolution(CudaResolveError):
    """Nothing fits; ``findings`` are ordered most basic cause first (explain.py)."""

    code = "no-solution"

    def __init__(self, message: Text, *, findings: Sequence[Any] = (), hint: Text | None = None) -> None:
        super().__init__(message, hint=hint)
        self.findings = list(findings)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["findings"] = [f.to_dict() if hasattr(f, "to_dict") else dict(f) for f in self.findings]
        return data


class InternalError(CudaResolveError):
    """A bug: an exception cudaresolve did not expect. ``--debug`` shows its traceback instead."""

    code = "internal-error"
    exit_code = 2

    def __init__(self, exc: BaseException) -> None:
        super().__init__(
            Text.of("error.internal", kind=type(exc).__name__, detail=literal(str(exc))),
            hint=Text("error.internal.hint"),
        )


class NoKnownError(CudaResolveError):
    """The text holds no known error signature (exit 1, with a hint to run ``doctor``)."""

    code = "no-known-error"


class PipFailed(CudaResolveError):
    code = "pip-failed"

    def __init__(self, returncode: int, *, command: Sequence[str] = (), index: str = "", tool: str = "pip") -> None:
        """``index``: the index the failed run used ("" for none: it installed from local files); ``tool``: the
        installer that ran (``pip`` or ``uv``: the code stays ``pip-failed``)."""
        if index:
            super().__init__(Text.of("error.pip-failed.index", code=returncode, index=index, tool=tool),
                             hint=Text.of("error.pip-failed.index.hint", index=index, tool=tool))
        else:
            super().__init__(Text.of("error.pip-failed", code=returncode, tool=tool),
                             hint=Text.of("error.pip-failed.hint", tool=tool))
        self.returncode = returncode
        self.command = list(command)
        self.index = index

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return self.returncode
