"""A lock already at the output path that still answers the request: kept as it is, without solving. Does I/O.

uv's rule for a repeated lock: when the lock there still satisfies the requirements, the target and the
indexes, it is kept ("Resolved N packages") and nothing is solved. Here that is two checks on the lock's
value, never a replay of a recorded run:

* **made for these inputs, and untouched since.** A lock cudaresolve writes carries one ``inputs`` line
  (``# cudaresolve: inputs = "sha256:..."`` in a requirements file, ``inputs`` under ``[tool.cudaresolve]``
  in a pylock.toml): the SHA-256 of the request it answers (``inputs_key``: every field of ``LockInputs``,
  the bytes of the compatibility database, the output's format and folder, this code) together with the
  rest of the file's text. A lock edited by hand, made for other requirements, another target, other
  indexes or mirrors, another database or another version of cudaresolve does not match and is solved
  again;
* **still served.** Every locked file is still on its index's page for that version with the same
  sha256, and not yanked (``still_served``): pages fresh in the cache are read with no request, stale
  ones are revalidated as any lock revalidates them (``index.listings``).

Only a whole-environment lock of index files is stamped (``keepable``): a lock with a direct URL or a
local folder (whose content can change under the same name), a ``--find-links`` source, or a file
without a hash is always solved again. ``-U`` and ``-P`` always solve.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import re
from datetime import date, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.lock.previous import MAX_PREVIOUS_BYTES  # the bound on reading the lock already there

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.index.simple import Keep
    from cudaresolve.lock.model import Lock
    from cudaresolve.lock.request import LockInputs
    from cudaresolve.resolve.model import Solution

__all__ = ["PLACEHOLDER", "inputs_key", "keepable", "kept_lock", "same_but_stamp", "stamp", "still_served"]

#: Bump when what ``inputs_key`` covers changes: every stamp made before then stops matching.
_FORMAT: Final = 1
#: The stamp's value while the text it covers is hashed (never a hex digest, so never a real value).
PLACEHOLDER: Final = "sha256:" + "x" * 64
_STAMP: Final = re.compile(r'^(?:# cudaresolve: )?inputs = "sha256:([0-9a-f]{64})"$', re.MULTILINE)


class _Unkeyable(Exception):
    """A value ``inputs_key`` cannot write down faithfully: such a request is never kept."""


def inputs_key(inputs: LockInputs, *, fmt: str, editables: Collection[str], root: str | None) -> str | None:
    """The SHA-256 of everything a lock is made from besides the indexes' pages: each compared field of
    ``inputs`` (the database by the bytes of its file), the format, the ``-e`` folders, the lock's folder (its
    relative paths), this code; None when some value has no faithful written form (never kept)."""
    from cudaresolve import __version__

    fields = [f for f in dataclasses.fields(inputs) if f.compare and f.name != "db"]
    try:
        value = [
            _FORMAT, __version__, _code_key(), _database_digest(inputs), fmt, sorted(editables), root,
            [[f.name, _canon(getattr(inputs, f.name), 0)] for f in fields],
        ]  # fmt: skip
    except (_Unkeyable, OSError):
        return None
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def keepable(lock: Lock, inputs: LockInputs, fmt: str) -> bool:
    """Whether ``lock`` may carry a stamp: whole, every package a hashed file of an index, no find-links, and
    as ``fmt`` it says all the answer says (a requirements file has no PEP 751 ``marker``)."""
    from cudaresolve.resolve.model import FileKind

    if not lock.complete or inputs.extra.find_links or not lock.packages:
        return False
    if fmt == "requirements" and any(p.marker for p in lock.packages):
        return False
    return all(p.kind in (FileKind.WHEEL, FileKind.SDIST) and p.sha256 and p.index and p.url for p in lock.packages)


def stamp(text: str, key: str) -> str | None:
    """``text`` (rendered with ``PLACEHOLDER`` as its ``inputs`` value) with the real stamp; None when the
    placeholder is not there exactly once."""
    if text.count(PLACEHOLDER) != 1:
        return None
    return text.replace(PLACEHOLDER, "sha256:" + _digest(key, text))


def same_but_stamp(path: str, text: str) -> bool:
    """Whether the file at ``path`` holds ``text`` but for the ``inputs`` stamp (or its lack)."""
    existing = _read(path)
    return existing is not None and _STAMP.sub("", existing) == _STAMP.sub("", text)


def kept_lock(path: str, fmt: str, key: str) -> Lock | None:
    """The lock at ``path`` when its stamp says it was made for ``key`` and not changed since; else None
    (no file, not a regular file, too large, no stamp or two, another request, edited, unreadable)."""
    from cudaresolve.errors import CudaResolveError

    text = _read(path)
    if text is None:
        return None
    found = list(_STAMP.finditer(text))
    if len(found) != 1 or PLACEHOLDER in text:
        return None
    match = found[0]
    covered = text[: match.start(1) - len("sha256:")] + PLACEHOLDER + text[match.end(1) :]
    if _digest(key, covered) != match.group(1):
        return None
    try:
        if fmt == "pylock":
            from cudaresolve.lock.lockfile import loads_pylock

            return loads_pylock(text, source=path)
        from cudaresolve.lock.requirements import loads_requirements

        return loads_requirements(text, source=path)
    except (CudaResolveError, ValueError, RecursionError):
        return None


def still_served(lock: Lock, inputs: LockInputs, http: Any, policy: IndexPolicy) -> Solution | None:
    """The solution ``lock`` holds, each file as its index lists it now; None when any locked file is gone from
    its page, changed its hash, was yanked, or its page could not be read (the lock is then solved again).
    ``http`` and ``policy``: the run's client and index policy (``lock.flow``)."""
    from cudaresolve.index.listings import fetch_listings
    from cudaresolve.resolve.model import LockedPackage, Solution

    if not lock.packages or lock.variant is None or lock.index_url is None:
        return None
    indexes = {p.name: _configured(p.index, inputs.mirrors) for p in lock.packages}
    wanted = [(indexes[p.name], p.name) for p in lock.packages]
    versions = {p.name: [p.version] for p in lock.packages}
    listings = fetch_listings(http, wanted, policy, versions=versions, within=_target_filter(inputs))
    if listings.unavailable or listings.notices:  # a page missing, stale for a failure, or a file refused
        return None
    packages: list[LockedPackage] = []
    for p in lock.packages:
        files = listings.files(indexes[p.name], p.name) or ()
        found = next((f for f in files if f.sha256 and f.sha256.lower() == p.sha256), None)
        if found is None or found.yanked or str(found.version) != p.version:
            return None
        packages.append(
            LockedPackage(
                name=p.name, version=p.version, index=indexes[p.name], url=found.url, sha256=p.sha256,
                filename=found.filename, requires_python=found.requires_python, size=found.size, kind=p.kind,
                upload_time=found.upload_time.isoformat() if found.upload_time else None, marker=p.marker,
            )
        )  # fmt: skip
    return Solution(
        target=inputs.target, variant=lock.variant, index_url=lock.index_url, packages=tuple(packages),
        warnings=lock.warnings,
    )  # fmt: skip


