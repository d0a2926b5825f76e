"""Lock files: the ``Lock`` value, PEP 751 ``pylock.toml`` and pip requirements, written and read. Pure,
plus one reader (``read_lock``) and one atomic writer (``write_text_atomic``/``write_lock``).

A ``Lock`` is a ``Solution`` made durable: exact pins (full local versions such as ``2.7.1+cu118``),
the one index each package comes from, and the target and variant it was resolved for.

pylock.toml (PEP 751, https://packaging.python.org/en/latest/specifications/pylock-toml/): one
``[[packages]]`` entry per package with ``index`` and a single ``[[packages.wheels]]`` (name, url,
``hashes.sha256``); ``requires-python`` and ``environments`` describe the target; the target,
variant and warnings live under ``[tool.cudaresolve]``. The spec requires a hash for every file, so
``pylock_problem`` says when a lock cannot be written as pylock (offline: the PyTorch index gives
no hashes without the network) and the CLI writes requirements instead.

requirements files: ``requirements_txt`` (one active ``--index-url`` group, never
``--extra-index-url``); ``read_lock`` and ``write_lock`` pick the format from the file name.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import unquote, urlsplit

from cudaresolve.core.files import write_text_atomic
from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import InvalidInput, InvalidLockfile
from cudaresolve.resolve.model import LockedPackage, Solution
from cudaresolve.text.findings import Notice
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    import os

__all__ = [
    "CREATED_BY",
    "LOCK_VERSION",
    "Lock",
    "dumps_pylock",
    "index_groups",
    "loads_pylock",
    "lock_from_solution",
    "pylock_problem",
    "read_lock",
    "write_lock",

]

LOCK_VERSION: Final = "1.0"
CREATED_BY: Final = "cudaresolve"
_TOOL: Final = "cudaresolve"
_META: Final = "# cudaresolve:"
_INACTIVE: Final = "#> "
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")
# PEP 751 file names: pylock.toml or pylock.<name>.toml with one name segment.
_PYLOCK_NAME: Final = re.compile(r"^pylock\.([^.]+\.)?toml$")
# PEP 508 markers for the platform keys of models.PLATFORMS (platform_machine is "AMD64" on Windows).
_PLATFORM_MARKERS: Final = {
    "linux_x86_64": "sys_platform == 'linux' and platform_machine == 'x86_64'",
    "linux_aarch64": "sys_platform == 'linux' and platform_machine == 'aarch64'",
    "win_amd64": "sys_platform == 'win32' and platform_machine == 'AMD64'",
    "macosx_arm64": "sys_platform == 'darwin' and platform_machine == 'arm64'",
    "macosx_x86_64": "sys_platform == 'darwin' and platform_machine == 'x86_64'",
}
_DEP_CONFUSION_HINT: Final = (
    "a cudaresolve lock takes each package from one named index; --extra-index-url and --find-links "
    "let a same-named package elsewhere win (dependency confusion)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Lock:
    """Exact pins for one target, each with the index it must come from; mirrors a pylock.toml."""

    packages: tuple[LockedPackage, ...]
    variant: str | None = None
    index_url: str | None = None
    target: Mapping[str, Any] = field(default_factory=dict, hash=False)
    warnings: tuple[Notice, ...] = ()
    requires_python: str | None = None
    environments: tuple[str, ...] = ()
    lock_version: str = LOCK_VERSION
    created_by: str = CREATED_BY

    def missing_hashes(self) -> tuple[str, ...]:
        """Names of packages without a known sha256, in lock order."""
        return tuple(p.name for p in self.packages if not p.sha256)

    def to_dict(self) -> dict[str, Any]:
        """The pylock.toml mapping (kebab-case keys, no None values); the inverse of ``from_dict``."""
        data: dict[str, Any] = {"lock-version": self.lock_version}
        if self.environments:
            data["environments"] = list(self.environments)
        if self.requires_python:
            data["requires-python"] = self.requires_python
        data["created-by"] = self.created_by
        data["packages"] = [_package_to_dict(p) for p in self.packages]
        tool: dict[str, Any] = {}
        if self.variant:
            tool["variant"] = self.variant
        if self.index_url:
            tool["index-url"] = self.index_url
        if self.warnings:
            tool["warnings"] = [{"code": w.code, "message": w.message} for w in self.warnings]
        if self.target:
            tool["target"] = _drop_none(self.target)
        if tool:
            data["tool"] = {_TOOL: tool}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Lock:
        """A pylock mapping -> ``Lock``. Hashes may be missing here (``pylock_problem`` judges that);
        anything cudaresolve cannot install exactly (no index, no version, sdists, several wheels) is
        ``InvalidLockfile`` naming the dotted path."""
        version = _get(data, "lock-version", str, required=True)
        if not re.match(r"^1(\.\d+)?$", version):
            raise InvalidLockfile(
                f"lock-version {version!r} is not supported", hint="cudaresolve reads PEP 751 lock-version 1.x"
            )
        entries = _get(data, "packages", list, required=True)
        tool = _get(_get(data, "tool", dict) or {}, _TOOL, dict) or {}
        warnings = _get(tool, "warnings", list) or []
        return cls(
            packages=tuple(_package_from_dict(e, f"packages[{i}]") for i, e in enumerate(entries)),
            variant=_get(tool, "variant", str),
            index_url=_get(tool, "index-url", str),
            target=dict(_get(tool, "target", dict) or {}),
            warnings=tuple(_notice(w, f"tool.cudaresolve.warnings[{i}]") for i, w in enumerate(warnings)),
            requires_python=_get(data, "requires-python", str),
            environments=tuple(_get(data, "environments", list) or ()),
            lock_version=version,
            created_by=_get(data, "created-by", str, required=True),
        )


def lock_from_solution(solution: Solution) -> Lock:
    """Freeze a solution: names normalized and sorted, file names taken from URLs when missing,
    ``requires-python`` and ``environments`` from the target's Python and platform."""
    packages = sorted(
        (
            LockedPackage(
                name=canonical_name(p.name),
                version=p.version,
                index=p.index,
                url=p.url,
                sha256=p.sha256.lower() if p.sha256 else None,
                filename=p.filename or _url_filename(p.url),
                requires_python=p.requires_python,
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
        target=_drop_none(target.to_dict()),
        warnings=solution.warnings,
        requires_python=f"=={target.python}.*" if target.python else None,
        environments=(marker,) if marker else (),
    )


def index_groups(lock: Lock) -> list[tuple[str, tuple[LockedPackage, ...]]]:
    """Packages grouped by index (trailing ``/`` ignored): the lock's own index first, then the others
    in the order their first package appears."""
    groups: dict[str, tuple[str, list[LockedPackage]]] = {}
    if lock.index_url and any(_same_index(p.index, lock.index_url) for p in lock.packages):
        groups[lock.index_url.rstrip("/")] = (lock.index_url, [])
    for package in lock.packages:
        groups.setdefault(package.index.rstrip("/"), (package.index, []))[1].append(package)
    return [(index, tuple(members)) for index, members in groups.values()]


# --- pylock.toml -----------------------------------------------------------------------------


def pylock_problem(lock: Lock) -> Text | None:
    """Why this lock cannot be a valid pylock.toml (PEP 751 needs a URL and a hash per wheel), or None."""
    for what, missing in (
        ("sha256", lock.missing_hashes()),
        ("URL", tuple(p.name for p in lock.packages if not p.url)),
    ):
        if missing:
            key = "lock.pylock-needs-one" if len(missing) == 1 else "lock.pylock-needs-many"
            return Text.of(key, what=what, count=len(missing))
    return None


def dumps_pylock(lock: Lock) -> str:
    """The lock as pylock.toml text, validated with ``packaging.pylock`` before it is returned."""
    problem = pylock_problem(lock)
    if problem:
        raise InvalidLockfile(problem, hint="without them, write requirements instead: --format requirements")
    data = lock.to_dict()
    _validate_pylock(data, source="pylock.toml")
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment("This file is @generated by cudaresolve for one target; do not edit."))
    doc.add(tomlkit.comment("Install it with `cudaresolve install --from pylock.toml`."))
    for key, value in data.items():
        if key not in ("packages", "tool"):
            doc.add(key, value)
    packages = tomlkit.aot()
    for entry in data["packages"]:
        table = tomlkit.table()
        for key, value in entry.items():
            if key != "wheels":
                table.add(key, value)
        wheels = tomlkit.aot()
        for wheel in entry.get("wheels", ()):
            wheel_table = tomlkit.table()
            for key, value in wheel.items():
                wheel_table.add(key, _inline(value))
            wheels.append(wheel_table)
        if wheels:
            table.add("wheels", wheels)
        packages.append(table)
    doc.add("packages", packages)
    if "tool" in data:
        doc.add("tool", tomlkit.item(data["tool"]))
    return tomlkit.dumps(doc)


def loads_pylock(text: str, *, source: str = "pylock.toml") -> Lock:
    """pylock.toml text -> ``Lock``, validated by ``packaging.pylock`` (hashes required) first."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidLockfile(
            f"{source} is not valid TOML: {exc}", hint="regenerate it with 'cudaresolve lock'"
        ) from exc
    _validate_pylock(data, source=source)
    try:
        return Lock.from_dict(data)
    except InvalidLockfile as exc:
        raise InvalidLockfile(f"{source}: {exc.message}", hint=exc.hint) from exc


def _validate_pylock(data: Mapping[str, Any], *, source: str) -> None:
    try:
        from packaging.pylock import Pylock, PylockValidationError
    except ImportError:  # packaging < 26.0 has no pylock module; our own checks still ran
        return
    try:
        Pylock.from_dict(data)
    except PylockValidationError as exc:
        raise InvalidLockfile(
            f"{source} is not a valid PEP 751 lock: {exc}", hint="regenerate it with 'cudaresolve lock'"
        ) from exc


def _inline(value: Any) -> Any:
    if isinstance(value, Mapping):
        import tomlkit

        table = tomlkit.inline_table()
        table.update(value)
        return table
    return value


# --- files -----------------------------------------------------------------------------------


def read_lock(path: str | os.PathLike[str]) -> Lock:
    """Read a lock: ``*.toml`` as pylock.toml, anything else as requirements written by cudaresolve."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InvalidLockfile(
            f"cannot read lock file {file}: {reason}", hint="write one with 'cudaresolve lock -o PATH'"
        ) from exc
    if file.suffix == ".toml":
        return loads_pylock(text, source=str(file))
    from cudaresolve.lock.requirements import loads_requirements

    return loads_requirements(text, source=str(file))


