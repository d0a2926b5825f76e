"""What a lock's run reaches the indexes with, made once for the run. Does I/O: a helper process, a TLS context.

``index_policy`` is the run's one ``IndexPolicy``; ``run_client`` its HTTP client; ``tls_ahead`` the TLS context a run
that will surely send requests makes while the database is built; ``page_fetcher`` the helper process that fetches
its pages (``index.page_fetcher``), started with the run by ``helper_ahead`` when the run will surely fetch pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cudaresolve.index.page_fetcher import PageFetcher
    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.index.transport import TlsAhead
    from cudaresolve.lock.request import LockInputs, LockRequest

__all__ = ["helper_ahead", "index_policy", "page_fetcher", "run_client", "tls_ahead"]


def index_policy(inputs: LockInputs) -> IndexPolicy:
    """The run's one ``IndexPolicy``: the user's mirrors and ``--offline``, the database's allowed file hosts,
    the PyTorch index's root (a mirror of it may be flat directories), the page cache, and online one network
    deadline (``CUDARESOLVE_NETWORK_TIMEOUT``) that every pass of the run spends together."""
    from cudaresolve.index.http_cache import HttpCache, default_cache_dir
    from cudaresolve.index.limits import Deadline, deadline_from_env
    from cudaresolve.index.policy import IndexPolicy

    db = inputs.db
    return IndexPolicy(
        offline=inputs.offline,
        mirrors=inputs.mirrors,
        allowed_hosts=tuple(db.allowed_hosts),
        flat_roots=(db.pytorch_index_root,),
        cache=HttpCache(default_cache_dir()),
        deadline=None if inputs.offline else Deadline(deadline_from_env()),
    )


def run_client(offline: bool, tls: TlsAhead | None = None) -> Any:
    """The HTTP client for a run: none offline; online a ``LazyClient``, built on the first real request
    (a warm run whose pages and metadata are all fresh in the cache never imports httpx), with ``tls`` where the
    TLS context was made ahead (``tls_ahead``)."""
    from contextlib import nullcontext
    from functools import partial

    if offline:
        return nullcontext(None)
    from cudaresolve.index.transport import LazyClient, make_http_client

    return LazyClient(partial(make_http_client, tls=tls))


def tls_ahead(request: LockRequest) -> TlsAhead | None:
    """The TLS context made from now on (``index.transport.TlsAhead``) for a run that will surely send requests:
    online, with no page in the cache. A run that may be served from the cache never imports httpx for it, and one
    that names a plain-http index or mirror (a local index) does not load certificates it may never need."""
    from cudaresolve.lock.cached import no_pages_cached

    named = [request.index_url or "", *request.extra_index_urls, *request.find_links]
    named += [m.partition("=")[2] for m in request.mirrors]
    if request.offline or any(u.strip().lower().startswith("http:") for u in named) or not no_pages_cached():
        return None
    from cudaresolve.index.transport import TlsAhead

    return TlsAhead()


def page_fetcher(policy: IndexPolicy, tls: TlsAhead | None, started: PageFetcher | None = None) -> Any:
    """The helper process that fetches a run's pages into the cache (``index.page_fetcher``), as a context: none
    offline or without a cache, where it stores what it fetches, nor on Windows, whose pipes ``select`` cannot
    wait on; ``started`` when the run started one ahead (``helper_ahead``: it is that one's to end); else one
    started at once for a run that will surely fetch pages (``tls`` made ahead: an empty cache), or on the first
    page the run fetches."""
    import sys
    from contextlib import nullcontext

    if policy.offline or policy.cache is None or sys.platform == "win32":
        return nullcontext(None)
    if started is not None:
        return nullcontext(started)
    from cudaresolve.index.page_fetcher import PageFetcher

    return PageFetcher(start=tls is not None)


def helper_ahead(request: LockRequest) -> Any:
    """The page fetcher (``page_fetcher``) started as a run that will surely fetch pages starts (online, no page
    in the cache, over https or plain http alike), as a context that ends it; None otherwise. Its child's start-up
    then runs beside the database's build, on the other core, and it is up for the run's first pages, those of the
    requested projects, which the run would otherwise fetch and parse itself."""
    import sys
    from contextlib import nullcontext

    from cudaresolve.lock.cached import no_pages_cached

    if request.offline or sys.platform == "win32" or not no_pages_cached():
        return nullcontext(None)
    from cudaresolve.index.page_fetcher import PageFetcher

    return PageFetcher(start=True)