def _target_filter(inputs: LockInputs) -> Keep:
    """The filter the lock's solve read pages through (``lock.flow``): the target's wheels and every sdist,
    so the forms it stored are read, not parsed again."""
    from cudaresolve.index.fitting import tag_filter

    return tag_filter(inputs.wheel_tags())


def _configured(served: str, mirrors: Mapping[str, str]) -> str:
    """The index as configured whose mirror served ``served`` (what a lock names is what served it)."""
    from cudaresolve.core.urls import strip_credentials
    from cudaresolve.index.mirrors import apply_mirror

    for prefix, target in mirrors.items():
        clean = strip_credentials(target).rstrip("/")
        if served == clean or served.startswith(clean + "/"):
            index = prefix.rstrip("/") + served[len(clean) :]
            if strip_credentials(apply_mirror(index, mirrors)) == served:
                return index
    return served


def _read(path: str) -> str | None:
    """The text of the regular file at ``path`` (bounded, never blocking); None when there is none to read."""
    from cudaresolve.core.files import NotRegularFile, read_regular_bounded

    try:
        data = read_regular_bounded(path, MAX_PREVIOUS_BYTES)
        return data.decode("utf-8") if len(data) <= MAX_PREVIOUS_BYTES else None
    except (OSError, NotRegularFile, UnicodeDecodeError):
        return None


def _digest(key: str, text: str) -> str:
    return hashlib.sha256(f"{key}\n{text}".encode()).hexdigest()


def _database_digest(inputs: LockInputs) -> str:
    """The SHA-256 of the compatibility database's file (the shipped one, or ``--compat``'s)."""
    from pathlib import Path

    from cudaresolve.db.database import SHIPPED_LABEL, shipped_path

    source = inputs.db.source
    path = shipped_path() if source == SHIPPED_LABEL else Path(source)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _code_key() -> str:
    """This code as it is on disk (``db.cache.code_key`` over every folder of the package)."""
    from pathlib import Path

    from cudaresolve.db.cache import code_key

    package = Path(__file__).resolve().parent.parent
    return code_key([package, *sorted(p for p in package.iterdir() if p.is_dir() and p.name != "__pycache__")])


def _canon(value: Any, depth: int) -> Any:
    """``value`` as plain JSON that tells apart what equality tells apart; ``_Unkeyable`` for anything else."""
    if depth > 32:
        raise _Unkeyable
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return ["enum", type(value).__qualname__, _canon(value.value, depth + 1)]
    if isinstance(value, (datetime, date)):
        return ["time", value.isoformat()]
    if isinstance(value, PurePath):
        return ["path", str(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [f for f in dataclasses.fields(value) if f.compare]
        return ["dc", type(value).__qualname__, [[f.name, _canon(getattr(value, f.name), depth + 1)] for f in fields]]
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        items = [[_canon(k, depth + 1), _canon(v, depth + 1)] for k, v in value.items()]
        return ["map", sorted(items, key=lambda kv: json.dumps(kv, sort_keys=True))]
    if isinstance(value, (list, tuple)):
        return ["seq", type(value).__qualname__, [_canon(v, depth + 1) for v in value]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(json.dumps(_canon(v, depth + 1), sort_keys=True) for v in value)]
    raise _Unkeyable
