"""On-disk cache of index pages, revalidated with ETag / Last-Modified. Does I/O: files under the cache dir.

One JSON file per URL, named by the SHA-256 of the URL, holding the body and the SHA-256 of
that body, the validators the server sent (``ETag``, ``Last-Modified``), the status (200, or
404 for "project not on this index") and when it was fetched. An entry whose body does not match
its own digest (one edited by hand) is treated as missing, offline and before a 304 alike. Writes
go through ``core.files.write_text_atomic``, so a reader never sees half a file. A file that
cannot be read or decoded is treated as missing: the page is fetched again, never a crash. A
cache that cannot be written (read-only home, full disk) is skipped silently; it is only an
optimisation.

Revalidation follows RFC 9110 section 13.1 (``If-None-Match`` / ``If-Modified-Since``) and
RFC 9111 section 4.3.4 (a 304 refreshes the stored response).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.files import write_text_atomic
from cudaresolve.core.paths import CACHE_DIR_ENV, default_cache_dir

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping

__all__ = ["CACHE_DIR_ENV", "CachedResponse", "HttpCache", "default_cache_dir"]

_FORMAT: Final = 2  # bump when the entry layout changes; older entries then read as missing
_SUBDIR: Final = "http-v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedResponse:
    """One stored response. ``status`` is 200 (a page) or 404 (the index lacks the project)."""

    url: str
    status: int
    body: str
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    final_url: str | None = None  # where redirects ended; relative links resolve against it
    fetched_at: float

    @property
    def page_url(self) -> str:
        """The URL the body was served from (after redirects)."""
        return self.final_url or self.url

    def conditional_headers(self) -> dict[str, str]:
        """The request headers that ask the server whether this copy is still current."""
        headers: dict[str, str] = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers

    def age(self, now: float) -> float:
        """Seconds since the server last confirmed this copy."""
        return max(0.0, now - self.fetched_at)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "url": self.url,
            "status": self.status,
            "content_type": self.content_type,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "final_url": self.final_url,
            "fetched_at": self.fetched_at,
            "sha256": _digest(self.body),
            "body": self.body,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CachedResponse:
        """Rebuild an entry; raises ``ValueError`` on anything unexpected (the caller drops it)."""
        if data.get("format") != _FORMAT:
            raise ValueError("unknown cache entry format")
        status, body, fetched_at = data["status"], data["body"], data["fetched_at"]
        if not isinstance(status, int) or status not in (200, 404):
            raise ValueError("bad status")
        if not isinstance(body, str) or not isinstance(fetched_at, int | float) or isinstance(fetched_at, bool):
            raise ValueError("bad body or fetched_at")
        if data.get("sha256") != _digest(body):
            raise ValueError("body does not match its stored sha256")
        optional = {k: data.get(k) for k in ("content_type", "etag", "last_modified", "final_url")}
        if any(v is not None and not isinstance(v, str) for v in optional.values()):
            raise ValueError("bad header field")
        return cls(
            url=str(data["url"]),
            status=status,
            body=body,
            fetched_at=float(fetched_at),
            content_type=optional["content_type"],
            etag=optional["etag"],
            last_modified=optional["last_modified"],
            final_url=optional["final_url"],
        )


def _digest(body: str) -> str:
    import hashlib

    return hashlib.sha256(body.encode("utf-8", errors="surrogatepass")).hexdigest()


class HttpCache:
    """Stores index responses under ``root`` (normally ``default_cache_dir()``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path_for(self, url: str) -> Path:
        """Where the entry for ``url`` lives (two-level fan-out on the URL's SHA-256)."""
        import hashlib

        digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.root / _SUBDIR / digest[:2] / f"{digest}.json"

    def get(self, url: str) -> CachedResponse | None:
        """The stored response for ``url``; None when absent, unreadable, corrupt or for another URL."""
        try:
            raw = self.path_for(url).read_text(encoding="utf-8")
            entry = CachedResponse.from_dict(json.loads(raw))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        # A digest collision (or a copied file) must not serve another URL's page.
        return entry if entry.url == url else None

    def store(self, entry: CachedResponse) -> None:
        """Write ``entry`` atomically; a failed write leaves the cache as it was and raises nothing."""
        target = self.path_for(entry.url)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target, json.dumps(entry.to_dict(), ensure_ascii=False))
        except OSError:
            pass  # the cache is an optimisation; a read-only or full disk must not stop a resolve
