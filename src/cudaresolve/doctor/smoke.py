"""``doctor --run``: one small real operation per installed GPU package on each GPU of this machine.
Does I/O: reads ``smoke.toml``, detects the GPUs, runs children (``child.run_child``).

The operations are data (``smoke.toml``). Each (package, GPU) runs in its own child of the
environment's interpreter, given that one GPU through ``CUDA_VISIBLE_DEVICES`` (its UUID where
detection read one, else its PCI-order index with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``), so a crash
or a hang costs that pair alone. Every failure's text goes through ``errorlog`` (the
``explain-error`` matcher) for cause and fixes. torch's run also reports
``torch.cuda.get_arch_list()``; an arch list without code for the GPU fails the run as torch's
own "not compatible with the current PyTorch installation" would (``torch-sm-unsupported``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.archs import Coverage, coverage, parse_arch_list, parse_cc
from cudaresolve.core.decode import loads_toml
from cudaresolve.doctor.child import ChildLimits, ChildOutcome, run_child
from cudaresolve.errorlog.explain import explain_matches
from cudaresolve.errorlog.signatures import SignatureMatch, match_errors
from cudaresolve.errors import InvalidArch
from cudaresolve.text.model import Text, literal, sentences

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.db.database import CompatDB
    from cudaresolve.errorlog.explain import Explanation
    from cudaresolve.target.model import Target
    from cudaresolve.target.readings import DetectedGpu, Host

__all__ = [
    "ERROR_CHARS",
    "GpuSlot",
    "RunReport",
    "SmokeRun",
    "Snippet",
    "gpu_slots",
    "load_pt2_snippet",
    "load_snippets",
    "run_smoke",
]

#: The most of a child's error text kept in a result (its end: the exception line is last).
ERROR_CHARS: Final = 2000


@dataclass(frozen=True, slots=True, kw_only=True)
class Snippet:
    names: tuple[str, ...]  # the distributions it tests
    code: str


def _table(text: str | None) -> dict[str, Any]:
    if text is None:
        text = resources.files("cudaresolve.doctor").joinpath("smoke.toml").read_text(encoding="utf-8")
    return loads_toml(text)


def load_snippets(text: str | None = None) -> tuple[Snippet, ...]:
    """The ``[[package]]`` rows of ``smoke.toml`` (or of ``text``)."""
    return tuple(Snippet(names=tuple(row["names"]), code=str(row["code"])) for row in _table(text)["package"])


def load_pt2_snippet(text: str | None = None) -> str:
    """The ``[pt2]`` code of ``smoke.toml``: load an AOTInductor package and run it once."""
    return str(_table(text)["pt2"]["code"])


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSlot:
    """One GPU of this machine as a child is given it."""

    index: int  # the detection's order
    name: str
    cc: str | None  # "9.0", when detection read it
    visible: str  # CUDA_VISIBLE_DEVICES for a child that sees this GPU alone

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "cc": self.cc}


def _visible(gpu: DetectedGpu) -> str:
    if gpu.mig_uuids:  # a MIG GPU runs CUDA only in its instances: the first one
        return gpu.mig_uuids[0]
    return gpu.uuid or str(gpu.index)


def gpu_slots(host: Host | None) -> tuple[GpuSlot, ...]:
    """The GPUs ``detect`` sees (``CUDA_VISIBLE_DEVICES`` applied), in its order."""
    if host is None:
        return ()
    return tuple(GpuSlot(index=i, name=g.name, cc=str(g.cc) if g.cc else None, visible=_visible(g))
                 for i, g in enumerate(host.gpus))


@dataclass(frozen=True, slots=True, kw_only=True)
class SmokeRun:
    """One package's operation on one GPU."""

    package: str
    gpu: GpuSlot
    ok: bool
    status: str  # ChildOutcome.status, or "arch-list" (torch's list lacks the GPU), "not-run" (run bound spent)
    error: Text | None = None  # the child's own error text (bounded), or what happened to it
    explanations: tuple[Explanation, ...] = ()
    seconds: float = 0.0
    note: Text | None = None  # a pass that says less than it seems (a .pt2 loaded but not run)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"package": self.package, "gpu": self.gpu.index, "gpu_name": self.gpu.name,
                                "ok": self.ok, "status": self.status, "seconds": round(self.seconds, 2)}
        if self.error is not None:
            data["error"] = self.error
        if self.note is not None:
            data["note"] = self.note
        if self.explanations:
            data["cause"] = sentences(*(e.cause for e in self.explanations))
            data["fixes"] = list(dict.fromkeys(f for e in self.explanations for f in e.fixes))
            data["matches"] = [e.code for e in self.explanations]
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport:
    """``doctor --run``'s part of the report: the GPUs found and one run per (package, GPU)."""

    python: str
    gpus: tuple[GpuSlot, ...] = ()
    runs: tuple[SmokeRun, ...] = ()
    untested: tuple[str, ...] = ()  # installed GPU packages without an operation in smoke.toml

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.runs)

    @property
    def failed(self) -> int:
        return sum(not r.ok for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        """The keys ``doctor --run`` adds to doctor's JSON object."""
        return {"gpu": bool(self.gpus), "run_python": self.python, "run_gpus": [g.to_dict() for g in self.gpus],
                "runs": [r.to_dict() for r in self.runs], "untested": list(self.untested)}


def _bounded(text: str) -> str:
    text = text.strip()
    return text if len(text) <= ERROR_CHARS else "…" + text[-ERROR_CHARS:]


def _arch_match(package: str, outcome: ChildOutcome, gpu: GpuSlot) -> SignatureMatch | None:
    """torch's arch list against the device's capability: a match when it has no code for it."""
    arch, cap = outcome.fields.get("arch_list"), outcome.fields.get("capability")
    if package != "torch" or not isinstance(arch, list) or not isinstance(cap, list) or len(cap) != 2:
        return None
    try:
        cc = parse_cc(f"{int(cap[0])}.{int(cap[1])}")
        archs = parse_arch_list(" ".join(str(a) for a in arch)) if arch else ()
    except (InvalidArch, ValueError, TypeError):
        return None
    if archs and coverage(archs, cc) is not Coverage.NONE:
        return None
    fields = {"sm": f"{cc.major}{cc.minor}", "supported": " ".join(str(a) for a in arch), "gpu": gpu.name}
    return SignatureMatch(code="torch-sm-unsupported", start=0, line="", fields=fields)


def _judge(package: str, gpu: GpuSlot, outcome: ChildOutcome, limits: ChildLimits,
           target: Target | None, db: CompatDB) -> SmokeRun:
    text = "\n".join((*outcome.warnings, outcome.error or "", outcome.output))
    matches = match_errors(text) if outcome.status != "ok" else []
    error: Text | None = None
    status = outcome.status
    if outcome.status == "error":
        error = literal(_bounded(outcome.error or ""))
    elif outcome.status == "timeout":
        # the child's own bound, or less where the whole run's bound stopped it first
        error = Text.of("doctor.run.timeout", seconds=f"{min(limits.timeout_s, outcome.seconds):.0f}")
    elif outcome.status == "memory":
        error = Text.of("doctor.run.memory", mib=limits.memory_mib)
    elif outcome.status == "crash":
        code = outcome.returncode
        last = outcome.output.strip().splitlines()[-1:] or [""]
        error = Text.of("doctor.run.crash", how=_signal_name(code) or f"exit {code}", output=_bounded(last[0]))
    elif outcome.status == "not-started":
        error = Text.of("doctor.run.not-started", error=outcome.error or "?")
    if (arch := _arch_match(package, outcome, gpu)) is not None:
        matches = [arch, *(m for m in matches if m.code != arch.code)]
        if outcome.status == "ok":
            status = "arch-list"
            error = Text.of("doctor.run.arch-list", archs=arch.fields["supported"] or "-", sm=arch.fields["sm"])
    explanations = tuple(explain_matches(matches, target, db)) if matches else ()
    note = Text("doctor.run.pt2-loaded-only") if status == "ok" and outcome.fields.get("ran") is False else None
    return SmokeRun(package=package, gpu=gpu, ok=status == "ok", status=status, error=error,
                    explanations=explanations, seconds=outcome.seconds, note=note)


def _signal_name(code: int | None) -> str | None:
    import signal

    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return None


def _child_env(environ: Mapping[str, str], gpu: GpuSlot) -> dict[str, str]:
    env = dict(environ)
    env["CUDA_VISIBLE_DEVICES"] = gpu.visible
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # an index is detection's (PCI bus) order
    return env


def run_smoke(
    python: str, installed: Sequence[str], *, detect: Callable[[], Host | None], db: CompatDB,
    target: Target | None = None, limits: ChildLimits | None = None, environ: Mapping[str, str] | None = None,
    snippets: Sequence[Snippet] | None = None, pt2: Sequence[tuple[str, str]] = (),
) -> RunReport:
    """Run each snippet of an ``installed`` package (canonical names) on each GPU ``detect`` finds.

    No GPU: a report with no GPUs and no runs. Once ``limits.total_s`` is spent, the runs left
    are reported ``not-run`` (and fail), never started. ``pt2`` holds (path, device type) of
    AOTInductor packages to load and run on each GPU too; their runs are named by path.
    """
    limits = limits or ChildLimits()
    table = load_snippets() if snippets is None else tuple(snippets)
    gpus = gpu_slots(detect())
    by_name = {n: s for s in table for n in s.names}
    chosen: list[tuple[str, str, dict[str, str]]] = [(n, by_name[n].code, {}) for n in installed if n in by_name]
    if pt2:
        code = load_pt2_snippet()
        chosen += [(path, code, {"path": os.path.abspath(path), "device_type": kind}) for path, kind in pt2]
    untested = tuple(n for n in installed if n not in by_name)
    env = os.environ if environ is None else environ
    deadline = time.monotonic() + limits.total_s
    runs = []
    for gpu in gpus:
        for name, code, names in chosen:
            if time.monotonic() >= deadline:
                runs.append(SmokeRun(package=name, gpu=gpu, ok=False, status="not-run",
                                     error=Text.of("doctor.run.not-run", seconds=f"{limits.total_s:g}")))
                continue
            outcome = run_child(python, name, code, env=_child_env(env, gpu), limits=limits, deadline=deadline,
                                names=names)
            runs.append(_judge(name, gpu, outcome, limits, target, db))
    return RunReport(python=python, gpus=gpus, runs=tuple(runs), untested=untested if gpus else ())
