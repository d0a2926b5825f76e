"""List the wheels an index offers (PyPI, the PyTorch index, mirrors). Does I/O: HTTP via an injected httpx.Client.

The pure parsers live in ``simple`` (re-exported here). ``IndexClient`` fetches one
project page with retries, the on-disk cache and mirrors (``listings.fetch_listings`` fetches many).
httpx is imported inside the functions that use it: importing this module for ``IndexFile`` stays cheap.

Spec: https://packaging.python.org/en/latest/specifications/simple-repository-api/
"""

from __future__ import annotations

import hashlib
import math
import time
from functools import partial
from typing import TYPE_CHECKING, TypeGuard

from cudaresolve.core.progress import Event, report
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.file_download import MAX_REDIRECTS, REDIRECTS, download_within
from cudaresolve.index.limits import Deadline, busy, file_deadline, page_text, read_body, read_capped
from cudaresolve.index.notices import listing_notices
from cudaresolve.index.pages import Listings, ProjectPage
from cudaresolve.index.parsed_cache import parse_files, parsed_key
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.retries import Hosts, host_of, retried, transient
from cudaresolve.index.simple import (
    ACCEPT,
    HINT,
    IndexFile,
    Keep,
    apply_mirror,
    canonical_project,
    mirrored_file,
    parse_mirrors,
    parse_simple_html,
    parse_simple_json,
    version_filter,
)
from cudaresolve.index.transport import LazyClient, Reply, make_http_client, stream_within
from cudaresolve.index.trust import FileTrust, is_same_host_redirect, redirect_target
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import httpx
    from packaging.utils import NormalizedName

    from cudaresolve.index.http_cache import CachedResponse, HttpCache
    from cudaresolve.index.page_fetcher import PageFetcher

__all__ = [
    "ACCEPT", "IndexClient", "IndexFile", "Listings", "ProjectPage", "apply_mirror",
    "listing_notices", "make_http_client", "parse_mirrors", "parse_simple_html", "parse_simple_json", "version_filter",
]  # fmt: skip


