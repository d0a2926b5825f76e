"""``--python-platform NAME`` (uv's spelling) as the target's platform, glibc and macOS version. Pure.

The names are facts of uv's documentation, kept in compat.toml (``[index.python-platform]``,
``CompatDB.python_platform``); ``ARCH-manylinux_2_N`` carries its glibc in the name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.core.platforms import normalize_platform
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.db.database import CompatDB
    from cudaresolve.db.python_platforms import PythonPlatform

__all__ = ["named_platform"]


def named_platform(name: str, platform_flag: str | None, db: CompatDB) -> PythonPlatform:
    """What ``name`` stands for; an unknown name, or one that contradicts ``--platform``, is ``InvalidInput``."""
    named = db.python_platform(name)
    if named is None:
        raise InvalidInput(
            Text.of("target.unknown-python-platform", name=repr(name[:80])),
            hint=Text.of("target.unknown-python-platform.hint", names=db.python_platform_names),
        )
    if platform_flag and normalize_platform(platform_flag) != named.platform:
        raise InvalidInput(
            Text.of("target.platform-conflict", platform=platform_flag, name=named.name, key=named.platform),
            hint=Text("target.platform-conflict.hint"),
        )
    return named
