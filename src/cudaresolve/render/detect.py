"""Human view of a Target (``cudaresolve detect``): a table of GPUs, then driver, CUDA, platform, Python. Output."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Final

from cudaresolve.text.catalogue import format_text, shown
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from cudaresolve.target.model import Target

__all__ = ["format_detect", "format_facts"]

#: Where a target came from, as ``Target.source`` spells it, and the words for it (names stay names).
_SOURCES: Final[dict[str, Text | str]] = {
    "nvml": "NVML",
    "nvidia-smi": "nvidia-smi",
    "proc": "/proc/driver/nvidia",
    "flags": Text("detect.source.flags"),
    "env": Text("detect.source.env"),
    "host-file": Text("detect.source.host-file"),
    "none": Text("detect.source.none"),
}


def format_facts(target: Target, lang: str = "en") -> list[tuple[str, str]]:
    """The lines under the GPU table as (label, value) pairs, in ``lang``."""

    def words(key: str) -> str:
        return format_text(Text(key), lang)

    if target.is_cpu:
        driver = words("detect.driver.cpu")
    elif target.driver is None:
        driver = words("detect.driver.unknown")
    else:
        driver = str(target.driver)
    if target.cuda_driver_max is not None:
        cuda = str(target.cuda_driver_max)
    else:
        cuda = words("detect.cuda.none" if target.is_cpu or target.driver is not None else "detect.cuda.unknown")
    named = (_SOURCES.get(part, part) for part in target.source.split("+"))
    source = " + ".join(format_text(n, lang) if isinstance(n, Text) else n for n in named)
    return [
        (words("detect.label.driver"), driver),
        (words("detect.label.cuda"), cuda),
        (words("detect.label.platform"), target.platform),
        ("python", target.python),
        (words("detect.label.from"), source),
    ]


def format_detect(target: Target, lang: str = "en") -> str:
    """GPUs as a table (or a 'no GPU' line), then the facts of ``format_facts``; plain text.

    ``detect`` is the command users run first and most; drawing four columns does not need
    rich's ~30 ms of import (the start-up budget is 150 ms).
    """
    lines: list[str] = []
    if target.is_cpu:
        lines.append(format_text(Text("detect.no-gpu"), lang))
    else:
        columns = ("detect.column.gpu", "detect.column.cc", "detect.column.memory")
        head = ("#", *(format_text(Text(key), lang) for key in columns))
        rows = [head]
        for i, gpu in enumerate(target.gpus):
            memory = f"{gpu.memory_mib} MiB" if gpu.memory_mib is not None else "-"
            rows.append((str(i), shown(gpu.name), f"{gpu.cc} ({gpu.cc.sm})", memory))  # as nvidia-smi gave it
        widths = [max(_width(row[c]) for row in rows) for c in range(4)]
        for row in rows:
            cells = (_rjust(row[0], widths[0]), _ljust(row[1], widths[1]), _ljust(row[2], widths[2]),
                     _rjust(row[3], widths[3]))
            lines.append("  ".join(cells))
    lines += [format_text(Text.of("detect.fact", label=label, value=value), lang)
              for label, value in format_facts(target, lang)]
    return "\n".join(lines) + "\n"


def _width(text: str) -> int:
    """Terminal columns: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _ljust(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _rjust(text: str, width: int) -> str:
    return " " * (width - _width(text)) + text
