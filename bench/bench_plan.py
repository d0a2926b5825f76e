"""``cudaresolve plan`` over a synthetic 10,000-node ``kubectl get nodes -o json`` (issue 14: under 2 s).

Writes the node list (GPU Feature Discovery labels as GFD writes them: six products across
Ampere, Hopper, Ada, Turing and Blackwell, MIG and time-slicing suffixes, four drivers), then times
``python -m cudaresolve plan torch --from nodes.json --offline --json`` end to end as a user runs
it, ``--repeat`` times, and prints the median. Exits 1 when the median is over the budget.

    .venv/bin/python bench/bench_plan.py [--nodes 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 2.0
#: (GFD product label, compute capability, drivers seen on such nodes)
KINDS = [
    ("NVIDIA-A100-SXM4-80GB", (8, 0), ("550.127.05", "535.230.02")),
    ("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", (8, 0), ("550.127.05",)),
    ("NVIDIA-H100-80GB-HBM3", (9, 0), ("570.124.06", "550.127.05")),
    ("NVIDIA-L4-SHARED", (8, 9), ("535.230.02",)),
    ("Tesla-T4", (7, 5), ("535.230.02",)),
    ("NVIDIA-B200", (10, 0), ("575.57.08",)),
]


def nodes(count: int) -> dict[str, object]:
    items = []
    for i in range(count):
        product, (major, minor), drivers = KINDS[i % len(KINDS)]
        driver = drivers[(i // len(KINDS)) % len(drivers)]
        labels = {
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": f"node-{i:05d}",
            "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.count": "8",
            "nvidia.com/gpu.compute.major": str(major),
            "nvidia.com/gpu.compute.minor": str(minor),
            "nvidia.com/cuda.driver-version.full": driver,
        }
        items.append({"kind": "Node", "metadata": {"name": f"node-{i:05d}", "labels": labels},
                      "status": {"nodeInfo": {"architecture": "amd64", "operatingSystem": "linux"}}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nodes.json"
        path.write_text(json.dumps(nodes(args.nodes)))
        argv = [sys.executable, "-m", "cudaresolve", "plan", "torch", "--from", str(path), "--offline", "--json",
                "--python-version", "3.11", "--platform", "linux_x86_64"]
        env = {"CUDARESOLVE_CACHE_DIR": str(Path(tmp) / "cache"), "PATH": "/usr/bin:/bin"}
        subprocess.run(argv, check=True, capture_output=True, env=env)  # warm the parse cache of compat.toml
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            done = subprocess.run(argv, check=True, capture_output=True, env=env)
            times.append(time.perf_counter() - start)
        plan = json.loads(done.stdout)
    median = statistics.median(times)
    print(f"{args.nodes} nodes, {len(plan['pools'])} pools, "
          f"{len(plan['groups'])} groups: median {median * 1000:.0f} ms over {args.repeat} runs "
          f"(min {min(times) * 1000:.0f} ms); budget {BUDGET_S * 1000:.0f} ms")
    return 0 if median <= BUDGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
