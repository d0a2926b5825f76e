"""How much to say and whether in colour: ``-q``/``-v``, ``--color`` with NO_COLOR/FORCE_COLOR. Pure.

One ``Output`` value per run, set by the command line (``configure``) before a command runs and
read by ``render.make_console`` and the renderers that print summaries, warnings or progress.

Verbosity (``-q`` counts down, ``-v`` up; pip's and uv's habit):

====  ==========================================================================================
-2    ``-qq``: errors only on stderr (results on stdout, ``--json`` and lock files unchanged)
-1    ``-q``: no progress, tables or summaries on stderr; warnings and errors still shown
 0    the default: progress on a terminal, the lock table, summaries, warnings
 1    ``-v``: also each page, metadata file and pip run, one line each, instead of a live display
====  ==========================================================================================

Colour, first match wins: ``--color always|never``; ``NO_COLOR`` set and not empty: none
(https://no-color.org/); ``FORCE_COLOR`` set and not empty: colour (https://force-color.org/);
else colour only when the stream is a terminal. ``NO_COLOR`` wins over ``FORCE_COLOR``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudaresolve.render.color import COLOR_CHOICES, wants_color

if TYPE_CHECKING:
    from cudaresolve.render.color import ColorChoice

__all__ = ["COLOR_CHOICES", "Output", "configure", "current", "wants_color"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """The run's output settings: verbosity (module docstring), the colour choice, and ``json``
    (``--json``: stdout holds one JSON object; no progress display)."""

    verbosity: int = 0
    color: ColorChoice = "auto"
    json: bool = False

    @property
    def shows_info(self) -> bool:
        """Tables, summaries and the lines that say what was written (stderr)."""
        return self.verbosity >= 0 and not self.json

    @property
    def shows_warnings(self) -> bool:
        return self.verbosity >= -1

    @property
    def silent(self) -> bool:
        """``-qq``: a stderr console prints nothing but errors (``render.make_console``, ``render.report``)."""
        return self.verbosity <= -2

    @property
    def shows_progress(self) -> bool:
        """A progress display at all (a live one needs a terminal as well: ``render.progress``)."""
        return self.verbosity >= 0 and not self.json

    @property
    def logs_steps(self) -> bool:
        """``-v``: one line per fetch and pip run instead of a live display."""
        return self.verbosity >= 1 and not self.json


_CURRENT: list[Output] = [Output()]


def configure(output: Output) -> None:
    """Set the output settings for this run (the command line calls it once per ``main``)."""
    _CURRENT[0] = output


def current() -> Output:
    return _CURRENT[0]
