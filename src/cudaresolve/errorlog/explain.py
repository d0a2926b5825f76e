"""Cause and fixes for each known CUDA error found in a log, specific to a target when one is known. Pure.

``explain_matches`` turns ``signatures.match_errors``'s matches into ``Explanation``s: a cause and
fixes, specific to the target's GPUs and driver when a target is known, and naming published
releases when a compatibility database is given (``advice``). Causes and fixes are ``Text``
values; ``render.explain`` formats them in the chosen language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.utils import canonicalize_name

from cudaresolve.advice.releases import release_fixes
from cudaresolve.advice.variants import driver_cuda_max, newest_variant, variant_fixes
from cudaresolve.binaries.demangle import demangle
from cudaresolve.core.archs import ComputeCapability, format_arch_list, parse_arch_list, parse_cc
from cudaresolve.core.versions import CudaVersion
from cudaresolve.db.database import DriverSupport
from cudaresolve.db.toolkits import toolkit_compiles
from cudaresolve.errorlog.attention import flash_attention_refused
from cudaresolve.errorlog.libraries import cudnn_too_old, library_too_old
from cudaresolve.errorlog.signatures import MAX_TEXT_CHARS, match_errors
from cudaresolve.errorlog.toolchain import unknown_arch, unknown_ptxas_arch
from cudaresolve.errors import InvalidArch, NoKnownError
from cudaresolve.text.findings import Notice, warning
from cudaresolve.text.model import Text, paren, sentences

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.db.database import CompatDB
    from cudaresolve.errorlog.signatures import SignatureMatch
    from cudaresolve.target.model import Target
    from cudaresolve.text.model import Field

__all__ = ["Explanation", "LogExplanation", "explain_log", "explain_matches", "explain_text"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    """One known error: its code, its cause and the fixes, best first."""

    code: str
    cause: Text
    fixes: tuple[Text, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``matches`` item of the JSON contract; render formats its Texts."""
        return {"code": self.code, "cause": self.cause, "fixes": list(self.fixes)}


_Result = tuple[list[Text], list[Text]]  # cause sentences, fixes


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ctx:
    target: Target | None
    db: CompatDB | None

    @property
    def index_root(self) -> str | None:
        """The PyTorch index root for fix sentences that name it (from the database)."""
        return self.db.pytorch_index_root if self.db is not None else None

    @property
    def ccs(self) -> tuple[ComputeCapability, ...]:
        return self.target.ccs if self.target is not None else ()

    @property
    def tegra(self) -> bool:
        return self.target is not None and any(g.tegra for g in self.target.gpus)

    @property
    def platform(self) -> str:
        return self.target.platform if self.target is not None else "linux_x86_64"

    def gpus(self, only: Sequence[ComputeCapability] | None = None) -> tuple[str | Text, ...]:
        """The target's GPUs (of ``only`` these capabilities): "NVIDIA A100 (8.0)", each once."""
        labels: list[str | Text] = []
        for gpu in self.target.gpus if self.target is not None else ():
            label = gpu.name if gpu.name == gpu.cc.sm else paren(gpu.name, str(gpu.cc))
            if (only is None or gpu.cc in only) and label not in labels:
                labels.append(label)
        return tuple(labels)

    def release_fixes(self, packages: Sequence[str], ccs: Sequence[ComputeCapability]) -> list[Text]:
        if self.db is None:
            return []
        driver = self.target.driver if self.target is not None else None
        return release_fixes(self.db, packages, ccs, tegra=self.tegra, driver=driver, platform=self.platform)

    def variant_fixes(self, found: CudaVersion | None = None) -> list[Text]:
        cuda_max, driver = driver_cuda_max(self.target, self.db, found)
        ccs = self.target.ccs if self.target is not None else ()
        return variant_fixes(self.db, cuda_max, driver, self.platform, ccs=ccs, tegra=self.tegra)


def _sms(ccs: Sequence[ComputeCapability]) -> tuple[str, ...]:
    return tuple(cc.sm for cc in ccs)


