"""Human view of a Target (``cudaresolve detect``): a table of GPUs, then driver, CUDA, platform, Python. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cudaresolve.target.model import Target

__all__ = ["format_detect", "format_facts"]

_SOURCES = {
    "nvml": "NVML",
    "nvidia-smi": "nvidia-smi",
    "proc": "/proc/driver/nvidia",
    "flags": "command-line flags",
    "env": "CUDARESOLVE_* environment",
    "host-file": "host file",
    "none": "detection (no NVIDIA driver found)",
}


def format_facts(target: Target) -> list[tuple[str, str]]:
    """The lines under the GPU table as (label, value) pairs."""
    if target.is_cpu:
        driver = "none (CPU target)"
    elif target.driver is None:
        driver = "unknown (not constrained)"
    else:
        driver = str(target.driver)
    if target.cuda_driver_max is not None:
        cuda = str(target.cuda_driver_max)
    else:
        cuda = "none" if target.is_cpu or target.driver is not None else "unknown"
    source = " + ".join(_SOURCES.get(part, part) for part in target.source.split("+"))
    return [
        ("driver", driver),
        ("highest CUDA", cuda),
        ("platform", target.platform),
        ("python", target.python),
        ("from", source),
    ]


def format_detect(target: Target) -> str:
    """GPUs as a table (or a 'no GPU' line), then the facts of ``format_facts``; plain text.

    ``detect`` is the command users run first and most; drawing four columns does not need
    rich's ~30 ms of import (the start-up budget is 150 ms).
    """
    lines: list[str] = []
    if target.is_cpu:
        lines.append("no NVIDIA GPU: a CPU target")
    else:
        rows = [("#", "GPU", "compute capability", "memory")]
        for i, gpu in enumerate(target.gpus):
            memory = f"{gpu.memory_mib} MiB" if gpu.memory_mib is not None else "-"
            rows.append((str(i), gpu.name, f"{gpu.cc} ({gpu.cc.sm})", memory))
        widths = [max(len(row[c]) for row in rows) for c in range(4)]
        for row in rows:
            cells = (row[0].rjust(widths[0]), row[1].ljust(widths[1]), row[2].ljust(widths[2]), row[3].rjust(widths[3]))
            lines.append("  ".join(cells))
    lines += [f"{label}: {value}" for label, value in format_facts(target)]
    return "\n".join(lines) + "\n"
