"""The simple repository API, parsed: wheels and sdists on PEP 503 HTML and PEP 691 JSON pages, and mirrors. Pure.

``parse_simple_json`` reads PEP 691 JSON (PyPI), ``parse_simple_html`` reads PEP 503 HTML
(download.pytorch.org, which serves only static HTML; pytorch/test-infra
``s3_management/manage_v2.py``), ``apply_mirror`` rewrites URLs, ``version_filter`` lets a caller
skip the files it does not need.

Spec: https://packaging.python.org/en/latest/specifications/simple-repository-api/
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from cudaresolve.core.platforms import canonical_name
from cudaresolve.core.urls import PLAIN_URL, split_url
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.file_filter import Keep, drop_other_lines, version_filter
from cudaresolve.index.limits import TooManyFiles, too_many_files
from cudaresolve.index.mirrors import apply_mirror, check_http_url, parse_mirrors, parse_package_indexes
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from packaging.tags import Tag
    from packaging.utils import BuildTag, NormalizedName
    from packaging.version import Version

    from cudaresolve.index.wheel_names import WheelNames

__all__ = [
    "ACCEPT",
    "HINT",
    "IndexFile",
    "Keep",
    "apply_mirror",
    "canonical_project",
    "check_http_url",
    "dist_file",
    "file_row",
    "json_rows",
    "mirrored_file",
    "parse_body",
    "parse_body_rows",
    "parse_mirrors",
    "parse_package_indexes",
    "parse_simple_html",
    "parse_simple_json",
    "row_file",
    "version_filter",
    "wheel_file",
]

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
#: The hint of every "index unavailable" error: retry, go offline, or use a mirror.
HINT: Final = Text("index.hint")


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFile:
    """One wheel or sdist on an index page. ``url`` is absolute, without the ``#sha256=`` fragment; an sdist
    has no tags."""

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
    sdist: bool = False  # a source distribution (.tar.gz, .zip): its PKG-INFO, not tags, says what it is

    @property
    def local(self) -> str | None:
        """The local version label, which on the PyTorch index names the variant (``cu118``)."""
        return self.version.local


_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def _sha256(value: object) -> str | None:
    if type(value) is str and len(value) == 64 and _HEX64.fullmatch(value):  # as indexes write it: itself
        return value
    text = value.strip().lower() if isinstance(value, str) else ""
    return text if _HEX64.fullmatch(text) else None


def mirrored_file(file: IndexFile, mirrors: Mapping[str, str]) -> IndexFile:
    url = apply_mirror(file.url, mirrors) if mirrors else file.url
    return file if url == file.url else replace(file, url=url)


def _upload_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def canonical_project(name: str) -> NormalizedName:
    return cast("NormalizedName", canonical_name(name))


def _names() -> WheelNames:
    from cudaresolve.index.wheel_names import WheelNames  # pulls in packaging.tags: only when a page is parsed

    return WheelNames()


def _join(base: str, href: str) -> str | None:
    """``href`` made absolute against ``base``; None when it is not a URL at all (``https://[``)."""
    try:
        joined = urljoin(base, href.strip())
    except ValueError:
        return None
    return joined if split_url(joined) is not None else None


def dist_file(
    filename: str, url: str, *, names: WheelNames | None = None, sha256: str | None = None,
    requires_python: str | None = None, yanked: bool = False, yanked_reason: str | None = None,
    core_metadata: bool = False, core_metadata_sha256: str | None = None, size: int | None = None,
    upload_time: datetime | None = None) -> IndexFile | None:  # fmt: skip
    """An ``IndexFile`` for a wheel (``wheel_file``) or an sdist (``.tar.gz``, ``.zip``, the formats pip and uv
    read); None for other files and unparseable names. The parsers and the parsed cache (``row_file``: thousands a
    lock; fields named, as ``**`` cost a tenth more) build files here, each page's with one ``names``."""
    parsed = _dist_name(filename, names if names is not None else _names())
    if parsed is None:
        return None
    name, version, build, tags = parsed
    return IndexFile(
        project=name, filename=filename, url=url, version=version, build=build, tags=tags, sha256=sha256,
        requires_python=requires_python, yanked=yanked, yanked_reason=yanked_reason, core_metadata=core_metadata,
        core_metadata_sha256=core_metadata_sha256, size=size, upload_time=upload_time,
        sdist=not filename.endswith(".whl"),
    )  # fmt: skip


def wheel_file(filename: str, url: str, *, names: WheelNames | None = None, **fields: Any) -> IndexFile | None:
    """An ``IndexFile`` for a wheel; None for sdists, other files and unparseable names (pip skips such links too,
    index/package_finder.py). ``names``: the memo of the page's names (``wheel_names``), else one for this name."""
    return dist_file(filename, url, names=names, **fields) if filename.endswith(".whl") else None


def _dist_name(filename: str, names: WheelNames) -> tuple[NormalizedName, Version, BuildTag, frozenset[Tag]] | None:
    """The project, version, build tag and tags of a wheel's or an sdist's name (an sdist has none of the last
    two); None for other files and unparseable names. ``names``: the page's memo (``wheel_names``)."""
    if filename.endswith(".whl"):
        return names.parse(filename)
    if not filename.endswith((".tar.gz", ".zip")):
        return None
    parsed = names.sdist(filename)
    return None if parsed is None else (*parsed, (), frozenset())


def _check_api_version(version: object, page_url: str) -> None:
    """PEP 629: a major version other than 1 is an error; a newer minor is fine."""
    if version is None:
        return
    major = str(version).split(".", 1)[0]
    if major != "1":
        raise IndexUnavailable(
            Text.of("index.api-version", url=page_url, version=str(version)), hint=Text("index.api-version.hint")
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


def parse_simple_html(text: str, page_url: str, *, keep: Keep | None = None) -> list[IndexFile]:
    """The wheels and sdists on a PEP 503 project page, in page order.

    ``href`` resolves against ``<base href>`` or ``page_url``; the filename is the percent-decoded
    last path segment (the PyTorch index writes ``+`` as ``%2B`` in hrefs), else the anchor text.
    """
    from cudaresolve.index.anchors import AnchorParser  # html.parser: only for HTML pages (PyPI sends JSON)

    parser = AnchorParser()
    try:
        parser.feed(drop_other_lines(text, keep) if keep is not None else text)
        parser.close()
    except TooManyFiles as e:
        raise too_many_files(page_url, e.most) from None
    _check_api_version(parser.api_version, page_url)
    base = _join(page_url, parser.base) or page_url if parser.base else page_url
    files: list[IndexFile] = []
    names = _names()
    for attrs, anchor_text in parser.anchors:
        href = attrs.get("href")
        joined = _join(base, href) if href else None
        if joined is None:
            continue
        url, fragment = urldefrag(joined)
        algo, _, digest = fragment.partition("=")
        filename = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or anchor_text
        if keep is not None and not keep(filename):
            continue
        metadata = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))  # PEP 714 order
        has_metadata, metadata_sha = _metadata_flag(metadata)
        yanked = "data-yanked" in attrs
        wheel = dist_file(
            filename,
            url,
            names=names,
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
    payload: Mapping[str, Any] | str | bytes, page_url: str, *, keep: Keep | None = None, brackets: int | None = None
) -> list[IndexFile]:
    """The wheels and sdists in a PEP 691 project detail response (API 1.x), in listed order. A body is read
    one file entry at a time (``json_page``): only the entries ``keep`` accepts are ever held whole.
    ``brackets``: ``json_page.scan_page``'s bound on nesting, whatever the stack."""
    names = _names()
    rows = json_rows(payload, page_url, keep=keep, brackets=brackets, names=names)
    return [file for row in rows if (file := row_file(row, names)) is not None]


