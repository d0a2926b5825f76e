"""The checks a lock passed on an interpreter, remembered in the user cache. Does I/O: one empty file per verdict.

Two checks before an install are pure functions of what they read, and cost more than the rest of a warm
install's own work (``packaging``'s marker and specifier modules alone are about 40 ms to import):

* ``closure.unmet``: of the locked packages, each one's ``Requires-Dist`` (read from its hash-checked wheel,
  or from the installed copy of a package kept as it is) and the interpreter's marker environment
  (``closure_key``);
* ``verify.check_environment``: of the lock's ``requires-python`` and ``environments`` and that marker
  environment (``environment_key``).

When one passes, an empty file named by the sha256 of its inputs (and of the ``packaging`` version that
evaluated them) is kept in ``VERDICTS`` (the newest ``_KEEP``), so that installing the same lock into another
environment of the same interpreter checks neither again. Only a pass is kept: a lock that fails is refused,
and checked again on every try. A package to install whose requirements a hash does not fix (a local folder,
an sdist, a file without a sha256) leaves the closure verdict unkept: checked every time.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from cudaresolve.core.digest import sha256_hex
from cudaresolve.resolve.model import FileKind

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence
    from pathlib import Path

    from cudaresolve.lock.model import Lock

__all__ = [
    "VERDICTS", "check_closure", "check_once", "closure_key", "environment_key", "known", "remember", "wheels_key",
]  # fmt: skip

#: The folder under the user cache holding the verdicts.
VERDICTS: Final = "install-verdicts-v1"
_KEEP: Final = 256
_NAMES: Final = re.compile(r"[0-9a-f]{64}")


def closure_key(
    lock: Lock, installing: Collection[str], kept: Mapping[str, Sequence[str]], markers: Mapping[str, str]
) -> str | None:
    """The sha256 naming ``unmet``'s inputs: each locked package (name, version and, for one in ``installing``, its
    file's sha256; for one kept, its installed ``Requires-Dist`` from ``kept``), the marker environment and the
    version of ``packaging`` that evaluates them. None when a package to install is not a wheel with a sha256."""
    parts: list[list[str]] = []
    for package in lock.packages:
        if package.name in installing:
            if not package.sha256 or package.kind not in (FileKind.WHEEL, FileKind.ARCHIVE):
                return None
            parts.append(["install", package.name, package.version, package.sha256])
        else:
            parts.append(["kept", package.name, package.version, *kept.get(package.name, ())])
    return _key("closure-v1", parts, markers)


def environment_key(lock: Lock, markers: Mapping[str, str]) -> str:
    """The sha256 naming ``check_environment``'s inputs: the lock's ``requires-python`` and ``environments``, its
    packages' own ``requires-python``, the marker environment and the version of ``packaging`` that evaluates them."""
    own = sorted({p.requires_python for p in lock.packages if p.requires_python})
    return _key("environment-v2", [lock.requires_python, list(lock.environments), own], markers)


def wheels_key(names: list[str], platform: str, glibc: str | None, markers: Mapping[str, str]) -> str:
    """The sha256 naming ``install._check_wheels``' inputs: the wheels' file names and the interpreter."""
    return _key("wheels-fit-v1", [names, platform, glibc], markers)


def _key(kind: str, parts: object, markers: Mapping[str, str]) -> str:
    """The sha256 of one JSON text holding all of a check's inputs (JSON: no two inputs encode alike)."""
    import json

    import packaging

    text = json.dumps([kind, packaging.__version__, parts, sorted(markers.items())], ensure_ascii=True)
    return sha256_hex(text.encode())


def check_once(root: Path, key: str | None, check: Callable[[], object]) -> None:
    """``check()``, which raises when the lock fails it, unless the check named ``key`` passed before; a pass is
    kept (``remember``), a failure raises as it did."""
    if known(root, key):
        return
    check()
    remember(root, key)


def known(root: Path, key: str | None) -> bool:
    """Whether the check named ``key`` passed before (``root``: the user cache)."""
    return key is not None and (root / VERDICTS / key).is_file()


def remember(root: Path, key: str | None) -> None:
    """Keep the check named ``key`` as passed; a cache that cannot be written is skipped (checked again next time)."""
    if key is None:
        return
    from cudaresolve.core.files import store_bounded

    store_bounded(root / VERDICTS / key, b"", keep=_KEEP, names=_NAMES)


def check_closure(
    lock: Lock,
    kept: Mapping[str, tuple[str, ...]],
    files: Mapping[str, Path],
    markers: Mapping[str, str],
    root: Path,
) -> None:
    """``IncompleteLock`` when a locked file needs what the lock does not hold (``closure``): the
    requirements of a package to install come from its verified wheel in ``files``, those of one ``kept`` as
    installed from its installed copy (the locked wheel's files, by RECORD: ``kept`` maps its name to them). A
    pass is kept under ``root``: the same lock, files and interpreter are not checked again."""

    def check() -> None:
        from cudaresolve.install.closure import closure_holds  # only when no pass is kept

        closure_holds(lock, kept, files, markers)

    installing = {p.name for p in lock.packages if p.name not in kept}
    check_once(root, closure_key(lock, installing, kept, markers), check)
