"""Driver, CUDA and Python versions: parsed from text, compared as numbers. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cudaresolve.errors import InvalidDriver, InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "CudaVersion", "DriverVersion", "parse_cuda_version", "parse_cutoff", "parse_driver", "parse_host_driver",
    "parse_python_version", "specifier_or_none",
]  # fmt: skip

# ASCII digits only: Python's \d and int() also take other scripts' digits (Arabic-Indic "470").
_DRIVER = re.compile(r"^[0-9]{2,4}(\.[0-9]{1,3}){0,2}$")
# Windows' own number for NVIDIA's display driver (Device Manager, WMI's Win32_VideoController.DriverVersion, a
# driver INF's DriverVer): its last five digits are NVIDIA's, 32.0.15.6636 = 566.36, 27.21.14.5122 = 451.22 (the
# encoding Mozilla's graphics blocklist and Unreal Engine's FGPUDriverInfo document).
_WINDOWS_DRIVER = re.compile(r"^[0-9]{1,2}\.[0-9]{1,2}\.[0-9]?([0-9])\.([0-9]{2})([0-9]{2})$")

_CUDA = re.compile(r"^([0-9]{1,2})\.([0-9]{1,2})(\.[0-9]{1,4})?$")

_PYTHON = re.compile(r"^3\.([0-9]{1,2})$")
_PYTHON_MICRO = re.compile(r"^[0-9]{1,3}$")

@dataclass(frozen=True, slots=True, order=True)
class DriverVersion:
    """An NVIDIA driver version such as ``470.129.06``; compared part by part as integers."""

    parts: tuple[int, ...]
    text: str = field(compare=False)

    def __str__(self) -> str:
        return self.text

    @property
    def branch(self) -> int:
        """The driver branch (``R470`` is 470)."""
        return self.parts[0]

def parse_driver(text: str) -> DriverVersion:
    """``"470.129.06"`` -> DriverVersion, and Windows' number of the same driver as NVIDIA's (``"32.0.15.6636"`` ->
    ``566.36``); anything else is ``InvalidDriver``."""
    raw = text.strip()
    windows = _WINDOWS_DRIVER.match(raw)
    if windows:
        branch, release = int(windows.group(1) + windows.group(2)), int(windows.group(3))
        return DriverVersion((branch, release), f"{branch}.{release:02d}")
    if not _DRIVER.match(raw):
        raise InvalidDriver(Text.of("core.bad-driver", text=repr(text)), hint=Text("core.bad-driver.hint"))
    return DriverVersion(tuple(int(p) for p in raw.split(".")), raw)

_BRANCH = re.compile(r"^[Rr]?([0-9]{2,4})$")


def parse_host_driver(text: str) -> DriverVersion:
    """The driver a host runs, as a user declares it: ``parse_driver``'s forms, never a branch alone (``570``,
    ``R570``). Releases of one branch differ in what they run (570.26 runs CUDA 12.8, 570.124.06 its Update 1), and
    ``570`` compared as a version is below every one of them, so it is refused, not read as ``570.0``."""
    branch = _BRANCH.match(text.strip())
    if branch:
        raise InvalidDriver(
            Text.of("core.driver-branch", text=repr(text), branch=branch.group(1)), hint=Text("core.driver-branch.hint")
        )
    return parse_driver(text)


@dataclass(frozen=True, slots=True, order=True)
class CudaVersion:
    """A CUDA toolkit version, major.minor (``12.8``). Never a driver version."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def tag(self) -> str:
        """PyTorch's variant tag for this toolkit: ``cu128``."""
        return f"cu{self.major}{self.minor}"

def parse_cuda_version(text: str) -> CudaVersion:
    """``"12.8"`` or ``"12.8.1"`` -> ``CudaVersion(12, 8)``."""
    match = _CUDA.match(text.strip())
    if not match:
        raise InvalidInput(Text.of("core.bad-cuda", text=repr(text)), hint=Text("core.bad-cuda.hint"))
    return CudaVersion(int(match.group(1)), int(match.group(2)))

def parse_python_version(text: str) -> str:
    """``"3.11"`` (or ``3.11.7``) -> ``"3.11"``."""
    raw = text.strip()
    parts = raw.split(".")
    short = ".".join(parts[:2])
    if raw.endswith("t") and _PYTHON.match(raw[:-1]):  # 3.13t: uv's name for a free-threaded build
        raise InvalidInput(Text.of("core.free-threaded", text=repr(text)), hint=Text("core.free-threaded.hint"))
    if not _PYTHON.match(short) or len(parts) > 3 or not all(_PYTHON_MICRO.match(p) for p in parts[1:]):
        raise InvalidInput(Text.of("core.bad-python", text=repr(text)), hint=Text("core.bad-python.hint"))
    return short


_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def parse_cutoff(text: str) -> datetime:
    """``--exclude-newer``: an RFC 3339 timestamp with its offset (``2025-06-01T12:00:00Z``), or a date
    (``2025-06-01``), which means the end of that day in UTC; the result carries its time zone."""
    from datetime import UTC, datetime, timedelta  # here: a run without --exclude-newer never needs it

    raw = text.strip()
    try:
        if _DATE.match(raw):
            day = datetime.fromisoformat(raw).replace(tzinfo=UTC)
            return day + timedelta(days=1) if day.date() < day.max.date() else day.max.replace(tzinfo=UTC)  # 9999-12-31
        found = datetime.fromisoformat(raw)
    except ValueError:
        found = None
    if found is None or found.tzinfo is None or not raw[:4].isdigit():
        raise InvalidInput(Text.of("core.bad-cutoff", text=repr(text[:60])), hint=Text("core.bad-cutoff.hint"))
    return found


def specifier_or_none(text: str | None) -> str | None:
    """``text`` when it is a version specifier (an index page's ``requires-python``), else None: pip ignores one
    that is not, and a lock must not carry it (no reader of PEP 751 takes it)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(text or "")
    except InvalidSpecifier:
        return None
    return text or None
