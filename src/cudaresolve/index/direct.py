"""A direct reference's wheel, read once: hash checked (or computed), METADATA read. Does I/O through IndexClient.

The file is streamed into a temporary file (``IndexClient.download``, mirrors applied; a
``file://`` URL is read where it is), hashed on the way with each algorithm the URL's fragment
names and with sha256, which the lock records; then its ``*.dist-info/METADATA`` is read out of
the temporary file (``lazy_wheel.wheel_metadata``, the same bounds as a remote wheel). Range
requests are not used: the hash has to be checked against the whole file anyway, as pip does.

A URL with a hash whose file was read and verified before is answered from the cache (its
sha256, size and METADATA, stored under the URL and that hash), without a request. A URL without
a hash is read again on every run: only a hash says the file is still the same one.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from cudaresolve.core.decode import loads_json
from cudaresolve.core.progress import Event, report
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.digests import check_hashes
from cudaresolve.index.lazy_wheel import wheel_metadata
from cudaresolve.index.limits import MAX_DIRECT_BYTES
from cudaresolve.index.local_folder import read_local_file
from cudaresolve.index.metadata import parse_core_metadata
from cudaresolve.index.simple import HINT, apply_mirror
from cudaresolve.text.model import Text

if TYPE_CHECKING:

    from packaging.requirements import Requirement
    from packaging.tags import Tag

    from cudaresolve.index.build_metadata import BuildPolicy
    from cudaresolve.index.client import IndexClient
    from cudaresolve.index.http_cache import HttpCache
    from cudaresolve.index.metadata import CoreMetadata
    from cudaresolve.resolve.direct import DirectRef
    from cudaresolve.resolve.source import IndexRelease
    from cudaresolve.text.findings import Notice

__all__ = ["DirectWheel", "direct_release", "fetch_direct"]



@dataclass(frozen=True, slots=True, kw_only=True)
class DirectWheel:
    """What the lock needs of a direct reference's file."""

    sha256: str
    size: int
    metadata: CoreMetadata
    computed: bool  # the URL gave no hash: ``sha256`` is what this run's download hashed to


def fetch_direct(
    client: IndexClient, cache: HttpCache | None, ref: DirectRef, *, cap: int = MAX_DIRECT_BYTES
) -> DirectWheel:
    """The file ``ref`` names, verified (module docstring). A hash that differs is ``HashMismatch``; a file
    that cannot be had, or is no wheel of ``ref``'s name and version, is ``IndexUnavailable``."""
    key = _cache_key(ref)
    found = _cached(cache, key, ref) if key is not None else None
    if found is not None:
        return found
    hashers = {algorithm: hashlib.new(algorithm) for algorithm in {"sha256", *(a for a, _ in ref.hashes)}}
    with tempfile.TemporaryFile(prefix="cudaresolve-") as spool:

        def write(chunk: bytes) -> None:
            spool.write(chunk)
            for hasher in hashers.values():
                hasher.update(chunk)

        if ref.path is not None:
            read_local_file(ref.path, write, cap=cap, url=ref.shown)
        else:
            client.download(apply_mirror(ref.url, client.mirrors), write, cap=cap, any_host=True)
        check_hashes(ref.shown, ref.hashes, {a: h.hexdigest() for a, h in hashers.items()})
        size = spool.tell()
        spool.seek(0)
        text = wheel_metadata(spool, ref.shown)
    report(Event(kind="metadata", label=ref.shown))
    meta = _checked(text, ref)
    wheel = DirectWheel(sha256=hashers["sha256"].hexdigest(), size=size, metadata=meta, computed=not ref.hashes)
    if key is not None and cache is not None:
        _store(cache, key, wheel, text)
    return wheel


def _checked(text: str, ref: DirectRef) -> CoreMetadata:
    meta = parse_core_metadata(text, source=ref.shown)
    if meta.name != str(canonicalize_name(ref.name)) or meta.version != ref.version:
        why = f"it describes {meta.name} {meta.version}, not {ref.name} {ref.version}"
        raise IndexUnavailable(Text.of("index.bad-metadata", url=ref.shown, reason=why), hint=HINT)
    return meta


