"""List the wheels an index offers (PyPI, the PyTorch index, mirrors). Does I/O: HTTP via an injected httpx.Client.

The parsers are pure: ``parse_simple_json`` reads PEP 691 JSON (PyPI), ``parse_simple_html``
reads PEP 503 HTML (download.pytorch.org, which serves only static HTML; pytorch/test-infra
``s3_management/manage_v2.py``), ``apply_mirror`` rewrites URLs. ``IndexClient`` fetches one
project page with retries, the on-disk cache and mirrors; ``fetch_listings`` fetches many and,
when the network fails, falls back with a ``Notice`` instead of raising, so the caller can use
the embedded data. httpx is imported inside the functions that use it: importing this module
for ``IndexFile`` stays cheap.

Spec: https://packaging.python.org/en/latest/specifications/simple-repository-api/
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from packaging.version import InvalidVersion, Version

from cudaresolve.errors import IndexUnavailable, InvalidInput
from cudaresolve.models import Notice, canonical_name

if TYPE_CHECKING:
    import httpx
    from packaging.tags import Tag
    from packaging.utils import BuildTag, NormalizedName

    from cudaresolve.cache import CachedResponse, HttpCache

__all__ = [
    "ACCEPT",
    "PYPI_SIMPLE",
    "IndexClient",
    "IndexFile",
    "Listings",
    "ProjectPage",
    "apply_mirror",
    "fetch_listings",
    "parse_mirrors",
    "parse_simple_html",
    "parse_simple_json",
]

PYPI_SIMPLE: Final = "https://pypi.org/simple"
#: JSON first, HTML as fallback: the order pip asks in (pip src/pip/_internal/index/collector.py).
ACCEPT: Final = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
_JSON_TYPES: Final = (
    "application/vnd.pypi.simple.v1+json",
    "application/vnd.pypi.simple.latest+json",
    "application/json",
)
_HTML_TYPES: Final = ("application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.latest+html", "text/html")
#: PEP 714 renamed dist-info-metadata to core-metadata; read the new key first.
_METADATA_KEYS: Final = ("core-metadata", "dist-info-metadata", "data-dist-info-metadata")
_RETRY_STATUS: Final = frozenset({429, 500, 502, 503, 504})
_HINT: Final = (
    "check the network or proxy and retry; --offline uses the embedded data and the cache; "
    "if this host is blocked for you, point it at a mirror with [tool.cudaresolve] index-mirror"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFile:
    """One wheel on an index page. ``url`` is absolute, without the ``#sha256=`` fragment."""

    project: NormalizedName
    filename: str
    url: str
    version: Version  # with the local part, e.g. 2.7.1+cu118
    build: BuildTag  # () or (3, "") for torch-2.10.0-3-cp311-...
    tags: frozenset[Tag]
    sha256: str | None = None
    requires_python: str | None = None
    yanked: bool = False
    yanked_reason: str | None = None
    core_metadata: bool = False  # PEP 658/714: "{url}.metadata" exists
    core_metadata_sha256: str | None = None  # hash of that .metadata file, not of the wheel
    size: int | None = None  # JSON only (PEP 700)
    upload_time: datetime | None = None  # JSON, or the PyTorch index's data-upload-time

    @property
    def local(self) -> str | None:
        """The local version label, which on the PyTorch index names the variant (``cu118``)."""
        return self.version.local


_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def _sha256(value: object) -> str | None:
    text = value.strip().lower() if isinstance(value, str) else ""
    return text if _HEX64.fullmatch(text) else None


Keep = Callable[[str], bool]


def _mirrored(file: IndexFile, mirrors: Mapping[str, str]) -> IndexFile:
    url = apply_mirror(file.url, mirrors) if mirrors else file.url
    return file if url == file.url else replace(file, url=url)


def version_filter(project: str, versions: Iterable[str]) -> Keep:
    """A cheap test on wheel file names: only ``project``'s files of exactly these versions.

    Used to skip parsing (Version, tags) the hundreds of other files on a page when a lock only
    needs the pinned ones.
    """
    dist = re.sub(r"[-_.]+", "_", project).lower()
    wanted = {v.lower() for v in versions}

    def keep(filename: str) -> bool:
        parts = filename.split("-", 2)
        return len(parts) == 3 and parts[0].lower() == dist and parts[1].lower() in wanted

    # Substrings one of which a kept file's line must hold ("+" is "%2B" in the PyTorch index's hrefs).
    keep.needles = tuple(  # type: ignore[attr-defined]
        f"{dist}-{form}-" for v in wanted for form in {v, v.replace("+", "%2b")}
    )
    return keep


