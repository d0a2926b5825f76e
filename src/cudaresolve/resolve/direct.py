"""Direct references (``name[extras] @ URL``): judged before anything is fetched, then made a candidate. Pure.

A direct reference pins its package to exactly one wheel file, as pip and uv install it. What is
accepted: a URL whose last path segment is a wheel file name (PEP 427) for the named package, on
``https``, on ``http`` only at 127.0.0.1/localhost (the rule of ``[tool.cudaresolve.package-index]``),
or ``file://`` with an absolute path to a local wheel (what pip and uv accept; the lock then
records that path, so it installs only where the file is). The fragment may give the file's
hash, ``#sha256=``, ``#sha384=`` or ``#sha512=`` (pip's URL form; weaker algorithms are refused).

Everything else is an ``UnsupportedReference`` naming the URL, never a requirement dropped: an
sdist (``.tar.gz``, ``.zip``: its dependencies are known only by building it), a VCS URL
(``git+https://``), a directory, another scheme, a path without a scheme.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote

from cudaresolve.core.platforms import canonical_name
from cudaresolve.core.urls import split_url, strip_credentials
from cudaresolve.errors import InvalidInput, NoSolution, UnsupportedReference
from cudaresolve.resolve.catalog import Candidate
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from packaging.requirements import Requirement
    from packaging.tags import Tag
    from packaging.version import Version

    from cudaresolve.resolve.catalog import Catalog
    from cudaresolve.resolve.source import IndexRelease

__all__ = [
    "HASH_ALGORITHMS", "SDIST_SUFFIXES", "DirectRef", "check_dependency_url", "direct_candidate", "local_directory",
    "parse_direct", "same_reference",
]  # fmt: skip

#: The hash algorithms a URL fragment may name, strongest first (hashlib names; PEP 751 ``hashes`` keys).
HASH_ALGORITHMS: Final = ("sha512", "sha384", "sha256")
_HEX: Final = re.compile(r"[0-9a-f]+")
_DIGEST_LENGTH: Final = {"sha512": 128, "sha384": 96, "sha256": 64}
_LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
_VCS: Final = ("git+", "hg+", "svn+", "bzr+")
SDIST_SUFFIXES: Final = (".tar.gz", ".zip", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectRef:
    """One checked direct reference: where to fetch the wheel and what it must be."""

    name: str  # canonical
    url: str  # as given, without the fragment (credentials kept: they fetch the file)
    filename: str
    version: Version
    tags: frozenset[Tag]
    hashes: tuple[tuple[str, str], ...] = ()  # (algorithm, lower-case hex digest) from the fragment
    path: str | None = None  # the local file of a ``file://`` URL

    @property
    def shown(self) -> str:
        """The URL as a lock records it and messages show it: no credentials, no fragment."""
        return strip_credentials(self.url)


def parse_direct(name: str, url: str) -> DirectRef:
    """``name @ url`` checked (module docstring); raises ``UnsupportedReference`` or ``InvalidInput``."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    text = url.strip()
    if text.startswith(_VCS):
        raise _unsupported("resolve.direct-vcs", text)
    location, _, fragment = text.partition("#")  # as urldefrag does, without its urlparse (which may raise)
    parts = split_url(location)
    if parts is None:  # ``http://[::1/x.whl``: an unclosed bracket, a port that is not a number
        shown = Text.of("resolve.direct-malformed", url=strip_credentials(text)[:300])
        raise UnsupportedReference(shown, hint=Text("resolve.direct-malformed.hint"))
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise _unsupported("resolve.direct-file", text)
    elif scheme not in ("https", "http") or not parts.hostname:
        raise _unsupported("resolve.direct-scheme", text)
    elif scheme == "http" and parts.hostname not in _LOCAL_HOSTS:
        raise _unsupported("resolve.direct-http", text)
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    if not filename:
        raise _unsupported("resolve.direct-directory", text)
    if filename.lower().endswith(SDIST_SUFFIXES):
        raise _unsupported("resolve.direct-sdist", text)
    if not filename.endswith(".whl"):
        raise _unsupported("resolve.direct-not-wheel", text)
    try:
        wheel_name, version, _build, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, ValueError):
        raise _unsupported("resolve.direct-not-wheel", text) from None
    wanted = canonical_name(name)
    if canonical_name(wheel_name) != wanted:
        raise InvalidInput(
            Text.of("resolve.direct-other-name", name=wanted, file=filename, url=strip_credentials(location)),
            hint=Text("resolve.direct-other-name.hint"),
        )
    return DirectRef(
        name=wanted,
        url=location,
        filename=filename,
        version=version,
        tags=tags,
        hashes=_hashes(fragment, location),
        path=unquote(parts.path) if scheme == "file" else None,
    )


