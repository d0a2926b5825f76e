"""The lock already where a new one goes: its pins as preferences, and what a new lock changes. Does I/O: reads it.

uv's rule for a repeated lock: the versions an existing lock holds are kept while they still satisfy the
requirements and the target, and move only when asked (``-U/--upgrade``, ``--upgrade-package NAME``). Any
valid PEP 751 lock counts (ours, uv's, pip's): it is read as ``packaging.pylock`` reads it, bounded in size
and never blocking; with ``--format requirements``, a requirements lock in the shape cudaresolve writes
(``lock.requirements``), as ``uv pip compile`` prefers the pins of the file it writes over. A file that is
no such lock gives no preference (the new lock is a fresh resolve, and it is written only where the usual
output rules allow), and so does a lock that records an index failing while it was made (``PreviousLock.index_failed``).
A lock that still answers the same request is kept without solving (``lock.keep``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.core.platforms import canonical_name

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    from cudaresolve.lock.model import Lock

__all__ = [
    "INDEX_FAILED", "MAX_PREVIOUS_BYTES", "Change", "PreviousLock", "changes", "preferences", "previous_lock",
    "read_existing", "read_pins",
]  # fmt: skip

#: The largest previous lock read for its pins; a larger one gives no preference.
MAX_PREVIOUS_BYTES: Final = 16 * 1024 * 1024
#: The warnings a lock records when an index did not answer while it was made (its set is what the others could
#: give): such a lock's pins are no preference, or a repeat would hold on to that set and never ask the index again.
INDEX_FAILED: Final = frozenset({
    "incomplete-lock", "index-stale-cache", "index-unavailable-fallback", "index-unreachable-pypi-set",
})  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One package whose pin a new lock moved: ``old`` None for an added package, ``new`` None for a removed one."""

    name: str
    old: str | None
    new: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "from": self.old, "to": self.new}


def read_existing(path: str) -> str | None:
    """The text of the lock already at ``path``; None when there is none to read (no file, not a regular file,
    larger than ``MAX_PREVIOUS_BYTES``, not UTF-8; a leading byte order mark is no content, as ``install --from``
    reads it). Never blocks (``core.files.read_regular_bounded``)."""
    from cudaresolve.core.files import NotRegularFile, read_regular_bounded

    try:
        data = read_regular_bounded(path, MAX_PREVIOUS_BYTES)
        return data.decode("utf-8-sig") if len(data) <= MAX_PREVIOUS_BYTES else None
    except (OSError, NotRegularFile, UnicodeDecodeError):
        return None


def read_pins(path: str, fmt: str = "pylock") -> dict[str, str] | None:
    """The pins of the lock at ``path`` (``read_existing``, ``previous_lock``); None when there is none."""
    found = previous_lock(read_existing(path), fmt)
    return dict(found.pins) if found is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class PreviousLock:
    """What a new lock takes from the lock already at its path: ``pins``, name -> version, and ``index_failed``,
    whether it records that an index did not answer while it was made (``INDEX_FAILED``); ``folders``: the local
    project folders it holds, which it writes without a version (PEP 751 ``directory``)."""

    pins: Mapping[str, str]
    index_failed: bool
    folders: frozenset[str] = frozenset()


def previous_lock(text: str | None, fmt: str = "pylock") -> PreviousLock | None:
    """The lock ``text``, parsed once: a PEP 751 lock, or for ``fmt`` "requirements" a requirements lock as
    cudaresolve writes it; None when there is none, or it is not one (not TOML, not valid PEP 751, not such a
    requirements file)."""
    if text is None:
        return None
    if fmt == "requirements":
        return _requirements_previous(text)
    from packaging.version import InvalidVersion, Version

    from cudaresolve.lock.lockfile import valid_pylock  # parsed and checked once per text: the kept check did

    data = valid_pylock(text)
    packages = data.get("packages") if data is not None else None
    if data is None or not isinstance(packages, list) or not all(isinstance(p, dict) for p in packages):
        return None
    pins = {}
    folders = set()
    for package in packages:  # a local folder has no version to keep
        name, version = package.get("name"), package.get("version")
        if not isinstance(name, str) or not (version is None or isinstance(version, str)):
            return None
        if "directory" in package:
            folders.add(str(canonical_name(name)))
        try:
            if version is not None:
                pins[str(canonical_name(name))] = str(Version(version))  # as packaging.pylock reads it
        except InvalidVersion:
            return None
    tool = data.get("tool")
    ours = tool.get("cudaresolve") if isinstance(tool, dict) else None
    warnings = ours.get("warnings") if isinstance(ours, dict) else None
    failed = isinstance(warnings, list) and any(isinstance(w, dict) and w.get("code") in INDEX_FAILED for w in warnings)
    return PreviousLock(pins=pins, index_failed=failed, folders=frozenset(folders))


def _requirements_previous(text: str) -> PreviousLock | None:
    from cudaresolve.errors import CudaResolveError
    from cudaresolve.lock.requirements import loads_requirements

    try:
        lock = loads_requirements(text)
    except (CudaResolveError, ValueError, RecursionError):
        return None
    if not lock.packages:
        return None
    from cudaresolve.lock.model import folders

    pins = {p.name: p.version for p in lock.packages if p.version}
    return PreviousLock(pins=pins, index_failed=any(w.code in INDEX_FAILED for w in lock.warnings),
                        folders=frozenset(p.name for p in folders(lock)))  # fmt: skip


def preferences(
    previous: PreviousLock | None, *, upgrade: bool, upgrade_packages: Iterable[str], stack: Collection[str] = ()
) -> dict[str, str]:
    """The pins to keep where they still fit: none under ``--upgrade``; all but ``--upgrade-package``'s names; and
    from a lock made while an index failed, none of the GPU stack's (``stack``, the database's packages): their set
    is what the other indexes could give (PyPI's torch with the PyTorch index down), and a repeat holding on to it
    would never take the better build once that index answers; the other pins stay, so that a re-lock on a
    network that never reaches that index does not move every pin."""
    if previous is None or upgrade:
        return {}
    moved = {str(canonical_name(n)) for n in upgrade_packages}
    if previous.index_failed:
        moved |= {str(canonical_name(n)) for n in stack}
    return {name: version for name, version in previous.pins.items() if name not in moved}


def changes(pins: Mapping[str, str] | None, lock: Lock, *, folders: Collection[str] = ()) -> tuple[Change, ...]:
    """How ``lock`` differs from the previous pins, by name; () when there was no previous lock. A local project
    folder the previous lock held too (``folders``: written without a version) is no change."""
    if pins is None:
        return ()
    from cudaresolve.lock.model import folders as folders_of

    same = {p.name for p in folders_of(lock)} & set(folders)
    new = {p.name: p.version for p in lock.packages if p.name not in same}
    out = [Change(name=n, old=pins.get(n), new=new.get(n)) for n in sorted({*pins, *new}) if pins.get(n) != new.get(n)]
    return tuple(out)
