"""cudaresolve, uv and pip locking real projects against real PyPI, side by side (issue 23). Needs the network.

    python bench/bench_realpypi.py                    # 3 rounds, every case
    python bench/bench_realpypi.py --repeat 5 --cases llm
    python bench/bench_realpypi.py --cases llm --target "--gpu A100 --driver 550.54.15 --python-version 3.11"

Cases (the PyTorch index is whatever the network gives: from the machines here it is unreachable, and
cudaresolve then takes the set PyPI carries, as the issue measures it):

- ``pair``: ``torch numpy``;
- ``eight``: ``torch torchvision torchaudio transformers accelerate datasets numpy pandas``;
- ``llm``: the 189-package fine-tuning project of issue 23 (``transformers[torch] accelerate peft trl ...``).

Every case for an H100 on driver 580.65.06 (cudaresolve's target), CPython 3.11 on x86_64-manylinux_2_28
(uv's ``--python-platform``; pip runs on this machine's own). Each tool cold (an empty cache before the
run) and warm (the same cache, one untimed run first); cudaresolve's cold and warm rows pass ``-U``, so
each solves, and its "kept" row is a user's plain repeat, which keeps the lock its untimed run wrote when
that lock still answers the request (every page read again to check it: this PyPI sends no freshness or
validator headers; where the PyTorch index cannot be reached, as from the machines here, the lock is never
kept and the row solves); each round runs every row once, in an order
rotated by one each round. uv gets the real interpreter path and ``--no-config``; pip is ``pip lock`` of a
throwaway venv's current pip, with its own cache (made warm as uv's is) and no configuration file. The Python
tools get a bytecode cache (``PYTHONPYCACHEPREFIX``), as installed packages have ``.pyc`` files.

Output: per case, median wall seconds and max RSS (MiB) per row, from ``/usr/bin/time``, and the ratio
of medians to uv's matching row; the number of packages each tool locked.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_lock  # the checkout's package as its wheel installs it (``installed_src``)

REPO = Path(__file__).resolve().parents[1]
CASES = {
    "pair": ["torch", "numpy"],
    "eight": ["torch", "torchvision", "torchaudio", "transformers", "accelerate", "datasets", "numpy", "pandas"],
    "llm": [
        "transformers[torch]", "accelerate", "peft", "trl", "datasets", "evaluate", "sentencepiece", "tokenizers",
        "safetensors", "bitsandbytes", "wandb", "scikit-learn", "scipy", "matplotlib", "jupyter",
    ],
}  # fmt: skip
TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]


def _timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, max RSS MiB, exit status) of one run, as GNU time reports them."""
    report = cwd / "time.txt"
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", str(report), *command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    wall, rss = report.read_text().split()[-2:]
    if done.returncode != 0:
        print(f"exit {done.returncode}: {' '.join(command[:4])} ...: {done.stderr.strip()[-600:]}", file=sys.stderr)
    return float(wall), int(rss) / 1024, done.returncode


def _rows(
    case: str, root: Path, uv: str, python: str, pip: str, target: list[str]
) -> dict[str, tuple[list[str], Path, bool]]:
    """Row name -> (command, cache folder, cold)."""
    reqs = root / f"{case}.txt"
    reqs.write_text("\n".join(CASES[case]) + "\n")
    ours = [sys.executable, "-m", "cudaresolve"]  # this venv's (its dependencies); uv gets the real interpreter
    rows: dict[str, tuple[list[str], Path, bool]] = {}
    for kind, cold in (("cold", True), ("warm", False)):
        cache = root / f"{case}-{kind}"
        rows[f"cudaresolve {kind}"] = (
            [*ours, "--cache-dir", str(cache / "cr"), "lock", "-r", str(reqs), *target, "-U", "-o",
             str(root / f"pylock.{case}-{kind}.toml")], cache / "cr", cold)  # fmt: skip
        if not cold:  # a user's repeat: the lock its warm-up wrote is there, and still answers (``lock.keep``)
            rows["cudaresolve kept"] = (
                [*ours, "--cache-dir", str(cache / "cr"), "lock", "-r", str(reqs), *target, "-o",
                 str(root / f"pylock.{case}-kept.toml")], cache / "cr", cold)  # fmt: skip
        rows[f"uv {kind}"] = (
            [uv, "pip", "compile", str(reqs), "--python", python, "--python-version", "3.11", "--python-platform",
             "x86_64-manylinux_2_28", "--no-config", "--cache-dir", str(cache / "uv"), "-o",
             str(root / f"uv.{case}-{kind}.txt")], cache / "uv", cold)  # fmt: skip
        rows[f"pip {kind}"] = (
            [pip, "-m", "pip", "lock", "-r", str(reqs), "--cache-dir", str(cache / "pip"), "-o",
             str(root / f"pylock.pip-{case}-{kind}.toml"), "--quiet"], cache / "pip", cold)  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--target", default=" ".join(TARGET), help="cudaresolve's target flags, one string")
    args = parser.parse_args()
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    python = os.path.realpath(sys.executable)
    # PYTHONDONTWRITEBYTECODE from the shell would make cudaresolve, run from this checkout, compile every module on
    # every run (about 0.3 s); an installed copy has its .pyc files, so the runs get a bytecode cache of their own.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "UV_", "CUDARESOLVE_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"))}
    env.update(PYTHONPATH=bench_lock.installed_src(), PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    with tempfile.TemporaryDirectory(prefix="bench-realpypi-") as scratch:
        root = Path(scratch)
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        pip = str(root / "pip-venv" / "bin" / "python")  # a current pip (``pip lock`` is pip 25.1+), from PyPI
        subprocess.run([python, "-m", "venv", str(root / "pip-venv")], check=True)
        subprocess.run([pip, "-m", "pip", "install", "-q", "-U", "pip"], check=True, env=env)
        for case in args.cases.split(","):
            rows = _rows(case, root, uv, python, pip, args.target.split())
            for command, _cache, cold in rows.values():
                if not cold:
                    _timed(command, env, root)  # the untimed run that makes the cache warm
            results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in rows}
            names = list(rows)
            for round_ in range(args.repeat):
                for name in names[round_ % len(names):] + names[: round_ % len(names)]:
                    command, cache, cold = rows[name]
                    if cold:
                        shutil.rmtree(cache, ignore_errors=True)
                    results[name].append(_timed(command, env, root))
            print(f"\n## {case}: {' '.join(CASES[case])}\n")
            print("| row | median s | max RSS MiB | vs uv | exit |")
            print("|---|--:|--:|--:|---|")
            for name, runs in results.items():
                wall = statistics.median(r[0] for r in runs)
                rss = max(r[1] for r in runs)
                kind = name.split()[-1]
                peer = statistics.median(r[0] for r in results[f"uv {'warm' if kind == 'kept' else kind}"])
                codes = ",".join(sorted({str(r[2]) for r in runs}))
                print(f"| {name} | {wall:.2f} | {rss:.0f} | {wall / peer:.2f}x | {codes} |")
            ours, theirs = root / f"pylock.{case}-warm.toml", root / f"uv.{case}-warm.txt"
            counts = {
                "cudaresolve": ours.read_text().count("[[packages]]") if ours.exists() else None,
                "uv": sum(1 for line in theirs.read_text().splitlines() if "==" in line) if theirs.exists() else None,
            }
            print(f"\npackages locked: {counts}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
