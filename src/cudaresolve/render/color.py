"""Whether to colour: the ``--color`` choices, then NO_COLOR and FORCE_COLOR, then whether the stream is a
terminal (``render.output``'s docstring has the rule). Pure; imports nothing, so that ``--help`` can list them."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final, Literal

    ColorChoice = Literal["auto", "always", "never"]

__all__ = ["COLOR_CHOICES", "ColorChoice", "wants_color"]

COLOR_CHOICES: Final = ("auto", "always", "never")


def wants_color(choice: str, environ: Mapping[str, str], *, is_terminal: bool) -> bool:
    """Whether to colour a stream (module docstring: the flag, NO_COLOR, FORCE_COLOR, a terminal)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    return is_terminal