def write_lock(path: str | os.PathLike[str], lock: Lock, *, fmt: Literal["pylock", "requirements"] = "pylock") -> None:
    """Render ``lock`` in ``fmt`` and write it atomically; rendering fails before any file is touched."""
    file = Path(path)
    if fmt == "pylock":
        if not _PYLOCK_NAME.match(file.name):
            raise InvalidInput(
                f"a PEP 751 lock must be named pylock.toml or pylock.NAME.toml, not {file.name!r}",
                hint="pass -o pylock.toml, or --format requirements for another name",
            )
        text = dumps_pylock(lock)
    else:
        from cudaresolve.lock.requirements import dumps_requirements

        text = dumps_requirements(lock)
    write_text_atomic(file, text)


# --- helpers ---------------------------------------------------------------------------------


def _package_to_dict(package: LockedPackage) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": package.name, "version": package.version}
    if package.requires_python:
        entry["requires-python"] = package.requires_python
    entry["index"] = package.index
    wheel: dict[str, Any] = {}
    if package.filename:
        wheel["name"] = package.filename
    if package.url:
        wheel["url"] = package.url
    if package.sha256:
        wheel["hashes"] = {"sha256": package.sha256}
    if wheel:
        entry["wheels"] = [wheel]
    return entry


def _package_from_dict(entry: Any, path: str) -> LockedPackage:
    if not isinstance(entry, Mapping):
        raise InvalidLockfile(f"{path} is not a table", hint="regenerate it with 'cudaresolve lock'")
    name = _get(entry, "name", str, required=True, path=path)
    for key in ("vcs", "directory", "archive", "sdist", "marker"):
        if key in entry:
            raise InvalidLockfile(
                f"{path} ({name}) has {key!r}; cudaresolve installs one wheel per package from an index",
                hint="lock it with 'cudaresolve lock'",
            )
    index = _get(entry, "index", str, path=path)
    if not index:
        raise InvalidLockfile(
            f"{path} ({name}) names no index",
            hint="cudaresolve installs each package only from the index its lock names; lock with 'cudaresolve lock'",
        )
    wheels = _get(entry, "wheels", list, path=path) or []
    if len(wheels) > 1:
        raise InvalidLockfile(
            f"{path} ({name}) has {len(wheels)} wheels; a cudaresolve lock pins one wheel per package",
            hint="lock for one target with 'cudaresolve lock'",
        )
    wheel = wheels[0] if wheels else {}
    if not isinstance(wheel, Mapping):
        raise InvalidLockfile(f"{path}.wheels[0] is not a table", hint="regenerate it with 'cudaresolve lock'")
    hashes = _get(wheel, "hashes", dict, path=f"{path}.wheels[0]") or {}
    sha256 = hashes.get("sha256")
    if sha256 is not None and not (isinstance(sha256, str) and _SHA256.match(sha256.lower())):
        raise InvalidLockfile(f"{path}.wheels[0].hashes.sha256 is not a sha256 digest", hint=None)
    return LockedPackage(
        name=name,
        version=_get(entry, "version", str, required=True, path=path),
        index=index,
        url=_get(wheel, "url", str, path=f"{path}.wheels[0]"),
        sha256=sha256.lower() if sha256 else None,
        filename=_get(wheel, "name", str, path=f"{path}.wheels[0]"),
        requires_python=_get(entry, "requires-python", str, path=path),
    )


