"""Which URLs an index page may send us to: file links, redirects. Pure.

An index page is data from the network, so its links are checked before one reaches a lock's
``url``. A wheel link must be ``https``; plain ``http`` only on this machine (127.0.0.1,
localhost, ::1) or on a mirror the user named. Its host must be one we already trust for that
page: the page's own host, the configured index's host, a host the database declares for the
indexes (``[index] allowed-hosts``: files.pythonhosted.org for pypi.org, download-r2.pytorch.org
for the PyTorch index at download.pytorch.org), or a mirror's host. Hosts are matched exactly: a
sibling under the same parent domain (evil.pytorch.org) is not trusted unless declared. Anything
else (``file:``, ``javascript:``, ``data:``, another host) is dropped, and the caller says so with
a notice.

A redirect is followed only to the same host (http may become https, never the reverse); a
redirect to another host is refused, since it would move the whole listing somewhere the user
did not name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

from cudaresolve.core.urls import PLAIN_URL, in_local_folder, split_url

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cudaresolve.index.simple import IndexFile

__all__ = ["LOCAL_HOSTS", "FileTrust", "host_of", "is_same_host_redirect", "redirect_target"]

#: Hosts where plain http is acceptable: nothing leaves this machine.
LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})


def host_of(url: str) -> str:
    """The lower-case host of ``url`` without port or user info; "" when there is none or it is malformed."""
    parts = split_url(url.strip())
    return (parts.hostname or "").lower() if parts is not None else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileTrust:
    """The hosts and schemes a page's file links may use. ``check(url)`` -> None or why it is refused."""

    hosts: frozenset[str]  # exact hosts trusted for https ("*": any)
    http_hosts: frozenset[str]  # hosts where plain http is accepted too
    folder: str | None = None  # a local folder's page (``--find-links DIR``): ``file://`` links inside it only

    @classmethod
    def for_page(
        cls,
        *,
        page_url: str,
        index_url: str,
        allowed_hosts: Iterable[str] | None,
        mirror_urls: Sequence[str] = (),
    ) -> FileTrust:
        """``allowed_hosts`` None: the host check is off (only the scheme is checked)."""
        mirror_hosts = {host_of(m) for m in mirror_urls} - {""}
        own = {host_of(page_url), host_of(index_url)} - {""}
        hosts = own | mirror_hosts | {h.lower() for h in allowed_hosts or ()}
        if allowed_hosts is None:
            hosts = {"*"}
        folder = page_url.rstrip("/") + "/" if page_url.startswith("file:///") else None
        return cls(hosts=frozenset(hosts), http_hosts=LOCAL_HOSTS | mirror_hosts, folder=folder)

    def check(self, url: str) -> str | None:
        """None when ``url`` may be used; else a short reason ("scheme file:", "host evil.example")."""
        parts = split_url(url)
        if parts is None:
            return "malformed URL"
        host = (parts.hostname or "").lower()
        scheme = parts.scheme.lower()
        if self.folder is not None and in_local_folder(url, self.folder):
            return None  # a file of the local folder the page lists (``index.local_folder``)
        if scheme not in ("https", "http"):
            return f"scheme {scheme or '(none)'}:"
        if not host:
            return "no host"
        if scheme == "http" and host not in self.http_hosts:
            return f"plain http to {host}"
        if "*" in self.hosts or host in self.hosts:
            return None
        return f"host {host}"

    def split(self, files: Iterable[IndexFile]) -> tuple[list[IndexFile], list[tuple[IndexFile, str]]]:
        """(files that may be used, (refused file, why) pairs), each in page order. A plain URL
        (``core.urls.PLAIN_URL``) is judged once per origin: ``check`` looks at nothing else of it, and a page
        links thousands of files on one host."""
        kept: list[IndexFile] = []
        refused: list[tuple[IndexFile, str]] = []
        verdicts: dict[str, str | None] = {}
        for file in files:
            plain = PLAIN_URL.match(file.url)
            if plain is None:
                why = self.check(file.url)
            elif (origin := plain[1]) in verdicts:
                why = verdicts[origin]
            else:
                why = verdicts[origin] = self.check(file.url)
            if why is None:
                kept.append(file)
            else:
                refused.append((file, why))
        return kept, refused


def is_same_host_redirect(source: str, target: str) -> bool:
    """A redirect we follow: same host and port, and never from https down to http."""
    a, b = split_url(source), split_url(target)
    if a is None or b is None:
        return False
    same = (a.hostname or "").lower() == (b.hostname or "").lower() and a.port == b.port
    schemes = (a.scheme.lower(), b.scheme.lower())
    return bool(a.hostname) and same and schemes in (("https", "https"), ("http", "http"), ("http", "https"))


def redirect_target(current: str, location: str) -> str:
    """``Location`` made absolute against ``current``; as sent when urllib cannot join it (``http://[::1``),
    so that the same-host check refuses it with the server's words."""
    try:
        return urljoin(current, location.strip())
    except ValueError:
        return location.strip()
