"""The bounds of ``doctor --run`` (``child``), apart so that the CLI's help can show them cheaply. Pure."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChildLimits"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildLimits:
    """Bounds of one child and of the whole run."""

    timeout_s: float = 180.0  # one child: torch's CUDA start-up and a first JIT fit well inside
    memory_mib: int = 16384  # resident memory of one child
    total_s: float = 1200.0  # every child of one ``doctor --run`` together
    output_chars: int = 64 * 1024  # kept of each of stdout and stderr (the tail)
