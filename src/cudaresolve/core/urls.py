"""Credentials in URLs: kept to fetch, never written or shown. Pure.

A private mirror is often given as ``https://user:token@mirror.example/simple``. The lock file and
the JSON output carry URLs without the ``user:token@`` part (an installer finds the credentials
where pip and uv keep them: netrc, a keyring, the same setting); messages show ``user:****@``.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact", "strip_credentials"]


def strip_credentials(url: str) -> str:
    """``url`` without its ``user:password@`` part (what a lock file and the JSON output carry)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def redact(url: str) -> str:
    """``url`` with its password (or a lone token) shown as ``****``, as pip prints it."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user, sep, _ = userinfo.partition(":")
    shown = f"{user}:****" if sep else "****"
    return urlunsplit(parts._replace(netloc=f"{shown}@{host}"))
