"""Known CUDA error messages: find them in a log, then explain cause and fixes for a target. Pure.

``match_errors(text)`` scans a message or a whole log for the signatures of design section 7
(plus a few more that users often post) and returns one ``SignatureMatch`` per signature, in
order of first appearance. ``explain_matches`` turns matches into ``Explanation``s: a cause and
fixes, specific to the target's GPUs and driver when a target is known, and naming published
releases when a compatibility database is given. The sentences come from ``messages.py``.

Each signature names a public report where users posted it (``source``); the tests quote them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.archs import ComputeCapability, arch_runs_on, format_arch_list, parse_arch_list, parse_cc
from cudaresolve.core.versions import CudaVersion
from cudaresolve.errors import CudaResolveError, InvalidArch
from cudaresolve.text.catalogue import join_groups, join_items, join_sentences, message, parenthesize

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.core.versions import DriverVersion
    from cudaresolve.db.database import CompatDB, VariantInfo
    from cudaresolve.target.model import Target

__all__ = [
    "SIGNATURES",
    "Explanation",
    "NoKnownError",
    "Signature",
    "SignatureMatch",
    "explain_matches",
    "explain_text",
    "match_errors",
]

_I: Final = re.IGNORECASE


@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    """One known error: any of ``patterns`` finds it; ``extra`` patterns only add fields.

    Named groups of every pattern become the match's fields. With ``context`` set, the text
    must also contain that pattern somewhere (AOTInductor's generic "invalid argument").
    """

    code: str
    patterns: tuple[re.Pattern[str], ...]
    extra: tuple[re.Pattern[str], ...] = ()
    context: re.Pattern[str] | None = None
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SignatureMatch:
    code: str
    start: int  # offset of the first hit in the text
    line: str  # the line that matched, stripped
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    code: str
    cause: str
    fixes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "cause": self.cause, "fixes": list(self.fixes)}


class NoKnownError(CudaResolveError):
    """The text holds no known signature (exit 1, with a hint to run ``doctor``)."""

    code = "no-known-error"


def _sig(code: str, *patterns: str, extra: Sequence[str] = (), context: str | None = None, source: str) -> Signature:
    return Signature(
        code=code,
        patterns=tuple(re.compile(p, _I) for p in patterns),
        extra=tuple(re.compile(p, _I) for p in extra),
        context=re.compile(context, _I) if context else None,
        source=source,
    )


SIGNATURES: Final[tuple[Signature, ...]] = (
    _sig(
        "no-kernel-image",
        r"no kernel image is available for execution on the device",
        r"cudaErrorNoKernelImageForDevice",
        source="https://github.com/meta-pytorch/torchrec/issues/2708",
    ),
    _sig(
        "driver-insufficient",
        r"CUDA driver version is insufficient for CUDA runtime version",
        r"The NVIDIA driver on your system is too old \(found version (?P<found_version>\d{4,6})\)",
        r"cudaErrorInsufficientDriver",
        extra=[r"found version (?P<found_version>\d{4,6})"],
        source="https://github.com/lllyasviel/Fooocus/issues/1313",
    ),
    _sig(
        "abi-mismatch",
        r"(?P<library>fbgemm_gpu|xformers|flashinfer|torchrec)[^\s:]*\.so[^\s:]*:\s*"
        r"undefined symbol:\s*(?P<symbol>\S+)",
        r"xFormers can't load C\+\+/CUDA extensions\. xFormers was built for:\s*"
        r"PyTorch (?P<built_for>[^\s()]+) with CUDA \d+ \(you have (?P<have>[^\s()]+)\)",
        source="https://github.com/pytorch/FBGEMM/issues/2715",
    ),
    _sig(
        "xformers-built-for-other-sm",
        r"kernel [`']?(?P<kernel>\w+)[`']? is for sm(?P<low>\d+)-sm(?P<high>\d+), but was built for sm(?P<built>\d+)",
        source="https://github.com/facebookresearch/xformers/issues/1045",
    ),
    _sig(
        "flashinfer-requires-sm75",
        r"(?P<old>FlashInfer requires sm75\+)",
        r"(?P<new>FlashInfer requires GPU'?s with sm75 or higher)",
        source="https://github.com/flashinfer-ai/flashinfer/issues/1115",
    ),
    _sig(
        "torch-sm-unsupported",
        r"with CUDA capability sm_(?P<sm>\d+) is not compatible with the current PyTorch installation",
        r"Found GPU\d+ (?P<gpu>[^\n]+?) which is of cuda capability (?P<cc>\d+\.\d)\.?\s+"
        r"PyTorch no longer supports this GPU because it is too old",
        r"Found GPU\d+ (?P<gpu>[^\n]+?) which is of cuda capability (?P<cc>\d+\.\d)\.?\s+"
        r"Minimum and Maximum cuda capability supported by this version of PyTorch is\s*\((?P<min>\d+\.\d)\)",
        extra=[
            r"supports CUDA capabilities (?P<supported>(?:(?:sm|compute)_\d+[af]? ?)+)",
            r"If you want to use the (?P<gpu>[^\n]+?) GPU with PyTorch",
            r"minimum cuda capability (?:supported by this library|that we support) is (?P<min>\d+\.\d)",
        ],
        source="https://github.com/astral-sh/uv/issues/14742",
    ),
    _sig(
        "cuda-not-available",
        r"torch\.cuda\.is_available\(\)\)?`?\s*(?:(?:returns?|returned|is|==?|->|:|返回值?为?|为|是)\s*)?`?\s*False(?![A-Za-z0-9_])",
        r"Is CUDA available\s*:\s*False",
        source="https://github.com/pytorch/pytorch/issues/85332",
    ),
    _sig(
        "torch-cpu-build",
        r"Torch not compiled with CUDA enabled",
        source="https://github.com/facebookresearch/detectron2/issues/460",
    ),
    _sig(
        "ptx-unsupported-toolchain",
        r"the provided PTX was (?:compiled|complied) with an unsupported toolchain",
        r"cudaErrorUnsupportedPtxVersion",
        r"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        source="https://github.com/NVIDIA-AI-IOT/Lidar_AI_Solution/issues/289",
    ),
    _sig(
        "aoti-device-mismatch",
        r"CUDA error: invalid argument",
        r"resides on host memory and is not registered with any CUDA device",
        context=r"aoti|AOTInductor|model_container_runner",
        source="https://github.com/pytorch/torchchat/issues/709",
    ),
    _sig(
        "no-driver",
        r"Found no NVIDIA driver on your system",
        r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        source="https://github.com/pytorch/pytorch/issues/74733",
    ),
    _sig(
        "driver-init-failed",
        r"CUDA driver initialization failed, you might not have a CUDA gpu",
        source="https://github.com/wenet-e2e/wenet/issues/700",
    ),
    _sig(
        "no-cuda-device",
        r"no CUDA-capable device is detected",
        r"No CUDA GPUs are available",
        r"cudaErrorNoDevice\b",
        source="https://github.com/jwyang/faster-rcnn.pytorch/issues/377",
    ),
    _sig(
        "missing-cuda-library",
        r"(?P<library>lib(?:cudart|nvrtc|nvrtc-builtins|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvJitLink)"
        r"\.so(?:\.(?P<major>\d+)(?:\.\d+)*)?): cannot open shared object file",
        source="https://github.com/huggingface/autotrain-advanced/issues/292",
    ),
    _sig(
        "triton-gpu-too-old",
        r"Found (?P<gpu>[^\n]+?) which is too old to be supported by the triton GPU compiler",
        extra=[
            r"Triton only supports devices of CUDA Capability >= (?P<required>\d+\.\d), "
            r"but your device is of CUDA capability (?P<cc>\d+\.\d)"
        ],
        source="https://github.com/2noise/ChatTTS/issues/341",
    ),
)

# Which compiled library a "no kernel image" came from, judged from the traceback before it.
_LIBRARY_WINDOW: Final = 3000
_FBGEMM: Final = re.compile(r"fbgemm_gpu|torch\.ops\.fbgemm|torchrec", _I)
_TORCHREC: Final = re.compile(r"torchrec", _I)
_XFORMERS: Final = re.compile(r"xformers", _I)


def _line_at(text: str, start: int) -> str:
    begin = text.rfind("\n", 0, start) + 1
    end = text.find("\n", start)
    return text[begin : end if end != -1 else len(text)].strip()


def _match_one(sig: Signature, text: str) -> SignatureMatch | None:
    hits = [m for p in sig.patterns if (m := p.search(text))]
    if not hits or (sig.context is not None and not sig.context.search(text)):
        return None
    hits.sort(key=lambda m: m.start())
    fields: dict[str, str] = {}
    for m in (*hits, *(m for p in sig.extra if (m := p.search(text)))):
        for name, value in m.groupdict().items():
            if value is not None:
                fields.setdefault(name, value.strip())
    start = hits[0].start()
    if sig.code == "no-kernel-image":
        window = text[max(0, hits[0].end() - _LIBRARY_WINDOW) : hits[0].end()]
        if _FBGEMM.search(window):
            fields["package"] = "fbgemm-gpu"
            if _TORCHREC.search(window):
                fields["via"] = "torchrec"
        elif _XFORMERS.search(window):
            fields["package"] = "xformers"
    return SignatureMatch(code=sig.code, start=start, line=_line_at(text, start), fields=fields)


def match_errors(text: str) -> list[SignatureMatch]:
    """Every known signature in ``text``, once each, ordered by where it first appears."""
    found = [m for sig in SIGNATURES if (m := _match_one(sig, text))]
    return sorted(found, key=lambda m: m.start)


# -- explaining ------------------------------------------------------------------------------

_Result = tuple[list[str], list[str]]  # cause sentences, fixes


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ctx:
    target: Target | None
    db: CompatDB | None
    lang: str

    def m(self, key: str, **fields: object) -> str:
        if self.db is not None:  # the index URLs in fix.* sentences
            fields.setdefault("index_root", self.db.pytorch_index_root)
        return message(key, self.lang, **fields)

    @property
    def ccs(self) -> tuple[ComputeCapability, ...]:
        return self.target.ccs if self.target is not None else ()

    @property
    def tegra(self) -> bool:
        return self.target is not None and any(g.tegra for g in self.target.gpus)

    def gpus_text(self, only: Sequence[ComputeCapability] | None = None) -> str:
        labels: list[str] = []
        for gpu in self.target.gpus if self.target is not None else ():
            label = gpu.name if gpu.name == gpu.cc.sm else parenthesize(gpu.name, str(gpu.cc), self.lang)
            if (only is None or gpu.cc in only) and label not in labels:
                labels.append(label)
        return join_items(labels, self.lang)

    def sms_text(self, ccs: Sequence[ComputeCapability]) -> str:
        return join_items((cc.sm for cc in ccs), self.lang)


def _releases_with_sass(ctx: _Ctx, package: str, ccs: Sequence[ComputeCapability], limit: int = 3) -> list[str]:
    """Newest releases of ``package`` with a build whose SASS runs on every capability in ``ccs``."""
    out: list[str] = []
    for release in ctx.db.packages(package) if ctx.db is not None else ():
        variants = sorted(
            b.variant
            for b in release.builds
            if all(any(not a.ptx and arch_runs_on(a, cc, tegra=ctx.tegra) for a in b.sass) for cc in ccs)
        )
        if variants:
            out.append(parenthesize(str(release.version), join_items(dict.fromkeys(variants), ctx.lang), ctx.lang))
        if len(out) >= limit:
            break
    return out


def _release_fixes(ctx: _Ctx, packages: Sequence[str], ccs: Sequence[ComputeCapability]) -> list[str]:
    """Per package: the releases that run on ``ccs``, or that none does (only packages the database has)."""
    fixes = []
    for package in packages if ctx.db is not None and ccs else ():
        sms = ctx.sms_text(ccs)
        if releases := _releases_with_sass(ctx, package, ccs):
            fixes.append(ctx.m("fix.releases", package=package, sms=sms, releases=join_groups(releases, ctx.lang)))
        elif ctx.db is not None and ctx.db.packages(package):
            fixes.append(ctx.m("fix.no-releases", package=package, sms=sms))
    return fixes


def _driver_max(ctx: _Ctx, found: CudaVersion | None = None) -> tuple[CudaVersion | None, DriverVersion | None]:
    """The newest CUDA the driver runs fully (from the target, else from the message), and the target's driver."""
    target = ctx.target
    if target is not None and target.driver is not None:
        cuda = target.cuda_driver_max
        if cuda is None and ctx.db is not None:
            cuda = ctx.db.max_cuda_for_driver(target.driver, target.platform)
        return cuda, target.driver
    if target is not None and target.cuda_driver_max is not None:
        return target.cuda_driver_max, None
    return found, None


def _newest(variants: Sequence[VariantInfo]) -> VariantInfo | None:
    with_cuda = [v for v in variants if v.cuda is not None]
    return max(with_cuda, key=lambda v: (v.cuda.major, v.cuda.minor) if v.cuda else (0, 0)) if with_cuda else None


def _variant_fixes(ctx: _Ctx, cuda_max: CudaVersion | None, driver: DriverVersion | None) -> list[str]:
    """The newest variant the driver runs: fully if one exists, else through minor-version compatibility.

    Without the driver's version, a driver that runs CUDA ``cuda_max`` fully is at least that
    toolkit's minimum, which is enough to judge minor-version compatibility.
    """
    from cudaresolve.db.database import DriverSupport

    db = ctx.db
    if db is None:
        return [ctx.m("fix.use-cuda-max", cuda=cuda_max)] if cuda_max is not None else []
    platform = ctx.target.platform if ctx.target is not None else "linux_x86_64"
    if cuda_max is not None:
        best = _newest([v for v in db.variants if v.cuda is not None and v.cuda <= cuda_max])
        if best is not None:
            return [ctx.m("fix.use-variant", variant=best.name, cuda=best.cuda, index_url=best.index_url)]
    floor = driver
    if floor is None and cuda_max is not None and (release := db.cuda_release(cuda_max)) is not None:
        floor = release.min_driver(platform)
    if floor is not None:
        supported = [
            v for v in db.variants if v.cuda and db.driver_support(v.cuda, floor, platform) is DriverSupport.MINOR
        ]
        if (best := _newest(supported)) is not None:
            return [ctx.m("fix.use-variant-minor", variant=best.name, cuda=best.cuda, index_url=best.index_url)]
    if driver is not None:
        return [ctx.m("fix.no-variant", driver=driver)]
    return [ctx.m("fix.use-cuda-max", cuda=cuda_max)] if cuda_max is not None else []


def _no_kernel_image(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    package = f.get("package")
    if package is None:
        cause = [ctx.m("sig.no-kernel-image.cause")]
    else:
        label = ctx.m("word.fbgemm-via-torchrec") if f.get("via") == "torchrec" else package
        cause = [ctx.m("sig.no-kernel-image.cause-package", package=label)]
    ccs = ctx.ccs
    if not ccs:
        return cause, [ctx.m("fix.rerun-with-target"), ctx.m("fix.doctor")]
    cause.append(ctx.m("sig.no-kernel-image.target", gpus=ctx.gpus_text(), sms=ctx.sms_text(ccs)))
    fixes = _release_fixes(ctx, [package, "torch"] if package else ["torch"], ccs)
    fixes.append(ctx.m("fix.source-build", package=package or "torch", arch_list=format_arch_list(ccs)))
    return cause, [*fixes, ctx.m("fix.doctor")]


def _found_cuda(f: Mapping[str, str]) -> CudaVersion | None:
    """torch prints cudaDriverGetVersion's number, 1000 * major + 10 * minor (11040 is CUDA 11.4)."""
    raw = f.get("found_version")
    return CudaVersion(int(raw) // 1000, int(raw) % 1000 // 10) if raw else None


def _driver_insufficient(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cuda_max, driver = _driver_max(ctx, _found_cuda(f))
    key = "sig.driver-insufficient.cause-found" if cuda_max else "sig.driver-insufficient.cause"
    fixes = _variant_fixes(ctx, cuda_max, driver) or [ctx.m("fix.rerun-with-target")]
    return [ctx.m(key, found=cuda_max)], [*fixes, ctx.m("fix.upgrade-driver"), ctx.m("fix.lock")]


def _abi_mismatch(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    if "built_for" in f:
        package = "xformers"
        cause = ctx.m("sig.abi-mismatch.cause-built-for", required=f["built_for"], found=f.get("have", "?"))
    else:
        library = f.get("library", "?").lower()
        package = {"fbgemm_gpu": "fbgemm-gpu", "torchrec": "fbgemm-gpu"}.get(library, library)
        cause = ctx.m("sig.abi-mismatch.cause", package=package)
    if package == "flashinfer":  # not on the PyTorch index: no same-index advice
        return [cause], [ctx.m("fix.pair-flashinfer"), ctx.m("fix.doctor")]
    pairing = ctx.m("fix.pair-fbgemm") if package == "fbgemm-gpu" else ctx.m("fix.pair-xformers")
    return [cause], [pairing, ctx.m("fix.same-index", package=package), ctx.m("fix.doctor")]


def _xformers_other_sm(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cause = ctx.m("sig.xformers-built-for-other-sm.cause", **{k: f[k] for k in ("built", "kernel", "low", "high")})
    if ctx.ccs:
        first = ctx.m("fix.arch-list-target", arch_list=format_arch_list(ctx.ccs))
    else:
        first = ctx.m("fix.arch-list-generic")
    return [cause], [first, ctx.m("fix.xformers-prebuilt")]


def _flashinfer_sm75(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    old_check = "old" in f  # the pre-0.3.0 message, "FlashInfer requires sm75+"
    cause = [ctx.m("sig.flashinfer-requires-sm75.cause-old" if old_check else "sig.flashinfer-requires-sm75.cause-new")]
    ccs = ctx.ccs
    floor = ctx.db.min_sm("flashinfer-python") if ctx.db is not None else None
    named = re.search(r"sm(\d+)", f.get("old") or f.get("new") or "")  # else the floor the message names
    if floor is None and named is not None:
        floor = parse_cc(named[1])
    if old := [cc for cc in ccs if floor is not None and cc < floor]:
        cause.append(ctx.m("sig.flashinfer-requires-sm75.gpus-old", gpus=ctx.gpus_text(old)))
        return cause, [ctx.m("fix.doctor")]
    if ccs:
        cause.append(ctx.m("sig.flashinfer-requires-sm75.gpus-ok", ccs=join_items(map(str, ccs), ctx.lang)))
        fixes = [ctx.m("fix.unset-arch-list-target", arch_list=format_arch_list(ccs))]
    else:
        fixes = [ctx.m("fix.unset-arch-list")]
    return cause, [*fixes, ctx.m("fix.upgrade-flashinfer")] if old_check else fixes


def _message_cc(f: Mapping[str, str]) -> ComputeCapability | None:
    try:
        return parse_cc(f["cc"]) if "cc" in f else parse_cc(f"sm_{f['sm']}") if "sm" in f else None
    except InvalidArch:
        return None


def _torch_sm_unsupported(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cc = _message_cc(f) or (ctx.ccs[0] if ctx.ccs else None)
    if cc is None:
        return [ctx.m("sig.torch-sm-unsupported.cause-short", gpu=f.get("gpu") or ctx.m("word.this-gpu"), sm="?")], [
            ctx.m("fix.rerun-with-target"),
            ctx.m("fix.lock"),
        ]
    named = [g.name for g in ctx.target.gpus if g.cc == cc and g.name != cc.sm] if ctx.target else []
    gpu = f.get("gpu") or join_items(dict.fromkeys(named), ctx.lang) or ctx.m("word.this-gpu")
    if "supported" in f:
        cause = [ctx.m("sig.torch-sm-unsupported.cause", gpu=gpu, sm=cc.sm, found=f["supported"])]
    elif "min" in f:
        cause = [ctx.m("sig.torch-sm-unsupported.cause-min", gpu=gpu, cc=cc, required=f["min"])]
    else:
        cause = [ctx.m("sig.torch-sm-unsupported.cause-short", gpu=gpu, sm=cc.sm)]
    try:
        supported = [a.cc for a in parse_arch_list(f.get("supported", "")) if not a.ptx]
    except InvalidArch:
        supported = []
    if supported and cc > max(supported) and ctx.db is not None:
        if needs := [r.version for r in ctx.db.cuda if any(a.cc == cc and not a.suffix for a in r.nvcc_sm)]:
            cause.append(ctx.m("sig.torch-sm-unsupported.newer-gpu", cuda=min(needs), sm=cc.sm))
    fixes = _release_fixes(ctx, ["torch"], [cc])
    fixes.append(ctx.m("fix.source-build", package="torch", arch_list=format_arch_list([cc])))
    return cause, [*fixes, ctx.m("fix.lock")]


def _cuda_not_available(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cause = [ctx.m("sig.cuda-not-available.cause")]
    if ctx.target is not None and ctx.target.is_cpu:
        return cause, [ctx.m("fix.check-build"), ctx.m("fix.cpu-target")]
    variant = _variant_fixes(ctx, *_driver_max(ctx))
    return cause, [ctx.m("fix.check-build"), *variant, ctx.m("fix.nvidia-smi"), ctx.m("fix.doctor")]


def _torch_cpu_build(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    cause = [ctx.m("sig.torch-cpu-build.cause")]
    if ctx.target is not None and ctx.target.is_cpu:
        return cause, [ctx.m("fix.cpu-target"), ctx.m("fix.cpu-device")]
    variant = _variant_fixes(ctx, *_driver_max(ctx)) or [ctx.m("fix.cuda-index")]
    return cause, [*variant, ctx.m("fix.cpu-device")]


def _ptx_toolchain(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    fixes = _variant_fixes(ctx, *_driver_max(ctx))
    fixes.append(ctx.m("fix.upgrade-driver"))
    if ctx.ccs:
        fixes.append(ctx.m("fix.sass-build-target", sms=ctx.sms_text(ctx.ccs)))
    else:
        fixes.append(ctx.m("fix.sass-build"))
    return [ctx.m("sig.ptx-unsupported-toolchain.cause")], fixes


def _missing_library(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    from cudaresolve.db.database import DriverSupport

    library, major = f.get("library", "?"), f.get("major")
    if major is None:
        cause = ctx.m("sig.missing-cuda-library.cause-unversioned", library=library)
        return [cause], [ctx.m("fix.match-torch-cuda"), ctx.m("fix.doctor")]
    fixes = [ctx.m("fix.match-torch-cuda")]
    target, db = ctx.target, ctx.db
    if db is not None and target is not None and target.driver is not None:
        same = [v for v in db.variants if v.cuda and v.cuda.major == int(major)]
        support = {v.name: db.driver_support(v.cuda, target.driver, target.platform) for v in same if v.cuda}
        best = _newest([v for v in same if support[v.name] is DriverSupport.FULL]) or _newest(
            [v for v in same if support[v.name] is DriverSupport.MINOR]
        )
        if best is not None:
            fields = {"variant": best.name, "cuda": best.cuda, "major": major, "index_url": best.index_url}
            fixes.append(ctx.m("fix.torch-major-variant", **fields))
    cause = ctx.m("sig.missing-cuda-library.cause", library=library, major=major)
    return [cause], [*fixes, ctx.m("fix.doctor")]


def _triton_old(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
    gpu = f.get("gpu") or ctx.m("word.this-gpu")
    fields = {"required": f.get("required", "7.0"), "gpu": gpu, "cc": f.get("cc", "?")}
    return [ctx.m("sig.triton-gpu-too-old.cause", **fields)], [ctx.m("fix.triton-eager")]


def _fixed(cause: str, *fixes: str) -> Callable[[_Ctx, Mapping[str, str]], _Result]:
    """An explainer whose cause and fixes do not depend on the target."""

    def explain(ctx: _Ctx, f: Mapping[str, str]) -> _Result:
        return [ctx.m(cause)], [ctx.m(k) for k in fixes]

    return explain


_EXPLAIN: Final[Mapping[str, Callable[[_Ctx, Mapping[str, str]], _Result]]] = {
    "no-kernel-image": _no_kernel_image,
    "driver-insufficient": _driver_insufficient,
    "abi-mismatch": _abi_mismatch,
    "xformers-built-for-other-sm": _xformers_other_sm,
    "flashinfer-requires-sm75": _flashinfer_sm75,
    "torch-sm-unsupported": _torch_sm_unsupported,
    "cuda-not-available": _cuda_not_available,
    "torch-cpu-build": _torch_cpu_build,
    "ptx-unsupported-toolchain": _ptx_toolchain,
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
    "missing-cuda-library": _missing_library,
    "triton-gpu-too-old": _triton_old,
}


def explain_matches(
    matches: Sequence[SignatureMatch], target: Target | None, db: CompatDB | None, lang: str = "en"
) -> list[Explanation]:
    """Cause and fixes for each match, in the same order; specific to ``target`` and ``db`` when given."""
    ctx = _Ctx(target=target, db=db, lang=lang)
    out = []
    for match in matches:
        cause, fixes = _EXPLAIN[match.code](ctx, match.fields)
        out.append(Explanation(code=match.code, cause=join_sentences(cause, lang), fixes=tuple(fixes)))
    return out


def explain_text(text: str, target: Target | None, db: CompatDB | None, lang: str = "en") -> list[Explanation]:
    """``explain_matches(match_errors(text), ...)``; ``NoKnownError`` when the text holds no known signature."""
    matches = match_errors(text)
    if not matches:
        raise NoKnownError(message("explain.no-known-error", lang), hint=message("explain.no-known-error.hint", lang))
    return explain_matches(matches, target, db, lang)
