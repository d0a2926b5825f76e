"""httpcore's connection pool, its assignment of requests to connections made linear. Pure: it decides, httpcore
does the I/O.

httpx hands each request to httpcore's ``ConnectionPool``, which on every request sent and every response closed
passes over its connections to close the ones it no longer keeps and to give each queued request a connection
(``_assign_requests_to_connections``). In httpcore 1.0.4 to 1.0.9 that pass, for each idle connection, builds a
list over all the connections only to take its length, which is just their number. A cold lock keeps 16 to 22
connections open for its walk's threads, so the 189-package lock of ``bench/bench_realpypi.py`` made 300,000
``is_idle`` calls, about a tenth of its CPU (11 % less CPU and time without them, real PyPI, 6 interleaved rounds).

``use_linear_assignment`` gives one pool a subclass whose pass decides exactly what httpcore's decides: the same
connections dropped and closed (closed ones dropped; expired ones, and idle ones while the pool holds more than its
keep-alive bound, closed), and for each queued request in turn the first connection that can take it, else a new
one while there is room, else a new one in place of the first idle connection. It only walks the connections once
per decision. The method is httpcore's private one, so only the versions whose pass this repeats get it
(``_KNOWN``); any other keeps its own pool.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

__all__ = ["use_linear_assignment"]

#: The httpcore releases whose pass ``LinearPool`` repeats, [from, to): 1.0.4 (where the pass came in) to 1.0.9, the
#: newest when this was written; each one's method was compared (the same parse tree but for names). A later
#: release keeps its own pool until it is compared too.
_KNOWN: Final = ((1, 0, 4), (1, 0, 10))


def use_linear_assignment(pool: Any) -> bool:
    """Give ``pool`` (an httpx transport's ``httpcore.ConnectionPool``) the linear pass; whether it was given (not
    for a pool of another class, nor under an httpcore whose pass is not known here)."""
    import httpcore

    if type(pool) is not httpcore.ConnectionPool or not _known(getattr(httpcore, "__version__", "")):
        return False
    pool.__class__ = _linear_pool()
    return True


def _known(version: str) -> bool:
    """Whether ``version`` is a release (``X.Y.Z``, no pre-release or local build) within ``_KNOWN``."""
    parts = version.split(".")
    if len(parts) != 3 or not all(part.isdigit() and part.isascii() for part in parts):
        return False
    return _KNOWN[0] <= tuple(int(part) for part in parts) < _KNOWN[1]


@cache
def _linear_pool() -> type:
    """The subclass, made once httpcore is imported (this module imports nothing until a pool is changed)."""
    import httpcore

    class LinearPool(httpcore.ConnectionPool):
        """``httpcore.ConnectionPool`` with the pass of the module docstring."""

        def _assign_requests_to_connections(self) -> list[Any]:
            return assign(self)

    return LinearPool


def assign(pool: Any) -> list[Any]:
    """The pass of the module docstring over ``pool``'s ``_connections`` and ``_requests`` (called under the pool's
    lock, as httpcore calls its own); the connections to close, which the caller closes outside the lock."""
    connections: list[Any] = pool._connections
    closing: list[Any] = []
    for connection in list(connections):
        if connection.is_closed():
            connections.remove(connection)
        elif connection.has_expired() or (
            connection.is_idle() and len(connections) > pool._max_keepalive_connections
        ):
            connections.remove(connection)
            closing.append(connection)
    for queued in [request for request in pool._requests if request.is_queued()]:
        origin = queued.request.url.origin
        found = next((c for c in connections if c.can_handle_request(origin) and c.is_available()), None)
        if found is None and len(connections) >= pool._max_connections:
            idle = next((c for c in connections if c.is_idle()), None)
            if idle is None:
                continue  # the request waits for a connection to come free
            connections.remove(idle)
            closing.append(idle)
        if found is None:
            found = pool.create_connection(origin)
            connections.append(found)
        queued.assign_to_connection(found)
    return closing
