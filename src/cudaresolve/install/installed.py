"""The distributions installed in a target interpreter's environment. Does I/O: reads its site-packages.

The target is usually another interpreter (``--python``). Its ``sys.path`` comes from
``environment.read_target`` (one probe of that interpreter, kept in the user cache); the
distributions on it are read here, in this process (the first of a name on ``sys.path`` wins, as for imports
and for pip; ``.dist-info`` folders are read directly, as ``importlib.metadata`` finds them, anything else
through ``importlib.metadata`` itself, which is imported only then): each one's name, version, ``.dist-info``
directory, installer, requirements and ``direct_url.json`` URL. For the names asked for it also
reads the installed RECORD and the RECORD paths whose file is missing on disk or has another size
(a cheap check for files changed after the install; at most ``_MAX_DAMAGED`` named). At most
``record.MAX_RECORD_BYTES`` of RECORDs are read in all; what does not fit is read as no RECORD. A
distribution whose files cannot be read (METADATA not UTF-8, a RECORD csv cannot read) makes
``read_installed`` refuse the environment naming it, since pip would trip on it too.
"""

from __future__ import annotations

import csv
import os
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.files import DIST_FILE_MOST, DIST_FILES, read_regular_bounded, unsafe_member
from cudaresolve.core.platforms import canonical_name, leading_name
from cudaresolve.errors import InvalidInput
from cudaresolve.install.record import MAX_RECORD_BYTES
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from cudaresolve.resolve.model import LockedPackage

__all__ = ["InstalledDist", "check_built", "dist_head", "read_installed", "running_tool"]

_MAX_DAMAGED: Final = 5
_TOOL: Final = __name__.split(".")[0]  # the distribution this process runs from


@dataclass(frozen=True, slots=True, kw_only=True)
class InstalledDist:
    """One installed distribution; ``record`` (the installed RECORD's text) and ``damaged`` (RECORD
    paths missing on disk or of another size) only for the names ``read_installed`` was asked for."""

    name: str  # normalized (PEP 503)
    version: str
    path: str | None
    installer: str | None = None
    requires: tuple[str, ...] = ()
    record: str | None = field(default=None, repr=False)
    damaged: tuple[str, ...] = ()
    url: str | None = None  # direct_url.json's url (PEP 610): where the installed file came from
    editable: bool = False  # direct_url.json says ``dir_info.editable``: installed in place from a folder


def read_installed(
    python: str | None, *, records: Iterable[str] = (), paths: Sequence[str] | None = None
) -> dict[str, InstalledDist]:
    """Normalized name -> the distribution installed in ``python``'s environment (None: this
    interpreter's), with the RECORD of each name in ``records``. ``paths``: that interpreter's
    ``sys.path`` when known (else ``environment.read_target`` asks it). An interpreter that cannot run
    or answer, or a distribution that cannot be read, is ``InvalidInput``."""
    if paths is None:
        if python is None:
            paths = [p for p in sys.path if p and p != os.getcwd()]
        else:
            from cudaresolve.install.environment import read_target

            paths = read_target(python).sys_path
    want = {canonical_name(n) for n in records}
    budget = MAX_RECORD_BYTES
    found: dict[str, InstalledDist] = {}
    for dist in _distributions(paths):
        where = getattr(dist, "_path", None)
        try:
            if (unsafe := unsafe_member(where, DIST_FILES, DIST_FILE_MOST)) is not None:
                raise ValueError(unsafe)  # a FIFO importlib would wait on, /dev/zero it would read whole
            name, version, requires = dist_head(dist)
            key = canonical_name(name)
            if not name or key in found:
                continue
            text = dist.read_text("RECORD") if key in want else None
            item = InstalledDist(
                name=key, version=version, path=str(where) if where else None,
                installer=(dist.read_text("INSTALLER") or "").strip() or None, requires=requires,
                **_direct_url(dist.read_text("direct_url.json")),
            )
            if text is not None and len(text) <= budget:
                budget -= len(text)
                item = replace(item, record=text, damaged=_damaged(dist, text))
        except (OSError, ValueError, TypeError, KeyError, csv.Error) as exc:  # named, never a traceback
            raise InvalidInput(
                Text.of("lock.installed.damaged-dist", python=python or sys.executable, path=str(where),
                        error=f"{type(exc).__name__}: {exc}"[:300]),
                hint=Text("doctor.damaged-dist.fix"),
            ) from exc
        found[key] = item
    return found


class _DistInfo:
    """A ``.dist-info`` folder read as ``importlib.metadata.PathDistribution`` reads one (the part used here)."""

    __slots__ = ("_path",)

    def __init__(self, path: str) -> None:
        self._path = path

    def read_text(self, filename: str) -> str | None:
        """The file's text (not UTF-8: ``UnicodeDecodeError``, a damaged distribution); None when absent, or no
        regular file of at most ``DIST_FILE_MOST`` bytes (a FIFO or /dev/zero is never waited on nor read whole)."""
        try:
            data = read_regular_bounded(os.path.join(self._path, filename), DIST_FILE_MOST)
        except OSError:  # absent, a folder, no permission, no regular file
            return None
        return data.decode("utf-8") if len(data) <= DIST_FILE_MOST else None

    def locate_file(self, path: str) -> str:
        return os.path.join(os.path.dirname(self._path), path)

    def __getattr__(self, name: str) -> Any:  # a folder without METADATA: importlib.metadata's own reading
        import importlib.metadata
        from pathlib import Path

        return getattr(importlib.metadata.PathDistribution(Path(self._path)), name)


