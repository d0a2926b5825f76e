"""Startup time of the CLI: median wall time of fresh processes, and the imports that cost most.

    python bench/bench_startup.py                 # 20 runs of each command
    python bench/bench_startup.py -n 50 --compat tests/fixtures/hosts/compat-detect.toml

Budget (issue: foundation, part 6): ``cudaresolve --help`` and ``detect`` under 150 ms on the
development machine. This is a measurement, not a test: it prints numbers and flags a command
over budget, and exits 1 if any is. Each command runs in a new interpreter, as a user would
run it (``python -m cudaresolve``, and the ``cudaresolve`` console script where it is installed beside
the interpreter), the rounds interleaved; ``python -c pass`` is timed too, to show what the
interpreter alone costs. Timings
swing with the machine's load: compare medians taken on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

BUDGET_MS: Final = 150.0
#: Libraries that must not load for --help or detect: they are imported lazily, where used (README, "Performance").
HEAVY: Final = ("rich", "httpx", "resolvelib", "tomlkit", "pynvml", "packaging.requirements")


def commands(compat: str | None) -> list[tuple[str, list[str], bool]]:
    """(label, arguments after ``python``, whether the budget applies)."""
    extra = ["--compat", compat] if compat else []
    declared = ["detect", "--gpu", "A800", "--driver", "470.129.06", *extra]
    script = Path(sys.executable).with_name("cudaresolve")  # the console script users run, when installed here
    entry = [("cudaresolve --help (console script)", [str(script), "--help"], True)] if script.is_file() else []
    return [
        ("python -c pass", ["-c", "pass"], False),
        ("cudaresolve --help", ["-m", "cudaresolve", "--help"], True),
        *entry,
        ("detect --gpu A800 --driver 470.129.06 --json", ["-m", "cudaresolve", *declared, "--json"], True),
        ("detect --gpu A800 --driver 470.129.06 (human table)", ["-m", "cudaresolve", *declared], True),
    ]


def time_once(args: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, check=False)
    return (time.perf_counter() - start) * 1000, done.returncode


def import_times(args: list[str]) -> list[tuple[int, int, str]]:
    """(self µs, cumulative µs, module) for every import, from ``-X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True, check=False)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:") :].split("|")
        rows.append((int(self_us), int(cumulative_us), name.rstrip()))
    return rows


def report_imports(label: str, args: list[str], top: int) -> None:
    rows = import_times(args)
    loaded = {name.strip() for _, _, name in rows}
    heavy = [h for h in HEAVY if h in loaded]
    total = sum(s for s, _, _ in rows) / 1000
    print(f"\n{label}: {len(rows)} modules imported, {total:.1f} ms of import time in all")
    print(f"  heavy libraries loaded: {', '.join(heavy) if heavy else 'none'}")
    print(f"  top {top} by cumulative time (nesting shown by indent):")
    for _, cumulative, name in sorted(rows, key=lambda r: -r[1])[:top]:
        print(f"    {cumulative / 1000:7.1f} ms  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=20, help="runs per command (default 20)")
    parser.add_argument("--top", type=int, default=12, help="how many imports to list (default 12)")
    parser.add_argument("--compat", help="a compat.toml for the detect commands (default: the shipped one)")
    args = parser.parse_args()

    os.environ.pop("CUDARESOLVE_GPUS", None)
    os.environ.pop("CUDARESOLVE_DRIVER", None)
    print(f"python {sys.version.split()[0]} at {sys.executable}; {args.runs} runs each; budget {BUDGET_MS:.0f} ms")
    over = []
    listed = commands(args.compat)
    for _, cmd, _ in listed:
        time_once(cmd)  # warm the file cache
    taken: dict[str, list[tuple[float, int]]] = {label: [] for label, _, _ in listed}
    for _ in range(args.runs):  # rounds interleaved: drift on a shared machine hits every row alike
        for label, cmd, _ in listed:
            taken[label].append(time_once(cmd))
    for label, _, budgeted in listed:
        samples = taken[label]
        times = [t for t, _ in samples]
        codes = sorted({c for _, c in samples})
        median = statistics.median(times)
        flag = ""
        if budgeted and median > BUDGET_MS:
            flag = "  OVER BUDGET"
            over.append(label)
        print(f"{median:8.1f} ms median  (min {min(times):6.1f}, max {max(times):6.1f}, exit {codes})  {label}{flag}")
    for label, cmd, budgeted in commands(args.compat):
        if budgeted:
            report_imports(label, cmd, args.top)
    if over:
        print(f"\nover the {BUDGET_MS:.0f} ms budget: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
