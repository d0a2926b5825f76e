"""A whole file downloaded over HTTP, its redirects followed as the index client allows. Does I/O through the
client it is given.

``IndexClient.download`` reads a direct reference's wheel or an sdist through here: every byte within the
file's deadline and under its cap, no content decoding (the bytes are hashed), no retries. The redirect rules
(``REDIRECTS``, ``MAX_REDIRECTS``) are the index client's for pages too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.progress import Event, report
from cudaresolve.core.urls import split_url
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.limits import too_large
from cudaresolve.index.retries import host_of
from cudaresolve.index.simple import HINT
from cudaresolve.index.transport import stream_within
from cudaresolve.index.trust import is_same_host_redirect, redirect_target
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable

    from cudaresolve.index.limits import Deadline
    from cudaresolve.index.policy import IndexPolicy

__all__ = ["MAX_REDIRECTS", "REDIRECTS", "download_within"]

#: The statuses that redirect, and how many redirects one request follows (a bound, not a fact).
REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS: Final = 5


def download_within(
    http: Any, policy: IndexPolicy, url: str, write: Callable[[bytes], object], *, cap: int, any_host: bool,
    deadline: Deadline,
) -> None:  # fmt: skip
    """GET ``url`` into ``write`` as ``IndexClient.download`` says, with ``http`` (an ``httpx.Client``), by
    ``deadline``; redirects followed as far as ``MAX_REDIRECTS``, to the same host, or with ``any_host`` to any
    https URL."""
    import httpx

    headers = {"Accept-Encoding": "identity"}
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        deadline.check(url)
        rest = deadline.remaining()
        timeout = httpx.Timeout(min(policy.timeout, rest), connect=min(policy.connect_timeout, rest))
        try:
            with stream_within(http, current, headers=headers, timeout=timeout, deadline=deadline) as r:
                location = r.headers.get("Location") if r.status_code in REDIRECTS else None
                if location is None:
                    if r.status_code != 200:
                        status = Text.of("index.http-status", url=url, status=r.status_code)
                        raise IndexUnavailable(status, hint=HINT)
                    length = r.headers.get("Content-Length", "")
                    if length.strip().isdigit() and int(length) > cap:
                        raise too_large(url, cap, file=True)
                    total = 0
                    for chunk in r.iter_raw():
                        total += len(chunk)
                        if total > cap:
                            raise too_large(url, cap, file=True)
                        write(chunk)
                        report(Event(kind="bytes", label=url, amount=len(chunk)))
                        deadline.check(url)
                    return
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:  # the network failed
            down = Text.of("index.host-down", host=host_of(current), reason=f"{type(e).__name__}: {e}")
            raise IndexUnavailable(Text.of("index.could-not-fetch", url=url, error=down), hint=HINT) from e
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            raise IndexUnavailable(
                Text.of("index.could-not-fetch", url=url, error=f"{type(e).__name__}: {e}"), hint=HINT
            ) from e
        target = redirect_target(current, location)
        https = (parts := split_url(target)) is not None and parts.scheme == "https"
        if not (is_same_host_redirect(current, target) or (any_host and https)):
            raise IndexUnavailable(
                Text.of("index.redirect-refused", url=current, target=target[:300]),
                hint=Text("index.redirect-refused.hint"),
            )
        current = target
    raise IndexUnavailable(Text.of("index.too-many-redirects", url=url, limit=MAX_REDIRECTS), hint=HINT)
