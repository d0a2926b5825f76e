"""What the cache alone says for a lock that could not be made whole: whether it holds anything, what a page
missing from it was, and the hashes of the database's answer. Does I/O: reads the cache."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.resolve.model import Solution

__all__ = ["hashes_from_cache", "network_failure", "no_pages_cached", "not_cached"]

#: The reasons ``index.client`` gives when the network, not a page's content, failed.
_NETWORK: Final = frozenset(
    {"index.could-not-reach", "index.host-down", "index.network-error", "index.deadline", "index.http-status"}
)


def no_pages_cached() -> bool:
    """Whether the page cache holds nothing at all (a fresh machine): an offline whole-environment pass
    would fail at its first page, after building its search for nothing."""
    from cudaresolve.index.http_cache import HttpCache, default_cache_dir

    return not HttpCache(default_cache_dir()).has_entries()


def not_cached(mirrors: Mapping[str, str], name: str, index: str) -> Text:
    """What an offline pass would have said of ``name``'s page on ``index`` (mirrors applied)."""
    from cudaresolve.index.simple import apply_mirror, canonical_project

    url = f"{apply_mirror(index.rstrip('/'), mirrors)}/{canonical_project(name)}/"
    return Text.of("index.package-unavailable", package=name, reason=Text.of("index.not-cached", url=url))


def hashes_from_cache(solution: Solution, policy: IndexPolicy) -> Solution:
    """File names and sha256 for the database's answer from the page cache alone (what the whole-environment
    pass managed to fetch): the run's ``policy`` made offline, so never a second network pass, no HTTP client
    and no httpx import."""
    from cudaresolve.index.listings import fetch_listings
    from cudaresolve.lock.wheels import attach_files

    wanted = [(p.index, p.name) for p in solution.packages]
    versions = {p.name: [p.version] for p in solution.packages}  # parse only the pinned files of each page
    listings = fetch_listings(None, wanted, replace(policy, offline=True, deadline=None), versions=versions)
    solution, notices = attach_files(solution, listings)
    extra = tuple(n for n in notices if n not in solution.warnings)
    return replace(solution, warnings=solution.warnings + extra) if extra else solution


def network_failure(reason: Text) -> bool:
    """Whether ``reason`` (an ``IndexUnavailable``'s message, its causes nested in its fields) says the network
    failed to deliver a page or file: a host down or refusing, a deadline passed, an HTTP error status. A page
    that arrived and could not be used (bad metadata, a broken sdist) is no network failure."""
    if reason.key in _NETWORK:
        return True
    for _, value in reason.fields:
        for part in value if isinstance(value, tuple) else (value,):
            if isinstance(part, Text) and network_failure(part):
                return True
    return False