def json_rows(
    payload: Mapping[str, Any] | str | bytes,
    page_url: str,
    *,
    keep: Keep | None = None,
    brackets: int | None = None,
    names: WheelNames | None = None,
) -> list[list[Any]]:
    """``parse_simple_json``'s files as rows (``file_row``), each one ``row_file`` makes a file of, without making
    it: a page's parsed form is stored as rows (``parsed_cache``), and a lock reads a few of a page's files.
    ``names``: the page's memo of names (``wheel_names``)."""
    judge = keep  # what each named entry must pass here: none for a scanned body, whose scan applied ``keep``
    if isinstance(payload, str | bytes):
        from cudaresolve.index.json_page import scan_page

        try:
            text = payload.decode("utf-8") if isinstance(payload, bytes) else payload
            payload, entries = scan_page(text, keep, brackets=brackets)
            judge = None
        except TooManyFiles as e:
            raise too_many_files(page_url, e.most) from None
        except ValueError as e:  # UnicodeDecodeError too
            raise IndexUnavailable(Text.of("index.bad-json", url=page_url, error=str(e)), hint=HINT) from e
    else:
        entries = payload.get("files") if isinstance(payload, Mapping) else None
    if not isinstance(payload, Mapping) or not isinstance(entries, list):
        raise IndexUnavailable(Text.of("index.not-pep691", url=page_url), hint=HINT)
    meta = payload.get("meta")
    _check_api_version(meta.get("api-version") if isinstance(meta, Mapping) else None, page_url)
    rows: list[list[Any]] = []
    names = names if names is not None else _names()
    plain = _join(page_url, page_url) is not None  # a base urljoin takes: a plain absolute URL is itself joined
    for entry in entries:
        if type(entry) is not dict and not isinstance(entry, Mapping):  # a scanned page's are dicts: no ABC check
            continue
        filename, url = entry.get("filename"), entry.get("url")
        if not isinstance(filename, str) or not isinstance(url, str):
            continue
        if judge is not None and not judge(filename):
            continue
        if _dist_name(filename, names) is None:  # no file ``dist_file`` would make
            continue
        hashes = entry.get("hashes")
        yanked = entry.get("yanked", False)
        requires_python = entry.get("requires-python")
        size = entry.get("size")
        metadata = None
        for key in _METADATA_KEYS:
            if key in entry:
                metadata = entry[key]
                break
        has_metadata, metadata_sha = _metadata_flag(metadata) if metadata is not None else (False, None)
        joined = url if plain and PLAIN_URL.match(url) else _join(page_url, url)
        if joined is None:
            continue
        upload = _upload_time(entry.get("upload-time"))
        rows.append([
            filename,
            urldefrag(joined)[0] if "#" in joined else joined,
            _sha256(hashes.get("sha256")) if isinstance(hashes, Mapping) else None,
            (requires_python.strip() or None) if isinstance(requires_python, str) else None,
            bool(yanked),
            yanked if isinstance(yanked, str) and yanked else None,
            has_metadata,
            metadata_sha,
            size if isinstance(size, int) and not isinstance(size, bool) else None,
            upload.isoformat() if upload is not None else None,
        ])  # fmt: skip
    return rows


