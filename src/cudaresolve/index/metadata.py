"""A release's core metadata: fetched once (PEP 658/714 ``.metadata`` file), cached, parsed. Does I/O via IndexClient.

Only the fields the solver needs are read: ``Name``, ``Version``, ``Requires-Python``, every
``Requires-Dist``, and for an sdist ``Metadata-Version`` and ``Dynamic``. The file is checked
against the hash the listing gives for it (``core-metadata: {"sha256": ...}``) and against the
file's own name and version, so a listing cannot slip another package's dependencies in.
Metadata files are immutable (a release never changes), so a cached copy is used without asking
the index again. Without a ``.metadata`` file, a wheel's METADATA is read with range requests
(``lazy_wheel``) and an sdist's PKG-INFO from the downloaded sdist (``sdist``); an sdist's
metadata counts only when static (``static_problem``, PEP 643), else ``DynamicMetadata``.

Specs: https://packaging.python.org/en/latest/specifications/core-metadata/, PEP 643 and PEP 658/714.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from cudaresolve.core.progress import Event, report
from cudaresolve.errors import BadMetadata, DynamicMetadata, IndexUnavailable
from cudaresolve.index.requires_dist import simple_requirement
from cudaresolve.index.simple import HINT
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import IO

    from cudaresolve.index.build_metadata import BuildPolicy
    from cudaresolve.index.client import IndexClient
    from cudaresolve.index.http_cache import HttpCache
    from cudaresolve.index.simple import IndexFile

__all__ = ["CoreMetadata", "cached_core_metadata", "fetch_core_metadata", "parse_core_metadata", "static_problem"]

#: More Requires-Dist lines than any real package has (torch: ~25); a bound on work, not a fact.
_MAX_REQUIREMENTS: Final = 2000
#: Parsed markers kept for reuse (``_requirement``), at most this many: a bound on memory, not a fact.
_MAX_MARKERS: Final = 4096
_MARKERS: dict[str, Marker] = {}
#: Whole Requires-Dist lines already parsed: the releases of one project repeat the same lines (transformers' 236
#: metadata files on a 189-package lock hold 64,848 lines, a few thousand of them distinct). The objects are shared,
#: so nothing may change a parsed ``Requirement``.
_MAX_REQUIREMENTS_SEEN: Final = 65536
_REQUIREMENTS: dict[str, Requirement] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class CoreMetadata:
    name: str
    version: Version
    requires_python: str | None
    requires_dist: tuple[Requirement, ...]
    metadata_version: str | None = None
    dynamic: tuple[str, ...] = ()  # the fields ``Dynamic`` names, lower case (PEP 643)
    provides_extra: tuple[str, ...] = ()  # the extras ``Provides-Extra`` names, as written
    built: bool = False  # prepared by the sdist's build backend on this host (``build_metadata``)


def parse_core_metadata(text: str, *, source: str) -> CoreMetadata:
    """The fields the solver needs; malformed metadata is ``IndexUnavailable`` naming ``source``.

    Only the header block is read: the email parser reads the whole text even for headers alone, and the
    description after the first empty line is most of many METADATA files (100 KB and more). The parser stops
    at the first empty line too, so the headers it finds are the same. A plain block is read without it
    (``plain_headers``)."""
    end = text.find("\n\n")
    block = text if end < 0 else text[: end + 1]
    headers = plain_headers(block)
    if headers is None:
        from email.parser import HeaderParser  # about 10 ms to import, for the rare block read so

        headers = _Headers.of(HeaderParser().parsestr(block, headersonly=True).items())
    name, version = headers.get("Name"), headers.get("Version")
    if not name or not version:
        raise _bad(source, "no Name or Version")
    try:
        parsed = Version(version.strip())
    except InvalidVersion as exc:
        raise _bad(source, f"bad Version {version.strip()[:60]!r}") from exc
    lines = headers.get_all("Requires-Dist") or []
    if len(lines) > _MAX_REQUIREMENTS:
        raise _bad(source, f"{len(lines)} Requires-Dist lines")
    requires = []
    for line in lines:
        try:
            requires.append(_requirement(" ".join(line.split())))
        except (InvalidRequirement, InvalidMarker) as exc:
            raise _bad(source, f"bad Requires-Dist {line.strip()[:80]!r}") from exc
    rp = headers.get("Requires-Python")
    mv = headers.get("Metadata-Version")
    return CoreMetadata(
        name=str(canonicalize_name(name.strip())),
        version=parsed,
        requires_python=rp.strip() if rp else None,
        requires_dist=tuple(requires),
        metadata_version=mv.strip() if mv else None,
        dynamic=tuple(d.strip().lower() for d in headers.get_all("Dynamic") or ()),
        provides_extra=tuple(e.strip() for e in headers.get_all("Provides-Extra") or ()),
    )


class _Headers:
    """A header block's fields by lower-case name, each with its values in order: ``get`` and ``get_all`` as an
    ``email.message.Message`` answers them (its ``items`` are what ``of`` takes), whoever read the block."""

    def __init__(self, fields: dict[str, list[Any]]) -> None:
        self._fields = fields

    @classmethod
    def of(cls, items: Iterable[tuple[str, Any]]) -> _Headers:
        fields: dict[str, list[Any]] = {}
        for name, value in items:
            fields.setdefault(name.lower(), []).append(value)
        return cls(fields)

    def get(self, name: str) -> Any:
        values = self._fields.get(name.lower())
        return values[0] if values else None

    def get_all(self, name: str) -> list[Any] | None:
        return self._fields.get(name.lower())


#: A plain header block: lines of a field name (printable ASCII but ``:``), ``:`` and its value, each field's
#: continuation lines after it (a blank first), every line ended by ``\n``: what ``plain_headers`` reads.
_PLAIN_BLOCK: Final = re.compile(r"(?:[\041-\071\073-\176]+:[^\n]*\n(?:[ \t][^\n]*\n)*)*")
#: One field ``parse_core_metadata`` reads, at a line's start: its value after the blanks, continuation lines too.
_READ: Final = re.compile(
    r"^(name|version|requires-dist|requires-python|metadata-version|dynamic|provides-extra):"
    r"[ \t]*([^\n]*(?:\n[ \t][^\n]*)*)",
    re.MULTILINE | re.IGNORECASE | re.ASCII,
)
#: A lone surrogate: the email parser then gives a ``Header``, not the text (``Message._sanitize_header``).
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def plain_headers(block: str) -> _Headers | None:
    """The fields of ``block`` that ``parse_core_metadata`` reads, as ``email.parser.HeaderParser`` (the compat32
    policy) gives them, for a plain block: every line a field named in ASCII or its continuation, no lone
    surrogate, lines ended by ``\n`` up to a line that starts with ``\r`` (empty to the email parser, which ends
    lines at ``\r`` and ``\n`` only: the headers end there), or all by ``\r\n`` up to an empty line. Each value is
    what follows its ``:`` and the blanks there, its continuation lines joined with their line ends. None for any
    other block, which the email parser reads: it cost a METADATA file about a tenth of a millisecond."""
    text = block if block.endswith("\n") else block + "\n"
    first = text.find("\n")
    crlf = first > 0 and text[first - 1] == "\r"
    if crlf:  # every line ended by \r\n, no \r or \n alone, up to the empty line
        end = text.find("\r\n\r\n")
        text = text[: end + 2] if end >= 0 else text
        lines = text.count("\r\n")
        if text.count("\r") != lines or text.count("\n") != lines:
            return None
        text = text.replace("\r\n", "\n")
    elif (cr := text.find("\r")) >= 0:  # a line that starts with \r is empty: the headers end before it
        if cr == 0 or text[cr - 1] != "\n":
            return None
        text = text[:cr]
    if text.startswith("From ") or not _PLAIN_BLOCK.fullmatch(text):
        return None
    if not text.isascii() and _SURROGATE.search(text):
        return None
    return _Headers.of(
        (found[1], found[2].replace("\n", "\r\n") if crlf else found[2]) for found in _READ.finditer(text)
    )


def _requirement(line: str) -> Requirement:
    """``Requirement(line)``, parsed once per process for each distinct line, and its marker once for every line
    that has the same one (a few hundred distinct markers stand behind thousands of lines: ``extra == "dev"``,
    ``python_version < "3.11"``), its head in the common shapes without packaging's tokenizer (``requires_dist``).
    A line with a URL, or more than one ``;``, is parsed whole."""
    seen = _REQUIREMENTS.get(line)
    if seen is not None:
        return seen
    parsed = _parse_requirement(line)
    if len(_REQUIREMENTS) < _MAX_REQUIREMENTS_SEEN:
        _REQUIREMENTS[line] = parsed
    return parsed


def _parse_requirement(line: str) -> Requirement:
    if "@" in line or line.count(";") > 1:
        return Requirement(line)
    head, semicolon, tail = line.partition(";")
    requirement = simple_requirement(head) or Requirement(head)  # the common shapes without packaging's tokenizer
    if not semicolon:
        return requirement
    tail = tail.strip()
    marker = _MARKERS.get(tail)
    if marker is None:
        marker = Marker(tail)
        if len(_MARKERS) < _MAX_MARKERS:
            _MARKERS[tail] = marker
    requirement.marker = marker
    return requirement


#: The fields whose being static lets an sdist's PKG-INFO stand for the wheel it builds (PEP 643).
_STATIC_FIELDS: Final = {"requires-dist": "Requires-Dist", "requires-python": "Requires-Python"}


def static_problem(meta: CoreMetadata) -> Text | None:
    """Why ``meta`` (an sdist's PKG-INFO) does not promise the built wheel's dependencies, or None when it does:
    Metadata-Version 2.2 or newer, neither ``Requires-Dist`` nor ``Requires-Python`` in ``Dynamic`` (PEP 643)."""
    try:
        version = Version(meta.metadata_version or "0")
    except InvalidVersion:
        version = Version("0")
    if version < Version("2.2"):
        return Text.of("index.sdist-old-metadata", found=meta.metadata_version or "none")
    identity = [shown for field, shown in (("name", "Name"), ("version", "Version")) if field in meta.dynamic]
    if identity:  # PEP 643: Name and Version MUST NOT be dynamic; such a PKG-INFO promises nothing
        return Text.of("index.sdist-dynamic-identity", fields=", ".join(identity))
    dynamic = [shown for field, shown in _STATIC_FIELDS.items() if field in meta.dynamic]
    if dynamic:
        return Text.of("index.sdist-dynamic-fields", fields=", ".join(dynamic))
    return None


def _bad(source: str, why: str) -> BadMetadata:
    return BadMetadata(Text.of("index.bad-metadata", url=source, reason=why), hint=HINT)


def fetch_core_metadata(
    client: IndexClient,
    cache: HttpCache | None,
    file: IndexFile,
    *,
    build: BuildPolicy | None = None,
    twin: Callable[[], IndexFile | None] | None = None,
) -> CoreMetadata:
    """The metadata of ``file``: the cache, else its PEP 658 file, else range reads of the wheel
    (``lazy_wheel``) or the sdist's PKG-INFO; raises ``IndexUnavailable``. An sdist whose PKG-INFO is not
    static stands on the metadata of a wheel of the same release for another target, when ``twin`` finds one
    (uv's rule: the wheel is read, the sdist installed, nothing built); else it is built for its metadata when
    ``build`` allows it (``build_metadata``), else ``DynamicMetadata``."""
    url = f"{file.url}.metadata"
    key = _key(file, ".metadata")  # also of METADATA read from the wheel itself
    source = url if file.core_metadata else file.url  # what messages name: the file really read
    if file.url.startswith("file://"):  # a wheel of a local folder (``--find-links DIR``): read now, never cached
        cache = None
    cached = cache.get(key) if cache is not None else None
    if cached is not None and cached.status == 200:
        text = cached.body
    elif file.core_metadata:
        text, served = client.fetch_text(url)
        _check_hash(served, file, url)
    elif file.sdist:  # no PEP 658 file: PKG-INFO out of the downloaded sdist, which may then be built
        from cudaresolve.index.sdist import fetch_sdist, pkg_info

        with fetch_sdist(client, file) as archive:
            text = pkg_info(archive, file.filename, file.url)
            meta = _describing(text, file, source)
            _store(cache, key, text, cached)
            report(Event(kind="metadata", label=url))
            stand_in = _twin_metadata(client, cache, meta, file, twin)
            if stand_in is not None:
                return stand_in
            policy = _to_build(meta, file, build)
            return _built(client, cache, file, policy, archive) if policy is not None else _static(meta, file)
    elif file.url.startswith("file://"):  # a wheel of a local folder: read where it is
        from cudaresolve.index.lazy_wheel import wheel_metadata
        from cudaresolve.index.local_folder import open_local

        with open_local(file.url) as wheel:
            text = wheel_metadata(wheel, file.url)
    else:  # no PEP 658 file: read METADATA out of the wheel with range requests
        from cudaresolve.index.lazy_wheel import read_remote_metadata

        text = read_remote_metadata(client, file.url, file.project, str(file.version))
    if cached is None or cached.status != 200:
        report(Event(kind="metadata", label=url))
    meta = _describing(text, file, source)
    _store(cache, key, text, cached)
    stand_in = _twin_metadata(client, cache, meta, file, twin)
    if stand_in is not None:
        return stand_in
    policy = _to_build(meta, file, build)
    return _built(client, cache, file, policy, None) if policy is not None else _static(meta, file)


def _twin_metadata(
    client: IndexClient,
    cache: HttpCache | None,
    meta: CoreMetadata,
    file: IndexFile,
    twin: Callable[[], IndexFile | None] | None,
) -> CoreMetadata | None:
    """For an sdist whose metadata is not static: the metadata of the wheel ``twin`` finds (the same project and
    version, for another target), which uv reads in its place rather than build the sdist; None when it is static,
    or there is no such wheel, or its metadata cannot be read (the sdist is then judged as before)."""
    if twin is None or not file.sdist or static_problem(meta) is None:
        return None
    wheel = twin()
    if wheel is None or wheel.sdist or wheel.version != file.version:
        return None
    try:
        return fetch_core_metadata(client, cache, wheel)
    except (IndexUnavailable, BadMetadata):
        return None


def _key(file: IndexFile, suffix: str) -> str:
    """The cache key of what was read of ``file``: its URL and ``suffix``, and the file's SHA-256 when its index
    lists one, so that a file replaced at the same URL (another hash on the page) is never taken for the old."""
    return f"{file.url}{suffix}#sha256={file.sha256}" if file.sha256 else f"{file.url}{suffix}"


def _to_build(meta: CoreMetadata, file: IndexFile, build: BuildPolicy | None) -> BuildPolicy | None:
    """``build`` when ``file`` is an sdist whose metadata is not static and ``build`` lets its backend give it."""
    due = file.sdist and build is not None and build.allowed and static_problem(meta) is not None
    return build if due else None


def _cached_built(cache: HttpCache | None, file: IndexFile) -> CoreMetadata | None:
    """The metadata an earlier run's build of the sdist ``file`` gave, from the cache; None when there is none."""
    from dataclasses import replace

    entry = cache.get(_key(file, ".built-metadata")) if cache is not None else None
    if entry is None or entry.status != 200:
        return None
    return replace(_describing(entry.body, file, file.url), built=True)


def _store(cache: HttpCache | None, url: str, text: str, cached: object) -> None:
    from cudaresolve.index.http_cache import CachedResponse

    if cached is None and cache is not None:
        cache.store(CachedResponse(url=url, status=200, body=text, content_type="text/plain", fetched_at=time.time()))


def _built(
    client: IndexClient, cache: HttpCache | None, file: IndexFile, build: BuildPolicy, archive: IO[bytes] | None
) -> CoreMetadata:
    """The metadata the sdist's build backend gives (cached under the sdist's URL, whose hash was checked)."""
    from dataclasses import replace

    from cudaresolve.index.build_metadata import prepare_metadata
    from cudaresolve.index.sdist import fetch_sdist

    found = _cached_built(cache, file)
    if found is not None:
        return found
    if archive is None:
        with fetch_sdist(client, file) as fetched:
            text = prepare_metadata(fetched, file, build)
    else:
        text = prepare_metadata(archive, file, build)
    key = _key(file, ".built-metadata")
    report(Event(kind="metadata", label=f"{file.url}.built-metadata"))
    _store(cache, key, text, None)
    return replace(_describing(text, file, file.url), built=True)


def cached_core_metadata(
    cache: HttpCache | None, file: IndexFile, *, build: BuildPolicy | None = None
) -> CoreMetadata | None:
    """The metadata of ``file`` when the cache holds it (no request), else None; raises as
    ``fetch_core_metadata`` does for a cached file that does not describe ``file``."""
    url = f"{file.url}.metadata"
    cached = cache.get(_key(file, ".metadata")) if cache is not None else None
    if cached is None or cached.status != 200:
        return None
    meta = _describing(cached.body, file, url if file.core_metadata else file.url)
    if _to_build(meta, file, build) is not None:
        return _cached_built(cache, file)  # None: the build is ``fetch_core_metadata``'s
    return _static(meta, file)


def _describing(text: str, file: IndexFile, source: str) -> CoreMetadata:
    """``text`` parsed, when it is the metadata of ``file``'s project and version."""
    meta = parse_core_metadata(text, source=source)
    if meta.name != str(canonicalize_name(file.project)) or meta.version != file.version:
        raise _bad(source, f"it describes {meta.name} {meta.version}, not {file.project} {file.version}")
    return meta


def _static(meta: CoreMetadata, file: IndexFile) -> CoreMetadata:
    """``meta``, unless it comes from an sdist whose identity or dependencies are dynamic (PEP 643)."""
    problem = static_problem(meta) if file.sdist else None
    if problem is not None:
        raise DynamicMetadata(
            Text.of("index.sdist-dynamic", package=meta.name, version=str(meta.version), file=file.filename,
                    why=problem),
            hint=Text.of("index.sdist-dynamic.hint", package=meta.name),
        )
    return meta


def _check_hash(served: str, file: IndexFile, url: str) -> None:
    """``served``, the SHA-256 of the metadata file's bytes as they came (not of its decoded text: a Latin-1 byte
    or a charset header must not make a file that matches its hash fail), against the one the index lists."""
    if file.core_metadata_sha256 is None:
        return
    if served != file.core_metadata_sha256.lower():
        raise _bad(url, "its sha256 differs from the one the index lists")