def _distributions(paths: Sequence[str]) -> Iterator[Any]:
    """The distributions on ``paths`` in ``importlib.metadata.distributions``'s order: each folder's ``.dist-info``
    folders as ``_DistInfo``; a path entry that is not a folder (a zip), or one holding ``.egg-info`` entries or an
    ``EGG-INFO``, through ``importlib.metadata`` itself."""
    for entry in paths:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, or gone: importlib.metadata knows zips and skips what is not there
            names = None
        lowered = [n.lower() for n in names or ()]
        if names is None or any(n.endswith(".egg-info") or n == "egg-info" for n in lowered):
            import importlib.metadata

            yield from importlib.metadata.distributions(path=[entry])
            continue
        for name, low in zip(names, lowered, strict=True):
            if low.endswith(".dist-info"):
                yield _DistInfo(os.path.join(entry or ".", name))


def dist_head(dist: Any) -> tuple[str, str, tuple[str, ...]]:
    """Name, Version and Requires-Dist of an ``importlib.metadata`` distribution, its METADATA parsed once here
    (importlib parses the whole file again for each of them, through the email parser: a METADATA of millions of
    header lines took minutes); an ``.egg-info`` through importlib, which reads its PKG-INFO and requires.txt."""
    head = _headers(dist.read_text("METADATA"))
    if head is None:
        head = (dist.metadata["Name"] or "", dist.version, tuple(dist.requires or ()))
    return head


def _headers(text: str | None) -> tuple[str, str, tuple[str, ...]] | None:
    """Name, Version and the Requires-Dist lines of a METADATA text (its header block, folded lines joined, as
    the email parser reads it); None without a text."""
    if text is None:
        return None
    fields: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            break  # the body (the description) starts after the first empty line
        if line[:1] in (" ", "\t") and fields:
            fields[-1][1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.append([key.strip().lower(), value.strip()])
    first = {key: value for key, value in reversed(fields)}
    requires = tuple(value for key, value in fields if key == "requires-dist")
    return first.get("name", ""), first.get("version", ""), requires


def _damaged(dist: object, record: str) -> tuple[str, ...]:
    """RECORD paths (at most ``_MAX_DAMAGED``) whose file is missing or of another size than recorded."""
    bad: list[str] = []
    for row in csv.reader(record.splitlines()):
        if len(bad) >= _MAX_DAMAGED:
            break
        if len(row) < 3 or not row[2].isdigit():
            continue
        try:
            size = os.stat(dist.locate_file(row[0])).st_size  # type: ignore[attr-defined]
        except OSError:
            size = -1
        if size != int(row[2]):
            bad.append(row[0])
    return tuple(bad)


def _direct_url(text: str | None) -> dict[str, Any]:
    """``url`` and ``editable`` of a ``direct_url.json`` (PEP 610); nothing when there is none or it is no JSON."""
    import json

    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return {}
    info = data.get("dir_info")
    return {"url": data["url"], "editable": isinstance(info, dict) and info.get("editable") is True}


def check_built(
    folders: Sequence[LockedPackage], after: Mapping[str, InstalledDist], before: Mapping[str, InstalledDist],
    locked: Iterable[str],
) -> tuple[InvalidInput, tuple[str, ...]] | None:
    """Each local project folder of ``folders`` (just installed) is installed under its locked name; else the
    error for the first that is not, and what the install added or changed that the lock (``locked``: its names)
    does not name (its build made another project: the caller removes it)."""
    named = {canonical_name(n) for n in locked}
    for package in folders:
        if canonical_name(package.name) not in after:
            made = tuple(sorted(n for n in after if n not in named
                                and (n not in before or after[n].version != before[n].version)))  # fmt: skip
            error = InvalidInput(
                Text.of("lock.install.folder-other", package=package.name, folder=package.url or "",
                        made=", ".join(made)[:300] or "nothing"),
                hint=Text("lock.install.folder-other.hint"),
            )  # fmt: skip
            return error, made
    return None


def running_tool(dists: Mapping[str, InstalledDist], prefix: str | None) -> frozenset[str]:
    """When ``prefix`` is the environment this process runs from: cudaresolve and every installed distribution it
    needs, followed through their requirements (markers and extras not judged: one kept too many does no harm).
    ``install --exact`` there must not uninstall the program doing the install (it did, then failed half-way,
    leaving neither it nor the lock); pip-sync keeps itself and its dependencies likewise. Else nothing."""
    if prefix is None or os.path.realpath(prefix) != os.path.realpath(sys.prefix) or _TOOL not in dists:
        return frozenset()
    kept, todo = set(), [_TOOL]
    while todo:
        name = todo.pop()
        if name in kept or name not in dists:
            continue
        kept.add(name)
        todo.extend(n for n in map(leading_name, dists[name].requires) if n is not None)
    return frozenset(kept)
