"""One CUDA major per environment: index releases tied to a CUDA major, and the finding when a set mixes. Pure.

A release that the database's ``[[cuda-major]]`` rows tie to a CUDA major (``nvidia-cublas-cu12``,
``nvidia-cuda-runtime`` 13.0.96, ``cuda-toolkit`` 13.0.3) depends on ``<cuda>`` of that major
(``<cuda>==12.*``, met by every variant of CUDA 12 and by ``cpu``, which ties none), exactly as a
database build depends on its variant: the solver then keeps one major for the whole set, picking
releases that agree, and a set that cannot agree fails with ``cuda-major-mixed`` (``mixed``).

cuDNN likewise: a release the ``[[cudnn-major]]`` rows tie to a cuDNN major (``nvidia-cudnn-cu12`` 9.1.0.70,
the one torch pins; onnxruntime-gpu 1.18.1, linked against ``libcudnn.so.8``) depends on ``<cudnn>==9.*``,
whose candidates are the majors themselves; one is chosen for the set, or it fails with ``cudnn-major-mixed``.

A release of the CUDA runtime itself (``runtime_of``: ``nvidia-cuda-runtime-cu12`` 12.9.79 ships CUDA 12.9's) that a
package from an index pulls in may be newer, within the major, than the driver supports in full: the set runs only
through minor-version compatibility, which ``runtime_warnings`` says, as the variant's own warning does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet

from cudaresolve.db.cudamajor import major_of, runtime_of
from cudaresolve.resolve.catalog import CUDA, CUDNN, Catalog, Need
from cudaresolve.text.findings import reason, warning

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from resolvelib.resolvers import RequirementInformation

    from cudaresolve.core.versions import CudaVersion
    from cudaresolve.db.database import CompatDB
    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Finding, Notice

__all__ = ["is_major_need", "major_needs", "mixed", "runtime_warnings"]


def major_needs(catalog: Catalog, candidate: Candidate) -> tuple[Need, ...]:
    """``<cuda>`` of the CUDA major and ``<cudnn>`` of the cuDNN major ``candidate`` is tied to, for a release from
    an index (the database's own builds name their variant already); none when no row ties it."""
    if candidate.name in (CUDA, CUDNN) or candidate.name in catalog.known or not catalog.cuda_majors:
        return ()
    parent = f"{candidate.name} {candidate.version}"
    out = []
    for virtual, library in ((CUDA, "cuda"), (CUDNN, "cudnn")):
        major = major_of(catalog.cuda_majors, candidate.name, candidate.version, library=library)
        if major is not None:
            out.append(Need(name=virtual, specifier=SpecifierSet(f"=={major}.*"), parent=parent))
    return tuple(out)


def is_major_need(need: Need) -> bool:
    """Whether ``need`` is a CUDA- or cuDNN-major need (``major_needs``), not a variant."""
    return need.name in (CUDA, CUDNN) and need.variant is None and bool(need.specifier)


def _major(need: Need) -> str:
    return str(next(iter(need.specifier)).version).removesuffix(".*")


def mixed(
    need: Need, parent: Candidate, causes: Sequence[RequirementInformation[Need, Candidate]], catalog: Catalog
) -> Finding | None:
    """The ``cuda-major-mixed`` finding for ``parent``, whose CUDA-major ``need`` the set's other CUDA needs
    (a variant a build pins, another major) leave out; ``found`` names them, e.g. ``13 (torch 2.9.0+cu130)``.
    For a ``<cudnn>`` need, ``cudnn-major-mixed`` against the set's other cuDNN majors. None when no other cause
    names another major (the conflict lies elsewhere)."""
    mine = _major(need)
    others: dict[str, list[str]] = {}
    for cause in causes:
        other = cause.requirement
        if other.name != need.name or other is need:
            continue
        if other.variant is not None:
            versions = [c.version for c in catalog.for_name(CUDA) if c.variant == other.variant]
            versions += [r.version for r in catalog.rejected(CUDA) if r.variant == other.variant]
            major = str(versions[0].major) if versions else other.variant
        else:
            major = _major(other)
        if major == mine:
            continue
        who = str(cause.parent) if cause.parent is not None else "the request"
        others.setdefault(major, []).append(who)
    if not others:  # no cause ties the set to another major: this need is no reason the search failed
        return None
    found = "; ".join(f"{m} ({', '.join(dict.fromkeys(w))})" for m, w in others.items())
    return reason(
        "cudnn-major-mixed" if need.name == CUDNN else "cuda-major-mixed",
        package=parent.name,
        version=str(parent.version),
        required=mine,
        found=found,
        major=next(iter(others)),
    )


def runtime_warnings(
    pins: Mapping[str, Candidate], db: CompatDB, target: Target, *, told: CudaVersion | None
) -> list[Notice]:
    """``minor-version-compat`` for each pinned CUDA runtime from an index (``runtime_of``) of the driver's CUDA
    major but a newer minor than the driver supports in full; ``told``: the CUDA release the variant's own warning
    already named (a runtime no newer than it says nothing more)."""
    from cudaresolve.core.versions import CudaVersion

    limit = target.cuda_driver_max
    if limit is None or not target.gpus or target.driver is None:
        return []
    out = []
    for name in sorted(pins):
        candidate = pins[name]
        found = None if candidate.build is not None else runtime_of(db.cuda_majors, name, candidate.version)
        if found is None or found[0] != limit.major or found <= (limit.major, limit.minor):
            continue
        if told is not None and found <= (told.major, told.minor):
            continue
        release = db.cuda_release(CudaVersion(*found))
        full = release.min_driver(target.platform) if release else None
        out.append(warning("minor-version-compat", "warn.minor-version-compat-runtime", package=name,
                           version=str(candidate.version), cuda=f"{found[0]}.{found[1]}", required=full or "?",
                           found=target.driver))  # fmt: skip
    return out
