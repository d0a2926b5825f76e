"""A lock already at the output path that still answers the request: kept as it is, without solving. Does I/O.

uv's rule for a repeated lock: when the lock there still satisfies the requirements, the target and the
indexes, it is kept ("Resolved N packages") and nothing is solved. Here that is two checks on the lock's
value, never a replay of a recorded run:

* **made for these inputs, and untouched since.** A lock cudaresolve writes carries one ``inputs`` line
  (``# cudaresolve: inputs = "sha256:..."`` in a requirements file, ``inputs`` under ``[tool.cudaresolve]``
  in a pylock.toml): the SHA-256 of the request it answers (``inputs_key``: every field of ``LockInputs``,
  the bytes of the compatibility database, the output's format, this code by its content) together with
  the rest of the file's text. A lock edited by hand, made for other requirements, another target, other
  indexes or mirrors, another database or another cudaresolve does not match and is solved again; the
  same lock in another clone or on another machine matches;
* **still served.** Every locked file is still on its index's page for that version as the lock wrote it
  (the same sha256, URL, size, upload time and ``Requires-Python``), not yanked, and still for the target's
  Python (``still_served``): pages fresh in the cache are read with no request, stale ones are revalidated
  as any lock revalidates them (``index.listings``). A verdict that the lock stands is kept in the cache with
  what the pages it was checked on are keyed by (each body's SHA-256, its type and URL): while every page is
  fresh and has those keys, the verdict is the same and is read back (``_recalled``), not worked out again;
  while each page's cache entry is the very file then read (its inode, size and modification time) and all are
  fresh until the earliest time then known, under the same freshness policy, not even their heads are read.

Only a whole-environment lock of index files, made while every index answered, is stamped (``keepable``,
``Solution.failed``): a lock with a direct URL or a local folder (whose content can change under
the same name), a ``--find-links`` source, a file without a hash, or an answer made from a stale page or
without an index that failed is always solved again. ``-U`` and ``-P`` always solve.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
import re
from datetime import date, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.lock.previous import INDEX_FAILED

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping
    from pathlib import Path

    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.lock.model import Lock
    from cudaresolve.lock.request import LockInputs
    from cudaresolve.resolve.model import LockedPackage, Solution

__all__ = ["PLACEHOLDER", "inputs_key", "keepable", "kept_lock", "same_but_stamp", "stamp", "still_served"]

#: Bump when what ``inputs_key`` covers changes: every stamp made before then stops matching.
_FORMAT: Final = 1
#: Warnings that say an index or file failed while the lock was made (such a lock may change once it answers), or
#: that its answer holds for this host alone (metadata an sdist's build backend made here): a lock with one is
#: never stamped, and a lock recording one is never kept (the flow also skips a ``Solution.failed``).
_FAILURES: Final = INDEX_FAILED | {"index-file-refused", "wheel-not-listed", "sdist-unusable", "sdist-metadata-built"}
#: Where ``still_served`` keeps its verdicts in the cache (the newest ``_MEMO_KEEP``), the fields of a package it
#: keeps and their types.
_MEMO_DIR: Final = "kept-v2"
_MEMO_KEEP: Final = 64
_MEMO_NAMES: Final = re.compile(r"[0-9a-f]{64}\.json")
_MEMO_TYPES: Final[dict[str, type | tuple[type, ...]]] = {
    "name": str, "version": str, "index": str, "url": (str, type(None)), "sha256": str, "filename": (str, type(None)),
    "requires_python": (str, type(None)), "size": (int, type(None)), "kind": str, "upload_time": (str, type(None)),
    "marker": (str, type(None)),
}  # fmt: skip
_MEMO_FIELDS: Final = tuple(_MEMO_TYPES)
#: The stamp's value while the text it covers is hashed (never a hex digest, so never a real value).
PLACEHOLDER: Final = "sha256:" + "x" * 64
_STAMP: Final = re.compile(r'^(?:# cudaresolve: )?inputs = "sha256:([0-9a-f]{64})"$', re.MULTILINE)
_STAMP_LINE: Final = re.compile(r'^(?:# cudaresolve: )?inputs = "sha256:[0-9a-f]{64}"\n', re.MULTILINE)


class _Unkeyable(Exception):
    """A value ``inputs_key`` cannot write down faithfully: such a request is never kept."""


def inputs_key(inputs: LockInputs, *, fmt: str, editables: Collection[str], cache: Path | None = None) -> str | None:
    """The SHA-256 of everything a lock is made from besides the indexes' pages: each compared field of
    ``inputs`` (the database by the bytes of its file), the format, the ``-e`` folders, this code (by its
    content: the same on every machine, so a lock kept in version control keeps its stamp); None when some
    value has no faithful written form (never kept). A stamped lock holds no local folder, so the folder it
    is written in is no input. ``cache``: where the code's digest is kept between runs (``core.code_digest``)."""
    from cudaresolve import __version__
    from cudaresolve.core.code_digest import code_digest

    fields = [f for f in dataclasses.fields(inputs) if f.compare and f.name != "db"]
    try:
        value = [
            _FORMAT, __version__, code_digest(cache), _database_digest(inputs), fmt, sorted(editables),
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
    if any(w.code in _FAILURES for w in lock.warnings):  # an answer from an index that did not answer
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


def same_but_stamp(existing: str | None, text: str) -> bool:
    """Whether the lock text ``existing`` is ``text`` but for the ``inputs`` stamp (or its lack)."""
    return existing is not None and _STAMP_LINE.sub("", existing) == _STAMP_LINE.sub("", text)


def kept_lock(text: str | None, fmt: str, key: str, *, source: str) -> Lock | None:
    """The lock ``text`` (the file ``source``, ``previous.read_existing``) when its stamp says it was made for
    ``key`` and not changed since; else None (no text, no stamp or two, another request, edited, unreadable)."""
    from cudaresolve.errors import CudaResolveError

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

            lock = loads_pylock(text, source=source)
        else:
            from cudaresolve.lock.requirements import loads_requirements

            lock = loads_requirements(text, source=source)
    except (CudaResolveError, ValueError, RecursionError):
        return None
    if any(w.code in _FAILURES for w in lock.warnings):
        return None
    return dataclasses.replace(lock, inputs="sha256:" + match.group(1))  # what ``still_served``'s memo is keyed by


def still_served(lock: Lock, inputs: LockInputs, http: Any, policy: IndexPolicy, fmt: str) -> Solution | None:
    """The solution ``lock`` holds, each file as its index lists it now; None when any locked file is gone from
    its page, changed its hash, was yanked, no longer admits the target's Python, is no longer the best file of
    its version for the target (a wheel published since for an sdist, a better-tagged wheel), is listed
    otherwise than a pylock.toml wrote it (URL, size, upload time, ``Requires-Python``), or its page could not
    be read (the lock is then solved again). ``http`` and ``policy``: the run's client and index policy
    (``lock.flow``); ``fmt``: the lock's format."""
    from cudaresolve.index.listings import fetch_listings
    from cudaresolve.resolve.model import LockedPackage, Solution

    if not lock.packages or lock.variant is None or lock.index_url is None:
        return None
    known = _configured_indexes(inputs)
    configured = {i: _configured(i, inputs.mirrors, known) for i in {p.index for p in lock.packages}}
    indexes = {p.name: configured[p.index] for p in lock.packages}
    wanted = [(indexes[p.name], p.name) for p in lock.packages]
    remembered = _recalled(lock, policy, wanted)  # every page as fresh as when the lock last stood: so it stands
    if remembered is not None:
        return Solution(
            target=inputs.target, variant=lock.variant, index_url=lock.index_url, packages=remembered,
            warnings=lock.warnings,
        )  # fmt: skip
    from cudaresolve.index.fitting import best_files, tag_filter  # the whole check: files ranked as a solve ranks
    from cudaresolve.target.environment import full_python

    tags, python = inputs.wheel_tags(), full_python(inputs.target.python)
    versions = {p.name: [p.version] for p in lock.packages}
    listings = fetch_listings(http, wanted, policy, versions=versions, within=tag_filter(tags))
    if listings.unavailable or listings.notices:  # a page missing, stale for a failure, or a file refused
        return None
    packages: list[LockedPackage] = []
    for p in lock.packages:
        files = listings.files(indexes[p.name], p.name) or ()
        found = next((f for f in files if f.sha256 and f.sha256.lower() == p.sha256), None)
        if found is None or found.yanked or str(found.version) != p.version:
            return None
        best = best_files(files, tags, python, exclude_newer=inputs.exclude_newer).get(found.version)
        if best is None or best[0].sha256 != found.sha256:  # it no longer fits, or a better file came
            return None
        served = LockedPackage(
            name=p.name, version=p.version, index=indexes[p.name], url=found.url, sha256=p.sha256,
            filename=found.filename, requires_python=found.requires_python, size=found.size, kind=p.kind,
            upload_time=found.upload_time.isoformat() if found.upload_time else None, marker=p.marker,
        )  # fmt: skip
        if fmt == "pylock" and not _as_written(p, served):  # a requirements file writes none of these
            return None
        packages.append(served)
    read = [listings.page(*w) for w in wanted]  # the keys of the very pages checked, not of what is there now
    _remember(policy, lock.inputs, wanted, [p.key if p is not None else None for p in read], packages)
    return Solution(
        target=inputs.target, variant=lock.variant, index_url=lock.index_url, packages=tuple(packages),
        warnings=lock.warnings,
    )  # fmt: skip


def _memo_path(policy: IndexPolicy, stamp: str | None) -> Any:
    """Where the verdict for the lock with ``stamp`` is kept (None: no cache, or no stamp)."""
    if policy.cache is None or not stamp or not re.fullmatch(r"sha256:[0-9a-f]{64}", stamp):
        return None
    return policy.cache.root / _MEMO_DIR / f"{stamp[7:]}.json"


def _remember(
    policy: IndexPolicy, stamp: str | None, wanted: list[tuple[str, str]], pages: list[str | None],
    packages: list[LockedPackage],
) -> None:
    """Keep the verdict that the lock with ``stamp`` still stands, with the keys of the pages it was checked on
    (what their parsed forms are keyed by: body, type, URL) and the packages as served; and, when every page's
    cache entry still holds what was checked, those entries' identities, until when they are all fresh and under
    what policy (``_unchanged``). Not kept: a page without a key (not found, a flat listing), or a package whose
    URL or index carries credentials (the cache holds none: such a lock is checked every time). The folder keeps
    the newest ``_MEMO_KEEP`` verdicts."""
    from cudaresolve.core.files import sealed, store_bounded
    from cudaresolve.core.urls import strip_credentials
    from cudaresolve.index.listings import fresh_states

    path = _memo_path(policy, stamp)
    clean = all(strip_credentials(u) == u for p in packages for u in (p.url or "", p.index))
    if path is None or None in pages or not clean:
        return
    rows = [[getattr(p, f) if f != "kind" else p.kind.value for f in _MEMO_FIELDS] for p in packages]
    verdict: dict[str, Any] = {"pages": pages, "packages": rows}
    states = fresh_states(wanted, policy)
    if states is not None and [key for _, key, _ in states] == pages:
        until = min((until for *_, until in states), default=math.inf)
        verdict.update(files=[list(identity) for identity, *_ in states], policy=_policy_of(policy),
                       until=until if until < math.inf else None)  # fmt: skip
    store_bounded(path, sealed(json.dumps(verdict, separators=(",", ":"))), keep=_MEMO_KEEP, names=_MEMO_NAMES)


def _recalled(lock: Lock, policy: IndexPolicy, wanted: list[tuple[str, str]]) -> tuple[LockedPackage, ...] | None:
    """The packages as served when ``lock`` was last found to stand (``_remember``), when every page ``wanted`` is
    now as it was then: its cache entry the very file then checked and still fresh (``_unchanged``: nothing read),
    else fresh with the same key (its head read). None when there is no such verdict, the pages are otherwise,
    or it is damaged or not of ``lock``'s files."""
    from cudaresolve.core.files import read_sealed
    from cudaresolve.index.listings import fresh_keys
    from cudaresolve.resolve.model import FileKind, LockedPackage

    path = _memo_path(policy, lock.inputs)
    data = read_sealed(path) if path is not None else None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in ("packages", "pages")):
        return None
    if not _unchanged(data, policy, wanted) and data.get("pages") != fresh_keys(wanted, policy):
        return None
    try:
        rows = [dict(zip(_MEMO_FIELDS, row, strict=True)) for row in data["packages"]]
        if not all(isinstance(v, _MEMO_TYPES[k]) and not isinstance(v, bool) for row in rows for k, v in row.items()):
            return None
        packages = tuple(LockedPackage(**{**row, "kind": FileKind(row["kind"])}) for row in rows)
    except (ValueError, TypeError):
        return None
    same = [(p.name, p.version, p.sha256) for p in packages] == [(p.name, p.version, p.sha256) for p in lock.packages]
    return packages if same else None


