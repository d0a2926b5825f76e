"""Index pages parsed once per body: their wheels kept as JSON rows. Does I/O: files under the cache dir.

A warm run would otherwise parse every page again (PyPI's torch page is megabytes of JSON, the
PyTorch index's pages have thousands of anchors, and Python's HTML parser is slow).
``parse_files`` stores, beside a cached page, the files parsed from it as compact rows, with the
key of what they were parsed from: the body's SHA-256, its Content-Type, the URL links resolved
against, this module's row format and the cudaresolve version (so a new parser never reads an
older one's rows). There is one stored form per page URL; one whose key differs (the page
changed) is parsed again and replaced.

A stored form records what it kept: ``"all"`` (a caller that reads every release, as the
whole-environment lock does) or the ``key`` of the ``version_filter`` the caller passed (the hash
pass, which needs only the pinned versions: a filtered parse is cheap, a whole one is not). A
form holding every wheel serves any filter, applied to the rows' file names, which gives what a
filtered parse gives (both filters look at the file name only); a filtered form serves only the
same filter. A filter with no ``key`` attribute is parsed for, never stored. Rows go back through
``simple.dist_file``, the constructor the parsers use, so a row gives the ``IndexFile`` a parse gives.

The first line of each file is the SHA-256 of the rest: a file edited or cut short is parsed
again, never trusted. Unreadable or unwritable files are skipped silently, as in ``http_cache``.

No credentials are stored, as in ``http_cache``: a page is parsed against its URL without them, so
every row's URL has none (the body has none either), and the files are keyed by that URL. Files on
the page's own host then get the page URL's credentials back (``core.urls.with_credentials_of``),
from the cache and from the network alike, so the metadata and the wheels are fetched as the page
was. Files are 0600 and new folders 0700 (``core.files.write_private_atomic``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.files import read_sealed, write_sealed
from cudaresolve.core.urls import strip_credentials, with_credentials_of
from cudaresolve.index.simple import file_row, parse_body, parse_body_rows, row_file

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.index.http_cache import CachedResponse, HttpCache
    from cudaresolve.index.simple import IndexFile, Keep

__all__ = ["may_send_pages", "parse_files", "parsed_key", "parsed_path", "store_parsed"]

#: A bound on work, not a fact: a JSON entry the page fetcher's child leaves to the parent, by its brackets (an
#: index's entry has four or five; ``store_parsed``).
_BRACKETS: Final = 64
_FORMAT: Final = 4  # bump when the row layout or what is parsed changes (2: sdists; 3, 4: a version filter's)
_SUBDIR: Final = "parsed-v2"  # 2: one folder, as ``http_cache``
_ALL: Final = "all"  # what a form parsed with no filter says it kept


def parsed_key(entry: CachedResponse) -> str:
    """What a stored form must have been parsed from to stand for ``entry``'s body."""
    from cudaresolve import __version__

    page_url = strip_credentials(entry.page_url)
    parts = (str(_FORMAT), __version__, entry.body_sha256, entry.content_type or "", page_url)
    return hashlib.sha256("\0".join(parts).encode("utf-8", errors="surrogatepass")).hexdigest()


def parsed_path(cache: HttpCache, url: str) -> Path:
    """Where the parsed form of the page at ``url`` lives (keyed by the URL without credentials)."""
    digest = hashlib.sha256(strip_credentials(url).encode("utf-8")).hexdigest()
    return cache.root / _SUBDIR / f"{digest}.json"


def parse_files(cache: HttpCache | None, entry: CachedResponse, keep: Keep | None) -> list[IndexFile]:
    """The wheels on ``entry``'s page that ``keep`` accepts (all when None), in page order.

    With a cache: read from the stored form when it stands for this body and this filter (a cold lock's pages
    are parsed and stored by ``page_fetcher``'s child), else parsed (filtered) and stored. Raises what the parsers
    raise (``IndexUnavailable``).
    """
    kept = _ALL if keep is None else getattr(keep, "key", None)
    base = strip_credentials(entry.page_url)  # relative links resolve to URLs without credentials
    if cache is None or not isinstance(kept, str):
        entry = _read(cache, entry) if cache is not None else entry
        return _credentialed(parse_body(entry.body, entry.content_type, base, keep), entry.page_url)
    key, path = parsed_key(entry), parsed_path(cache, entry.url)
    within = getattr(keep, "within", None)  # a broader filter whose stored form serves this one
    files = _load(path, key, (kept, within) if within else (kept,), keep)
    if files is None:
        entry = _read(cache, entry)
        files = _parsed_and_stored(entry, base, keep, (path, key, kept))
    return _credentialed(files, entry.page_url)


def _headroom() -> int:
    """How many more frames this thread may nest: the recursion limit less the frames under this one."""
    import sys

    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    return sys.getrecursionlimit() - depth