def file_row(file: IndexFile) -> list[Any]:
    """``file`` as the row ``row_file`` reads (what a page's parsed form stores): its name and what a page says
    of it; the rest is parsed from the name again."""
    upload = file.upload_time.isoformat() if file.upload_time is not None else None
    return [
        file.filename, file.url, file.sha256, file.requires_python, file.yanked, file.yanked_reason,
        file.core_metadata, file.core_metadata_sha256, file.size, upload,
    ]  # fmt: skip


_STR_OR_NONE: Final = (str, type(None))
_ROW_TYPES: Final[tuple[tuple[type, ...], ...]] = (
    (str,), (str,), _STR_OR_NONE, _STR_OR_NONE, (bool,), _STR_OR_NONE, (bool,), _STR_OR_NONE, (int, type(None)),
    _STR_OR_NONE,
)  # fmt: skip
#: Every sequence of the exact types a row's fields may have (JSON gives exact ``str``, ``int``, ``bool``, None):
#: one lookup of a row's types, rather than a test per field, for the tens of thousands of rows of a warm lock.
_ROW_SHAPES: Final = frozenset(itertools.product(*_ROW_TYPES))


def row_file(row: object, names: WheelNames) -> IndexFile | None:
    """The ``IndexFile`` of one row; None when the row is not one ``file_row`` writes. ``names``: the page's memo."""
    if type(row) is not list or tuple(map(type, row)) not in _ROW_SHAPES:
        return None
    filename, url, sha256, requires_python, yanked, yanked_reason, metadata, metadata_sha256, size, upload = row
    try:
        upload_time = datetime.fromisoformat(upload) if upload is not None else None
    except ValueError:
        return None
    return dist_file(
        filename, url, names=names, sha256=sha256, requires_python=requires_python, yanked=yanked,
        yanked_reason=yanked_reason, core_metadata=metadata, core_metadata_sha256=metadata_sha256, size=size,
        upload_time=upload_time,
    )  # fmt: skip


def parse_body(
    body: str, content_type: str | None, page_url: str, keep: Keep | None = None, *, brackets: int | None = None
) -> list[IndexFile]:
    """Dispatch on Content-Type (PEP 691); sniff only when the server sent none we know. ``brackets``: a JSON
    body's bound on nesting (``json_page.scan_page``); HTML nests nothing."""
    if _is_json(body, content_type):
        return parse_simple_json(body, page_url, keep=keep, brackets=brackets)
    return parse_simple_html(body, page_url, keep=keep)


def parse_body_rows(
    body: str, content_type: str | None, page_url: str, keep: Keep | None = None, *, brackets: int | None = None
) -> list[list[Any]]:
    """``parse_body``'s files as rows (``file_row``); a JSON body's are never made files (``json_rows``)."""
    if _is_json(body, content_type):
        return json_rows(body, page_url, keep=keep, brackets=brackets)
    return [file_row(file) for file in parse_simple_html(body, page_url, keep=keep)]


def _is_json(body: str, content_type: str | None) -> bool:
    """Whether ``body`` is read as PEP 691 JSON: by its Content-Type, sniffed only when that is none we know (an
    octet-stream from a bare S3 bucket)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in _JSON_TYPES:
        return True
    return media not in _HTML_TYPES and body.lstrip().startswith("{")
