"""One ``[[packages]]`` entry of a pylock.toml read into a ``LockedPackage``: its wheel (the one of several a
``WheelChoice`` picks), sdist, archive (a direct reference) or directory, each field checked and named by its
dotted path when wrong. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cudaresolve.errors import InvalidLockfile
from cudaresolve.lock.fields import REGENERATE_HINT, get_field, is_sha256, url_filename
from cudaresolve.resolve.model import FileKind, LockedPackage
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.lock.fields import WheelChoice

__all__ = ["package_from_dict"]


def package_from_dict(entry: Any, path: str, choose: WheelChoice | None = None) -> LockedPackage:
    if not isinstance(entry, Mapping):
        raise InvalidLockfile(Text.of("lock.not-a-table", path=path), hint=REGENERATE_HINT)
    name = get_field(entry, "name", str, required=True, path=path)
    for key in ("vcs",):
        if key in entry:
            raise InvalidLockfile(
                Text.of("lock.unsupported-source", path=path, name=name, key=repr(key)),
                hint=Text("lock.lock-it.hint"),
            )
    marker = _marker(entry, path)
    if "archive" in entry:
        return replace(_archive_from_dict(entry, name, path), marker=marker)
    if "directory" in entry:
        return replace(_directory_from_dict(entry, name, path), marker=marker)
    index = get_field(entry, "index", str, path=path)
    if not index:
        raise InvalidLockfile(Text.of("lock.no-index", path=path, name=name), hint=Text("lock.no-index.hint"))
    wheels = get_field(entry, "wheels", list, path=path) or []
    chosen = 0
    if len(wheels) > 1:
        if choose is None:
            raise InvalidLockfile(
                Text.of("lock.several-wheels", path=path, name=name, count=len(wheels)),
                hint=Text("lock.several-wheels.hint"),
            )
        found = choose(name, [_wheel_name(w, f"{path}.wheels[{i}]") for i, w in enumerate(wheels)])
        if found is None and marker is None:
            raise InvalidLockfile(Text.of("lock.no-wheel-fits", path=path, name=name, count=len(wheels)),
                                  hint=Text("lock.no-wheel-fits.hint"))
        # A marker may leave the package out (a uv export's contourpy for Python >= 3.12, in a 3.11 venv): the
        # selection decides, and a package it keeps with no wheel that fits is refused then (``_check_wheels``).
        chosen = 0 if found is None else found
    kind, where = FileKind.WHEEL, f"{path}.wheels[{chosen}]"
    file = wheels[chosen] if wheels else {}
    if not wheels and "sdist" in entry:  # PEP 751: wheels before the sdist; a lock of ours has one or the other
        kind, where, file = FileKind.SDIST, f"{path}.sdist", entry["sdist"]
    if not isinstance(file, Mapping):
        raise InvalidLockfile(Text.of("lock.not-a-table", path=where), hint=REGENERATE_HINT)
    if "path" in file and "url" not in file:  # PEP 751 allows it; fetching the index's copy would be another file
        raise InvalidLockfile(Text.of("lock.file-by-path", path=where, name=name), hint=Text("lock.file-by-path.hint"))
    return LockedPackage(
        name=name,
        version=get_field(entry, "version", str, required=True, path=path),
        index=index,
        url=get_field(file, "url", str, path=where),
        sha256=_sha256(file, where),
        filename=get_field(file, "name", str, path=where),
        requires_python=get_field(entry, "requires-python", str, path=path),
        size=_size(file, where),
        kind=kind,
        upload_time=_upload_time(file, where),
        marker=marker,
    )


def _wheel_name(file: Any, where: str) -> str:
    """A ``[[packages.wheels]]`` entry's file name: its ``name``, else the last part of its ``url`` or ``path``."""
    if not isinstance(file, Mapping):
        raise InvalidLockfile(Text.of("lock.not-a-table", path=where), hint=REGENERATE_HINT)
    name = get_field(file, "name", str, path=where)
    if name:
        return str(name)
    path = get_field(file, "path", str, path=where)
    return url_filename(get_field(file, "url", str, path=where)) or (path or "").replace("\\", "/").rsplit("/", 1)[-1]


