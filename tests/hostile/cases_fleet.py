"""``plan`` inventories with GPU counts no host has and CSV fields no CSV reader takes (issue 26, items 3
and 6): each a one-line ``invalid-input`` naming the host (``fleet.inputs.gpu_count``), never an internal
error, never a silent one GPU or a billion."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hostile.case import Case, Result

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_PLAN = ["plan", "torch", "--python-version", "3.11", "--offline", "--json", "-o", "{tmp}/locks"]


def _kubectl(count: str) -> Callable[[Path], None]:
    labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": count,
              "nvidia.com/cuda.driver-version.full": "550.54.15", "kubernetes.io/arch": "amd64"}
    node = {"kind": "Node", "metadata": {"name": "gpu-node-1", "labels": labels}}

    def setup(tmp: Path) -> None:
        (tmp / "nodes.json").write_text(json.dumps({"kind": "List", "items": [node]}))
    return setup


def _csv(text: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "hosts.csv").write_text(text, encoding="utf-8")
    return setup


def _slurm(gres: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "nodes.txt").write_text(f"NodeName=gpu-node-1 Arch=x86_64 Gres={gres} State=IDLE\n")
    return setup


def _refused(*words: str) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "invalid-input", error
        assert all(word in error["message"] for word in words), error["message"]
        assert len(error["message"]) < 400, error["message"]  # 5,000 digits are not echoed back
        assert not (tmp / "locks").exists()
    return check


def _counted(count: int) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        pools = json.loads(result.stdout)["pools"]
        assert [p["gpu_count"] for p in pools] == [count], pools
    return check


_CSV_HEAD = "host,gpu,count,driver\n"
_KUBE = [*_PLAN, "--from", "{tmp}/nodes.json"]
_CSVF = [*_PLAN, "--from", "{tmp}/hosts.csv"]
_SLURMF = [*_PLAN, "--from", "{tmp}/nodes.txt", "--driver", "550.54.15"]
CASES = [
    *(Case(f"fleet-kubectl-count-{name}", _KUBE, setup=_kubectl(count), codes=(1,),
           check=_refused("gpu-node-1", "GPUs"))
      for name, count in (("5000-digits", "9" * 5000), ("negative", "-3"), ("zero", "0"),
                          ("billion", "1000000000"), ("arabic-digit", "\u0663"), ("fraction", "2.5"))),
    *(Case(f"fleet-csv-count-{name}", _CSVF, setup=_csv(f"{_CSV_HEAD}gpu-node-1,A100,{count},550.54.15\n"),
           codes=(1,), check=_refused("gpu-node-1", "GPUs"))
      for name, count in (("eight", "eight"), ("negative", "-8"), ("huge", "99999999999"), ("superscript", "\u00b2"))),
    Case("fleet-csv-field-over-128kib", _CSVF, setup=_csv(f"{_CSV_HEAD}gpu-node-1,{'A' * 200_000},8,550.54.15\n"),
         codes=(1,), check=_refused("hosts.csv", "field larger than field limit")),
    Case("fleet-csv-quoted-field-over-128kib", _CSVF,
         setup=_csv(f'{_CSV_HEAD}gpu-node-1,A100,8,"{"5" * 140_000}"\n'), codes=(1,), check=_refused("hosts.csv")),
    Case("fleet-slurm-gres-count-huge", _SLURMF, setup=_slurm("gpu:a100:" + "7" * 5000), codes=(1,),
         check=_refused("gpu-node-1", "GPUs")),
    Case("fleet-kubectl-count-8", _KUBE, setup=_kubectl("8"), codes=(0,), check=_counted(8)),
    Case("fleet-csv-count-blank", _CSVF, setup=_csv(f"{_CSV_HEAD}gpu-node-1,A100,,550.54.15\n"), codes=(0,),
         check=_counted(0)),
]
