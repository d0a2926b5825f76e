"""How one run may reach the indexes, as one value (``IndexPolicy``). Pure: no I/O here.

Where pages come from (``mirrors``, ``offline``), which file hosts a page may point at (``allowed_hosts``),
which mirrors may be flat directories (``flat_roots``), where answers are kept (``cache``) and how hard to try
(retries, back-off, timeouts, the page-size cap, the run's network ``deadline``): the lock flow builds it once
per run and hands the same value to every ``IndexClient`` and ``fetch_listings`` it makes, as uv builds its
index locations and pip its finder once. ``cache`` and ``deadline`` are shared objects (an on-disk cache, a
budget of network time the run's requests spend together); the rest are plain values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from cudaresolve.index.limits import CONNECT_TIMEOUT, MAX_PAGE_BYTES, READ_TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.index.http_cache import HttpCache
    from cudaresolve.index.limits import Deadline

__all__ = ["IndexPolicy"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexPolicy:
    """One run's rules for the indexes (see the module docstring). ``allowed_hosts`` None: file hosts are not
    checked (only schemes); ``max_age``: also serve a cached page younger than this without asking (0: the
    response headers decide). Change a field with ``dataclasses.replace``: a pass that reads only the cache is
    ``replace(policy, offline=True)``."""

    offline: bool = False
    mirrors: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    allowed_hosts: tuple[str, ...] | None = None
    flat_roots: tuple[str, ...] = ()
    cache: HttpCache | None = field(default=None, compare=False)
    deadline: Deadline | None = field(default=None, compare=False)
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    timeout: float = READ_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    max_age: float = 0.0
    max_page_bytes: int = MAX_PAGE_BYTES

    def __post_init__(self) -> None:  # a caller's dict or list is copied, so the value cannot change under us
        object.__setattr__(self, "mirrors", MappingProxyType(dict(self.mirrors)))
        if self.allowed_hosts is not None:
            object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts))
        object.__setattr__(self, "flat_roots", tuple(r.rstrip("/") for r in self.flat_roots))
        object.__setattr__(self, "retries", max(0, self.retries))
