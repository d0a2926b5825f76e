"""Progress events: what library code tells whoever is watching while people wait. Pure.

Library code calls ``report(Event(...))`` where work of a known kind happens (an index page or a
metadata file fetched, bytes of a wheel read, a pip run started or finished); by default nobody
listens and ``report`` costs one list lookup. The command line installs a listener for
the run (``listening(listener)``): ``render.progress`` draws a live display on a terminal, or one
line per event under ``-v``; tests count the events.

Kinds (``Event.kind``) and their fields:

=================  ========================================================================
``page``           an index page fetched from the network (``label``: its URL)
``page-cached``    an index page served from the cache without a request
``metadata``       a package's core metadata fetched (``label``: the file's URL)
``bytes``          bytes read over the network (``amount``), pages, metadata and wheel ranges
``pip-start``      a pip run begins (``label``: pip's command, ``download``/``install``/``uninstall``;
                   ``where``: the index it may use, "" for none; ``step``/``steps``: its place)
``pip-end``        that run ended (``amount``: pip's exit code)
=================  ========================================================================
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["KINDS", "Event", "Listener", "listening", "report"]

KINDS: Final = ("page", "page-cached", "metadata", "bytes", "pip-start", "pip-end")


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One thing that happened; ``kind`` is one of ``KINDS``."""

    kind: str
    label: str = ""
    where: str = ""
    amount: int = 0
    step: int = 0
    steps: int = 0


class Listener(Protocol):
    def __call__(self, event: Event) -> None: ...


#: The run's listener: a plain global, not a ContextVar, so that the index client's worker threads see it.
_LISTENER: list[Listener | None] = [None]


def report(event: Event) -> None:
    """Tell the run's listener, if any; a display whose stream has gone (OSError) is dropped, not fatal."""
    listener = _LISTENER[0]
    if listener is not None:
        try:
            listener(event)
        except OSError:
            _LISTENER[0] = None


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Within the block, events go to ``listener`` (None: nowhere)."""
    before, _LISTENER[0] = _LISTENER[0], listener
    try:
        yield
    finally:
        _LISTENER[0] = before
