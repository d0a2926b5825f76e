"""Platform keys (wheel-tag spelling) and PEP 503 project names. Pure."""

from __future__ import annotations

import re
from typing import Final

from cudaresolve.errors import InvalidInput, UnsupportedPlatform
from cudaresolve.text.model import Text

__all__ = ["OPERATING_SYSTEMS", "PLATFORMS", "canonical_name", "is_project_name", "leading_name", "normalize_platform",
           "platform_os"]

#: Platform keys used in compat.toml and on a Target (wheel-tag spelling, OS and machine only).
PLATFORMS: Final = ("linux_x86_64", "linux_aarch64", "win_amd64", "macosx_arm64", "macosx_x86_64")

#: The operating systems a package may serve (compat.toml ``[packages.os]``), by platform-key prefix.
OPERATING_SYSTEMS: Final = {"linux": "linux", "win": "windows", "macosx": "macos"}


def platform_os(platform: str) -> str:
    """``linux_x86_64`` -> ``linux``, ``win_amd64`` -> ``windows``, ``macosx_arm64`` -> ``macos``."""
    return OPERATING_SYSTEMS.get(platform.split("_", 1)[0], platform)


def normalize_platform(text: str) -> str:
    """A wheel platform tag or key -> one of ``PLATFORMS``.

    ``manylinux_2_28_x86_64``, ``manylinux2014_x86_64`` and ``linux_x86_64`` all give
    ``linux_x86_64``; ``macosx_11_0_arm64`` gives ``macosx_arm64``.
    """
    raw = text.strip().lower().replace("-", "_")
    if raw in PLATFORMS:
        return raw
    if "musl" in raw:  # musllinux_1_2_x86_64, x86_64_unknown_linux_musl: a libc no GPU wheel is built for
        message = Text.of("core.musl-platform", text=repr(text[:80]))
        raise UnsupportedPlatform(message, hint=Text("core.musl-platform.hint"))
    for machine in ("x86_64", "aarch64", "arm64", "amd64"):
        if not raw.endswith(machine):
            continue
        if raw.startswith(("manylinux", "linux")) and machine in ("x86_64", "aarch64"):
            return f"linux_{machine}"
        if raw.startswith("macosx") and machine in ("arm64", "x86_64"):
            return f"macosx_{machine}"
        if raw.startswith("win") and machine == "amd64":
            return "win_amd64"
    raise InvalidInput(
        Text.of("core.bad-platform", text=repr(text)), hint=Text.of("core.bad-platform.hint", platforms=PLATFORMS)
    )

_SEPARATORS = re.compile(r"[-_.]+")

def canonical_name(name: str) -> str:
    """PEP 503 normalised project name (``Flashinfer_Python`` -> ``flashinfer-python``).

    The same rule as ``packaging.utils.canonicalize_name``, without importing ``packaging.tags``
    (about 16 ms of start-up) on paths that need nothing else from it.
    """
    return _SEPARATORS.sub("-", name).lower()


_LEADING_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
#: PEP 508's project name, at most 202 characters (a bound, not a fact).
_PROJECT_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,200}[A-Za-z0-9])?")


def is_project_name(text: str) -> bool:
    """Whether ``text`` is a project name as PEP 508 spells one (any case and separators), within the bound."""
    return _PROJECT_NAME.fullmatch(text) is not None


def leading_name(requirement: str) -> str | None:
    """The normalised project name a requirement line starts with, read without parsing the line (which may be
    invalid past it); None when it starts with no name."""
    found = _LEADING_NAME.match(requirement)
    return canonical_name(found[1]) if found is not None else None
