"""HTTP freshness of a stored response, after RFC 9111 (HTTP Caching). Pure.

cudaresolve keeps a *private* cache (RFC 9111 section 1), so ``s-maxage``, ``proxy-revalidate``
and ``private`` do not apply to it. What is implemented:

* section 4.2.1, freshness lifetime: ``max-age`` (5.2.2.1) first; else ``Expires`` minus
  ``Date`` (or minus the time the response arrived when it has no ``Date``); an ``Expires`` that
  does not parse ("0", "-1") means already expired; else 0. No heuristic freshness
  (section 4.2.2 allows it, pip's CacheControl does not do it by default, and a page with no
  explicit lifetime is revalidated as before).
* section 4.2.3, age: the ``Age`` header received (5.1; an invalid value counts as 0) plus the
  time the response has been resident here. The ``Date`` of the response is not used for the
  age: a client clock that runs ahead of the server's would make every entry look old.
* section 5.2.2.4 ``no-cache`` and ``max-age=0``: stored, but revalidated before each use;
  5.2.2.5 ``no-store``: not stored at all; 5.2.2.2 ``must-revalidate`` (and ``no-cache``, see
  4.2.4): a stale copy is never served in place of a failed revalidation.
* section 4.2.1: a directive given twice with different values makes the response stale;
  a ``max-age`` larger than 2**31 is taken as 2**31 (1.2.2).

Spec: https://www.rfc-editor.org/rfc/rfc9111
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CacheControl", "current_age", "freshness_lifetime", "parse_cache_control", "parse_http_date"]

#: RFC 9111 section 1.2.2: delta-seconds beyond what a cache can represent are taken as 2**31.
_MAX_DELTA: Final = 2**31


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheControl:
    """The response directives a private cache acts on (RFC 9111 section 5.2.2).

    ``max_age`` is None when absent; ``conflict`` is True when ``max-age`` was given twice with
    different values (or could not be read), which makes the response stale (section 4.2.1).
    """

    max_age: int | None = None
    no_cache: bool = False
    no_store: bool = False
    must_revalidate: bool = False
    conflict: bool = False


def parse_cache_control(value: str | None) -> CacheControl:
    """``Cache-Control: max-age=600, public`` -> ``CacheControl(max_age=600)``; names are case-insensitive.

    Several header lines arrive joined with ", " (httpx ``Headers.get``), which parses the same.
    Quoted arguments (``max-age="600"``) are accepted (section 5.2).
    """
    if not value:
        return CacheControl()
    ages: set[int | None] = set()
    flags: set[str] = set()
    for item in value.split(","):
        name, sep, argument = item.strip().partition("=")
        name = name.strip().lower()
        if name == "max-age":
            ages.add(_delta_seconds(argument.strip().strip('"')) if sep else None)
        elif name in ("no-cache", "no-store", "must-revalidate"):
            flags.add(name)  # no-cache="field" names fields; we store none of them apart: treat as no-cache
    conflict = len(ages) > 1 or None in ages
    max_age = next(iter(ages)) if len(ages) == 1 else None
    return CacheControl(
        max_age=max_age,
        no_cache="no-cache" in flags,
        no_store="no-store" in flags,
        must_revalidate="must-revalidate" in flags,
        conflict=conflict,
    )


def _delta_seconds(text: str) -> int | None:
    """RFC 9111 section 1.2.2: one or more digits; None when it is not that."""
    if not text.isascii() or not text.isdigit():
        return None
    return min(int(text), _MAX_DELTA)


def parse_http_date(value: str | None) -> float | None:
    """An HTTP-date (RFC 9110 section 5.6.7, all three forms) as a POSIX timestamp; None when invalid."""
    if not value:
        return None
    from email.utils import parsedate_to_datetime

    try:
        parsed = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None:  # HTTP dates are always GMT (RFC 9110 section 5.6.7)
        from datetime import UTC

        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def freshness_lifetime(
    cache_control: CacheControl, *, expires: str | None, date: str | None, response_time: float
) -> float:
    """Seconds the response stays fresh after it was generated (RFC 9111 section 4.2.1)."""
    if cache_control.conflict:
        return 0.0
    if cache_control.max_age is not None:
        return float(cache_control.max_age)
    if expires is None:
        return 0.0
    expires_at = parse_http_date(expires)
    if expires_at is None:  # "Expires: 0" and the like: already expired (section 5.3)
        return 0.0
    generated = parse_http_date(date)
    return max(0.0, expires_at - (generated if generated is not None else response_time))


def current_age(age_header: str | None, *, response_time: float, now: float) -> float:
    """The ``Age`` the response arrived with plus the seconds it has been stored (RFC 9111 section 4.2.3)."""
    initial = _delta_seconds((age_header or "").strip()) or 0
    return float(initial) + max(0.0, now - response_time)