def _unchanged(data: dict[str, Any], policy: IndexPolicy, wanted: list[tuple[str, str]]) -> bool:
    """Whether a verdict's pages are, now, the very cache entries it was reached on (``listings.unchanged``),
    all still fresh, under the same freshness policy: then each holds the key it held, unread."""
    import time

    from cudaresolve.index.listings import unchanged

    files, until = data.get("files"), data.get("until")
    if data.get("policy") != _policy_of(policy) or not isinstance(files, list):
        return False
    if until is not None and (type(until) not in (int, float) or time.time() >= until):
        return False
    identities = [tuple(f) for f in files if type(f) is list and len(f) == 3 and all(type(n) is int for n in f)]
    return len(identities) == len(files) and unchanged(wanted, policy, identities)


def _policy_of(policy: IndexPolicy) -> list[Any]:
    """What decides whether a cache entry is used with no request: offline, the caller's ``max_age``, refresh."""
    return [policy.offline, policy.max_age, policy.cache.refresh if policy.cache is not None else True]


def _as_written(locked: LockedPackage, served: LockedPackage) -> bool:
    """Whether what a pylock.toml wrote of a package is what its index lists now (a field written or not alike):
    else the file would no longer say what a new lock says."""
    from cudaresolve.core.urls import strip_credentials

    pairs = (
        (locked.url, strip_credentials(served.url) if served.url else None),
        (locked.size, served.size),
        (locked.upload_time, served.upload_time),
        (locked.requires_python, served.requires_python),
    )
    return all(written == listed for written, listed in pairs)