def _drop_other_lines(text: str, keep: Keep) -> str:
    """Lines with an anchor that names none of ``keep``'s files are dropped before HTML parsing.

    Index pages put one anchor per line; a page that does not is parsed whole, so the filter only
    saves time and never changes the answer (``keep`` is applied to every parsed file as well).
    """
    needles = getattr(keep, "needles", ())
    if not needles or text.count("\n") < 8:
        return text
    kept = []
    for line in text.splitlines():
        low = line.lower()
        if "<a " not in low or any(n in low for n in needles):
            kept.append(line)
    return "\n".join(kept)


def _upload_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _canonical(name: str) -> NormalizedName:
    return cast("NormalizedName", canonical_name(name))


def _wheel(filename: str, url: str, **fields: Any) -> IndexFile | None:
    """An ``IndexFile`` for a wheel; None for sdists, other files and unparseable names."""
    if not filename.endswith(".whl"):
        return None
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename  # pulls in packaging.tags: only here

    try:
        name, version, build, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None  # pip skips such links too (index/package_finder.py)
    return IndexFile(project=name, filename=filename, url=url, version=version, build=build, tags=tags, **fields)


def _check_api_version(version: object, page_url: str) -> None:
    """PEP 629: a major version other than 1 is an error; a newer minor is fine."""
    if version is None:
        return
    major = str(version).split(".", 1)[0]
    if major != "1":
        raise IndexUnavailable(
            f"{page_url} uses simple API version {version}, which cudaresolve does not understand",
            hint="upgrade cudaresolve, or use --offline",
        )


def _metadata_flag(value: object) -> tuple[bool, str | None]:
    """``data-core-metadata``/``core-metadata`` value -> (available, sha256 of the .metadata file)."""
    if value is True or (isinstance(value, str) and value.strip().lower() == "true"):
        return True, None
    if isinstance(value, Mapping):
        return True, _sha256(value.get("sha256"))
    if isinstance(value, str) and "=" in value:
        algo, _, digest = value.partition("=")
        return True, _sha256(digest) if algo.strip().lower() == "sha256" else None
    return False, None