def _marker(entry: Mapping[str, Any], path: str) -> str | None:
    """``packages.marker`` (PEP 751), checked to parse as a marker (``'x' in extras`` included)."""
    text: str | None = get_field(entry, "marker", str, path=path)
    if text is not None:
        from packaging.markers import InvalidMarker, Marker

        try:
            Marker(text)
        except InvalidMarker:
            raise InvalidLockfile(Text.of("lock.bad-marker", path=f"{path}.marker"), hint=REGENERATE_HINT) from None
    return text


def _archive_from_dict(entry: Mapping[str, Any], name: str, path: str) -> LockedPackage:
    """A direct reference's ``[packages.archive]``: a wheel by URL (its version from the entry, else from the
    wheel's file name, which pip's locks leave out); a local ``path`` or anything but a wheel is refused."""
    where = f"{path}.archive"
    archive = get_field(entry, "archive", dict, path=path)
    url = get_field(archive, "url", str, path=where)
    filename = url_filename(url)
    if not url or not filename or not filename.endswith(".whl"):
        raise InvalidLockfile(
            Text.of("lock.archive-not-wheel", path=where, name=name), hint=Text("lock.lock-it.hint")
        )
    version = get_field(entry, "version", str, path=path) or _wheel_version(filename, where)
    return LockedPackage(
        name=name,
        version=version,
        index="",
        url=url,
        sha256=_sha256(archive, where),
        filename=filename,
        requires_python=get_field(entry, "requires-python", str, path=path),
        size=_size(archive, where),
        kind=FileKind.ARCHIVE,
    )


def _directory_from_dict(entry: Mapping[str, Any], name: str, path: str) -> LockedPackage:
    """A local project folder's ``[packages.directory]``: its ``path`` (with ``subdirectory``) as written, relative
    to the lock's folder or absolute (``install`` resolves it), kept in ``url``; ``editable`` (PEP 751)."""
    where = f"{path}.directory"
    folder = get_field(entry, "directory", dict, path=path)
    place = get_field(folder, "path", str, required=True, path=where)
    sub = get_field(folder, "subdirectory", str, path=where)
    editable = folder.get("editable", False)
    if not isinstance(editable, bool):
        raise InvalidLockfile(Text.of("lock.should-be-bool", path=f"{where}.editable"), hint=REGENERATE_HINT)
    return LockedPackage(
        name=name,
        version=get_field(entry, "version", str, path=path) or "",
        index="",
        url=f"{place.rstrip('/')}/{sub}" if sub else place,
        requires_python=get_field(entry, "requires-python", str, path=path),
        kind=FileKind.DIRECTORY,
        editable=editable,
    )


def _sha256(file: Mapping[str, Any], where: str) -> str | None:
    hashes = get_field(file, "hashes", dict, path=where) or {}
    sha256 = hashes.get("sha256")
    if sha256 is not None and not (isinstance(sha256, str) and is_sha256(sha256.lower())):
        raise InvalidLockfile(Text.of("lock.bad-sha256", path=f"{where}.hashes.sha256"), hint=REGENERATE_HINT)
    if sha256 is None and hashes:  # PEP 751 allows any algorithm; a file whose hash goes unchecked is never taken
        raise InvalidLockfile(Text.of("lock.no-sha256", path=f"{where}.hashes",
                                      algorithms=tuple(sorted(str(k) for k in hashes)[:5])),
                              hint=Text("lock.no-sha256.hint"))
    return sha256.lower() if sha256 else None


def _upload_time(file: Mapping[str, Any], where: str) -> str | None:
    value = file.get("upload-time")
    if value is not None and not isinstance(value, datetime):
        raise InvalidLockfile(Text.of("lock.should-be-time", path=f"{where}.upload-time"), hint=REGENERATE_HINT)
    return value.isoformat() if value is not None else None


def _size(file: Mapping[str, Any], where: str) -> int | None:
    size = file.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise InvalidLockfile(Text.of("lock.should-be-size", path=f"{where}.size"), hint=REGENERATE_HINT)
    return size


def _wheel_version(filename: str, where: str) -> str:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        return str(parse_wheel_filename(filename)[1])
    except (InvalidWheelFilename, ValueError):
        raise InvalidLockfile(
            Text.of("lock.archive-not-wheel", path=where, name=filename), hint=REGENERATE_HINT
        ) from None
