"""The ``Lock`` value and its pylock mapping (``to_dict``/``from_dict``): exact pins for one target. Pure.

A ``Lock`` is a ``Solution`` made durable: exact pins (full local versions such as ``2.7.1+cu118``),
the one index each package comes from, and the target and variant it was resolved for. Both file
formats build on it: ``lockfile`` (pylock.toml text, reading and writing files) and
``requirements`` (pip requirements files); neither imports the other's internals.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.platforms import canonical_name
from cudaresolve.core.urls import strip_credentials
from cudaresolve.errors import InvalidLockfile
from cudaresolve.lock.entries import package_from_dict
from cudaresolve.lock.fields import REGENERATE_HINT, WheelChoice, get_field, is_sha256, url_filename
from cudaresolve.resolve.model import FileKind, LockedPackage, Solution
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from cudaresolve.lock.features import Chosen
    from cudaresolve.text.findings import Notice

__all__ = [
    "CREATED_BY",
    "LOCK_VERSION",
    "REGENERATE_HINT",
    "Lock",
    "WheelChoice",
    "archives",
    "drop_none",
    "folders",
    "get_field",
    "index_groups",
    "is_sha256",
    "lock_from_solution",
    "notice_from_dict",
    "url_filename",
]

LOCK_VERSION: Final = "1.0"
CREATED_BY: Final = "cudaresolve"
#: The hint of most lock-file errors: the file was not written by cudaresolve, or was edited.
_TOOL: Final = "cudaresolve"
# PEP 508 markers for the platform keys of core.platforms.PLATFORMS (platform_machine is "AMD64" on Windows).
_PLATFORM_MARKERS: Final = {
    "linux_x86_64": "sys_platform == 'linux' and platform_machine == 'x86_64'",
    "linux_aarch64": "sys_platform == 'linux' and platform_machine == 'aarch64'",
    "win_amd64": "sys_platform == 'win32' and platform_machine == 'AMD64'",
    "macosx_arm64": "sys_platform == 'darwin' and platform_machine == 'arm64'",
    "macosx_x86_64": "sys_platform == 'darwin' and platform_machine == 'x86_64'",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Lock:
    """Exact pins for one target, each with the index it must come from; mirrors a pylock.toml."""

    packages: tuple[LockedPackage, ...]
    variant: str | None = None
    index_url: str | None = None
    target: Mapping[str, Any] = field(default_factory=dict, hash=False)
    warnings: tuple[Notice, ...] = ()
    requires_python: str | None = None
    complete: bool = True  # False: only the database's packages (dependencies unresolved); never a pylock.toml
    environments: tuple[str, ...] = ()
    lock_version: str = LOCK_VERSION
    created_by: str = CREATED_BY
    root: str | None = field(default=None, compare=False)  # the lock file's folder: directory paths are relative to it
    extras: tuple[str, ...] = ()  # the project's extras whose requirements the lock holds (PEP 751 ``extras``)
    groups: tuple[str, ...] = ()  # its dependency groups likewise (``dependency-groups``)
    default_groups: tuple[str, ...] = ()  # those installed when none is named (``default-groups``)
    features: bool = field(default=False, compare=False)  # from a project: the three lists written even when empty
    inputs: str | None = field(default=None, compare=False)  # the stamp of what it answers (``lock.keep``)

    def missing_hashes(self) -> tuple[str, ...]:
        """Names of packages without a known sha256, in lock order (a local folder has none to have)."""
        return tuple(p.name for p in self.packages if not p.sha256 and p.kind is not FileKind.DIRECTORY)

    def to_dict(self) -> dict[str, Any]:
        """The pylock.toml mapping (kebab-case keys, no None values); the inverse of ``from_dict``."""
        data: dict[str, Any] = {"lock-version": self.lock_version}
        if self.environments:
            data["environments"] = list(self.environments)
        if self.requires_python:
            data["requires-python"] = self.requires_python
        for key, names in (("extras", self.extras), ("dependency-groups", self.groups),
                           ("default-groups", self.default_groups)):  # fmt: skip
            if names or self.features:
                data[key] = list(names)
        data["created-by"] = self.created_by
        data["packages"] = [_package_to_dict(p, self.root) for p in self.packages]
        tool: dict[str, Any] = {}
        if self.variant:
            tool["variant"] = self.variant
        if self.index_url:
            tool["index-url"] = self.index_url
        if self.inputs:
            tool["inputs"] = self.inputs
        if self.warnings:
            tool["warnings"] = [{"code": w.code, "message": w.message} for w in self.warnings]
        if self.target:
            tool["target"] = drop_none(self.target)
        if tool:
            data["tool"] = {_TOOL: tool}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, choose: WheelChoice | None = None) -> Lock:
        """A pylock mapping -> ``Lock``. Hashes may be missing here (``lockfile.pylock_problem`` judges
        that); anything cudaresolve cannot install exactly (no index, no version, a VCS or directory
        source, an archive that is no wheel) is ``InvalidLockfile`` naming the dotted path. A package with
        several wheels (one per platform, as ``uv export`` writes them) takes the one ``choose`` picks from their
        file names (an installer's, for its interpreter); without ``choose`` it is ``InvalidLockfile``."""
        version = get_field(data, "lock-version", str, required=True)
        if not re.match(r"^1(\.\d+)?$", version):
            raise InvalidLockfile(
                Text.of("lock.unsupported-version", version=repr(version)),
                hint=Text("lock.unsupported-version.hint"),
            )
        entries = get_field(data, "packages", list, required=True)
        tool = get_field(get_field(data, "tool", dict) or {}, _TOOL, dict) or {}
        warnings = get_field(tool, "warnings", list) or []
        return cls(
            packages=tuple(package_from_dict(e, f"packages[{i}]", choose) for i, e in enumerate(entries)),
            variant=get_field(tool, "variant", str),
            index_url=get_field(tool, "index-url", str),
            inputs=get_field(tool, "inputs", str),
            target=dict(get_field(tool, "target", dict) or {}),
            warnings=tuple(notice_from_dict(w, f"tool.cudaresolve.warnings[{i}]") for i, w in enumerate(warnings)),
            requires_python=get_field(data, "requires-python", str),
            environments=tuple(get_field(data, "environments", list) or ()),
            lock_version=version,
            created_by=get_field(data, "created-by", str, required=True),
            extras=tuple(get_field(data, "extras", list) or ()),
            groups=tuple(get_field(data, "dependency-groups", list) or ()),
            default_groups=tuple(get_field(data, "default-groups", list) or ()),
            features=any(key in data for key in ("extras", "dependency-groups", "default-groups")),
        )


def lock_from_solution(
    solution: Solution,
    *,
    features: Chosen | None = None,
    editables: Collection[str] = (),
    mirrors: Mapping[str, str] | None = None,
    root: str | None = None,
) -> Lock:
    """Freeze a solution: names normalized and sorted, file names taken from URLs when missing,
    ``requires-python`` and ``environments`` from the target's Python and platform; ``features``: the project's
    extras and groups whose requirements it holds (None: requirements given as arguments); ``editables``: folders
    installed in place (``-e``);
    ``mirrors``: each package's ``index`` is the index or mirror that really served it; ``root``: the lock
    file's folder, which directory paths are relative to."""
    packages = sorted(
        (
            LockedPackage(
                name=canonical_name(p.name),
                version=p.version,
                index=served_index(p.index, mirrors),
                url=strip_credentials(p.url) if p.url else p.url,
                sha256=p.sha256.lower() if p.sha256 else None,
                filename=p.filename or url_filename(p.url),
                requires_python=p.requires_python,
                size=p.size,
                kind=p.kind,
                upload_time=p.upload_time,
                editable=p.editable or canonical_name(p.name) in editables,
                marker=p.marker,
            )
            for p in solution.packages
        ),
        key=lambda p: p.name,
    )
    target = solution.target
    marker = _PLATFORM_MARKERS.get(target.platform)
    return Lock(
        packages=tuple(packages),
        variant=solution.variant,
        index_url=solution.index_url,
        target=drop_none(target.to_dict()),
        warnings=solution.warnings,
        requires_python=f"=={target.python}.*" if target.python else None,
        environments=(marker,) if marker else (),
        complete=solution.complete,
        extras=tuple(features.extras) if features else (),
        groups=tuple(features.groups) if features else (),
        default_groups=features.default_groups if features else (),
        features=features is not None,
        root=root,
    )


def served_index(index: str, mirrors: Mapping[str, str] | None) -> str:
    """What a lock names as ``index``: the index or mirror that really serves it, never with a mirror's token
    (it fetches; it is not part of the lock)."""
    from cudaresolve.index.mirrors import apply_mirror

    return strip_credentials(apply_mirror(index, mirrors)) if index and mirrors else index


def index_groups(lock: Lock) -> list[tuple[str, tuple[LockedPackage, ...]]]:
    """Packages grouped by index (trailing ``/`` ignored): the lock's own index first, then the others
    in the order their first package appears. Direct references (``archives``) and local project folders come from
    no index and are in no group."""
    groups: dict[str, tuple[str, list[LockedPackage]]] = {}
    indexed = [p for p in lock.packages if p.kind not in (FileKind.ARCHIVE, FileKind.DIRECTORY)]
    if lock.index_url and any(_same_index(p.index, lock.index_url) for p in indexed):
        groups[lock.index_url.rstrip("/")] = (lock.index_url, [])
    for package in indexed:
        groups.setdefault(package.index.rstrip("/"), (package.index, []))[1].append(package)
    return [(index, tuple(members)) for index, members in groups.values()]


def archives(lock: Lock) -> tuple[LockedPackage, ...]:
    """The packages a direct reference pins (``name @ URL``), in lock order."""
    return tuple(p for p in lock.packages if p.kind is FileKind.ARCHIVE)


def folders(lock: Lock) -> tuple[LockedPackage, ...]:
    """The local project folders (``name @ file:///dir``), in lock order."""
    return tuple(p for p in lock.packages if p.kind is FileKind.DIRECTORY)


def read_notices(lock: Lock) -> tuple[Notice, ...]:
    """What reading ``lock`` has to say, beside the warnings it recorded: a newer minor ``lock-version`` than
    the 1.0 cudaresolve writes, whose added fields it does not read (PEP 751: a tool warns of one)."""
    from cudaresolve.text.findings import warning

    if lock.lock_version in (LOCK_VERSION, "1"):
        return ()
    return (warning("lock-minor-version", "lock.minor-version", version=lock.lock_version, known=LOCK_VERSION),)


def notice_from_dict(item: Any, path: str) -> Notice:
    """A warning a lock file recorded (``{"code", "message"}``, the message in English) as a Notice."""
    from cudaresolve.text.findings import Notice  # here: a lock without warnings needs no findings module

    if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("code", "message")):
        raise InvalidLockfile(Text.of("lock.notice-incomplete", path=path), hint=REGENERATE_HINT)
    return Notice(code=item["code"], text=literal(item["message"]))


