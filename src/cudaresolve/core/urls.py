"""URLs as users give them: split without crashing, credentials kept to fetch, never written or shown. Pure.

A private mirror is often given as ``https://user:token@mirror.example/simple``. The lock file, the
JSON output and the on-disk cache carry URLs without the ``user:token@`` part (an installer finds the
credentials where pip and uv keep them: netrc, a keyring, the same setting); messages show
``user:****@``. A URL read back from the cache gets the credentials of the configured index again
(``with_credentials_of``), for its host only, as pip's ``MultiDomainBasicAuth`` keys them by host.

``urllib.parse.urlsplit`` raises ``ValueError`` on some text a user may type (``http://[::1``: an
unclosed IPv6 bracket; ``.port`` on ``host:abc``). ``split_url`` is the one place that turns that
into None, so each caller refuses the URL with its own coded ``InvalidInput``; ``strip_credentials``
and ``redact`` work on the text and never raise, so a message about a malformed URL can still be shown.

``split_url`` is also the one check against whitespace and control characters inside a URL: urllib
quietly drops tabs and newlines, and pip splits an option's value at whitespace, so
``https://good/simple https://evil/simple`` read from a lock would pass as one URL here and become two
indexes there. Any whitespace, control or invisible format character makes it None (a caller that
reads a setting strips the ends first, as pip does). ``shown_url`` is how a refused URL appears in a
message: password masked, such characters escaped, cut to a length.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import SplitResult, urlsplit

__all__ = [
    "PLAIN_URL", "has_unsafe_characters", "in_local_folder", "redact", "shown_url", "split_url", "strip_credentials",
    "strip_credentials_in", "with_credentials_of",
]  # fmt: skip

#: An absolute http(s) URL that ``urljoin`` gives back unchanged whatever the (valid) base, and that ``split_url``
#: accepts with the scheme and host its first group spells, whatever its path: a lowercase scheme, a host of
#: letters, digits, dots and hyphens (no userinfo or brackets), a port from 1 to 65535 written without a leading
#: zero or none, a path of unreserved and percent characters, no parameters, query, fragment or whitespace.
#: PyPI's JSON pages link every file so, and a mirror on a port of its own (devpi's 3141) too: a page's files are
#: joined (``index.simple``) and judged (``index.trust``) without parsing each URL.
#: Possessive: nothing is tried twice, so a URL that is not plain (a query, a port of six digits) fails at once.
PLAIN_URL: Final = re.compile(
    r"(https?://[A-Za-z0-9.-]++"
    r"(?::(?>6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})(?![0-9]))?+)"
    r"(?:/[A-Za-z0-9._~%+-]*+)*+\Z"
)
#: ``scheme://`` then the authority (RFC 3986 section 3.2: up to the first ``/``, ``?`` or ``#``).
_AUTHORITY: Final = re.compile(r"^(?P<head>\s*[A-Za-z][A-Za-z0-9+.\-]*:)?//(?P<authority>[^/?#]*)")
#: Userinfo of any absolute URL inside a text (an index page), also with JSON's escaped ``\/\/``: found from
#: the ``://`` (a literal the regex engine skips to), its scheme checked backwards (``_scheme_before``), since a
#: pattern that starts at the scheme is tried at every letter of the text: most of a cold lock's time in here.
_USERINFO_IN_TEXT: Final = re.compile(r"(?P<head>:(?:\\?/){2})[^/\\?#\s\"'<>@]*@")
_SCHEME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


#: Whitespace (Unicode's too), C0/C1 controls, and the invisible format characters (zero widths, bidi
#: overrides, the byte-order mark) that no URL holds unescaped (RFC 3986 section 2: they are percent-encoded).
_UNSAFE: Final = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def in_local_folder(url: str, folder: str) -> bool:
    """Whether ``url`` is a file directly in the local folder ``folder`` (both ``file:///`` URLs): a wheel of a
    ``--find-links DIR`` folder, the one shape of ``file://`` file such a folder's page, a lock and install take."""
    base = folder.rstrip("/") + "/"
    return base.startswith("file:///") and url.startswith(base) and "/" not in url[len(base):]


def has_unsafe_characters(text: str) -> bool:
    """Whether ``text`` holds whitespace, a control character or an invisible format character."""
    return _UNSAFE.search(text) is not None


def shown_url(url: str, limit: int = 200) -> str:
    """``url`` as a message about a refused URL shows it: its password masked (``redact``) and its query too
    (``?token=...`` is how some indexes take a token), whitespace and control characters escaped as Python
    writes them (a newline cannot start a line of its own), cut to ``limit`` characters."""
    shown = re.sub(r"\?[^#]*", "?****", redact(url), count=1)
    shown = _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], shown)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def split_url(url: str) -> SplitResult | None:
    """``url``'s parts, or None when urllib refuses it (an unclosed ``[``, a port that is not a number) or it
    holds whitespace, a control or an invisible format character anywhere (module docstring)."""
    if _UNSAFE.search(url) is not None:
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed host or port
    except ValueError:
        return None
    return parts