class _AnchorParser(HTMLParser):
    """Collects ``<a>`` attributes and text, ``<base href>`` and the repository-version meta tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)  # attribute values arrive html-unescaped
        self.anchors: list[tuple[dict[str, str | None], str]] = []
        self.base: str | None = None
        self.api_version: str | None = None
        self._open: tuple[dict[str, str | None], list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a":
            self._close()
            self._open = (values, [])
        elif tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"]
        elif tag == "meta" and values.get("name") == "pypi:repository-version":
            self.api_version = values.get("content")

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._close()

    def close(self) -> None:
        super().close()
        self._close()  # an anchor left open at the end of the page still counts

    def _close(self) -> None:
        if self._open is not None:
            self.anchors.append((self._open[0], "".join(self._open[1]).strip()))
            self._open = None


def parse_simple_html(text: str, page_url: str, *, keep: Keep | None = None) -> list[IndexFile]:
    """The wheels on a PEP 503 project page, in page order.

    ``href`` resolves against ``<base href>`` or ``page_url``; the filename is the percent-decoded
    last path segment (the PyTorch index writes ``+`` as ``%2B`` in hrefs), else the anchor text.
    """
    parser = _AnchorParser()
    parser.feed(_drop_other_lines(text, keep) if keep is not None else text)
    parser.close()
    _check_api_version(parser.api_version, page_url)
    base = urljoin(page_url, parser.base) if parser.base else page_url
    files: list[IndexFile] = []
    for attrs, anchor_text in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url, fragment = urldefrag(urljoin(base, href.strip()))
        algo, _, digest = fragment.partition("=")
        filename = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or anchor_text
        if keep is not None and not keep(filename):
            continue
        metadata = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))  # PEP 714 order
        has_metadata, metadata_sha = _metadata_flag(metadata)
        yanked = "data-yanked" in attrs
        wheel = _wheel(
            filename,
            url,
            sha256=_sha256(digest) if algo.lower() == "sha256" else None,
            requires_python=(attrs.get("data-requires-python") or "").strip() or None,
            yanked=yanked,
            yanked_reason=(attrs.get("data-yanked") or None) if yanked else None,
            core_metadata=has_metadata,
            core_metadata_sha256=metadata_sha,
            upload_time=_upload_time(attrs.get("data-upload-time")),  # non-standard, PyTorch index
        )
        if wheel is not None:
            files.append(wheel)
    return files


def parse_simple_json(
    payload: Mapping[str, Any] | str | bytes, page_url: str, *, keep: Keep | None = None
) -> list[IndexFile]:
    """The wheels in a PEP 691 project detail response (API 1.x), in listed order."""
    if isinstance(payload, str | bytes):
        try:
            payload = json.loads(payload)
        except ValueError as e:
            raise IndexUnavailable(f"{page_url} returned invalid JSON: {e}", hint=_HINT) from e
    if not isinstance(payload, Mapping) or not isinstance(payload.get("files"), list):
        raise IndexUnavailable(f"{page_url} is not a PEP 691 project page (no 'files' list)", hint=_HINT)
    meta = payload.get("meta")
    _check_api_version(meta.get("api-version") if isinstance(meta, Mapping) else None, page_url)
    files: list[IndexFile] = []
    for entry in payload["files"]:
        if not isinstance(entry, Mapping):
            continue
        filename, url = entry.get("filename"), entry.get("url")
        if not isinstance(filename, str) or not isinstance(url, str):
            continue
        if keep is not None and not keep(filename):
            continue
        hashes = entry.get("hashes")
        yanked = entry.get("yanked", False)
        requires_python = entry.get("requires-python")
        size = entry.get("size")
        metadata = next((entry[k] for k in _METADATA_KEYS if k in entry), None)
        has_metadata, metadata_sha = _metadata_flag(metadata)
        wheel = _wheel(
            filename,
            urldefrag(urljoin(page_url, url))[0],
            sha256=_sha256(hashes.get("sha256")) if isinstance(hashes, Mapping) else None,
            requires_python=(requires_python.strip() or None) if isinstance(requires_python, str) else None,
            yanked=bool(yanked),
            yanked_reason=yanked if isinstance(yanked, str) and yanked else None,
            core_metadata=has_metadata,
            core_metadata_sha256=metadata_sha,
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            upload_time=_upload_time(entry.get("upload-time")),
        )
        if wheel is not None:
            files.append(wheel)
    return files


def _parse_body(body: str, content_type: str | None, page_url: str, keep: Keep | None = None) -> list[IndexFile]:
    """Dispatch on Content-Type (PEP 691); sniff only when the server sent none we know."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in _JSON_TYPES:
        return parse_simple_json(body, page_url, keep=keep)
    if media in _HTML_TYPES or not body.lstrip().startswith("{"):
        return parse_simple_html(body, page_url, keep=keep)
    return parse_simple_json(body, page_url, keep=keep)  # e.g. binary/octet-stream from a bare S3 bucket


def _matches_prefix(url: str, prefix: str) -> bool:
    return url == prefix or url.startswith((prefix + "/", prefix + "?", prefix + "#"))


def apply_mirror(url: str, mirrors: Mapping[str, str]) -> str:
    """Rewrite ``url`` through the longest matching mirror prefix, on a path boundary.

    ``apply_mirror("https://download.pytorch.org/whl/cu118/torch/",
    {"https://download.pytorch.org/whl": "https://mirror.example.org/pytorch/whl"})`` gives
    ``"https://mirror.example.org/pytorch/whl/cu118/torch/"``; an unmatched URL comes back as is.
    """
    best: tuple[str, str] | None = None
    for prefix, target in mirrors.items():
        clean = prefix.rstrip("/")
        if clean and _matches_prefix(url, clean) and (best is None or len(clean) > len(best[0])):
            best = (clean, target.rstrip("/"))
    return url if best is None else best[1] + url[len(best[0]) :]