def _cache_key(ref: DirectRef) -> str | None:
    """Where a verified read of ``ref`` is kept: the URL (no credentials) and its strongest hash; None for a
    URL without a hash, or a local file (read again each time)."""
    if not ref.hashes or ref.path is not None:
        return None
    algorithm, digest = ref.hashes[0]
    return f"{ref.shown}#{algorithm}={digest}"


def _cached(cache: HttpCache | None, key: str, ref: DirectRef) -> DirectWheel | None:
    entry = cache.get(key) if cache is not None else None
    if entry is None or entry.status != 200:
        return None
    try:
        data = loads_json(entry.body)
        sha256, size, text = data["sha256"], data["size"], data["metadata"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(sha256, str) and isinstance(size, int) and isinstance(text, str)):
        return None
    return DirectWheel(sha256=sha256, size=size, metadata=_checked(text, ref), computed=False)


def _store(cache: HttpCache, key: str, wheel: DirectWheel, text: str) -> None:
    from cudaresolve.index.http_cache import CachedResponse

    body = json.dumps({"sha256": wheel.sha256, "size": wheel.size, "metadata": text})
    cache.store(CachedResponse(url=key, status=200, body=body, content_type="application/json", fetched_at=time.time()))


def direct_release(
    client: IndexClient, cache: HttpCache | None, name: str, url: str, *, tags: tuple[Tag, ...], python: str,
    platform: str, build: BuildPolicy | None = None,
) -> tuple[IndexRelease, tuple[Requirement, ...], Notice | None]:
    """The wheel ``name @ url`` names, its requirements, and a warning when its hash was only computed: its tags
    must install on the target and its ``Requires-Python`` admit ``python`` (X.Y.Z), else ``NoSolution``
    naming the file."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from cudaresolve.errors import NoSolution
    from cudaresolve.resolve.direct import local_directory, parse_direct
    from cudaresolve.resolve.model import FileKind
    from cudaresolve.resolve.source import Artifact, IndexRelease
    from cudaresolve.target.environment import tag_priority
    from cudaresolve.text.findings import warning

    folder = local_directory(url)
    if folder is not None:  # a local project: its backend says what it is (``local_project``)
        from cudaresolve.index.local_project import directory_release

        return (*directory_release(name, folder, url, build), None)
    ref = parse_direct(name, url)
    target = {"python": python.rsplit(".", 1)[0], "platform": platform or "?"}
    if tag_priority(ref.tags, tags) is None:
        shown = ", ".join(sorted(str(t) for t in ref.tags))[:300]
        raise NoSolution(
            Text.of("resolve.direct-wrong-tags", file=ref.filename, url=ref.shown, tags=shown, **target),
            hint=Text("resolve.direct-wrong-tags.hint"),
        )
    wheel = fetch_direct(client, cache, ref)
    requires_python = wheel.metadata.requires_python
    try:
        fits = not requires_python or SpecifierSet(requires_python).contains(python, prereleases=True)
    except InvalidSpecifier:
        fits = True  # ignored, as pip does
    if not fits:
        raise NoSolution(
            Text.of("resolve.direct-requires-python", file=ref.filename, required=requires_python, **target),
            hint=Text("resolve.direct-wrong-tags.hint"),
        )
    artifact = Artifact(
        filename=ref.filename, url=ref.url, sha256=wheel.sha256, size=wheel.size, requires_python=requires_python,
        kind=FileKind.ARCHIVE,
    )  # fmt: skip
    release = IndexRelease(name=ref.name, version=ref.version, index_url="", artifact=artifact)
    notice = None
    if wheel.computed:
        notice = warning("direct-unhashed", "lock.direct-unhashed", package=ref.name, url=ref.shown,
                         sha256=wheel.sha256)  # fmt: skip
    return release, wheel.metadata.requires_dist, notice
