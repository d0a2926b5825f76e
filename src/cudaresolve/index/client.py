"""List the wheels an index offers (PyPI, the PyTorch index, mirrors). Does I/O: HTTP via an injected httpx.Client.

The pure parsers live in ``simple`` (re-exported here). ``IndexClient`` fetches one
project page with retries, the on-disk cache and mirrors; ``fetch_listings`` fetches many and,
when the network fails, falls back with a ``Notice`` instead of raising, so the caller can use
the embedded data. httpx is imported inside the functions that use it: importing this module
for ``IndexFile`` stays cheap.

Spec: https://packaging.python.org/en/latest/specifications/simple-repository-api/
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.simple import (
    ACCEPT,
    HINT,
    IndexFile,
    Keep,
    apply_mirror,
    canonical_project,
    mirrored_file,
    parse_body,
    parse_mirrors,
    parse_simple_html,
    parse_simple_json,
    version_filter,
)
from cudaresolve.text.findings import Notice, warning
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import httpx
    from packaging.utils import NormalizedName

    from cudaresolve.index.http_cache import CachedResponse, HttpCache

__all__ = [
    "ACCEPT",
    "IndexClient",
    "IndexFile",
    "Listings",
    "ProjectPage",
    "apply_mirror",
    "fetch_listings",
    "parse_mirrors",
    "parse_simple_html",
    "parse_simple_json",
    "version_filter",
]

_RETRY_STATUS: Final = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectPage:
    """One project's listing on one index, and where it actually came from.

    ``index_url`` is the index as configured (what a lock calls the index); ``served_from`` is
    the same index after mirrors (what was contacted). ``found`` is False when the index
    answered 404: the project is not on it. ``source``: "network", "revalidated" (304),
    "cache" (offline or still fresh) or "stale-cache" (network failed; ``error`` says how).
    """

    project: NormalizedName
    index_url: str
    served_from: str
    url: str
    files: tuple[IndexFile, ...]
    found: bool = True
    source: str = "network"
    fetched_at: float | None = None
    error: Text | None = None

    @property
    def mirrored(self) -> bool:
        return self.served_from != self.index_url


class IndexClient:
    """Fetches project pages through an injected ``httpx.Client`` (tests pass a respx-mocked one).

    Transport errors, 429 and 5xx are retried ``retries`` times with exponential backoff
    (``backoff * 2**n`` seconds, capped at ``max_backoff``, or the server's ``Retry-After``);
    ``sleep`` is injectable so tests do not wait. After a host fails that way, later pages on
    it fail at once instead of waiting through the retries again.
    """

    def __init__(
        self,
        http: httpx.Client | None,
        *,
        cache: HttpCache | None = None,
        offline: bool = False,
        mirrors: Mapping[str, str] | None = None,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        max_age: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._http = http
        self.cache = cache
        self.offline = offline
        self.mirrors = dict(mirrors or {})
        self._retries = max(0, retries)
        self._backoff, self._max_backoff = backoff, max_backoff
        self._timeout, self._connect_timeout = timeout, connect_timeout
        self._max_age = max_age  # serve a cached page younger than this without asking; 0 = always revalidate
        self._sleep, self._clock = sleep, clock
        self._down: dict[str, str] = {}  # host -> why it failed
        self.keep: dict[str, Keep] = {}  # project -> which file names to parse (all when absent)

    def fetch_project(self, index_url: str, name: str) -> list[IndexFile]:
        """The wheels of ``name`` on ``index_url``; [] when the index does not carry it (404)."""
        return list(self.fetch_page(index_url, name).files)

    def fetch_page(self, index_url: str, name: str) -> ProjectPage:
        """Fetch ``{index_url}/{normalized name}/`` (mirrors applied); raises ``IndexUnavailable``."""
        project = canonical_project(name)
        index = index_url.strip().rstrip("/")
        served_from = apply_mirror(index, self.mirrors)
        url = f"{served_from}/{project}/"
        cached = self.cache.get(url) if self.cache is not None else None
        if self.offline:
            if cached is None:
                raise IndexUnavailable(Text.of("index.not-cached", url=url), hint=HINT)
            return self._page(index, served_from, project, cached, "cache")
        if cached is not None and self._max_age > 0 and cached.age(self._clock()) < self._max_age:
            return self._page(index, served_from, project, cached, "cache")
        try:
            entry, source = self._download(url, cached)
        except IndexUnavailable as e:
            if cached is None:
                raise
            return self._page(index, served_from, project, cached, "stale-cache", error=e.text)
        page = self._page(index, served_from, project, entry, source)  # parse first: junk never gets cached
        if self.cache is not None:
            self.cache.store(entry)
        return page

    def _page(
        self,
        index: str,
        served_from: str,
        project: NormalizedName,
        entry: CachedResponse,
        source: str,
        error: Text | None = None,
    ) -> ProjectPage:
        found = entry.status != 404
        keep = self.keep.get(project)
        files = parse_body(entry.body, entry.content_type, entry.page_url, keep) if found else []
        # Absolute file URLs on another host (download-r2.pytorch.org) go through the mirrors too.
        files = [mirrored_file(f, self.mirrors) for f in files if f.project == project]
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
        )

    def _download(self, url: str, cached: CachedResponse | None) -> tuple[CachedResponse, str]:
        """GET the page (conditionally when cached) -> (response as an unsaved entry, source)."""
        from cudaresolve.index.http_cache import CachedResponse

        response = self._get(url, cached.conditional_headers() if cached is not None else {})
        status = response.status_code
        etag, modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
        if status == 304 and cached is not None:
            # RFC 9111 section 4.3.4: a 304 freshens the stored response and may update its validators.
            etag, modified = etag or cached.etag, modified or cached.last_modified
            return replace(cached, etag=etag, last_modified=modified, fetched_at=self._clock()), "revalidated"
        if status in (404, 410):
            status, body = 404, ""
        elif status != 200:
            raise IndexUnavailable(Text.of("index.http-status", url=url, status=status), hint=HINT)
        else:
            body = response.text
        final = str(response.url)
        entry = CachedResponse(
            url=url,
            status=status,
            body=body,
            content_type=response.headers.get("Content-Type"),
            etag=etag,
            last_modified=modified,
            final_url=final if final != url else None,
            fetched_at=self._clock(),
        )
        return entry, "network"

    def _get(self, url: str, conditional: Mapping[str, str]) -> httpx.Response:
        import httpx

        from cudaresolve import __version__

        host = urlsplit(url).netloc
        if host in self._down:
            raise IndexUnavailable(Text.of("index.host-down", host=host, reason=self._down[host]), hint=HINT)
        headers = {"Accept": ACCEPT, "User-Agent": f"cudaresolve/{__version__}", **conditional}
        timeout = httpx.Timeout(self._timeout, connect=self._connect_timeout)
        for attempt in range(self._retries + 1):
            retry_after: float | None = None
            try:
                if self._http is None:  # an offline caller made no client: there is no network to ask
                    raise IndexUnavailable(Text.of("index.offline", url=url), hint=Text("index.offline.hint"))
                response = self._http.get(url, headers=headers, timeout=timeout, follow_redirects=True)
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:
                if attempt == self._retries:
                    self._down[host] = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                    raise IndexUnavailable(
                        Text.of("index.could-not-reach", url=url, reason=self._down[host]), hint=HINT
                    ) from e
            except (httpx.HTTPError, httpx.InvalidURL) as e:
                raise IndexUnavailable(
                    Text.of("index.could-not-fetch", url=url, error=f"{type(e).__name__}: {e}"), hint=HINT
                ) from e
            else:
                if response.status_code not in _RETRY_STATUS or attempt == self._retries:
                    return response
                retry_after = _retry_after(response.headers.get("Retry-After"))
            delay = self._backoff * 2**attempt if retry_after is None else retry_after
            self._sleep(min(self._max_backoff, delay))
        raise AssertionError("unreachable: the loop returns or raises on its last attempt")


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (RFC 9110 section 10.2.3); the HTTP-date form is ignored."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


@dataclass(frozen=True, slots=True, kw_only=True)
class Listings:
    """What ``fetch_listings`` found. ``unavailable`` lists (index, project) pairs with no listing."""

    pages: tuple[ProjectPage, ...] = ()
    unavailable: tuple[tuple[str, NormalizedName], ...] = ()
    notices: tuple[Notice, ...] = ()

    def page(self, index_url: str, project: str) -> ProjectPage | None:
        index, name = index_url.strip().rstrip("/"), canonical_project(project)
        return next((p for p in self.pages if p.index_url == index and p.project == name), None)

    def files(self, index_url: str, project: str) -> tuple[IndexFile, ...] | None:
        """The wheels found; () when the index lacks the project; None when not fetched (use embedded data)."""
        page = self.page(index_url, project)
        return None if page is None else page.files


def _when(timestamp: float | None) -> str | Text:
    if timestamp is None:
        return Text("index.when-unknown")
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def make_http_client() -> httpx.Client:
    """The client ``lock`` uses: redirects followed, TLS set up only when an https URL is asked for.

    Loading the CA bundle costs ~30 ms of start-up; a run that talks only to plain-http mirrors
    (a local index) never needs it. Certificates are verified as usual for every https request.
    """
    import threading

    import httpx

    class _PerScheme(httpx.BaseTransport):
        def __init__(self) -> None:
            self._transports: dict[str, httpx.HTTPTransport] = {}
            self._lock = threading.Lock()  # pages are fetched from several threads

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            scheme = request.url.scheme
            with self._lock:
                if scheme not in self._transports:
                    # plain http never does TLS, so it needs no certificates; https verifies as usual
                    self._transports[scheme] = httpx.HTTPTransport(verify=scheme == "https")
                transport = self._transports[scheme]
            return transport.handle_request(request)

        def close(self) -> None:
            for transport in self._transports.values():
                transport.close()

    return httpx.Client(follow_redirects=True, transport=_PerScheme())


def fetch_listings(
    client: httpx.Client | None,
    requests: Sequence[tuple[str, str]],
    *,
    offline: bool,
    cache: HttpCache | None,
    mirrors: Mapping[str, str] | None = None,
    retries: int = 3,
    sleep: Callable[[float], None] = time.sleep,
    versions: Mapping[str, Iterable[str]] | None = None,
) -> Listings:
    """Fetch every (index_url, project) page; never raises ``IndexUnavailable``.

    ``versions`` (project -> versions) limits which files of a page are parsed, when the caller
    needs only those (a lock adding hashes to its pins); other files are skipped unparsed.

    A page that cannot be fetched is left out (listed in ``unavailable``) and one
    ``index-unavailable-fallback`` notice per index says the embedded data is used instead and
    hashes could not be added. A stale cached copy served because the network failed gives one
    ``index-stale-cache`` notice per index. Offline, cache misses are silent: the user asked.
    """
    index_client = IndexClient(client, cache=cache, offline=offline, mirrors=mirrors, retries=retries, sleep=sleep)
    for project, wanted in (versions or {}).items():
        index_client.keep[canonical_project(project)] = version_filter(project, wanted)
    pages: list[ProjectPage] = []
    unavailable: list[tuple[str, NormalizedName]] = []
    failed: dict[str, tuple[Text, list[str]]] = {}  # index -> (first reason, projects)
    stale: dict[str, tuple[Text, float | None, list[str]]] = {}
    seen: set[tuple[str, NormalizedName]] = set()
    keys: list[tuple[str, NormalizedName]] = []
    for index_url, name in requests:
        key = (index_url.strip().rstrip("/"), canonical_project(name))
        if key not in seen:
            seen.add(key)
            keys.append(key)

    def fetch(key: tuple[str, NormalizedName]) -> ProjectPage | IndexUnavailable:
        try:
            return index_client.fetch_page(*key)
        except IndexUnavailable as e:
            return e

    if client is not None and len(keys) > 1:  # pages are independent: ask for them at once
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(8, len(keys))) as pool:
            results = list(pool.map(fetch, keys))
    else:
        results = [fetch(key) for key in keys]
    for key, page in zip(keys, results, strict=True):
        if isinstance(page, IndexUnavailable):
            e = page
            unavailable.append(key)
            if not offline:
                failed.setdefault(key[0], (e.text, []))[1].append(key[1])
            continue
        pages.append(page)
        if page.source == "stale-cache":
            reason = page.error or Text("index.network-error")
            stale.setdefault(key[0], (reason, page.fetched_at, []))[2].append(key[1])
    notices = [
        warning("index-unavailable-fallback", "index.unavailable-fallback", index=index, reason=reason,
                names=literal(", ".join(names)))
        for index, (reason, names) in failed.items()
    ]
    notices += [
        warning("index-stale-cache", "index.stale-cache", index=index, reason=reason,
                names=literal(", ".join(names)), when=_when(fetched_at))
        for index, (reason, fetched_at, names) in stale.items()
    ]
    return Listings(pages=tuple(pages), unavailable=tuple(unavailable), notices=tuple(notices))