def local_directory(url: str) -> str | None:
    """The local folder a ``file://`` URL names when it is an existing folder (not a wheel, not an sdist): a
    directory reference, a local project whose metadata its build backend gives (PEP 751 ``directory``). The one
    look at the file system in this module."""
    text = url.strip().partition("#")[0]
    parts = split_url(text)
    if parts is None or parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    last = path.rstrip("/").rsplit("/", 1)[-1].lower()
    if not path.startswith("/") or last.endswith((".whl", *SDIST_SUFFIXES)) or not os.path.isdir(path):
        return None  # not a folder: judged as a file reference (``parse_direct``), which refuses it by name
    return path.rstrip("/") or "/"


def same_reference(a: str, b: str) -> bool:
    """Whether two URLs name the same file: equal but for credentials and the fragment."""
    return strip_credentials(a.strip().partition("#")[0]) == strip_credentials(b.strip().partition("#")[0])


def check_dependency_url(direct: Mapping[str, Candidate], req: Requirement, parent: str) -> None:
    """A dependency given as ``name @ URL`` (allowed only in a direct reference's own metadata) is met only by the
    same file given by the user, among the ``direct`` candidates; else ``NoSolution``, never a silently dropped
    URL."""
    pinned = direct.get(canonical_name(req.name))
    given = pinned.source.artifact.url if pinned is not None and pinned.source is not None else None
    if given is not None and req.url is not None and same_reference(given, req.url):
        return
    raise NoSolution(
        Text.of("resolve.dependency-url", parent=parent, requirement=str(req)[:300]),
        hint=Text.of("resolve.dependency-url.hint", name=canonical_name(req.name)),
    )


def _hashes(fragment: str, location: str) -> tuple[tuple[str, str], ...]:
    """``sha256=HEX`` (``&``-separated pairs) -> ((algorithm, digest), ...); anything else is refused."""
    found: list[tuple[str, str]] = []
    for part in (p for p in fragment.split("&") if p):
        algorithm, _, digest = part.partition("=")
        algorithm, digest = algorithm.strip().lower(), digest.strip().lower()
        if algorithm not in _DIGEST_LENGTH or len(digest) != _DIGEST_LENGTH[algorithm] or not _HEX.fullmatch(digest):
            raise InvalidInput(
                Text.of("resolve.direct-bad-fragment", fragment=part[:120], url=strip_credentials(location)),
                hint=Text("resolve.direct-bad-fragment.hint"),
            )
        found.append((algorithm, digest))
    return tuple(found)


def _unsupported(key: str, url: str) -> UnsupportedReference:
    hint = Text("resolve.direct-unsupported.hint")
    return UnsupportedReference(Text.of(key, url=strip_credentials(url)[:300]), hint=hint)


def direct_candidate(catalog: Catalog, release: IndexRelease) -> Candidate:
    """The one candidate a direct reference leaves its package.

    For a package the database knows (torch, fbgemm-gpu, xformers ...), the database's build of
    exactly the file's version and local label, with the named file: its variant, SM list, driver
    floor and pairings still apply, so a URL never bypasses the hardware rules. A build the target
    rules out is a ``NoSolution`` with the database's reason; a version the database does not know
    (a custom build) is refused, since nothing would check it. Any other package is the file itself.
    """
    name = release.name
    if name not in catalog.known:
        return Candidate(
            name=name, version=release.version, variant=None, index_url="", channel="direct", source=release
        )
    build = next((c for c in catalog.for_name(name) if c.version == release.version), None)
    if build is not None:
        return replace(build, source=release)
    rejected = [r.finding for r in catalog.rejected(name) if r.version == release.version]
    if rejected:
        raise NoSolution(
            Text.of("render.no-solution", first=rejected[0].text),
            findings=rejected[:1],
            hint=Text.of("resolve.direct-ruled-out.hint", package=name),
        )
    raise NoSolution(
        Text.of(
            "resolve.direct-unknown-build", package=name, version=str(release.version), file=release.artifact.filename
        ),
        hint=Text.of("resolve.direct-unknown-build.hint", package=name),
    )