def _notice(item: Any, path: str) -> Notice:
    if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("code", "message")):
        raise InvalidLockfile(f"{path} needs a code and a message", hint="regenerate it with 'cudaresolve lock'")
    return Notice(code=item["code"], text=literal(item["message"]))


def _get(data: Mapping[str, Any], key: str, kind: type, *, required: bool = False, path: str = "") -> Any:
    where = f"{path}.{key}" if path else key
    value = data.get(key)
    if value is None:
        if required:
            raise InvalidLockfile(f"{where} is missing", hint="regenerate it with 'cudaresolve lock'")
        return None
    expected = Mapping if kind is dict else kind
    if not isinstance(value, expected):
        raise InvalidLockfile(
            f"{where} should be {'a table' if kind is dict else 'an array' if kind is list else 'a string'}",
            hint="regenerate it with 'cudaresolve lock'",
        )
    return value


def _drop_none(value: Any) -> Any:
    """Plain dicts and lists with every None left out: TOML has no null."""
    if isinstance(value, Mapping):
        return {str(k): _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_drop_none(v) for v in value if v is not None]
    return value


def _same_index(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def _url_filename(url: str | None) -> str | None:
    """The file name at the end of a wheel URL, percent-decoded (``%2B`` is the ``+`` of a local version)."""
    if not url:
        return None
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or None
