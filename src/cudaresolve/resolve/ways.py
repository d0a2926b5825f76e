"""The ways out ``why-not`` offers without a search: a package's CPU-only build, a source build; and the reason
that a variant was never published for a release asked for (``unpublished``). Pure.

A CPU-only build (``[packages.cpu-package]``: fbgemm-gpu-cpu) gets round a package with no code for the GPU
here, or no GPU at all; a source build with the exact ``TORCH_CUDA_ARCH_LIST`` gets round a build with no code
for the GPU, but only where a CUDA toolkit the request's builds use still compiles for it (``[[cuda]] nvcc-sm``)
and the package itself runs on it (its ``min-sm``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.archs import format_arch_list
from cudaresolve.db.toolkits import toolkit_compiles
from cudaresolve.resolve.catalog import CUDA
from cudaresolve.text.findings import reason
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cudaresolve.db.database import CompatDB
    from cudaresolve.resolve.catalog import Need
    from cudaresolve.target.model import Target
    from cudaresolve.text.findings import Finding

__all__ = ["Alternative", "cpu_packages", "source_build"]

#: Reasons a source build with the exact arch list gets round: a build with no code for a GPU here.
_NO_CODE: Final = ("sm-not-covered", "gpu-too-old")
#: Reasons that a package's CPU-only build (fbgemm-gpu-cpu) gets round: no code for the GPU, or no GPU.
_CPU_WAY_CODES: Final = ("sm-not-covered", "gpu-too-old", "sm-below-minimum", "variant-not-published", "no-gpu")


@dataclass(frozen=True, slots=True, kw_only=True)
class Alternative:
    """One way out: what to ask for instead (``spec``: a variant, a requirement, a driver) and why it works."""

    spec: str
    text: Text
    code: str | None = None  # "forward-compat-available" for the cuda-compat way out

    @classmethod
    def make(cls, label: str, key: str, *, code: str | None = None, **fields: object) -> Alternative:
        return cls(spec=label, text=Text.of(key, **fields), code=code)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"spec": self.spec, "message": self.text}
        if self.code:
            data["code"] = self.code
        return data


def source_build(
    needs: Sequence[Need], variant: str | None, reasons: Sequence[Finding], db: CompatDB, target: Target
) -> list[Alternative]:
    """A source build with the target's exact ``TORCH_CUDA_ARCH_LIST``, where a build has no code for a GPU here
    and the CUDA toolkit of such a build, or of the variant asked, compiles for every one (``db.toolkits``)."""
    lacking = [r for r in reasons if r.code in _NO_CODE]
    if not lacking or not target.gpus:
        return []
    variants = {variant} if variant is not None else {r.variant for r in lacking if r.variant}
    if not variants:  # no build named: those of the releases the request admits
        variants = {
            b.variant for n in needs if n.name != CUDA for r in db.packages(n.name)
            if n.specifier.contains(r.version, prereleases=True) for b in r.builds
        }  # fmt: skip
    if not toolkit_compiles(db, target.ccs, variants) or not _may_run(needs, lacking, db, target):
        return []
    arch_list = format_arch_list(target.ccs)
    return [Alternative.make(f"TORCH_CUDA_ARCH_LIST={arch_list}", "alt.source-build", arch_list=arch_list)]


def _may_run(needs: Sequence[Need], lacking: Sequence[Finding], db: CompatDB, target: Target) -> bool:
    """Whether some release the request admits of each package lacking code runs on every GPU here once built:
    none whose ``min-sm`` (FlashInfer's sm_75, xformers' from 0.0.31) leaves a GPU out, which it refuses at run
    time however it was compiled."""
    lowest = min(target.ccs)
    for name in {r.package for r in lacking if r.package}:
        asked = [n.specifier for n in needs if n.name == name]
        admitted = [r for r in db.packages(name) if all(s.contains(r.version, prereleases=True) for s in asked)]
        if admitted and all(r.min_sm is not None and lowest < r.min_sm for r in admitted):
            return False
    return True


def cpu_packages(reasons: Sequence[Finding], db: CompatDB) -> list[Alternative]:
    """A package's CPU-only build (``[packages.cpu-package]``: fbgemm-gpu-cpu) where no build of the package
    has code for the GPU here, or the target has none: its operators then run on the CPU."""
    found = {r.package: project for r in reasons
             if r.package and r.code in _CPU_WAY_CODES and (project := db.cpu_package(r.package))}
    return [Alternative.make(project, "alt.cpu-package", code="cpu-package", project=project, package=name)
            for name, project in found.items()]


def unpublished(needs: Sequence[Need], variant: str | None, db: CompatDB) -> list[Finding]:
    """For a named variant, each database package asked for none of whose releases in the versions asked was
    published for it (``why-not cu118 torch==2.9.0``), release by release: the solver says only that the other
    variants' builds were passed over, which is no reason for this one."""
    out: list[Finding] = []
    for need in needs if variant is not None else ():
        built = [r for r in db.packages(need.name) if r.builds and need.specifier.contains(r.version, prereleases=True)]
        if need.name == CUDA or not built or any(b.variant == variant for r in built for b in r.builds):
            continue
        out += [reason("variant-not-published", package=need.name, version=str(r.version), variant=variant,
                       required=", ".join(dict.fromkeys(b.variant for b in r.builds))) for r in built]  # fmt: skip
    return out
