"""What the user declared about the target with flags, as one value; how ``--gpu`` lists several GPUs. Pure.

Kept apart from ``build`` (which turns these into a ``Target`` with the database) so that a command that only
carries the options along, such as ``install --from``, imports none of the target-building code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_GPUS", "TargetOptions", "split_gpu_list"]

# GPU names never hold a comma, a semicolon or the word "and": those separate GPUs.
_GPU_SEPARATOR: Final = re.compile(r"[,;]|(?<!\s)\s+and\s+", re.IGNORECASE)  # a run tried from its start: linear
# "2x A100", "8 x H100", "4\u00d7L4": an x glued to the count or followed by a space, so not "3 Xavier NX"
_COUNTED: Final = re.compile(r"([0-9]{1,4})(?:\s*[x\u00d7]\s+|[x\u00d7])(\S.*)", re.IGNORECASE)
#: The most GPUs one target may hold (``build`` refuses more: each costs a lookup); a larger count is no count.
MAX_GPUS: Final = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetOptions:
    """What the user declared with flags; the environment and detection fill in the rest."""

    gpus: tuple[str, ...] = ()
    driver: str | None = None
    cpu: bool = False
    python: str | None = None
    platform: str | None = None
    host_file: str | None = None
    python_platform: str | None = None  # uv's --python-platform name (``x86_64-manylinux_2_28``)
    glibc: str | None = None  # from the interpreter itself (``install --python``)


def split_gpu_list(text: str) -> tuple[str, ...]:
    """``"RTX 2080, RTX 3090"``, ``"A800;H100"``, ``"A100 and H100"`` -> one name per GPU; a count before a name
    (``"2x A100, 1x T4"``, as ``plan`` prints a pool) gives that many (at most ``MAX_GPUS``)."""
    out: list[str] = []
    for part in _GPU_SEPARATOR.split(text):
        name = part.strip()
        counted = _COUNTED.match(name)
        if counted is not None and 0 < int(counted[1]) <= MAX_GPUS:
            out += [counted[2]] * int(counted[1])
        elif name:
            out.append(name)
    return tuple(out)
