"""Hashes for the files an index lists without one (a web server's folder listing given as ``--find-links``, a
local folder of wheels, an index that omits them): each chosen file is downloaded (read) once and hashed, as uv
and pip-tools do, so that a pylock.toml can still be written. Does I/O through the index client."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from cudaresolve.core.parallel import each
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.limits import MAX_DIRECT_BYTES
from cudaresolve.resolve.model import FileKind
from cudaresolve.text.findings import warning

if TYPE_CHECKING:
    from cudaresolve.index.client import IndexClient
    from cudaresolve.resolve.model import LockedPackage, Solution
    from cudaresolve.text.findings import Notice

__all__ = ["hash_unhashed"]

#: Files downloaded at once (a bound on work, not a fact).
_WORKERS: Final = 4


def hash_unhashed(solution: Solution, client: IndexClient) -> tuple[Solution, list[Notice]]:
    """``solution`` with a sha256 for each wheel or sdist its index listed without one, the file downloaded (at
    most ``MAX_DIRECT_BYTES``) and hashed, and one warning per file saying so: the hash is what the server sent
    this time, not what the index vouched for. A file that cannot be had keeps no hash (the lock says so, as
    before: ``wheel-not-hashed``). Offline, only this machine's files are read."""
    wanted = [p for p in solution.packages if _unhashed(p)]
    if client.offline:  # a local folder's files (``--find-links DIR``) are read where they are: no network
        wanted = [p for p in wanted if (p.url or "").startswith("file://")]
    if not wanted:
        return solution, []
    hashed: dict[str, tuple[str, int]] = {}  # url -> (sha256, size)

    def fetch(url: str) -> None:
        digest, size = hashlib.sha256(), [0]

        def write(chunk: bytes) -> None:
            digest.update(chunk)
            size[0] += len(chunk)

        try:
            client.download(url, write, cap=MAX_DIRECT_BYTES)
        except IndexUnavailable:
            return
        hashed[url] = (digest.hexdigest(), size[0])

    each(fetch, dict.fromkeys(p.url for p in wanted if p.url), workers=_WORKERS, name="hash")
    packages = tuple(
        replace(p, sha256=hashed[p.url][0], size=hashed[p.url][1]) if p.url in hashed else p for p in solution.packages
    )
    notices = [  # a local folder's file (``--find-links DIR``) is hashed as it is: nothing was sent
        warning("index-unhashed", "lock.index-unhashed", package=p.name, url=p.url, sha256=hashed[p.url][0])
        for p in wanted
        if p.url in hashed and not p.url.startswith("file://")
    ]
    return replace(solution, packages=packages), notices


def _unhashed(package: LockedPackage) -> bool:
    """A file of an index whose page gave no sha256 (an archive named by URL is hashed when it is read)."""
    url = package.url or ""
    kinds = (FileKind.WHEEL, FileKind.SDIST)
    return not package.sha256 and package.kind in kinds and url.startswith(("https://", "http://", "file:///"))
