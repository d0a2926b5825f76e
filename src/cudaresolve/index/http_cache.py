"""On-disk cache of index pages with HTTP freshness (RFC 9111). Does I/O: files under the cache dir.

One file per URL, named by the SHA-256 of the URL: a head, one line of JSON, then the body's bytes (a body over
``APART_BYTES``, as PyPI's pages of megabytes are, is in a file of its own beside it, ``<entry>.body``: written
only when it changed). The head holds the body's SHA-256 and size, the validators the server sent (``ETag``,
``Last-Modified``), its freshness headers (``Cache-Control``, ``Expires``, ``Date``, ``Age``), the status (200,
or 404 for "project not on this index") and when it was fetched. A caller that needs only the head (is the page
fresh, what is its parsed form keyed by) reads that line alone, and finds the entry missing when its body is not
of the size the head gives; a body is read only by a caller that needs it, and one that does not match its digest
(edited by hand, a body file gone or replaced by another run) makes the entry missing, offline and before a 304
alike: what is served is always what the digest names. Writes go through ``core.files.write_private_atomic``, so
a reader never sees half a file. A file that cannot be read or decoded is treated as missing: the page is fetched
again, never a crash. A cache that cannot be written (read-only home, full disk) is skipped silently; it is only
an optimisation.

Credentials never reach the disk. An index URL may carry ``user:token@`` (``PIP_INDEX_URL``, ``-i``,
a mirror); the request URL keeps them (they are needed to fetch), but entries are keyed and stored
by the URL without them (``core.urls.strip_credentials``), a page's body has the userinfo of every
URL in it removed when it arrives (``strip_credentials_in``), and an entry read back gets the
credentials of the URL asked for again (its final URL too, same host only). Files are 0600 and new
folders 0700 (``core.files.write_private_atomic``): a private index's pages are the user's alone.

Freshness follows RFC 9111 (``index.freshness`` says which parts): a *fresh* entry (age below
its ``max-age``) is used with no request at all, as pip and uv do; a stale one, or one marked
``no-cache``, is revalidated (RFC 9110 section 13.1: ``If-None-Match`` / ``If-Modified-Since``),
and a 304 refreshes the stored time and headers (RFC 9111 section 4.3.4). A response marked
``no-store`` is not stored, and replaces no entry (section 5.2.2.5). ``HttpCache(refresh=True)``
treats every entry as stale, as uv's ``--refresh`` does: entries are revalidated, still read
offline. Entries written before these headers were stored simply have none: they are stale.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.decode import loads_json
from cudaresolve.core.files import open_regular, write_private_atomic
from cudaresolve.core.paths import CACHE_DIR_ENV, default_cache_dir
from cudaresolve.core.urls import strip_credentials, strip_credentials_in, with_credentials_of
from cudaresolve.index.freshness import CacheControl, current_age, freshness_lifetime, parse_cache_control
from cudaresolve.index.limits import MAX_PAGE_BYTES

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["CACHE_DIR_ENV", "NOT_FOUND_LIFETIME", "CachedResponse", "HttpCache", "default_cache_dir"]

_FORMAT: Final = 3  # bump when the entry layout changes; older entries then read as missing
#: 2: one folder, no fan-out (a cold lock made a folder per entry); 3: the head a line apart from the body (a
#: kept lock's check of 191 pages read and decoded 3.5 MB of JSON for their heads)
_SUBDIR: Final = "http-v3"
#: The longest head read (one line of JSON): a file whose first line is longer is not an entry.
_HEAD_LIMIT: Final = 1024 * 1024
#: The largest entry file read: its head, and a page's body of at most ``MAX_PAGE_BYTES`` characters as UTF-8.
_ENTRY_LIMIT: Final = _HEAD_LIMIT + 4 * MAX_PAGE_BYTES
#: A body larger than this is stored apart from its entry, beside it (``<entry>.body``; ``HttpCache.store``).
APART_BYTES: Final = 64 * 1024
#: Seconds a bare 404 stays fresh (see ``CachedResponse.freshness_lifetime``); as long as PyPI keeps a page.
NOT_FOUND_LIFETIME: Final = 600.0
#: The stored header fields besides the body, each a string or None; (attribute, header name).
_HEADERS: Final = (
    ("content_type", "Content-Type"),
    ("etag", "ETag"),
    ("last_modified", "Last-Modified"),
    ("cache_control", "Cache-Control"),
    ("expires", "Expires"),
    ("date", "Date"),
    ("age_header", "Age"),
)


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
    fetched_at: float  # when the response (or the 304 that confirmed it) arrived: RFC 9111 "response_time"
    cache_control: str | None = None
    expires: str | None = None
    date: str | None = None
    age_header: str | None = None  # the Age header as received
    digest: str | None = field(default=None, compare=False, repr=False)  # the body's SHA-256 when known
    #: The body was not read (``HttpCache.get(..., body=False)``): ``body`` is "" until ``HttpCache.with_body``;
    #: ``digest`` and ``apart_size`` (its bytes) name it, ``body_at`` says where it is: from that offset of the
    #: entry's own file, or (None) in the file beside it.
    apart: bool = field(default=False, compare=False, repr=False)
    apart_size: int = field(default=0, compare=False, repr=False)
    body_at: int | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_headers(
        cls, *, url: str, status: int, body: str, headers: Mapping[str, str], final_url: str | None, fetched_at: float
    ) -> CachedResponse:
        """An entry for a response just received; ``headers`` is case-insensitive (httpx ``Headers``).

        The body loses the ``user:password@`` of the URLs in it here, not only on disk, so that a page
        parses alike from the network and from the cache (its parsed form is keyed by the body's hash)."""
        stored: dict[str, Any] = {attribute: headers.get(name) for attribute, name in _HEADERS}
        body = strip_credentials_in(body)
        digest = _digest(body)  # once: storing the entry and keying its parsed form both need it (pages of MBs)
        return cls(url=url, status=status, body=body, final_url=final_url, fetched_at=fetched_at, digest=digest,
                   **stored)  # fmt: skip

    def refreshed(self, headers: Mapping[str, str], now: float) -> CachedResponse:
        """This entry after a 304 with ``headers`` (RFC 9111 section 4.3.4).

        The header fields the 304 carries replace the stored ones; the others stay. ``Age`` and
        ``Date`` describe the 304 itself, so they are taken from it even when absent.
        """
        updated: dict[str, Any] = {a: headers.get(name) for a, name in _HEADERS if headers.get(name) is not None}
        updated.pop("content_type", None)  # a 304 has no body: its Content-Type, if any, is not the page's
        updated["age_header"] = headers.get("Age")
        updated["date"] = headers.get("Date")
        return replace(self, fetched_at=now, **updated)

    @property
    def directives(self) -> CacheControl:
        return parse_cache_control(self.cache_control)

    @property
    def no_store(self) -> bool:
        return self.directives.no_store

    @property
    def may_serve_stale(self) -> bool:
        """Whether a stale copy may stand in when revalidation fails (RFC 9111 sections 4.2.4, 5.2.2.2)."""
        directives = self.directives
        return not (directives.no_cache or directives.must_revalidate)

    def freshness_lifetime(self) -> float:
        """Seconds this response stays fresh (RFC 9111 section 4.2.1); 0 for ``no-cache``.

        A 404 ("this index does not carry the project") that states no lifetime of its own gets
        ``NOT_FOUND_LIFETIME`` (heuristic freshness, section 4.2.2; 404 is heuristically cacheable,
        RFC 9110 section 15.1). A 404 often comes bare; without this every warm run asked again for every
        variant page a package is missing from. ``--no-cache`` (or a 200 with its own lifetime) ends it.
        """
        directives = self.directives
        if directives.no_cache:
            return 0.0
        if self.status == 404 and directives.max_age is None and self.expires is None and not directives.conflict:
            return NOT_FOUND_LIFETIME
        return freshness_lifetime(directives, expires=self.expires, date=self.date, response_time=self.fetched_at)

    def fresh_until(self) -> float:
        """The POSIX time at which this copy stops being fresh (``is_fresh`` is false from then on)."""
        initial = self.age(self.fetched_at)  # the Age it arrived with
        return self.fetched_at - initial + self.freshness_lifetime()

    def is_fresh(self, now: float) -> bool:
        """True when this copy may be used without asking the server (RFC 9111 section 4.2)."""
        return self.age(now) < self.freshness_lifetime()

    @property
    def body_sha256(self) -> str:
        """The SHA-256 of the body (hex), the key of its parsed form (``index.parsed_cache``): for an entry read
        back, the stored one it was checked against, so a page's megabytes are hashed once per run, not twice."""
        return self.digest if self.digest is not None else _digest(self.body)

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
        """The current age (RFC 9111 section 4.2.3): the ``Age`` received plus the time since it arrived."""
        return current_age(self.age_header, response_time=self.fetched_at, now=now)

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored: every URL, and the body's, without credentials (module docstring)."""
        if self.apart:
            raise ValueError("the body of this entry was not read")
        body = strip_credentials_in(self.body)
        digest = self.body_sha256 if body is self.body else _digest(body)  # a body without credentials: as known
        return {
            "format": _FORMAT,
            "url": strip_credentials(self.url),
            "status": self.status,
            **{attribute: getattr(self, attribute) for attribute, _ in _HEADERS},
            "final_url": strip_credentials(self.final_url) if self.final_url is not None else None,
            "fetched_at": self.fetched_at,
            "sha256": digest,
            "body": body,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, body_at: int | None = None) -> CachedResponse:
        """Rebuild an entry from ``to_dict``'s form, or from a head alone (no ``body``: the body not read, its
        ``size`` and ``sha256`` given; ``body_at`` as the field says); raises ``ValueError`` on anything
        unexpected (the caller drops it)."""
        if data.get("format") != _FORMAT:
            raise ValueError("unknown cache entry format")
        status, fetched_at, digest = data["status"], data["fetched_at"], data.get("sha256")
        apart = "body" not in data  # not read (``HttpCache.get(..., body=False)``), or in a file of its own
        body = "" if apart else data["body"]
        if not isinstance(status, int) or status not in (200, 404):
            raise ValueError("bad status")
        if not isinstance(body, str) or not isinstance(fetched_at, int | float) or isinstance(fetched_at, bool):
            raise ValueError("bad body or fetched_at")
        if not isinstance(digest, str) or (digest != _digest(body) if not apart else not _HEX64.fullmatch(digest)):
            raise ValueError("body does not match its stored sha256")
        size = data.get("size", 0) if apart else 0
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError("bad body size")
        # Entries written before the freshness headers were stored lack them: None, so stale.
        optional = {k: data.get(k) for k in (*(attribute for attribute, _ in _HEADERS), "final_url")}
        if any(v is not None and not isinstance(v, str) for v in optional.values()):
            raise ValueError("bad header field")
        return cls(
            url=str(data["url"]), status=status, body=body, fetched_at=float(fetched_at), digest=digest,
            apart=apart, apart_size=size, body_at=body_at if apart else None, **optional,
        )  # fmt: skip


def entry_bytes(data: Mapping[str, Any]) -> bytes:
    """The file that stores ``data`` (``CachedResponse.to_dict``'s form): its head, one line of JSON with the
    body's ``size``, then the body's bytes; a head without ``body`` (stored beside it) is the whole file."""
    head = dict(data)
    body = head.pop("body", None)
    raw = body.encode("utf-8", errors="surrogatepass") if isinstance(body, str) else b""
    if body is not None:
        head["size"] = len(raw)
    head["apart"] = body is None
    return json.dumps(head, ensure_ascii=False).encode("utf-8", errors="surrogatepass") + b"\n" + raw


_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def _digest(body: str) -> str:
    import hashlib

    return hashlib.sha256(body.encode("utf-8", errors="surrogatepass")).hexdigest()


class HttpCache:
    """Stores index responses under ``root`` (normally ``default_cache_dir()``).

    ``refresh``: every entry counts as stale, so each is revalidated before use (uv's
    ``--refresh``); offline reads still use them.
    """

    def __init__(self, root: str | os.PathLike[str], *, refresh: bool = False) -> None:
        self.root = Path(root)
        self.refresh = refresh
        self._folder = self.root / _SUBDIR

    def is_fresh(self, entry: CachedResponse, now: float, *, max_age: float = 0.0) -> bool:
        """Whether ``entry`` may be used with no request: fresh by its headers, or younger than the
        caller's own ``max_age`` (seconds; 0: no such override); never under ``refresh``."""
        if self.refresh:
            return False
        return entry.is_fresh(now) or (max_age > 0 and entry.age(now) < max_age)

    def fresh_until(self, entry: CachedResponse, *, max_age: float = 0.0) -> float:
        """When ``is_fresh`` turns false for ``entry`` (POSIX time); -inf under ``refresh``."""
        if self.refresh:
            return -math.inf
        until = entry.fresh_until()
        if max_age > 0:
            until = max(until, entry.fetched_at - entry.age(entry.fetched_at) + max_age)
        return until

    def has_entries(self) -> bool:
        """Whether any response is stored at all (False on a fresh machine or an unreadable cache)."""
        try:
            with os.scandir(self._folder) as found:
                return any(True for _ in found)
        except OSError:
            return False

    def identity(self, url: str) -> tuple[int, int, int] | None:
        """What tells ``url``'s entry file from any other written there (its inode, size and modification time in
        ns: every write makes a new file); None when there is no such regular file."""
        try:
            found = os.stat(self.path_for(url))
        except OSError:
            return None
        return (found.st_ino, found.st_size, found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None

    def path_for(self, url: str) -> Path:
        """Where the entry for ``url`` lives: named by the SHA-256 of the URL without credentials, all in one
        folder, as uv keeps an index's pages (a fan-out of 256 folders cost a cold lock a folder per entry)."""
        import hashlib

        digest = hashlib.sha256(strip_credentials(url).encode("utf-8")).hexdigest()
        return self._folder / f"{digest}.entry"

    def get(self, url: str, *, body: bool = True) -> CachedResponse | None:
        """The stored response for ``url``; None when absent, unreadable, corrupt or for another URL.

        The entry comes back with ``url`` as asked (credentials included) and its final URL given the
        same credentials, so that the links on its page are fetched as the page was. ``body`` False: the head
        alone is read, the body only looked for (``apart``; ``with_body`` reads it): whether the page must be
        asked for again, and its parsed form, need its head and its digest, not its megabytes."""
        try:
            with open_regular(self.path_for(url), _ENTRY_LIMIT) as file:  # a FIFO or /dev/zero: no entry
                line = file.readline(_HEAD_LIMIT)
                rest = file.read() if body else b""
                size_on_disk = os.fstat(file.fileno()).st_size
            head = loads_json(line) if line.endswith(b"\n") else None
            if not isinstance(head, dict) or not isinstance(head.get("apart"), bool):
                return None
            if head.get("url") != strip_credentials(url):  # a digest collision (or a copied file): not this URL's
                return None
            inline, at, final = not head["apart"], len(line), head.get("final_url")
            if inline and body:
                size = head.get("size")
                if not isinstance(size, int) or len(rest) != size:
                    return None
                head["body"] = rest.decode("utf-8", errors="surrogatepass")
            head["url"] = url
            if isinstance(final, str):
                head["final_url"] = with_credentials_of(final, url)
            entry = CachedResponse.from_dict(head, body_at=at if inline and not body else None)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if not entry.apart:
            return entry
        if inline:  # the head alone was read: a body cut short or grown reads as missing
            return entry if size_on_disk == at + entry.apart_size else None
        if not body:  # beside it: likewise, and one replaced by something else
            return entry if self._body_fits(url, entry.apart_size) else None
        return self.with_body(entry)

    def with_body(self, entry: CachedResponse) -> CachedResponse | None:
        """``entry`` with its body read, when ``get(..., body=False)`` left it unread; None when that body is gone,
        or is not the one the entry names (its SHA-256; a file beside the entry that is not is removed):
        another run may have replaced the page."""
        if not entry.apart:
            return entry
        beside = entry.body_at is None
        try:
            if beside:
                path = self._body_path(entry.url)
                data = path.read_bytes() if self._body_fits(entry.url, entry.apart_size) else b""
            else:
                with open_regular(self.path_for(entry.url), _ENTRY_LIMIT) as file:
                    file.seek(entry.body_at or 0)
                    data = file.read(entry.apart_size + 1)
        except OSError:
            return None
        text = data.decode("utf-8", errors="surrogatepass")
        if len(data) != entry.apart_size or _digest(text) != entry.digest:
            if data and beside:  # not the body its entry names: removed, so that the entry reads as missing
                with contextlib.suppress(OSError):
                    path.unlink()
            return None
        return replace(entry, body=text, apart=False, body_at=None)

    def store(self, entry: CachedResponse) -> None:
        """Write ``entry`` atomically; a failed write leaves the cache as it was and raises nothing.

        A body over ``APART_BYTES`` goes to a file of its own beside the entry (``<entry>.body``), written only
        when it is not the one already there (a page fetched again unchanged, or confirmed by a 304, rewrites
        only its head: PyPI's pages run to megabytes). A body that cannot be written there stays in the entry.
        A ``no-store`` response is not written, and the entry it supersedes is removed.
        """
        target, apart_path = self.path_for(entry.url), self._body_path(entry.url)
        if entry.no_store:
            with contextlib.suppress(OSError):
                target.unlink(missing_ok=True)
                apart_path.unlink(missing_ok=True)
            return
        if entry.apart and entry.body_at is not None:  # a 304 on an entry whose body, in its file, was not read
            whole = self.with_body(entry)
            if whole is None:  # replaced meanwhile: what is there now stays
                return
            entry = whole
        try:
            if entry.apart:  # a 304 on an entry whose body beside it was not read: that body stays where it is
                head = {**replace(entry, apart=False, body="").to_dict(), "sha256": entry.digest,
                        "size": entry.apart_size}  # fmt: skip
                head.pop("body")
            else:
                head = entry.to_dict()
                size = self._write_body(entry.url, head["sha256"], head["body"])
                if size is not None:
                    head.pop("body")
                    head["size"] = size
            write_private_atomic(target, entry_bytes(head))
            if "body" in head:
                apart_path.unlink(missing_ok=True)  # the body is in the entry now
        except OSError:
            pass  # the cache is an optimisation; a read-only or full disk must not stop a resolve

    def _write_body(self, url: str, digest: str, body: str) -> int | None:
        """The size in bytes of ``url``'s body file once it holds ``body`` (its SHA-256 ``digest``), or None when
        ``body`` stays in the entry (``APART_BYTES`` or less, or the file cannot be written). The file is left as
        it is when the entry there names this very body and the file fits it: a page fetched again unchanged
        is neither encoded nor written again."""
        if len(body) * 4 <= APART_BYTES:  # at most 4 bytes a character: surely small enough to stay inline
            return None
        before = self.get(url, body=False)
        if before is not None and before.apart and before.body_at is None and before.digest == digest:
            return before.apart_size
        data = body.encode("utf-8", errors="surrogatepass")
        if len(data) <= APART_BYTES:
            return None
        try:
            write_private_atomic(self._body_path(url), data)
        except OSError:
            return None
        return len(data)

    def _body_fits(self, url: str, size: int) -> bool:
        """Whether ``url``'s body file is a regular file (not a link) of ``size`` bytes."""
        try:
            found = self._body_path(url).lstat()
        except OSError:
            return False
        return stat.S_ISREG(found.st_mode) and found.st_size == size

    def _body_path(self, url: str) -> Path:
        return self.path_for(url).with_suffix(".body")
