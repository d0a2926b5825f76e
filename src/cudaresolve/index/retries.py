"""When a request to an index is sent again, and when its host counts as down for the run. No I/O of its own:
the request and the sleep are given, and what it learns of the hosts goes into the ``Hosts`` it is given.

A read that fails, a 429 and a 5xx are tried again, ``retries`` times, after ``backoff * 2**n`` seconds (capped
at ``max_backoff``) or the server's ``Retry-After``. A connect that fails is different: a host that refuses
the connection, cannot be resolved or does not accept it within the connect timeout is taken as down at once
(no back-off: an unreachable PyTorch index must not hold a lock for seconds), and later requests to it fail
without being sent. Two connect failures are not such a verdict, and are tried again as reads are:

- one to a host that has already answered in this run: it is up, and one connection among the dozens a lock
  opens failed (a busy machine, a proxy dropping a connection);
- a TLS handshake that broke for another reason than the certificate (an alert, an early end of the stream):
  the host answered the connection, and the handshake is what failed. A certificate that does not verify is
  final: it is not sent again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypeVar

from cudaresolve.core.urls import split_url
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.simple import HINT
from cudaresolve.index.transport import TransientError, retry_after
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from cudaresolve.index.policy import IndexPolicy

__all__ = ["RETRY_STATUS", "Hosts", "handshake_glitch", "host_of", "retried", "transient", "unreached"]

T = TypeVar("T")

RETRY_STATUS: Final = frozenset({429, 500, 502, 503, 504})


@dataclass
class Hosts:
    """What one client learnt of the hosts it asked this run (threads share it: a set's ``add`` and a dict's
    item assignment are each one step)."""

    down: dict[str, str] = field(default_factory=dict)  # host -> why it failed
    answered: set[str] = field(default_factory=set)


def host_of(url: str) -> str:
    """What ``Hosts`` names ``url``'s host by: its host and port as written, without a user or password before
    ``@`` (the name is shown, as ``{host} is unreachable``, where nothing hides them); the whole text when it is no
    URL."""
    return parts.netloc.rpartition("@")[2] if (parts := split_url(url)) is not None else url


def retried(
    url: str,
    once: Callable[[], tuple[int, str | None, T]],
    *,
    policy: IndexPolicy,
    hosts: Hosts,
    sleep: Callable[[float], None],
) -> T:
    """What ``once()`` gives for ``url`` (its status, its ``Retry-After`` and the value), sent again by the rules
    above; the value of the last try when its status stays one to retry. A transport failure ``once`` raises as
    ``TransientError`` becomes ``IndexUnavailable`` once it is not to be tried again; so does a host down."""
    host = host_of(url)
    if host in hosts.down:
        raise IndexUnavailable(Text.of("index.host-down", host=host, reason=hosts.down[host]), hint=HINT)
    for attempt in range(policy.retries + 1):
        if policy.deadline is not None:
            policy.deadline.check(url)
        try:
            status, asked_after, value = once()
        except TransientError as e:
            final = e.connect and host not in hosts.answered
            if attempt == policy.retries or final:
                raise unreached(url, e.reason, hosts) from e.__cause__
            asked = None
        else:
            hosts.answered.add(host)
            if status not in RETRY_STATUS or attempt == policy.retries:
                return value
            asked = retry_after(asked_after)
        delay = min(policy.max_backoff, policy.backoff * 2**attempt if asked is None else asked)
        if policy.deadline is not None and delay >= policy.deadline.remaining():
            sleep(policy.deadline.remaining())
            policy.deadline.check(url)
        sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises on its last attempt")


def unreached(url: str, reason: str, hosts: Hosts) -> IndexUnavailable:
    """The error of a request to ``url`` that is not to be sent again, ``reason`` its last failure; its host is down
    for the run from now on (``hosts``)."""
    hosts.down[host_of(url)] = reason
    return IndexUnavailable(Text.of("index.could-not-reach", url=url, reason=reason), hint=HINT)


def transient(error: httpx.HTTPError) -> TransientError:
    """A transport failure as ``retried`` weighs it: ``connect`` when the connect failed, but not when a TLS
    handshake glitch (``handshake_glitch``) is why."""
    import httpx

    connect = isinstance(error, httpx.ConnectError | httpx.ConnectTimeout) and not handshake_glitch(error)
    return TransientError(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__, connect=connect)


def handshake_glitch(error: BaseException) -> bool:
    """Whether ``error`` (an httpx connect error) came of a TLS handshake that broke for another reason than
    the certificate: the chain of causes holds an ``ssl.SSLError`` that is no ``SSLCertVerificationError``."""
    import ssl  # only when a connect failed

    seen: BaseException | None = error
    for _ in range(8):  # httpx's error, httpcore's, the ssl one: a short chain, bounded all the same
        seen = (seen.__cause__ or seen.__context__) if seen is not None else None
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return not isinstance(seen, ssl.SSLCertVerificationError)
    return False
