"""Child processes the tool starts in a session of their own (an sdist's build backend, doctor --run's
children). Does I/O: signals."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = ["kill_group"]


def kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill ``child``'s whole process group (it was started with ``start_new_session``): what it started too."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # gone already, or not ours to signal
        pass
