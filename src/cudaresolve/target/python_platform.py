"""``--platform`` and ``--python-platform``: one parser for both, giving the target's platform, glibc and macOS. Pure.

Both flags take every spelling: uv's names (``x86_64-unknown-linux-gnu``, ``aarch64-apple-darwin``;
facts of uv's documentation, kept in compat.toml's ``[index.python-platform]``), ``ARCH-manylinux_2_N``,
wheel platform tags (``manylinux_2_17_x86_64``, ``manylinux2014_aarch64``, ``macosx_11_0_arm64``,
``win_amd64``) and the database's platform keys (``linux_x86_64``). A tag that names a glibc or
macOS version keeps it: ``manylinux_2_17_x86_64`` is Linux on x86_64 with glibc 2.17, so a wheel
that needs glibc 2.28 does not fit. A musl platform (``musllinux_1_2_x86_64``,
``x86_64-unknown-linux-musl``) is refused with ``unsupported-platform``, never read as glibc Linux.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from cudaresolve.core.platforms import PLATFORMS, normalize_platform
from cudaresolve.db.python_platforms import PythonPlatform
from cudaresolve.errors import InvalidInput, UnsupportedPlatform
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.db.database import CompatDB

__all__ = ["declared_platform", "parse_platform"]

_PEP600: Final = re.compile(r"manylinux_2_([0-9]{1,2})_(x86_64|aarch64)")
# PEP 513/571/599 names and the glibc each stands for (PEP 600's table of the legacy aliases)
_LEGACY: Final = re.compile(r"manylinux(1|2010|2014)_(x86_64|aarch64)")
_LEGACY_GLIBC: Final = {"1": "2.5", "2010": "2.12", "2014": "2.17"}
_MACOS: Final = re.compile(r"macosx_([0-9]{1,2})_([0-9]{1,2})_(arm64|x86_64|universal2)")


def parse_platform(text: str, db: CompatDB, *, flag: str = "--platform") -> PythonPlatform:
    """What ``text`` names (module docstring); an unknown spelling is ``InvalidInput``, musl ``UnsupportedPlatform``."""
    raw = text.strip()
    key = raw.lower()
    if "musl" in key:
        normalize_platform(raw)  # raises UnsupportedPlatform, whatever the spelling
    named = db.python_platform(key)
    if named is not None:
        return named
    tag = key.replace("-", "_").replace(".", "_")
    if found := _PEP600.fullmatch(tag):
        minor, arch = found.groups()
        return PythonPlatform(name=raw, platform=f"linux_{arch}", glibc=f"2.{int(minor)}")
    if found := _LEGACY.fullmatch(tag):
        alias, arch = found.groups()
        return PythonPlatform(name=raw, platform=f"linux_{arch}", glibc=_LEGACY_GLIBC[alias])
    if found := _MACOS.fullmatch(tag):
        major, minor, arch = found.groups()
        machine = "arm64" if arch == "universal2" else arch
        return PythonPlatform(name=raw, platform=f"macosx_{machine}", macos=f"{int(major)}.{int(minor)}")
    try:
        return PythonPlatform(name=raw, platform=normalize_platform(raw))
    except UnsupportedPlatform:
        raise
    except InvalidInput:
        raise InvalidInput(
            Text.of("target.unknown-platform", flag=flag, name=repr(raw[:80])),
            hint=Text.of("target.unknown-platform.hint", names=db.python_platform_names, keys=PLATFORMS),
        ) from None


def declared_platform(platform_flag: str | None, python_platform: str | None, db: CompatDB) -> PythonPlatform | None:
    """``--platform`` and ``--python-platform`` together: None when neither is given; both given must
    name one platform, and a version (glibc, macOS) that only one of them names is kept."""
    first = parse_platform(platform_flag, db) if platform_flag else None
    second = parse_platform(python_platform, db, flag="--python-platform") if python_platform else None
    if first is None or second is None:
        return first or second
    if first.platform != second.platform:
        raise InvalidInput(
            Text.of("target.platform-conflict", platform=platform_flag, name=second.name, key=second.platform),
            hint=Text("target.platform-conflict.hint"),
        )
    for field in ("glibc", "macos"):
        one, other = getattr(first, field), getattr(second, field)
        if one and other and one != other:
            raise InvalidInput(
                Text.of("target.platform-conflict", platform=platform_flag, name=second.name, key=f"{field} {other}"),
                hint=Text("target.platform-conflict.hint"),
            )
    return PythonPlatform(
        name=second.name, platform=second.platform, glibc=second.glibc or first.glibc, macos=second.macos or first.macos
    )
