"""Progress on stderr while people wait: index pages, metadata, bytes, pip runs. Output.

``listener_for(output, stream)`` picks the display for a run (``core.progress`` says what the
events are):

- ``-q``, ``-qq`` or ``--json``: none;
- ``-v``: one line per page, metadata file and pip run (also into a file or a pipe: it was asked for);
- otherwise, on a terminal: one live line (a spinner and the counts so far), cleared when the run
  ends, and paused while pip runs so that pip's own output and progress bars stand alone, each
  pip run announced on one line (``pip download from INDEX (1/3)``);
- otherwise (a file, a pipe, CI logs): none.
"""

from __future__ import annotations

import threading
from typing import IO, TYPE_CHECKING, Any

from cudaresolve.text.catalogue import message

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.core.progress import Event
    from cudaresolve.render.output import Output

__all__ = ["LineLog", "LiveCounts", "format_bytes", "listener_for"]

#: The line ``-v`` prints for each kind of fetch.
_LINES = {"page": "render.progress.page", "page-cached": "render.progress.page-cached",
          "metadata": "render.progress.metadata"}


def format_bytes(amount: int) -> str:
    """``532 B``, ``12.4 KB``, ``3.1 MB`` (powers of 1000, as pip and uv print sizes)."""
    value = float(amount)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _pip_line(event: Event, lang: str) -> str:
    key = "render.progress.pip-index" if event.where else "render.progress.pip-local"
    return message(key, lang, command=event.label, index=event.where, step=event.step, steps=event.steps)


class LineLog:
    """``-v``: each event worth a line, as it happens."""

    def __init__(self, console: Console, lang: str) -> None:
        self.console = console
        self.lang = lang

    def __call__(self, event: Event) -> None:
        from rich.markup import escape

        if event.kind in _LINES:
            line = message(_LINES[event.kind], self.lang, url=event.label)
        elif event.kind == "pip-start":
            line = _pip_line(event, self.lang)
        else:
            return
        self.console.print(f"[dim]{escape(line)}[/]")

    def close(self) -> None:
        return None


class LiveCounts:
    """A terminal's live line: pages fetched and from the cache, metadata files, bytes."""

    def __init__(self, console: Console, lang: str) -> None:
        self.console = console
        self.lang = lang
        self.counts = {"page": 0, "page-cached": 0, "metadata": 0, "bytes": 0}
        self._lock = threading.Lock()
        self._live: Any = None
        self._task: Any = None

    def __call__(self, event: Event) -> None:
        with self._lock:
            if event.kind == "pip-start":
                self._stop()
                self.console.print(f"[bold]{_pip_line(event, self.lang)}[/]", markup=True, highlight=False)
                return
            if event.kind not in self.counts:
                return
            self.counts[event.kind] += event.amount if event.kind == "bytes" else 1
            self._show()

    def describe(self) -> str:
        c = self.counts
        return message("render.progress.counts", self.lang, pages=c["page"], cached=c["page-cached"],
                       metadata=c["metadata"], size=format_bytes(c["bytes"]))

    def _show(self) -> None:
        if self._live is None:
            from rich.progress import Progress, SpinnerColumn, TextColumn

            self._live = Progress(SpinnerColumn(), TextColumn("{task.description}"), console=self.console,
                                  transient=True)
            self._task = self._live.add_task(self.describe(), total=None)
            self._live.start()
        else:
            self._live.update(self._task, description=self.describe())

    def _stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def close(self) -> None:
        with self._lock:
            self._stop()


def listener_for(output: Output, stream: IO[str], lang: str = "en") -> LineLog | LiveCounts | None:
    """The display for this run (module docstring), or None for none."""
    if not output.shows_progress:
        return None
    is_terminal = bool(getattr(stream, "isatty", lambda: False)())
    if not output.logs_steps and not is_terminal:
        return None
    from cudaresolve.render import make_console

    console = make_console(file=stream)
    return LineLog(console, lang) if output.logs_steps else LiveCounts(console, lang)
