"""Where each group's workload may run: a Kubernetes ``nodeAffinity`` on GFD labels and a Slurm line. Pure.

The affinity has a ``nodeSelectorTerm`` for each pool that may be Kubernetes nodes (terms are ORed,
the expressions inside one are ANDed), each naming the pool's GPU product labels and its driver,
so no node outside the group's pools matches. Products come from the nodes' own
``nvidia.com/gpu.product`` labels where the inventory was ``kubectl`` (``-SHARED`` and
``-MIG-...`` spellings kept), else from the exact NVML name a host file gives, as GFD would label
it; a CSV names GPUs in the user's spelling, so its pools are selected by GFD's
``gpu.compute.major``/``.minor`` labels instead, one term per compute capability. The Slurm line
names the group's nodes and their GPU gres.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.fleet.inputs import gfd_product

if TYPE_CHECKING:
    from cudaresolve.fleet.plan import Group
    from cudaresolve.fleet.pools import Pool

__all__ = ["has_affinity", "node_affinity", "node_affinity_yaml", "slurm_line"]

PRODUCT: Final = "nvidia.com/gpu.product"
COMPUTE_MAJOR: Final = "nvidia.com/gpu.compute.major"
COMPUTE_MINOR: Final = "nvidia.com/gpu.compute.minor"
DRIVER: Final = "nvidia.com/cuda.driver-version.full"
#: Nodes named one by one on a Slurm line; a larger group is named by its gres types alone.
MAX_NODELIST: Final = 200


def _products(pool: Pool) -> list[str]:
    """The product labels of the pool's nodes: kubectl's own; else GFD's spelling of the NVML names a host
    file gives (``cudaresolve detect`` writes the exact NVML name). A CSV's GPU names are the user's
    spelling (``H100``), which no node's label matches: none, and the pool is selected by compute
    capability instead (``_capability_terms``)."""
    labels = {h.label for h in pool.hosts if h.origin == "kubectl" and h.label}
    labels |= {gfd_product(g) for h in pool.hosts if h.origin == "hosts" for g in h.gpus if _named(g)}
    return sorted(labels)


def _capability_terms(pool: Pool) -> list[list[dict[str, Any]]]:
    """One term per compute capability of the pool's GPUs (GFD labels every node with
    ``gpu.compute.major``/``.minor``); [] when the target is unknown."""
    if pool.target is None:
        return []
    ccs = sorted({g.cc for g in pool.target.gpus}, key=lambda cc: (cc.major, cc.minor))
    return [
        [{"key": COMPUTE_MAJOR, "operator": "In", "values": [str(cc.major)]},
         {"key": COMPUTE_MINOR, "operator": "In", "values": [str(cc.minor)]}]
        for cc in ccs
    ]  # fmt: skip


def _named(spelled: str) -> bool:
    """A GPU given by name, not by compute capability (``8.6``, ``sm_86``)."""
    return any(c.isalpha() for c in spelled.lower().replace("sm_", "").replace("sm", ""))


def node_affinity(group: Group) -> dict[str, Any]:
    """The ``affinity`` object of a pod spec that keeps the pod on ``group``'s pools: those that may be
    Kubernetes nodes (a pool of Slurm nodes alone has no node labels to select on: it gets no term)."""
    terms = []
    for pool in group.pools:
        if all(h.origin == "slurm" for h in pool.hosts):
            continue
        driver = [{"key": DRIVER, "operator": "In", "values": [pool.driver]}] if pool.driver else []
        products = _products(pool)
        selectors = [[{"key": PRODUCT, "operator": "In", "values": products}]] if products else _capability_terms(pool)
        for selector in selectors or [[]]:
            if selector or driver:
                terms.append({"matchExpressions": [*selector, *driver]})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def has_affinity(group: Group) -> bool:
    """Whether ``node_affinity`` selects any node (False for a group of Slurm nodes alone)."""
    return bool(node_affinity(group)["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ])


def node_affinity_yaml(group: Group) -> str:
    """``node_affinity`` as YAML (block style; every scalar a JSON string, which YAML reads as is)."""
    lines = ["affinity:", "  nodeAffinity:", "    requiredDuringSchedulingIgnoredDuringExecution:",
             "      nodeSelectorTerms:"]
    for term in node_affinity(group)["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]:
        lines.append("      - matchExpressions:")
        for expression in term["matchExpressions"]:
            lines.append(f"        - key: {json.dumps(expression['key'])}")
            lines.append(f"          operator: {expression['operator']}")
            lines.append(f"          values: {json.dumps(expression['values'])}")
    return "\n".join(lines)


def slurm_line(group: Group) -> str | None:
    """``--nodelist=... --gres=gpu:TYPE:N`` for the group's Slurm nodes; None when none came from Slurm."""
    hosts = [h for p in group.pools for h in p.hosts if h.origin == "slurm"]
    if not hosts:
        return None
    types = sorted({g for h in hosts for g in h.gpus})
    count = min(h.count for h in hosts if h.count) if any(h.count for h in hosts) else 1
    gres = f"--gres=gpu:{types[0]}:{count}" if len(types) == 1 else f"--gres=gpu:{count}"
    if len(hosts) > MAX_NODELIST:
        return gres
    return f"--nodelist={','.join(h.name for h in hosts)} {gres}"