def drop_none(value: Any) -> Any:
    """Plain dicts and lists with every None left out: TOML has no null."""
    if isinstance(value, Mapping):
        return {str(k): drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [drop_none(v) for v in value if v is not None]
    return value


# --- the pylock mapping, entry by entry -------------------------------------------------------


def _package_to_dict(package: LockedPackage, root: str | None = None) -> dict[str, Any]:
    """One ``[[packages]]`` entry: ``index`` and one ``[[packages.wheels]]`` or ``[packages.sdist]``, or for a
    direct reference ``[packages.archive]`` and no index (as uv writes one; PEP 751); a local folder is
    ``[packages.directory]``, its path relative to the lock's folder, without a version that could go stale."""
    marker = {"marker": package.marker} if package.marker else {}  # installed only when it holds (PEP 751)
    if package.kind is FileKind.DIRECTORY:
        folder = {"path": _folder(package.url or "", root), "editable": package.editable}
        return {"name": package.name, **marker, "directory": folder}
    entry: dict[str, Any] = {"name": package.name, "version": package.version, **marker}
    if package.requires_python:
        entry["requires-python"] = package.requires_python
    if package.kind is not FileKind.ARCHIVE:
        entry["index"] = package.index
    file: dict[str, Any] = {}
    if package.filename and package.kind is not FileKind.ARCHIVE:
        file["name"] = package.filename
    if package.url:
        file["url"] = package.url
    if package.size is not None:  # PEP 751: recorded where the index (PEP 700) or the file gave it
        file["size"] = package.size
    if package.upload_time:  # PEP 751: a TOML datetime, where the index gave one
        with contextlib.suppress(ValueError):
            file["upload-time"] = datetime.fromisoformat(package.upload_time)
    if package.sha256:
        file["hashes"] = {"sha256": package.sha256}
    if package.kind is FileKind.WHEEL and file:
        entry["wheels"] = [file]
    elif package.kind is not FileKind.WHEEL:
        entry[package.kind.value] = file
    return entry


def _folder(url: str, root: str | None) -> str:
    """A ``file://`` folder as PEP 751 writes it: relative to the lock's folder (POSIX separators), when known."""
    import os.path

    from cudaresolve.resolve.direct import local_directory

    path = local_directory(url) or url
    if root is None:
        return path
    relative = os.path.relpath(path, root)
    return relative.replace(os.sep, "/")


def _same_index(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")