def may_send_pages() -> bool:
    """Whether this thread may leave a page to a helper process, which parses only what nests less than
    ``_BRACKETS`` deep (``store_parsed``): it has twice that headroom, so it could parse any such page itself."""
    return _headroom() >= 2 * _BRACKETS


def store_parsed(cache: HttpCache, entry: CachedResponse, keep: Keep | None) -> None:
    """The page fetcher's side (``page_fetcher``): ``entry``'s body parsed as ``parse_files`` parses it, and its form
    stored where ``parse_files`` reads it. Raises what the parsers raise.

    How deep JSON may nest depends on the stack it is parsed on (the recursion limit counts the caller's frames;
    from Python 3.12 a C limit counts C calls), so a page the child could parse might fail in the parent. Here a
    page holding an entry of ``_BRACKETS`` brackets or more (``json_page``) fails whatever the stack, and is left
    to the parent, which sends pages only with twice that headroom (``may_send_pages``)."""
    kept = _ALL if keep is None else getattr(keep, "key", None)
    if not isinstance(kept, str):
        raise TypeError("a filter with no key has no stored form")
    rows = parse_body_rows(entry.body, entry.content_type, strip_credentials(entry.page_url), keep, brackets=_BRACKETS)
    for row in rows:  # as ``_parsed`` gives them
        row[1] = strip_credentials(row[1]) if "@" in row[1] else row[1]
    _store(parsed_path(cache, entry.url), parsed_key(entry), kept, rows)


def _parsed_and_stored(
    entry: CachedResponse, base: str, keep: Keep | None, stored: tuple[Path, str, str], *, brackets: int | None = None
) -> list[IndexFile]:
    """``entry``'s body parsed (``_parsed``) and its form stored at ``stored`` (path, key, what it kept)."""
    files = _parsed(entry.body, entry.content_type, base, keep, brackets=brackets)
    path, key, kept = stored
    _store(path, key, kept, [file_row(f) for f in files])
    return files


def _parsed(
    body: str, content_type: str | None, base: str, keep: Keep | None, *, brackets: int | None = None
) -> list[IndexFile]:
    """The files ``parse_body`` reads in ``body``, their URLs without credentials (an entry made by hand, not by
    ``CachedResponse.from_headers``, may link URLs with them): what a stored form holds."""
    files = parse_body(body, content_type, base, keep, brackets=brackets)
    return [f if "@" not in f.url else replace(f, url=strip_credentials(f.url)) for f in files]


def _read(cache: HttpCache, entry: CachedResponse) -> CachedResponse:
    """``entry`` with its body, read now when it was stored apart and left unread (``HttpCache.get``); a body
    gone since (another run replaced the page) is ``IndexUnavailable``, as a page that cannot be had."""
    whole = cache.with_body(entry)
    if whole is None:
        from cudaresolve.errors import IndexUnavailable
        from cudaresolve.index.simple import HINT
        from cudaresolve.text.model import Text

        raise IndexUnavailable(Text.of("index.cache-body-gone", url=entry.url), hint=HINT)
    return whole


def _credentialed(files: list[IndexFile], page_url: str) -> list[IndexFile]:
    """``files`` with the credentials of ``page_url`` on those of its host (none: ``files`` as they are)."""
    if strip_credentials(page_url) == page_url:
        return files
    return [replace(f, url=url) if (url := with_credentials_of(f.url, page_url)) != f.url else f for f in files]


def _load(path: Path, key: str, kept: tuple[str, ...], keep: Keep | None) -> list[IndexFile] | None:
    """The wanted wheels of the stored form at ``path``; None when absent, damaged, parsed from
    another body, or filtered for something else. ``kept``: the filter's key, and the key of the broader
    filter it narrows (``simple.version_filter``'s ``within``), whose form serves it too."""
    data = read_sealed(path)
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("files"), list):
        return None
    if data.get("kept") not in (_ALL, *kept):
        return None
    return _files(data["files"], keep if data["kept"] != kept[0] else None)  # parsed by this very filter: all kept


def _files(rows: list[Any], keep: Keep | None) -> list[IndexFile] | None:
    """The ``IndexFile`` of each row whose file name ``keep`` accepts (every row when None); None when any row
    is not one ``_row`` writes (a stored form)."""
    from cudaresolve.index.wheel_names import WheelNames  # packaging's wheel names: here, a kept lock reads no form

    files: list[IndexFile] = []
    names = WheelNames()
    for row in rows:
        name = row[0] if isinstance(row, list) and row else None
        if not isinstance(name, str):
            return None
        if keep is not None and not keep(name):
            continue
        file = row_file(row, names)
        if file is None:
            return None
        files.append(file)
    return files


def _store(path: Path, key: str, kept: str, rows: list[list[Any]]) -> None:
    payload = json.dumps({"key": key, "kept": kept, "files": rows}, separators=(",", ":"))  # ASCII only
    with contextlib.suppress(OSError):  # an optimisation: a read-only or full disk must not stop a resolve
        write_sealed(path, payload)