def _authority(url: str) -> tuple[int, int, str] | None:
    """(start, end, text) of ``url``'s authority (``user:pass@host:port``); None when it has none."""
    found = _AUTHORITY.match(url)
    if found is None:
        return None
    return found.start("authority"), found.end("authority"), found["authority"]


def _userinfo(url: str) -> str:
    """The ``user:password`` part of ``url`` ("" when there is none)."""
    span = _authority(url)
    return span[2].rpartition("@")[0] if span is not None else ""


def strip_credentials(url: str) -> str:
    """``url`` without its ``user:password@`` part (what a lock file, the JSON output and the cache carry)."""
    span = _authority(url)
    if span is None or "@" not in span[2]:
        return url
    start, end, authority = span
    return url[:start] + authority.rpartition("@")[2] + url[end:]


def strip_credentials_in(text: str) -> str:
    """``text`` (an index page's body) with the ``user:password@`` of every absolute URL in it removed."""
    if "@" not in text:
        return text

    def drop(match: re.Match[str]) -> str:
        return match["head"] if _scheme_before(text, match.start()) else match[0]

    return _USERINFO_IN_TEXT.sub(drop, text)


def _scheme_before(text: str, colon: int) -> bool:
    """Whether a URL scheme (RFC 3986: a letter, then letters, digits, ``+``, ``.``, ``-``) ends at ``colon``:
    the run of scheme characters just before it holds a letter (the scheme starts at that letter)."""
    at = colon - 1
    while at >= 0 and text[at] in _SCHEME_CHARS:
        if text[at].isalpha():
            return True
        at -= 1
    return False


def with_credentials_of(url: str, index_url: str) -> str:
    """``url`` with ``index_url``'s credentials when it has none of its own and is on the same host and port.

    ``with_credentials_of("http://h/files/a.whl", "http://u:p@h/simple/a/")`` gives ``"http://u:p@h/files/a.whl"``;
    a URL on another host, or one already carrying credentials, comes back as is."""
    userinfo = _userinfo(index_url)
    span = _authority(url)
    if not userinfo or span is None or "@" in span[2]:
        return url
    start, end, authority = span
    index_span = _authority(index_url)
    index_host = index_span[2].rpartition("@")[2] if index_span is not None else ""
    if authority.lower() != index_host.lower():
        return url
    return f"{url[:start]}{userinfo}@{authority}{url[end:]}"


def redact(url: str) -> str:
    """``url`` with its password (or a lone token) shown as ``****``, as pip prints it."""
    span = _authority(url)
    if span is None or "@" not in span[2]:
        return url
    start, end, authority = span
    userinfo, _, host = authority.rpartition("@")
    user, sep, _ = userinfo.partition(":")
    shown = f"{user}:****" if sep else "****"
    return f"{url[:start]}{shown}@{host}{url[end:]}"