class IndexClient:
    """Fetches project pages through an injected ``httpx.Client`` or ``LazyClient`` (tests pass a respx-mocked one).

    Pages, ``.metadata`` files and range reads are sent again as ``retries`` says (transport errors, 429, 5xx,
    with back-off; a host that cannot be connected to is down for the run); ``sleep`` is injectable so tests
    do not wait.
    """

    def __init__(
        self,
        http: httpx.Client | LazyClient | None,
        policy: IndexPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        keep: Keep | None = None,
        fetcher: PageFetcher | None = None,
    ) -> None:
        """``policy``: the run's rules (mirrors, offline, cache, hosts, limits, deadline; default: online, no
        cache, no mirrors); ``keep``: the file names of every page to parse (``fitting.tag_filter``), None: all;
        ``fetcher``: the helper process that fetches pages into the cache (``page_fetcher``), None: all here."""
        self._http = http
        self._fetcher = fetcher
        self.policy = policy if policy is not None else IndexPolicy()
        self._keep_default = keep
        self._sleep, self._clock = sleep, clock
        self._hosts = Hosts()  # those down, those that answered (``retries``)
        self.keep: dict[str, Keep] = {}  # project -> which file names to parse (all when absent)
        self._peeked: dict[str, tuple[CachedResponse | None]] = {}  # url -> (entry read ahead by fresh_page and co.)

    @property
    def offline(self) -> bool:
        return self.policy.offline

    @property
    def cache(self) -> HttpCache | None:
        return self.policy.cache

    @property
    def mirrors(self) -> Mapping[str, str]:
        return self.policy.mirrors

    def fetch_project(self, index_url: str, name: str) -> list[IndexFile]:
        """The wheels of ``name`` on ``index_url``; [] when the index does not carry it (404)."""
        return list(self.fetch_page(index_url, name).files)

    def fetch_page(self, index_url: str, name: str) -> ProjectPage:
        """Fetch ``{index_url}/{normalized name}/`` (mirrors applied); raises ``IndexUnavailable``.

        No request is sent offline, nor for a cached copy still fresh (RFC 9111, see ``http_cache``).
        A mirror of an index under ``flat_roots`` without that page may be a flat directory (``index.flat``).
        """
        page = self._project_page(index_url, name)
        if page.found or not self._flat_ok(page):
            return page
        from cudaresolve.index.flat import flat_page

        return flat_page(self, page, fresh_only=False) or page

    def entry(self, url: str, *, fresh_only: bool = False) -> tuple[CachedResponse, str] | None:
        """Any page by URL (a flat listing) through the cache as project pages go: (entry, source); None when
        ``fresh_only`` and a request would be needed. Raises ``IndexUnavailable``."""
        if url.startswith("file://"):  # a folder of wheels on this machine (``--find-links DIR``): listed afresh
            from cudaresolve.index.local_folder import folder_listing

            return folder_listing(url), "local"
        cached = self._cached(url)
        if cached is not None and cached.apart and self.cache is not None:  # its caller reads the body itself
            cached = self.cache.with_body(cached)
        if self._usable(cached, url):
            return cached, "cache"
        if fresh_only:
            return None
        entry, source = self._download(url, cached)
        if self.cache is not None:
            self.cache.store(entry)
        return entry, source

    def every_wheel(self, page: ProjectPage) -> tuple[IndexFile, ...]:
        """Every wheel ``page`` lists, for whatever target (``keep`` set aside), read again from its cache entry
        (fetched when there is none) and parsed without storing a parsed form; raises ``IndexUnavailable``."""
        found = self.entry(page.url)
        if found is None:  # only with ``fresh_only``
            return ()
        entry, source = found
        return self.page_of(page.index_url, page.served_from, page.project, entry, source, keep=_wheel_names).files

    def _flat_ok(self, page: ProjectPage) -> bool:
        return page.mirrored and any(_under(page.index_url, root) for root in self.policy.flat_roots)

    def _project_page(self, index_url: str, name: str) -> ProjectPage:
        project, index, served_from, url = self._where(index_url, name)
        cached = self._cached(url)
        if self._usable(cached, url):
            report(Event(kind="page-cached", label=url))
            return self.page_of(index, served_from, project, cached, "cache")
        stored = None
        if cached is None and self._fetcher is not None:  # fetched, parsed and stored by the helper process?
            keep = self.keep.get(project, self._keep_default)
            stored = self._fetcher.entry(url, policy=self.policy, keep=keep, hosts=self._hosts)
        if stored is not None:  # then read as a warm run reads it
            if stored.status == 200:
                report(Event(kind="bytes", label=url, amount=stored.apart_size))
            page = self.page_of(index, served_from, project, stored, "network")
            report(Event(kind="page", label=url))
            return page
        try:
            entry, source = self._download(url, cached)
        except IndexUnavailable as e:
            if cached is None or not cached.may_serve_stale:  # must-revalidate / no-cache: never stale
                raise
            return self.page_of(index, served_from, project, cached, "stale-cache", error=e.text)
        page = self.page_of(index, served_from, project, entry, source)  # parse first: junk never gets cached
        report(Event(kind="page", label=url))
        if self.cache is not None:
            self.cache.store(entry)
        return page

    def fetch_text(self, url: str) -> tuple[str, str]:
        """GET one file as text (a PEP 658 ``.metadata`` file) and the SHA-256 of its bytes as served (what an
        index's hash is of, whatever the text's charset), with the retries, caps and redirect rules of pages;
        raises ``IndexUnavailable`` on any status but 200. No cache here: the caller keeps it."""
        if self.offline:
            raise IndexUnavailable(Text.of("index.not-cached", url=url), hint=HINT)
        reply = self._get(url, {}, digest=True)
        if reply.status != 200:
            raise IndexUnavailable(Text.of("index.http-status", url=url, status=reply.status), hint=HINT)
        return reply.body, reply.sha256 or ""

    def fetch_range(self, url: str, first: int | None, last: int | None, *, cap: int) -> tuple[int, str | None, bytes]:
        """One ranged GET (RFC 9110 section 14): ``bytes=first-last``, or the last ``last`` bytes when ``first``
        is None -> (status, Content-Range, body). The body is capped at ``cap``; retried as pages are (a read
        of a wheel's METADATA is one request among a hundred in a lock); no redirects."""
        if self.offline or self._http is None:
            raise IndexUnavailable(Text.of("index.not-cached", url=url), hint=HINT)
        with busy(self.policy.deadline):  # the run's network time (``Deadline.busy``)
            once = partial(self._fetch_range, url, f"bytes=-{last}" if first is None else f"bytes={first}-{last}", cap)
            status, content_range, body = retried(url, once, policy=self.policy, hosts=self._hosts, sleep=self._sleep)
        if status not in (200, 206):
            raise IndexUnavailable(Text.of("index.http-status", url=url, status=status), hint=HINT)
        return status, content_range, body

    def _fetch_range(self, url: str, wanted: str, cap: int) -> tuple[int, str | None, tuple[int, str | None, bytes]]:
        """``fetch_range``'s one try, as ``retries.retried`` takes it; the body is read only for 200 and 206."""
        import httpx

        headers = {"Range": wanted, "Accept-Encoding": "identity"}
        rules = self.policy
        try:
            with stream_within(self._http, url, headers=headers, timeout=rules.timeout, deadline=rules.deadline) as r:
                body = b""
                if r.status_code in (200, 206):
                    body = read_capped(r.iter_bytes(), url=url, cap=cap, deadline=rules.deadline)
                    report(Event(kind="bytes", label=url, amount=len(body)))
                got = (r.status_code, r.headers.get("Content-Range"), body)
                return r.status_code, r.headers.get("Retry-After"), got
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:
            raise transient(e) from e
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            raise IndexUnavailable(
                Text.of("index.could-not-fetch", url=url, error=f"{type(e).__name__}: {e}"), hint=HINT
            ) from e

    def download(self, url: str, write: Callable[[bytes], object], *, cap: int, any_host: bool = False) -> None:
        """GET one whole file (a direct reference's wheel, an sdist) into ``write``, chunk by chunk, as sent
        (no content decoding: the bytes are hashed); at most ``cap`` bytes within ``file_deadline()`` seconds.
        Redirects are followed as for pages (same host only), or with ``any_host`` to any https URL (a URL
        the user named: its hash is what is trusted). No retries; raises ``IndexUnavailable``."""
        if url.startswith("file://"):  # a wheel of a local folder of them (``--find-links DIR``): read where it is
            from cudaresolve.index.local_folder import read_local

            read_local(url, write, cap=cap)
            return
        if self.offline or self._http is None:
            raise IndexUnavailable(Text.of("index.not-cached", url=url), hint=HINT)
        host = host_of(url)
        if host in self._hosts.down:  # one that could not be reached is not asked again this run (``retries``)
            raise IndexUnavailable(Text.of("index.host-down", host=host, reason=self._hosts.down[host]), hint=HINT)
        deadline = Deadline(file_deadline())
        with deadline.busy():  # the whole download is network time
            try:
                download_within(self._http, self.policy, url, write, cap=cap, any_host=any_host, deadline=deadline)
            except IndexUnavailable as e:
                reason = _unreachable(e.__cause__)
                if reason is not None and host not in self._hosts.answered:
                    self._hosts.down[host] = reason
                raise
        self._hosts.answered.add(host)

    def fresh_page(self, index_url: str, name: str) -> ProjectPage | None:
        """The page if it needs no request (offline, or fresh in the cache), else None; raises as ``fetch_page``."""
        project, index, served_from, url = self._where(index_url, name)
        cached = self._cached(url)
        if self._usable(cached, url):
            page = self.page_of(index, served_from, project, cached, "cache")
            if page.found or not self._flat_ok(page):
                return page
            from cudaresolve.index.flat import flat_page

            return flat_page(self, page, fresh_only=True)
        self._peeked[url] = (cached,)  # fetch_page comes next: spare it a second read
        return None

    def needs_request(self, index_url: str, name: str) -> bool:
        """Whether ``fetch_page`` would send a request (no fresh copy of a found page in the cache); the entry read
        is kept for that ``fetch_page``. Offline: False (it would fail or use the cache, never ask)."""
        if self.offline:
            return False
        _, _, _, url = self._where(index_url, name)
        cached = self._cached(url)
        self._peeked[url] = (cached,)
        return not (self._usable(cached, url) and cached.status != 404)

    def fresh_entry(self, index_url: str, name: str) -> tuple[str, CachedResponse] | None:
        """(the page's URL, its cached entry) when the page is found and fresh in the cache (used with no request;
        offline: found); else None. Reads the entry's head only."""
        *_, url = self._where(index_url, name)
        cached = self.cache.get(url, body=False) if self.cache is not None else None
        usable = cached is not None and cached.status != 404 and self._usable(cached, url)
        return (url, cached) if usable and cached is not None else None

    def _cached(self, url: str) -> CachedResponse | None:
        peeked = self._peeked.pop(url, None)  # one pop: another thread may take it between a test and a pop
        if peeked is not None:
            return peeked[0]
        return self.cache.get(url, body=False) if self.cache is not None else None  # parse_files reads it if needed

    def page_url(self, index_url: str, name: str) -> str:
        """The URL ``name``'s page is read from (mirrors applied), which its cache entry is keyed by."""
        return self._where(index_url, name)[3]

    def _where(self, index_url: str, name: str) -> tuple[NormalizedName, str, str, str]:
        """(project, index as configured, index after mirrors, page URL)."""
        project, index = canonical_project(name), index_url.strip().rstrip("/")
        served_from = apply_mirror(index, self.mirrors)
        return project, index, served_from, f"{served_from}/{project}/"

    def _usable(self, cached: CachedResponse | None, url: str) -> TypeGuard[CachedResponse]:
        """Whether ``cached`` is used as is: offline (raises when there is none), or fresh."""
        if self.offline and cached is None:
            raise IndexUnavailable(Text.of("index.not-cached", url=url), hint=HINT)
        if cached is None or self.cache is None:
            return False
        return self.offline or self.cache.is_fresh(cached, self._clock(), max_age=self.policy.max_age)

    def page_of(
        self, index: str, served_from: str, project: NormalizedName, entry: CachedResponse, source: str,
        error: Text | None = None, keep: Keep | None = None,
    ) -> ProjectPage:  # fmt: skip
        keep = keep or self.keep.get(project, self._keep_default)
        try:
            files = parse_files(self.cache, entry, keep) if entry.status != 404 else []
        except IndexUnavailable:  # a body stored apart, replaced meanwhile by another run: the page is asked again
            if not entry.apart or self.offline:
                raise
            (entry, source), error = self._download(entry.url, None), None
            files = parse_files(self.cache, entry, keep) if entry.status != 404 else []
            if self.cache is not None:  # parsed first, as ``_project_page`` does: junk never gets cached
                self.cache.store(entry)
        found = entry.status != 404
        # Absolute file URLs on another host (download-r2.pytorch.org) go through the mirrors too.
        files = [mirrored_file(f, self.mirrors) for f in files if f.project == project]
        trust = FileTrust.for_page(
            page_url=entry.page_url, index_url=index, allowed_hosts=self.policy.allowed_hosts,
            mirror_urls=tuple(self.mirrors.values()),
        )  # fmt: skip
        files, refused = trust.split(files)
        if refused and not files:  # nothing left to take: the page is unusable, and says why (not "no wheel")
            example = f"{refused[0][0].filename[:120]} ({refused[0][1][:80]})"
            raise IndexUnavailable(
                Text.of("index.files-all-refused", url=entry.page_url, count=len(refused), example=example),
                hint=Text("index.files-all-refused.hint"),
            )
        return ProjectPage(
            project=project,
            index_url=index,
            served_from=served_from,
            url=entry.url,
            files=tuple(files),
            found=found,
            source=source,
            fetched_at=entry.fetched_at,
            error=error,
            refused=tuple((f.filename, why) for f, why in refused),
            key=parsed_key(entry) if found else None,
        )

    def _download(self, url: str, cached: CachedResponse | None) -> tuple[CachedResponse, str]:
        """GET the page (conditionally when cached) -> (response as an unsaved entry, source)."""
        from cudaresolve.index.http_cache import CachedResponse

        reply = self._get(url, cached.conditional_headers() if cached is not None else {})
        status = reply.status
        if status == 304 and cached is not None:
            # RFC 9111 section 4.3.4: a 304 freshens the stored response and updates its stored headers.
            return cached.refreshed(reply.headers, self._clock()), "revalidated"
        if status in (404, 410):
            status, body = 404, ""
        elif status != 200:
            raise IndexUnavailable(Text.of("index.http-status", url=url, status=status), hint=HINT)
        else:
            body = reply.body
        final_url = reply.url if reply.url != url else None
        entry = CachedResponse.from_headers(
            url=url, status=status, body=body, headers=reply.headers, final_url=final_url, fetched_at=self._clock()
        )
        return entry, "network"

    def _get(self, url: str, conditional: Mapping[str, str], *, digest: bool = False) -> Reply:
        """``_get_retried``, its time counted as the run's network time (``Deadline.busy``); ``digest``: the reply
        carries the SHA-256 of the bytes as served (a file an index lists a hash of; a page needs none)."""
        with busy(self.policy.deadline):
            return self._get_retried(url, conditional, digest=digest)

    def _get_retried(self, url: str, conditional: Mapping[str, str], *, digest: bool = False) -> Reply:
        """One page, retried (``retries``); same-host redirects followed, others refused; bounded in time and size."""

        def once() -> tuple[int, str | None, Reply]:
            reply = self._attempt(url, conditional, digest=digest)
            return reply.status, reply.headers.get("Retry-After"), reply

        return retried(url, once, policy=self.policy, hosts=self._hosts, sleep=self._sleep)

    def _attempt(self, url: str, conditional: Mapping[str, str], *, digest: bool = False) -> Reply:
        """One GET with its redirects; transport failures come out as ``TransientError``."""
        import httpx

        from cudaresolve import __version__

        if self._http is None:  # an offline caller made no client: there is no network to ask
            raise IndexUnavailable(Text.of("index.offline", url=url), hint=Text("index.offline.hint"))
        headers = {"Accept": ACCEPT, "User-Agent": f"cudaresolve/{__version__}", **conditional}
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            rest = self.policy.deadline.remaining() if self.policy.deadline is not None else math.inf
            timeout = httpx.Timeout(min(self.policy.timeout, rest), connect=min(self.policy.connect_timeout, rest))
            try:
                deadline = self.policy.deadline
                with stream_within(self._http, current, headers=headers, timeout=timeout, deadline=deadline) as r:
                    location = r.headers.get("Location") if r.status_code in REDIRECTS else None
                    if location is None:
                        return self._read(current, r, digest=digest)
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:
                raise transient(e) from e
            except (httpx.HTTPError, httpx.InvalidURL) as e:
                raise IndexUnavailable(
                    Text.of("index.could-not-fetch", url=current, error=f"{type(e).__name__}: {e}"), hint=HINT
                ) from e
            target = redirect_target(current, location)
            if not is_same_host_redirect(current, target):
                raise IndexUnavailable(
                    Text.of("index.redirect-refused", url=current, target=target[:300]),
                    hint=Text("index.redirect-refused.hint"),
                )
            current = target
        raise IndexUnavailable(Text.of("index.too-many-redirects", url=url, limit=MAX_REDIRECTS), hint=HINT)

    def _read(self, url: str, response: httpx.Response, *, digest: bool = False) -> Reply:
        """The body, streamed under the page cap and the deadline (only for 200: other bodies are unused)."""
        body, sha256 = "", None
        if response.status_code == 200:
            raw = read_body(response, url=url, cap=self.policy.max_page_bytes, deadline=self.policy.deadline)
            report(Event(kind="bytes", label=url, amount=len(raw)))
            body = page_text(response, raw)
            sha256 = hashlib.sha256(raw).hexdigest() if digest else None
        return Reply(status=response.status_code, headers=response.headers, url=url, body=body, sha256=sha256)


def _under(url: str, root: str) -> bool:
    return url == root or url.startswith(root + "/")


def _unreachable(error: BaseException | None) -> str | None:
    """Why ``error`` is a connect that failed (a host that cannot be resolved, refuses, or does not answer in
    time; not a TLS handshake glitch: ``retries.transient``'s verdict), else None."""
    import httpx

    failure = transient(error) if isinstance(error, httpx.HTTPError) else None
    return failure.reason if failure is not None and failure.connect else None


def _wheel_names(filename: str) -> bool:
    """``every_wheel``'s filter: any wheel. It has no ``key``, so its parsed form is never stored
    (``parsed_cache``) over the one a run's own filter reads."""
    return filename.endswith(".whl")
