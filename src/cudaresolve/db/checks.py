"""Checks across compat.toml rows: references, duplicates, order. Pure.

The semantic checks of trove-classifiers' validator, run after every row was read: each
referenced CUDA release and package version has its row, no name or version appears twice,
rows are newest first, and variant indexes sit under the PyTorch index root.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cudaresolve.core.platforms import canonical_name
from cudaresolve.db.gpu_names import gpu_name_key
from cudaresolve.db.gpudriver import match_row
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from packaging.requirements import Requirement

    from cudaresolve.db.fields import Collector
    from cudaresolve.db.rows import CudaRelease, DriverGpu, GpuModel, IndexFacts, PackageRelease, VariantInfo

__all__ = ["check_driver_gpus", "check_semantics"]


def check_semantics(
    c: Collector,
    index: IndexFacts,
    cuda: Sequence[CudaRelease],
    named_cuda: set[str],
    gpus: Sequence[GpuModel],
    variants: Sequence[VariantInfo],
    packages: Mapping[str, Sequence[PackageRelease]],
) -> None:
    """Record every problem across rows in ``c``."""
    _check_order(c, "cuda", [r.version for r in cuda])
    for i, v in enumerate(variants):
        if v.cuda is not None and str(v.cuda) not in named_cuda:
            c.add(f"variant[{i}].cuda", Text.of("db.no-cuda-row", version=str(v.cuda)))
        if index.pytorch_root and v.index_url != f"{index.pytorch_root}/{v.name}":
            c.add(f"variant[{i}].index-url", Text.of("db.variant-index", expected=f"{index.pytorch_root}/{v.name}"))
    _check_unique(c, "variant", [v.name for v in variants], "name")
    labels: dict[tuple[str, ...], tuple[int, str]] = {}  # by row: a second row of the same name is another GPU
    for i, gpu in enumerate(gpus):
        for label in (gpu.name, *gpu.aliases):
            tokens = gpu_name_key(label)
            if not tokens:
                c.add(f"gpu[{i}]", Text.of("db.gpu-label-empty", label=repr(label)))
            elif tokens in labels and labels[tokens][0] != i:
                c.add(f"gpu[{i}]", Text.of("db.gpu-label-taken", label=repr(label), other=repr(labels[tokens][1])))
            labels.setdefault(tokens, (i, gpu.name))
    for kind, releases in packages.items():
        _check_order(c, kind, [r.version for r in releases])
        for i, release in enumerate(releases):
            for key, reqs in (("requires", release.requires), ("constrains", release.constrains)):
                for j, req in enumerate(reqs):
                    _check_reference(c, f"{kind}[{i}].{key}[{j}]", req, packages)
            for j, build in enumerate(release.builds):
                for k, req in enumerate(build.requires):
                    _check_reference(c, f"{kind}[{i}].build[{j}].requires[{k}]", req, packages)


def check_driver_gpus(c: Collector, gpus: Sequence[GpuModel], rows: Sequence[DriverGpu]) -> None:
    """``[[driver-gpu]]`` rows: a known architecture, compute capabilities that belong to it, named
    GPUs that exist, no two equally specific rows for one GPU, and (once the table has rows) a row
    for every desktop ``[[gpu]]``."""
    archs = {g.arch for g in gpus}
    labels = {gpu_name_key(label): g for g in gpus for label in (g.name, *g.aliases)}
    cc_arch = {g.cc: g.arch for g in gpus if not g.tegra}
    for i, row in enumerate(rows):
        if row.arch not in archs and not row.cc:
            c.add(f"driver-gpu[{i}].arch", Text.of("db.driver-gpu-unknown-arch", arch=repr(row.arch)))
        for j, cc in enumerate(row.cc):
            if cc_arch.get(cc, row.arch) != row.arch:
                c.add(f"driver-gpu[{i}].cc[{j}]", Text.of("db.driver-gpu-cc-arch", cc=str(cc), arch=cc_arch[cc]))
        for j, name in enumerate(row.gpus):
            model = labels.get(gpu_name_key(name))
            if model is None or model.arch != row.arch:
                c.add(f"driver-gpu[{i}].gpus[{j}]", Text.of("db.driver-gpu-unknown-gpu", gpu=repr(name), arch=row.arch))
        for k in range(i):
            if _overlap(rows[k], row):
                c.add(f"driver-gpu[{i}]", Text.of("db.driver-gpu-overlap", other=f"driver-gpu[{k}]"))
    if not rows:
        return
    for i, gpu in enumerate(gpus):
        if not gpu.tegra and match_row(rows, gpu.arch, gpu.cc, gpu.datacenter, gpu) is None:
            c.add(f"gpu[{i}]", Text.of("db.gpu-no-driver-row", gpu=repr(gpu.name), arch=gpu.arch))


def _overlap(a: DriverGpu, b: DriverGpu) -> bool:
    """Whether two rows are equally specific and could both match one GPU (the winner would be arbitrary)."""
    if a.arch != b.arch or a.specificity != b.specificity or a.datacenter != b.datacenter:
        return False
    if a.cc and not set(a.cc) & set(b.cc):
        return False
    return not a.gpus or bool({gpu_name_key(n) for n in a.gpus} & {gpu_name_key(n) for n in b.gpus})


def _check_reference(
    c: Collector, path: str, req: Requirement, packages: Mapping[str, Sequence[PackageRelease]]
) -> None:
    name = canonical_name(req.name)
    if name not in packages:
        return  # a dependency the database does not model (numpy, triton …)
    if not any(req.specifier.contains(r.version, prereleases=True) for r in packages[name]):
        c.add(path, Text.of("db.no-matching-row", requirement=str(req), table=name))


def _check_order(c: Collector, kind: str, versions: Iterable[Any]) -> None:
    listed = [v for v in versions if v is not None]
    for i in range(1, len(listed)):
        if listed[i] == listed[i - 1]:
            c.add(f"{kind}[{i}].version", Text.of("db.duplicate-version", version=str(listed[i])))
        elif listed[i] > listed[i - 1]:
            c.add(f"{kind}[{i}].version", Text.of("db.order", later=str(listed[i]), earlier=str(listed[i - 1])))


def _check_unique(c: Collector, kind: str, values: Sequence[str], key: str) -> None:
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value in seen:
            c.add(f"{kind}[{i}].{key}", Text.of("db.duplicate-value", key=key, value=repr(value)))
        seen.add(value)
