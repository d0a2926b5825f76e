"""Many project pages at once, never raising: what the embedded answer needs to add hashes. Does I/O.

``fetch_listings`` fetches every (index, project) page through one ``IndexClient``: fresh cached
copies first, the rest in parallel; when the network fails, a ``Notice`` says so instead of an
error, so the caller can use the embedded data.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.limits import DEFAULT_DEADLINE, Deadline, deadline_from_env
from cudaresolve.index.notices import listing_notices
from cudaresolve.index.pages import Listings, ProjectPage
from cudaresolve.index.parsed_cache import parsed_key
from cudaresolve.index.simple import canonical_project, version_filter
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import httpx
    from packaging.utils import NormalizedName

    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.index.simple import Keep
    from cudaresolve.index.transport import LazyClient

__all__ = ["Identity", "fetch_listings", "fresh_keys", "fresh_states", "unchanged"]


def fetch_listings(
    client: httpx.Client | LazyClient | None,
    requests: Sequence[tuple[str, str]],
    policy: IndexPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    versions: Mapping[str, Iterable[str]] | None = None,
    within: Keep | None = None,
) -> Listings:
    """Fetch every (index_url, project) page; never raises ``IndexUnavailable``.

    ``versions`` (project -> versions) limits which files of a page are parsed, when the caller
    needs only those (a lock adding hashes to its pins); other files are skipped unparsed. ``within``:
    a filter those files must pass too, whose stored parsed forms then serve (``simple.version_filter``).

    A page that cannot be fetched is left out (listed in ``unavailable``) and one
    ``index-unavailable-fallback`` notice per index says the embedded data is used instead and
    hashes could not be added. A stale cached copy served because the network failed gives one
    ``index-stale-cache`` notice per index. Offline, cache misses are silent: the user asked.

    ``policy`` says where pages come from and how hard to try (``index.policy``). Its ``allowed_hosts``
    (the database's ``[index] allowed-hosts``) are the hosts besides the page's
    own that file links may point to; links elsewhere, or with a scheme other than https (http on
    127.0.0.1 or a named mirror), are dropped with one ``index-file-refused`` notice per index.
    Its ``deadline`` bounds all the fetching (none given: ``CUDARESOLVE_NETWORK_TIMEOUT`` seconds, else 60);
    its ``max_page_bytes`` caps each page.
    """
    if policy.deadline is None:  # offline there is nothing to bound: a bad variable only matters online
        policy = replace(policy, deadline=Deadline(DEFAULT_DEADLINE if policy.offline else deadline_from_env()))
    offline = policy.offline
    index_client = IndexClient(client, policy, sleep=sleep)
    for project, wanted in (versions or {}).items():
        index_client.keep[canonical_project(project)] = version_filter(project, wanted, within=within)
    pages: list[ProjectPage] = []
    unavailable: list[tuple[str, NormalizedName]] = []
    failed: dict[str, tuple[Text, list[str]]] = {}  # index -> (first reason, projects)
    stale: dict[str, tuple[Text, float | None, list[str]]] = {}
    refused: dict[str, list[tuple[str, str]]] = {}  # index -> (file, why)
    seen: set[tuple[str, NormalizedName]] = set()
    keys: list[tuple[str, NormalizedName]] = []
    for index_url, name in requests:
        key = (index_url.strip().rstrip("/"), canonical_project(name))
        if key not in seen:
            seen.add(key)
            keys.append(key)

    def fetch(key: tuple[str, NormalizedName], fresh_only: bool = False) -> ProjectPage | IndexUnavailable | None:
        try:
            return index_client.fresh_page(*key) if fresh_only else index_client.fetch_page(*key)
        except IndexUnavailable as e:
            return e

    found = {key: fetch(key, fresh_only=True) for key in keys}  # fresh copies first: no request, no thread
    todo = [key for key in keys if found[key] is None]
    if client is not None and len(todo) > 1:  # pages are independent: ask for them at once
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            found.update(zip(todo, pool.map(fetch, todo), strict=True))
    else:
        found.update((key, fetch(key)) for key in todo)
    results = [r for r in (found[key] for key in keys) if r is not None]  # none is None any more
    for key, page in zip(keys, results, strict=True):
        if isinstance(page, IndexUnavailable):
            e = page
            unavailable.append(key)
            if not offline:
                failed.setdefault(key[0], (e.text, []))[1].append(key[1])
            continue
        pages.append(page)
        if page.refused:
            refused.setdefault(key[0], []).extend(page.refused)
        if page.source == "stale-cache":
            reason = page.error or Text("index.network-error")
            stale.setdefault(key[0], (reason, page.fetched_at, []))[2].append(key[1])
    notices = listing_notices(failed, stale, refused)
    return Listings(pages=tuple(pages), unavailable=tuple(unavailable), notices=tuple(notices))


def fresh_keys(requests: Sequence[tuple[str, str]], policy: IndexPolicy) -> list[str] | None:
    """What each (index_url, project) page's parsed form is keyed by (``parsed_cache.parsed_key``: its body, type
    and URL), in order, when every page is found and fresh in the cache; else None. Sends no request: reads the
    cache entries' heads only."""
    index_client = IndexClient(None, policy)
    keys = []
    for index_url, name in requests:
        found = index_client.fresh_entry(index_url, name)
        if found is None:
            return None
        keys.append(parsed_key(found[1]))
    return keys


#: What ``unchanged`` compares of a page's cache entry (``HttpCache.identity``).
Identity = tuple[int, int, int]


def fresh_states(requests: Sequence[tuple[str, str]], policy: IndexPolicy) -> list[tuple[Identity, str, float]] | None:
    """For each (index_url, project) page, in order: its cache entry's identity, its parsed form's key
    (``fresh_keys``) and until when it is used with no request (POSIX time; offline, forever); None when a page
    is not found and fresh in the cache, or its entry was replaced while it was read."""
    index_client, cache = IndexClient(None, policy), policy.cache
    if cache is None:
        return None
    states = []
    for index_url, name in requests:
        url = index_client.page_url(index_url, name)
        before, found = cache.identity(url), index_client.fresh_entry(index_url, name)
        if found is None or before is None or cache.identity(url) != before:  # replaced while read: not this head's
            return None
        until = math.inf if policy.offline else cache.fresh_until(found[1], max_age=policy.max_age)
        states.append((before, parsed_key(found[1]), until))
    return states


def unchanged(requests: Sequence[tuple[str, str]], policy: IndexPolicy, identities: Sequence[Identity]) -> bool:
    """Whether each (index_url, project) page's cache entry is the very file of the identity given for it, in
    order (``fresh_states``): then it holds what it held, and nothing of it needs to be read."""
    index_client, cache = IndexClient(None, policy), policy.cache
    if cache is None or len(identities) != len(requests):
        return False
    for (index_url, name), identity in zip(requests, identities, strict=True):
        if cache.identity(index_client.page_url(index_url, name)) != identity:
            return False
    return True