def _check_http_url(url: str, what: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput(f"{what} is not an http(s) URL: {url!r}", hint="write it like https://mirror.example.org/whl")
    return url.strip().rstrip("/")


def parse_mirrors(value: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    """``{"ORIGINAL": "MIRROR"}`` (pyproject) or ``["ORIGINAL=MIRROR", ...]`` (flags) -> a checked mapping."""
    pairs: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        for item in value:
            original, sep, mirror = str(item).partition("=")
            if not sep:
                raise InvalidInput(
                    f"not a mirror mapping: {item!r}",
                    hint="write ORIGINAL=MIRROR, e.g. https://download.pytorch.org/whl=https://mirror.example.org/whl",
                )
            pairs.append((original, mirror))
    return {_check_http_url(o, "mirrored index"): _check_http_url(m, "mirror") for o, m in pairs}


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
    error: str | None = None

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
        project = _canonical(name)
        index = index_url.strip().rstrip("/")
        served_from = apply_mirror(index, self.mirrors)
        url = f"{served_from}/{project}/"
        cached = self.cache.get(url) if self.cache is not None else None
        if self.offline:
            if cached is None:
                raise IndexUnavailable(f"{url} is not in the cache and --offline forbids the network", hint=_HINT)
            return self._page(index, served_from, project, cached, "cache")
        if cached is not None and self._max_age > 0 and cached.age(self._clock()) < self._max_age:
            return self._page(index, served_from, project, cached, "cache")
        try:
            entry, source = self._download(url, cached)
        except IndexUnavailable as e:
            if cached is None:
                raise
            return self._page(index, served_from, project, cached, "stale-cache", error=e.message)
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
        error: str | None = None,
    ) -> ProjectPage:
        found = entry.status != 404
        keep = self.keep.get(project)
        files = _parse_body(entry.body, entry.content_type, entry.page_url, keep) if found else []
        # Absolute file URLs on another host (download-r2.pytorch.org) go through the mirrors too.
        files = [_mirrored(f, self.mirrors) for f in files if f.project == project]
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
        from cudaresolve.cache import CachedResponse

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
            raise IndexUnavailable(f"{url} answered HTTP {status}", hint=_HINT)
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
            raise IndexUnavailable(f"{host} is unreachable ({self._down[host]})", hint=_HINT)
        headers = {"Accept": ACCEPT, "User-Agent": f"cudaresolve/{__version__}", **conditional}
        timeout = httpx.Timeout(self._timeout, connect=self._connect_timeout)
        for attempt in range(self._retries + 1):
            retry_after: float | None = None
            try:
                if self._http is None:  # an offline caller made no client: there is no network to ask
                    raise IndexUnavailable(f"{url}: offline", hint="run without --offline to fetch it")
                response = self._http.get(url, headers=headers, timeout=timeout, follow_redirects=True)
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:
                if attempt == self._retries:
                    self._down[host] = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                    raise IndexUnavailable(f"could not reach {url}: {self._down[host]}", hint=_HINT) from e
            except (httpx.HTTPError, httpx.InvalidURL) as e:
                raise IndexUnavailable(f"could not fetch {url}: {type(e).__name__}: {e}", hint=_HINT) from e
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
        index, name = index_url.strip().rstrip("/"), _canonical(project)
        return next((p for p in self.pages if p.index_url == index and p.project == name), None)

    def files(self, index_url: str, project: str) -> tuple[IndexFile, ...] | None:
        """The wheels found; () when the index lacks the project; None when not fetched (use embedded data)."""
        page = self.page(index_url, project)
        return None if page is None else page.files


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "earlier"
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
        index_client.keep[_canonical(project)] = version_filter(project, wanted)
    pages: list[ProjectPage] = []
    unavailable: list[tuple[str, NormalizedName]] = []
    failed: dict[str, tuple[str, list[str]]] = {}  # index -> (first reason, projects)
    stale: dict[str, tuple[str, float | None, list[str]]] = {}
    seen: set[tuple[str, NormalizedName]] = set()
    keys: list[tuple[str, NormalizedName]] = []
    for index_url, name in requests:
        key = (index_url.strip().rstrip("/"), _canonical(name))
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
                failed.setdefault(key[0], (e.message, []))[1].append(key[1])
            continue
        pages.append(page)
        if page.source == "stale-cache":
            stale.setdefault(key[0], (page.error or "network error", page.fetched_at, []))[2].append(key[1])
    notices = [
        Notice(
            code="index-unavailable-fallback",
            message=f"{index} could not be used ({reason}); using the embedded data for {', '.join(names)}, "
            "so their wheel sha256 hashes could not be added",
        )
        for index, (reason, names) in failed.items()
    ]
    notices += [
        Notice(
            code="index-stale-cache",
            message=f"{index} could not be reached ({reason}); using the listing of {', '.join(names)} "
            f"cached {_when(fetched_at)}",
        )
        for index, (reason, fetched_at, names) in stale.items()
    ]
    return Listings(pages=tuple(pages), unavailable=tuple(unavailable), notices=tuple(notices))
