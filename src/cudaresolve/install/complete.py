"""The locks found complete for an interpreter, remembered in the user cache. Does I/O: one empty file per verdict.

``closure.unmet`` is a pure function of the locked packages, each one's ``Requires-Dist`` (read from its
hash-checked wheel, or from the installed copy of a package kept as it is) and the interpreter's marker
environment. When it finds nothing missing, an empty file named by the sha256 of those inputs is kept
(``COMPLETE``, the newest ``_KEEP``), so that installing the same lock into another environment of the same
interpreter reads no wheel's METADATA and no requirement again. Only a complete verdict is kept: an incomplete
lock is refused, and checked again on every try. A package to install whose requirements a hash does not fix
(a local folder, an sdist, a file without a sha256) leaves the verdict unkept: checked every time.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Final

from cudaresolve.resolve.model import FileKind

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence
    from pathlib import Path

    from cudaresolve.lock.model import Lock

__all__ = ["COMPLETE", "complete_key", "known_complete", "remember_complete"]

#: The folder under the user cache holding the complete verdicts.
COMPLETE: Final = "complete-locks-v1"
_KEEP: Final = 256
_NAMES: Final = re.compile(r"[0-9a-f]{64}")


def complete_key(
    lock: Lock, installing: Collection[str], kept: Mapping[str, Sequence[str]], markers: Mapping[str, str]
) -> str | None:
    """The sha256 naming ``unmet``'s inputs: each locked package (name, version and, for one in ``installing``, its
    file's sha256; for one kept, its installed ``Requires-Dist`` from ``kept``), the marker environment and the
    version of ``packaging`` that evaluates them. None when a package to install is not a wheel with a sha256."""
    import packaging

    digest = hashlib.sha256(f"closure-v1\0{packaging.__version__}\0".encode())
    for package in lock.packages:
        if package.name in installing:
            if not package.sha256 or package.kind not in (FileKind.WHEEL, FileKind.ARCHIVE):
                return None
            part: tuple[str, ...] = ("install", package.name, package.version, package.sha256)
        else:
            part = ("kept", package.name, package.version, *kept.get(package.name, ()))
        digest.update("\0".join(part).encode() + b"\1")
    for key, value in sorted(markers.items()):
        digest.update(f"{key}\0{value}\1".encode())
    return digest.hexdigest()


def known_complete(root: Path, key: str | None) -> bool:
    """Whether the verdict ``key`` was found complete before (``root``: the user cache)."""
    return key is not None and (root / COMPLETE / key).is_file()


def remember_complete(root: Path, key: str | None) -> None:
    """Keep the verdict ``key`` as complete; a cache that cannot be written is skipped (checked again next time)."""
    if key is None:
        return
    from cudaresolve.core.files import keep_newest, make_cache_dir, write_private_atomic

    folder = root / COMPLETE
    try:
        make_cache_dir(folder)
        write_private_atomic(folder / key, b"")
        keep_newest(folder, _KEEP, _NAMES, spare=key)
    except OSError:
        return
