"""Human view of a Target (``cudaresolve detect``): a table of GPUs, then driver, CUDA, platform, Python. Output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from cudaresolve.models import Target

__all__ = ["format_facts", "render_detect"]

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


def render_detect(target: Target, console: Console) -> None:
    """GPUs as a table (or a 'no GPU' line), then the facts of ``format_facts``."""
    from rich.markup import escape
    from rich.table import Table

    if target.is_cpu:
        console.print("no NVIDIA GPU: a CPU target")
    else:
        table = Table(box=None, pad_edge=False, header_style="bold")
        for column in ("#", "GPU", "compute capability", "memory"):
            table.add_column(column, justify="right" if column in ("#", "memory") else "left")
        for i, gpu in enumerate(target.gpus):
            memory = f"{gpu.memory_mib} MiB" if gpu.memory_mib is not None else "-"
            table.add_row(str(i), escape(gpu.name), f"{gpu.cc} ({gpu.cc.sm})", memory)
        console.print(table)
    for label, value in format_facts(target):
        console.print(f"[bold]{label}[/]: {escape(value)}")