def _configured_indexes(inputs: LockInputs) -> dict[str, str]:
    """Every index the request names, as configured (credentials too), by its URL without credentials (as a
    lock names it): the default, the variants', the project's, the extra indexes."""
    from cudaresolve.core.urls import strip_credentials

    db = inputs.db
    named = (db.default_index, *(v.index_url for v in db.variants), *inputs.package_indexes.values(),
             *inputs.extra.indexes)  # fmt: skip
    return {strip_credentials(i).rstrip("/"): i.rstrip("/") for i in named if i}


def _configured(served: str, mirrors: Mapping[str, str], known: Mapping[str, str]) -> str:
    """The index as configured that served ``served`` (what a lock names is what served it, without its
    credentials): a configured index no mirror moves, else through the mirror with the longest matching folder."""
    from cudaresolve.core.urls import strip_credentials
    from cudaresolve.lock.model import served_index

    def through(index: str) -> str:  # as a lock names it, credentials out
        return strip_credentials(served_index(index, mirrors))

    if served in known and through(known[served]) == served:
        return known[served]
    targets = sorted(mirrors.items(), key=lambda item: -len(strip_credentials(item[1]).rstrip("/")))
    for prefix, target in targets:
        clean = strip_credentials(target).rstrip("/")
        if served == clean or served.startswith(clean + "/"):
            index = prefix.rstrip("/") + served[len(clean) :]
            if through(index) == served:
                return index
    return served


def _digest(key: str, text: str) -> str:
    return hashlib.sha256(f"{key}\n{text}".encode()).hexdigest()


def _database_digest(inputs: LockInputs) -> str:
    """The SHA-256 of the compatibility database's file (the shipped one, or ``--compat``'s)."""
    from pathlib import Path

    from cudaresolve.db.database import SHIPPED_LABEL, shipped_path

    source = inputs.db.source
    path = shipped_path() if source == SHIPPED_LABEL else Path(source)
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