def _no_kernel_image(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    package = f.get("package")
    if package is None and "module" in f and ctx.db is not None:  # a traceback through flashinfer, vllm ...
        owner = _abi_package(ctx, f["module"])
        package = owner if owner in ctx.db.package_names and owner != ctx.db.anchor else None
    if package is None:
        cause = [Text.of("sig.no-kernel-image.cause")]
    else:
        label = Text.of("word.fbgemm-via-torchrec") if f.get("via") == "torchrec" else package
        cause = [Text.of("sig.no-kernel-image.cause-package", package=label)]
    ccs = ctx.ccs
    if not ccs:
        return cause, [Text.of("fix.rerun-with-target"), Text.of("fix.doctor")]
    cause.append(Text.of("sig.no-kernel-image.target", gpus=ctx.gpus(), sms=_sms(ccs)))
    if package is None and "torchless" in f:  # a log without torch in it: the library's own build, not torch's
        return cause, [Text.of("fix.library-build-for-gpus", sms=_sms(ccs)), Text.of("fix.doctor")]
    fixes = ctx.release_fixes([package, "torch"] if package else ["torch"], ccs)
    floor = ctx.db.min_sm(package) if ctx.db is not None and package else None  # vllm refuses sm_61 whatever it has
    below = [cc for cc in ccs if floor is not None and cc < floor]
    fixes += [Text.of("fix.doctor-below-minimum", package=package, cc=cc, required=floor) for cc in below]
    if not below and (ctx.db is None or toolkit_compiles(ctx.db, ccs)):  # a CUDA that compiles for every GPU here
        fixes.append(Text.of("fix.source-build", package=package or "torch", arch_list=format_arch_list(ccs)))
    return cause, [*fixes, Text.of("fix.doctor")]


def _invalid_device_function(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    """The runtime's older name for a kernel with no code for this GPU: the no-kernel-image rules, its own words."""
    cause, fixes = _no_kernel_image(ctx, f)
    if cause and cause[0].key == "sig.no-kernel-image.cause":
        cause[0] = Text("sig.invalid-device-function.cause")
    return cause, fixes


def _found_cuda(f: Mapping[str, str]) -> CudaVersion | None:
    """torch prints cudaDriverGetVersion's number, 1000 * major + 10 * minor (11040 is CUDA 11.4)."""
    raw = f.get("found_version")
    return CudaVersion(int(raw) // 1000, int(raw) % 1000 // 10) if raw else None


def _driver_insufficient(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cuda_max, _ = driver_cuda_max(ctx.target, ctx.db, _found_cuda(f))
    key = "sig.driver-insufficient.cause-found" if cuda_max else "sig.driver-insufficient.cause"
    fixes = ctx.variant_fixes(_found_cuda(f)) or [Text.of("fix.rerun-with-target")]
    return [Text.of(key, found=cuda_max)], [*fixes, Text.of("fix.upgrade-driver"), Text.of("fix.lock")]


def _abi_package(ctx: _Ctx, library: str) -> str:
    """The distribution a module belongs to: the database's package whose import name starts the module
    name (``flash_attn_2_cuda`` -> ``flash-attn``, ``fbgemm_gpu_config`` -> ``fbgemm-gpu``), else the module's."""
    module, db = library.lower(), ctx.db
    names = [n for n in db.package_kinds if n != db.anchor] if db is not None else []
    fits = [n for n in names if module == n.replace("-", "_") or module.startswith(n.replace("-", "_") + "_")]
    return max(fits, key=len) if fits else canonicalize_name(module)


def _abi_mismatch(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    if "built_for" in f:
        package = "xformers"
        cause = Text.of("sig.abi-mismatch.cause-built-for", required=f["built_for"], found=f.get("have", "?"))
    else:
        package = _abi_package(ctx, f.get("library", "?"))
        symbol = f.get("symbol", "?")
        readable = demangle(symbol)
        cause = (Text.of("sig.abi-mismatch.cause-symbol", package=package, symbol=readable, mangled=symbol)
                 if readable else Text.of("sig.abi-mismatch.cause", package=package))
    return [cause], _abi_fixes(ctx, package)


def _abi_fixes(ctx: _Ctx, package: str) -> list[Text]:
    """The ways out of an extension built for another torch: the build made for this torch, or the named pairing."""
    if package == "flashinfer":  # not on the PyTorch index: no same-index advice
        return [Text.of("fix.pair-flashinfer"), Text.of("fix.doctor")]
    if package not in ("fbgemm-gpu", "xformers"):  # the general rule: the build made for this torch
        return [Text.of("fix.abi-lock", package=package), Text.of("fix.doctor-abi")]
    pairing = Text.of("fix.pair-fbgemm") if package == "fbgemm-gpu" else Text.of("fix.pair-xformers")
    same_index = Text.of("fix.same-index", package=package, index_root=ctx.index_root)
    return [pairing, same_index, Text.of("fix.doctor")]


def _missing_operator(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    """torch has no ``torchvision::nms``: the package whose namespace it is did not load its compiled extension."""
    namespace = f.get("namespace", "?")
    package = _abi_package(ctx, namespace)
    if ctx.db is not None and package not in ctx.db.package_names:  # fbgemm:: is fbgemm-gpu's
        owners = sorted(n for n in ctx.db.package_names if n.startswith(f"{package}-") and n != ctx.db.anchor)
        package = owners[0] if owners else package
    cause = Text.of("sig.missing-operator.cause", op=f"{namespace}::{f.get('op', '?')}", package=package)
    return [cause], _abi_fixes(ctx, package)


def _xformers_other_sm(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    fields = {k: f[k] for k in ("built", "kernel", "low", "high")}
    if int(f["built"]) >= int(f["high"]):  # the GPU runs its own code: the kernel has none for it (#1279)
        newer = Text.of("sig.xformers-built-for-other-sm.cause-newer", **fields)
        fixes = ctx.release_fixes(["xformers"], ctx.ccs) if ctx.ccs else []
        return [newer], [*fixes, Text("fix.xformers-torch-attention")]
    cause = Text.of("sig.xformers-built-for-other-sm.cause", **fields)
    if ctx.ccs:
        first = Text.of("fix.arch-list-target", arch_list=format_arch_list(ctx.ccs))
    else:
        first = Text.of("fix.arch-list-generic")
    return [cause], [first, Text.of("fix.xformers-prebuilt")]


def _xformers_no_operator(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    """No xformers operator for the call: its CUDA extension did not load (built for another torch), and the flash
    operator's capability floor where the message names one (a T4 is below FlashAttention's 8.0)."""
    cause = [Text.of("sig.xformers-no-operator.cause", op=f["op"])]
    if "no_cuda" in f:
        cause.append(Text("sig.xformers-no-operator.no-cuda"))
    if "need" in f and "have" in f:
        cause.append(Text.of("sig.xformers-no-operator.capability", cmp=f.get("cmp", ">"),
                             need=f["need"].replace(", ", "."), have=f["have"].replace(", ", ".")))  # fmt: skip
    pairing = [Text.of("fix.pair-xformers"), Text.of("fix.same-index", package="xformers", index_root=ctx.index_root)]
    return cause, [*(pairing if "no_cuda" in f else []), Text("fix.xformers-torch-attention"), Text.of("fix.doctor")]


def _flashinfer_sm75(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    old_check = "old" in f  # the pre-0.3.0 message, "FlashInfer requires sm75+"
    cause = [Text("sig.flashinfer-requires-sm75.cause-old" if old_check else "sig.flashinfer-requires-sm75.cause-new")]
    ccs = ctx.ccs
    floor = ctx.db.min_sm("flashinfer-python") if ctx.db is not None else None
    named = re.search(r"sm(\d+)", f.get("old") or f.get("new") or "")  # else the floor the message names
    if floor is None and named is not None:
        floor = parse_cc(named[1])
    if old := [cc for cc in ccs if floor is not None and cc < floor]:
        cause.append(Text.of("sig.flashinfer-requires-sm75.gpus-old", gpus=ctx.gpus(old)))
        return cause, [Text.of("fix.doctor")]
    if ccs:
        cause.append(Text.of("sig.flashinfer-requires-sm75.gpus-ok", ccs=tuple(str(cc) for cc in ccs)))
        fixes = [Text.of("fix.unset-arch-list-target", arch_list=format_arch_list(ccs))]
    else:
        fixes = [Text.of("fix.unset-arch-list")]
    return cause, [*fixes, Text.of("fix.upgrade-flashinfer")] if old_check else fixes


def _message_cc(f: Mapping[str, str]) -> ComputeCapability | None:
    try:
        return parse_cc(f["cc"]) if "cc" in f else parse_cc(f"sm_{f['sm']}") if "sm" in f else None
    except InvalidArch:
        return None


def _torch_sm_unsupported(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cc = _message_cc(f) or (ctx.ccs[0] if ctx.ccs else None)
    if cc is None:
        gpu_named = f.get("gpu") or Text("word.this-gpu")
        short = Text.of("sig.torch-sm-unsupported.cause-short", gpu=gpu_named, sm="?")
        return [short], [Text("fix.rerun-with-target"), Text("fix.lock")]
    named = [g.name for g in ctx.target.gpus if g.cc == cc and g.name != cc.sm] if ctx.target else []
    gpu: Field = f.get("gpu") or tuple(dict.fromkeys(named)) or Text.of("word.this-gpu")
    if "supported" in f:
        cause = [Text.of("sig.torch-sm-unsupported.cause", gpu=gpu, sm=cc.sm, found=f["supported"])]
    elif "min" in f:
        cause = [Text.of("sig.torch-sm-unsupported.cause-min", gpu=gpu, cc=cc, required=f["min"])]
    else:
        cause = [Text.of("sig.torch-sm-unsupported.cause-short", gpu=gpu, sm=cc.sm)]
    try:
        supported = [a.cc for a in parse_arch_list(f.get("supported", "")) if not a.ptx]
    except InvalidArch:
        supported = []
    if supported and cc > max(supported) and ctx.db is not None:
        if needs := [r.version for r in ctx.db.cuda if any(a.cc == cc and not a.suffix for a in r.nvcc_sm)]:
            cause.append(Text.of("sig.torch-sm-unsupported.newer-gpu", cuda=min(needs), sm=cc.sm))
    fixes = ctx.release_fixes(["torch"], [cc])
    if ctx.db is None or toolkit_compiles(ctx.db, [cc]):
        fixes.append(Text.of("fix.source-build", package="torch", arch_list=format_arch_list([cc])))
    return cause, [*fixes, Text.of("fix.lock")]


def _cuda_not_available(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cause = [Text.of("sig.cuda-not-available.cause")]
    if ctx.target is not None and ctx.target.is_cpu:
        return cause, [Text.of("fix.check-build"), Text.of("fix.cpu-target")]
    variant = ctx.variant_fixes()
    return cause, [Text.of("fix.check-build"), *variant, Text.of("fix.nvidia-smi"), Text.of("fix.doctor")]


def _torch_cpu_build(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cause = [Text.of("sig.torch-cpu-build.cause")]
    if ctx.target is not None and ctx.target.is_cpu:
        return cause, [Text.of("fix.cpu-target"), Text.of("fix.cpu-device")]
    variant = ctx.variant_fixes() or [Text.of("fix.cuda-index", index_root=ctx.index_root)]
    return cause, [*variant, Text.of("fix.cpu-device")]


def _ptx_toolchain(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    fixes = ctx.variant_fixes()
    fixes.append(Text.of("fix.upgrade-driver"))
    if ctx.ccs:
        fixes.append(Text.of("fix.sass-build-target", sms=_sms(ctx.ccs)))
    else:
        fixes.append(Text.of("fix.sass-build"))
    return [Text.of("sig.ptx-unsupported-toolchain.cause")], fixes


def _missing_library(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    library, major = f.get("library", "?"), f.get("major")
    if major is not None and "framework" in f:  # another framework's library (TensorFlow's): no torch advice
        package = f["framework"]
        if not library.startswith(("libcudart", "libcudnn")):  # cuBLAS, cuFFT ... number their sonames apart
            return [Text.of("sig.missing-cuda-library.cause-unversioned", library=library)], [Text.of("fix.doctor")]
        key = "sig.missing-cuda-library.cause-other-cudnn" if library.startswith("libcudnn") else (
            "sig.missing-cuda-library.cause-other")  # fmt: skip
        fix = "fix.cudnn-major-runtime" if library.startswith("libcudnn") else "fix.cuda-major-runtime"
        return [Text.of(key, library=library, major=major, package=package)], [
            Text.of(fix, major=major, package=package), Text.of("fix.doctor")]  # fmt: skip
    if major is None:
        cause = Text.of("sig.missing-cuda-library.cause-unversioned", library=library)
        return [cause], [Text.of("fix.match-torch-cuda"), Text.of("fix.doctor")]
    if library.startswith("libcudnn"):  # cuDNN's own major version, not CUDA's
        cause = Text.of("sig.missing-cuda-library.cause-cudnn", library=library, major=major)
        return [cause], [Text.of("fix.match-torch-cudnn"), Text.of("fix.doctor")]
    if not library.startswith("libcudart"):  # cuFFT, cuRAND ... number their sonames apart from CUDA
        cause = Text.of("sig.missing-cuda-library.cause-library", library=library)
        return [cause], [Text.of("fix.match-torch-cuda"), Text.of("fix.doctor")]
    fixes = [Text.of("fix.match-torch-cuda")]
    target, db = ctx.target, ctx.db
    if db is not None and target is not None and target.driver is not None:
        same = [v for v in db.variants if v.cuda and v.cuda.major == int(major)]
        support = {v.name: db.driver_support(v.cuda, target.driver, target.platform) for v in same if v.cuda}
        best = newest_variant(v for v in same if support[v.name] is DriverSupport.FULL) or newest_variant(
            v for v in same if support[v.name] is DriverSupport.MINOR
        )
        if best is not None:
            fields = {"variant": best.name, "cuda": best.cuda, "major": major, "index_url": best.index_url}
            fixes.append(Text.of("fix.torch-major-variant", **fields))
    cause = Text.of("sig.missing-cuda-library.cause", library=library, major=major)
    return [cause], [*fixes, Text.of("fix.doctor")]


def _triton_old(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    gpu = f.get("gpu") or Text.of("word.this-gpu")
    fields = {"required": f.get("required", "7.0"), "gpu": gpu, "cc": f.get("cc", "?")}
    return [Text.of("sig.triton-gpu-too-old.cause", **fields)], [Text.of("fix.triton-eager")]


def _fixed(cause: str, *fixes: str) -> Callable[[_Ctx, Mapping[str, str]], _Result]:
    """An explainer whose cause and fixes do not depend on the target."""

    def explain(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
        return [Text.of(cause)], [Text.of(k, index_root=ctx.index_root) for k in fixes]

    return explain


_EXPLAIN: Final[Mapping[str, Callable[[_Ctx, Mapping[str, str]], _Result]]] = {
    "no-kernel-image": _no_kernel_image,
    "invalid-device-function": _invalid_device_function,
    "driver-insufficient": _driver_insufficient,
    "abi-mismatch": _abi_mismatch,
    "missing-operator": _missing_operator,
    "xformers-built-for-other-sm": _xformers_other_sm,
    "xformers-no-operator": _xformers_no_operator,
    "flashinfer-requires-sm75": _flashinfer_sm75,
    "torch-sm-unsupported": _torch_sm_unsupported,
    "cuda-not-available": _cuda_not_available,
    "torch-cpu-build": _torch_cpu_build,
    "ptx-unsupported-toolchain": _ptx_toolchain,
    "ptx-jit-disabled": _fixed("sig.ptx-jit-disabled.cause", "fix.ptx-jit-enable", "fix.doctor"),
    "aoti-device-mismatch": _fixed(
        "sig.aoti-device-mismatch.cause", "fix.aoti-export-device", "fix.aoti-runner-device", "fix.aoti-inputs"
    ),
    "no-driver": _fixed("sig.no-driver.cause", "fix.nvidia-smi", "fix.docker-gpus", "fix.cpu-variant"),
    "driver-init-failed": _fixed(
        "sig.driver-init-failed.cause", "fix.driver-reload", "fix.dev-permissions", "fix.detect"
    ),
    "no-cuda-device": _fixed(
        "sig.no-cuda-device.cause", "fix.visible-devices", "fix.nvidia-smi-list", "fix.docker-gpus"
    ),
    "out-of-memory": _fixed("sig.out-of-memory.cause", "fix.less-memory", "fix.other-processes"),
    "kernel-fault": _fixed("sig.kernel-fault.cause", "fix.launch-blocking", "fix.xid"),
    "missing-cuda-library": _missing_library,
    "cuda-library-too-old": lambda ctx, f: library_too_old(f),
    "cudnn-too-old": lambda ctx, f: cudnn_too_old(f),
    "cudnn-version-mismatch": _fixed("sig.cudnn-version-mismatch.cause", "fix.one-cudnn", "fix.doctor"),
    "triton-gpu-too-old": _triton_old,
    "unsupported-gpu-arch": lambda ctx, f: unknown_arch(ctx.db, ctx.ccs, f),
    "flash-attn-refused": lambda ctx, f: flash_attention_refused(ctx.db, ctx.ccs, ctx.gpus(), f),
    "ptxas-unknown-arch": lambda ctx, f: unknown_ptxas_arch(ctx.db, ctx.ccs, f),
}


def explain_matches(
    matches: Sequence[SignatureMatch], target: Target | None, db: CompatDB | None
) -> list[Explanation]:
    """Cause and fixes for each match, in the same order; specific to ``target`` and ``db`` when given."""
    ctx = _Ctx(target=target, db=db)
    out = []
    for match in matches:
        cause, fixes = _EXPLAIN[match.code](ctx, match.fields)
        out.append(Explanation(code=match.code, cause=sentences(*cause), fixes=tuple(fixes)))
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class LogExplanation:
    """What ``explain_log`` found, how much of the text it scanned, and a notice when it stopped early."""

    explanations: tuple[Explanation, ...]
    scanned: int  # characters scanned: at most MAX_TEXT_CHARS
    truncated: bool
    notices: tuple[Notice, ...] = ()


def explain_log(text: str, target: Target | None, db: CompatDB | None) -> LogExplanation:
    """The known errors in the first ``MAX_TEXT_CHARS`` characters of ``text``, explained.

    A longer text is cut there, with an ``input-truncated`` notice; ``NoKnownError`` when the
    scanned part holds no known signature (its message says when the text was cut).
    """
    truncated = len(text) > MAX_TEXT_CHARS
    scanned = text[:MAX_TEXT_CHARS]
    matches = match_errors(scanned)
    if not matches:
        if truncated:
            message = Text.of("explain.no-known-error-truncated", limit=MAX_TEXT_CHARS)
        else:
            message = Text("explain.no-known-error")
        raise NoKnownError(message, hint=Text("explain.no-known-error.hint"))
    notices = (warning("input-truncated", "explain.truncated", limit=MAX_TEXT_CHARS),) if truncated else ()
    return LogExplanation(
        explanations=tuple(explain_matches(matches, target, db)),
        scanned=len(scanned),
        truncated=truncated,
        notices=notices,
    )


def explain_text(text: str, target: Target | None, db: CompatDB | None) -> list[Explanation]:
    """``explain_log(...).explanations`` as a list; ``NoKnownError`` when the text holds no known signature."""
    return list(explain_log(text, target, db).explanations)
