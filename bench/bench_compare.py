"""cudaresolve, uv and pip side by side in one run, paired and repeated (issue 9): three cases, one table each.

    python bench/bench_compare.py                        # 3 rounds; case (b) once
    python bench/bench_compare.py --repeat 5 --write-results   # also rewrites bench/RESULTS.md
    python bench/bench_compare.py --cases a,c            # some cases only
    python tools/freeze_pypi.py ...                      # once, online: the frozen PyPI copy case (c) needs

Cases:

(a) ``cudaresolve lock`` of the seven GPU packages ``--offline`` for an H100 on driver 580.65.06,
    Python 3.11, linux_x86_64; uv (``uv pip compile --offline``) and pip (``pip install --dry-run
    --report``) resolve the same names against the tiny-wheel index that ``bench_lock.py`` builds
    from the database (every build of the newest releases, the database's pairings as
    ``Requires-Dist``). cudaresolve runs the command as given, on an empty cache (the embedded
    data only: a first run, which also builds and stores its database cache), and again as a
    user's second run (the same cache, one untimed run first: the database cache warm, still no
    index page, since an offline run fetches none); ``--warm-offline`` adds a row with a page cache
    warmed from that same index (the whole environment from index metadata, no HTTP). Every run
    solves: the answer-record replay is gone (issue 23), a repeat is a warm solve.
(b) the same plus ``torch>=2.12``: a conflict for the database (fbgemm-gpu/torchrec pin older
    torch); the exit status is part of the answer. Rounds default to 1 (``--repeat-conflict``).
(c) issue 23's three projects (``--projects pair,eight,llm``: ``torch numpy``; ``torch torchvision
    torchaudio transformers accelerate datasets numpy pandas``; the 189-package LLM project, the same as
    ``bench_realpypi.py``'s), on a frozen local copy of real PyPI pages (``tools/freeze_pypi.py``, served by
    ``pypi_frozen.py`` with PyPI's headers: pages ``max-age=600``, files immutable). Each tool cold
    (an empty cache before every run) and warm (the same cache, one untimed run first). cudaresolve
    reads PyPI through ``--index-mirror`` and the PyTorch index through the ``/whl/<variant>/``
    pages the server makes from PyPI's own torch files (see ``pypi_frozen.py``); the target is
    H100, driver 580.65.06. A warm cudaresolve run finds the lock its warm-up wrote at ``-o`` and keeps it
    without solving when it still answers the request (``lock.keep``, uv's rule for ``uv lock``); the
    "solving" row adds ``-U``, so every run solves again on the same warm cache, as ``uv pip compile``
    does. Freeze the union once: ``python tools/freeze_pypi.py -r FILE --also
    "torch==2.14.1 torchvision torchaudio" --also "torch==2.10.0 torchvision torchaudio"`` with the
    requirements of the three projects: uv's closure alone leaves out the CUDA libraries of the torch
    builds cudaresolve may pick (a page missing from the copy reads as a release that does not exist).

Every peer at its best: uv gets the real interpreter (``--python`` = the realpath of
``sys.executable``, never a shim) and ``--python-platform``; pip is a throwaway venv's, upgraded
from PyPI, with a cache made warm by an untimed run; nobody's user configuration is read
(``--no-config``, ``PIP_CONFIG_FILE=/dev/null``). Python tools get a bytecode cache
(``PYTHONPYCACHEPREFIX``), as installed packages have ``.pyc`` files. In each round every row runs
once, in an order rotated by one each round, so drift on this shared machine hits all tools.
cudaresolve runs from this checkout, copied as its wheel installs it (``bench_lock.installed_src``).

Output: per case, a table of median, min, max (wall ms of the whole process), the ratio of
medians to the matching uv row, exit status(es), HTTP requests per run, max RSS (GNU time) and what
was picked; ``--write-results`` writes the same as markdown to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
for _p in (ROOT / "bench", ROOT / "tools", ROOT / "src"):
    sys.path.insert(0, str(_p))

import bench_lock  # noqa: E402  (the tiny-wheel index, its server, the pip venv and clean env)
import bench_realpypi  # noqa: E402  (the three projects of issue 23, the same on real PyPI)
from pypi_frozen import FrozenPyPI  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

GPU: Final = ("torch", "torchvision", "torchaudio", "fbgemm-gpu", "torchrec", "xformers", "flashinfer-python")
CONFLICT: Final = (*GPU, "torch>=2.12")
PROJECTS: Final = {name: tuple(reqs) for name, reqs in bench_realpypi.CASES.items()}  # (c): pair, eight, llm
TARGET: Final = ("--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64")
UV_TARGET: Final = ("--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28")
TINY_PROJECTS: Final = (*bench_lock.PROJECTS, "torchvision", "torchaudio")
DEFAULT_FROZEN: Final = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cudaresolve-bench" / "pypi"
RESULTS: Final = ROOT / "bench" / "RESULTS.md"


@dataclass
class Row:
    """One command timed as a user waits for it; ``cold`` empties ``cache`` before every run."""

    case: str
    tool: str
    label: str
    argv: list[str]
    env: dict[str, str]
    picks: Callable[[], dict[str, str]]
    cache: Path | None = None
    cold: bool = False
    warm_argv: list[str] | None = None  # the untimed warm-up (default: argv); None with cold
    stdout_to: Path | None = None
    output: Path | None = None  # the lock a run writes: removed before each cold run, as a new project has none
    baseline: str | None = None  # label of the uv row its ratio is to
    times: list[float] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)  # HTTP requests the local index answered, per run
    rss: list[float] = field(default_factory=list)  # max RSS of the run in MiB (GNU time), when it could be had
    tail: str = ""

    def warm(self, cwd: Path, timeout: float) -> None:
        if not self.cold:
            self._run(self.warm_argv or self.argv, cwd, timeout)

    def run(self, cwd: Path, timeout: float, served: Callable[[], int]) -> None:
        if self.cold and self.cache is not None:
            shutil.rmtree(self.cache, ignore_errors=True)
        if self.cold and self.output is not None:  # else a later round would find the lock and keep it
            self.output.unlink(missing_ok=True)
        before = served()
        report = cwd / "time.txt"
        report.unlink(missing_ok=True)
        timed = ["/usr/bin/time", "-f", "%M", "-o", str(report)] if Path("/usr/bin/time").exists() else []
        elapsed, code = self._run([*timed, *self.argv], cwd, timeout)
        if report.exists() and report.read_text().split():
            self.rss.append(int(report.read_text().split()[-1]) / 1024)
        self.times.append(elapsed)
        self.codes.append(code)
        self.requests.append(served() - before)

    def _run(self, argv: list[str], cwd: Path, timeout: float) -> tuple[float, str]:
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return (time.perf_counter() - start) * 1000, "timeout"
        elapsed = (time.perf_counter() - start) * 1000
        if self.stdout_to is not None:
            self.stdout_to.write_bytes(done.stdout)
        if done.returncode != 0:
            self.tail = (done.stdout + done.stderr).decode(errors="replace")[-600:]
        return elapsed, str(done.returncode)


# ----------------------------------------------------------------------------- the tools


def real_python() -> str:
    """This interpreter's real path (a pyenv shim or venv link resolved), for uv's ``--python``."""
    out = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys._base_executable)"], capture_output=True, text=True, check=True
    )
    return os.path.realpath(out.stdout.strip())


def cudaresolve_env(cache: Path, **extra: str) -> dict[str, str]:
    return bench_lock.clean_env(CUDARESOLVE_CACHE_DIR=str(cache), PYTHONPATH=bench_lock.installed_src(), **extra)


def cr_picks(path: Path) -> Callable[[], dict[str, str]]:
    def read() -> dict[str, str]:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return {p["name"]: p["version"] for p in data.get("packages", [])}

    return read


def req_picks(path: Path) -> Callable[[], dict[str, str]]:
    return lambda: bench_lock.read_requirements(path) if path.exists() else {}


def pip_picks(path: Path) -> Callable[[], dict[str, str]]:
    return lambda: bench_lock.read_pip_report(path) if path.exists() else {}


@dataclass(frozen=True)
class Tools:
    python: str  # runs cudaresolve
    uv: str
    uv_python: str
    pip_python: str


def cr_row(case: str, label: str, work: Path, reqs: tuple[str, ...], extra: list[str], cache: Path, **kw: Any) -> Row:
    """A cudaresolve row: every run solves (there is no record of an answer to replay)."""
    tag = label.split()[0]
    out, lock = work / f"{case}-{tag}-cr.json", work / f"{case}-{tag}-cr.txt"
    argv = [sys.executable, "-m", "cudaresolve", "lock", *reqs, *TARGET, "--json", "--format", "requirements"]
    argv += ["-o", str(lock), *extra]
    return Row(
        case, "cudaresolve", label, argv, cudaresolve_env(cache), cr_picks(out), cache=cache, stdout_to=out,
        output=lock, **kw,
    )  # fmt: skip


def uv_row(case: str, label: str, tools: Tools, work: Path, req_in: Path, index: str, cache: Path, **kw: Any) -> Row:
    out = work / f"{case}-{label.split()[0]}-uv.txt"
    argv = [tools.uv, "pip", "compile", str(req_in), "--no-config", "--quiet", "--no-header", "--no-annotate"]
    argv += ["--index-url", index, "--python", tools.uv_python, *UV_TARGET, "-o", str(out)]
    env = bench_lock.clean_env(UV_CACHE_DIR=str(cache), UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    return Row(case, "uv", label, argv, env, req_picks(out), cache=cache, **kw)


def pip_row(case: str, label: str, tools: Tools, work: Path, req_in: Path, index: str, cache: Path, **kw: Any) -> Row:
    report = work / f"{case}-{label.split()[0]}-pip.json"
    argv = [tools.pip_python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q", "--report", str(report)]
    # --trusted-host: pip caches responses only from https or trusted hosts; without it a "warm" pip
    # fetches every page and metadata file again from the plain-http local index
    argv += ["--index-url", index, "--trusted-host", "127.0.0.1", "-r", str(req_in)]
    env = bench_lock.clean_env(PIP_CACHE_DIR=str(cache))
    return Row(case, "pip", label, argv, env, pip_picks(report), cache=cache, **kw)


# ----------------------------------------------------------------------------- the cases


def gpu_rows(case: str, reqs: tuple[str, ...], tools: Tools, work: Path, base: str, warm_offline: bool) -> list[Row]:
    """(a) and (b): cudaresolve offline, uv and pip against the tiny-wheel index."""
    req_in = work / f"{case}.in"
    req_in.write_text("".join(f"{r}\n" for r in reqs))
    mirrors = bench_lock.mirror_flags(base)
    uv_label = "offline uv pip compile --offline (warm cache)"
    warm_cache = work / f"{case}-cr-warm"
    rows = [
        cr_row(
            case,
            "embedded cudaresolve lock --offline (embedded data, empty cache)",
            work,
            reqs,
            ["--offline"],
            work / f"{case}-cr-empty",
            cold=True,
            baseline=uv_label,
        ),
        cr_row(  # what a user's second offline run pays: its own database cache warm, still no index page
            case,
            "second cudaresolve lock --offline (embedded data; database cache warm, no pages)",
            work,
            reqs,
            ["--offline"],
            work / f"{case}-cr-second",
            baseline=uv_label,
        ),
    ]
    if case == "a" and warm_offline:  # a minute or more per run today; (b): only the command the issue names
        online = [sys.executable, "-m", "cudaresolve", "lock", *reqs, *TARGET, "--json", "--format", "requirements"]
        online += ["-o", str(work / "a-warmup.txt"), *mirrors]
        rows.append(
            cr_row(
                case,
                "warm cudaresolve lock --offline (page cache warm from the tiny index)",
                work,
                reqs,
                ["--offline", *mirrors],
                warm_cache,
                warm_argv=online,
                baseline=uv_label,
            )
        )
    uv_cache = work / f"{case}-uv-cache"
    online_uv = uv_row(case, "online", tools, work, req_in, f"{base}/simple", uv_cache)
    offline_uv = uv_row(case, uv_label, tools, work, req_in, f"{base}/simple", uv_cache, warm_argv=online_uv.argv)
    offline_uv.argv.append("--offline")
    pip = pip_row(
        case,
        "warm pip install --dry-run --report (warm cache)",
        tools,
        work,
        req_in,
        f"{base}/simple",
        work / f"{case}-pip-cache",
        baseline=uv_label,
    )
    return [*rows, offline_uv, pip]


def project_rows(tools: Tools, work: Path, base: str, name: str) -> list[Row]:
    """(c): cold and warm, each tool, against the frozen PyPI copy, for the project ``name`` of ``PROJECTS``."""
    project, case = PROJECTS[name], f"c-{name}"
    req_in = work / f"{case}.in"
    req_in.write_text("".join(f"{r}\n" for r in project))
    simple = f"{base}/simple"
    mirrors = [
        f"--index-mirror=https://pypi.org/simple={simple}",
        f"--index-mirror=https://download.pytorch.org/whl={base}/whl",
    ]
    uv_cold, uv_warm = "cold uv pip compile (empty cache)", "warm uv pip compile (warm cache)"
    rows = []
    for state, uv_label in (("cold", uv_cold), ("warm", uv_warm)):
        cold = state == "cold"
        note = "empty cache" if cold else "warm cache"
        rows += [
            cr_row(
                case,
                f"{state} cudaresolve lock ({note})",
                work,
                project,
                mirrors,
                work / f"{case}-cr-{state}",
                cold=cold,
                baseline=uv_label,
            ),
            *(
                []
                if cold
                else [
                    cr_row(  # the lock at -o is kept without solving above (``lock.keep``); -U always solves
                        case,
                        "solving cudaresolve lock -U (warm cache, solves again)",
                        work,
                        project,
                        [*mirrors, "-U"],
                        work / f"{case}-cr-{state}",
                        cold=False,
                        baseline=uv_label,
                    )
                ]
            ),
            uv_row(case, uv_label, tools, work, req_in, simple, work / f"{case}-uv-{state}", cold=cold),
            pip_row(
                case,
                f"{state} pip install --dry-run --report ({note})",
                tools,
                work,
                req_in,
                simple,
                work / f"{case}-pip-{state}",
                cold=cold,
                baseline=uv_label,
            ),
        ]
    return rows


def run_rounds(rows: list[Row], work: Path, repeat: int, timeout: float, served: Callable[[], int]) -> None:
    for row in rows:
        row.warm(work, timeout)
    for round_ in range(repeat):
        shift = round_ % len(rows)
        for row in rows[shift:] + rows[:shift]:
            row.run(work, timeout, served)
            print(f"  round {round_ + 1}: {row.tool:11} {row.times[-1]:9.0f} ms  exit {row.codes[-1]}", flush=True)


# ----------------------------------------------------------------------------- the report


def status(row: Row) -> str:
    codes = sorted(set(row.codes))
    return "/".join(codes) if codes else "-"


def picked(row: Row) -> str:
    picks = row.picks()
    if not picks:
        return "nothing"
    torch = picks.get("torch")
    return f"{len(picks)} packages" + (f", torch {torch}" if torch else "")


def table(rows: list[Row]) -> list[str]:
    """A markdown table: wall ms of the whole process, ratio of medians to the matching uv row."""
    medians = {r.label: statistics.median(r.times) for r in rows if r.times}
    out = [
        "| tool | command | median ms | min ms | max ms | runs | ratio to uv | exit | HTTP/run | max RSS MiB "
        "| picked |",
        "|---|---|--:|--:|--:|--:|--:|---|--:|--:|---|",
    ]
    for row in rows:
        if not row.times:
            continue
        median = medians[row.label]
        base = row.baseline if row.baseline in medians else (row.label if row.tool == "uv" else None)
        ratio = f"{median / medians[base]:.2f}" if base else "-"
        command = row.label.split(" ", 1)[1]
        rss = f"{max(row.rss):.0f}" if row.rss else "-"
        out.append(
            f"| {row.tool} | {command} | {median:.0f} | {min(row.times):.0f} | {max(row.times):.0f} "
            f"| {len(row.times)} | {ratio} | {status(row)} | {statistics.median(row.requests):.0f} | {rss} "
            f"| {picked(row)} |"
        )
    return out


def versions(tools: Tools) -> str:
    def first_line(argv: list[str]) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, env=bench_lock.clean_env(), check=False)
        return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr) else "?"

    uv = first_line([tools.uv, "--version"])
    pip = first_line([tools.pip_python, "-m", "pip", "--version"]).split(" from ")[0]
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return f"Python {platform.python_version()}, {uv}, {pip}, cudaresolve at {git.stdout.strip() or '?'}"


TITLES: Final = {
    "a": "(a) seven GPU packages, `--offline` (tiny-wheel index for uv and pip)",
    "b": "(b) the same plus `torch>=2.12` (a conflict)",
    **{f"c-{name}": f"(c) `{' '.join(reqs)}` on a frozen copy of real PyPI, cold and warm"
       for name, reqs in PROJECTS.items()},
}


def report(by_case: dict[str, list[Row]], header: list[str]) -> str:
    lines = [*header, ""]
    for case, rows in by_case.items():
        lines += [f"### {TITLES[case]}", "", *table(rows), ""]
        failed = [r for r in rows if r.tail]
        for row in failed:
            lines.append(
                f"- {row.tool} `{row.label.split(' ', 1)[1]}`, last failure: `{' '.join(row.tail.split())[-300:]}`"
            )
        if failed:
            lines.append("")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeat", type=int, default=3, help="rounds for (a) and (c) (default 3)")
    parser.add_argument("--repeat-conflict", type=int, default=1, help="rounds for (b) (default 1: minutes a run)")
    parser.add_argument("--cases", default="a,b,c", help="which cases, comma-separated (default a,b,c)")
    parser.add_argument("--frozen", type=Path, default=DEFAULT_FROZEN, help="tools/freeze_pypi.py's output")
    parser.add_argument("--projects", default="pair,eight,llm", help="(c): which projects (default pair,eight,llm)")
    parser.add_argument(
        "--per-project", type=int, default=400, help="tiny-index wheel files per project, about (400: torch 2.11 in)"
    )
    parser.add_argument("--timeout", type=float, default=400.0, help="seconds before a run counts as 'timeout'")
    parser.add_argument("--uv", default=shutil.which("uv") or str(Path(sys.executable).with_name("uv")))
    parser.add_argument("--pip-python", help="interpreter whose pip to time (default: a throwaway venv's, upgraded)")
    parser.add_argument(
        "--warm-offline", action="store_true", help="(a): also cudaresolve --offline on a warm page cache (slow today)"
    )
    parser.add_argument(
        "--nodelay", action="store_true",
        help="(c): the frozen PyPI answers with TCP_NODELAY (no ~40 ms delayed-ACK wait per reply: a loopback index "
        "with no latency at all); default: plain http.server, whose every kept-alive reply waits about 40 ms, "
        "like a network round trip",
    )
    parser.add_argument("--write-results", action="store_true", help=f"write the report to {RESULTS}")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    if "c" in cases and not (args.frozen / "manifest.json").exists():
        raise SystemExit(f"no frozen PyPI copy at {args.frozen}: run tools/freeze_pypi.py first (see bench/README.md)")

    work = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    bench_lock.BYTECODE["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    try:
        tools = Tools(
            python=sys.executable,
            uv=args.uv,
            uv_python=real_python(),
            pip_python=bench_lock.pip_python(args.pip_python, work, upgrade=True),
        )
        started = datetime.now(UTC)
        by_case: dict[str, list[Row]] = {}
        load = os.getloadavg()[0]
        with bench_lock.Server(work / "tiny") as tiny:
            if {"a", "b"} & set(cases):
                from cudaresolve.db.database import load_compat

                db = load_compat()
                counts = bench_lock.build_index(work / "tiny", db, args.per_project, TINY_PROJECTS)
                print(f"tiny index: {sum(counts.values())} wheels ({counts})", flush=True)
            for case in ("a", "b"):
                if case in cases:
                    print(f"case ({case})", flush=True)
                    reqs = GPU if case == "a" else CONFLICT
                    rows = gpu_rows(case, reqs, tools, work, tiny.base, args.warm_offline)
                    rounds = args.repeat if case == "a" else args.repeat_conflict
                    run_rounds(rows, work, rounds, args.timeout, lambda: bench_lock._Handler.requests_seen)
                    by_case[case] = rows
        if "c" in cases:
            with FrozenPyPI(args.frozen, nodelay=args.nodelay) as frozen:
                for name in args.projects.split(","):
                    print(f"case (c), {name}", flush=True)
                    rows = project_rows(tools, work, frozen.base, name)
                    run_rounds(rows, work, args.repeat, args.timeout, lambda: sum(frozen.requests.values()))
                    by_case[f"c-{name}"] = rows
                print(f"frozen index answered: {dict(frozen.requests)}", flush=True)
        manifest = json.loads((args.frozen / "manifest.json").read_text()) if "c" in cases else {}
        header = [
            "## Measured",
            "",
            f"{started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores (a VM shared with other engineers; load "
            f"{load:.2f} at the start), {platform.system()} {platform.machine()}; {versions(tools)}.",
            f"Rounds: {args.repeat} for (a) and (c), {args.repeat_conflict} for (b), tools interleaved.",
        ]
        if manifest:
            header.append(
                f"Frozen PyPI: {len(manifest['projects'])} projects, {manifest['releases']} newest releases each, "
                f"frozen {manifest['frozen-at']}; served "
                + ("with TCP_NODELAY (no wait per reply)." if args.nodelay else
                   "by plain http.server (each kept-alive reply waits ~40 ms for the client's delayed ACK).")
            )
        text = report(by_case, header)
        print("\n" + text)
        if args.write_results:
            write_results(text)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def write_results(measured: str) -> None:
    """Replace the ``## Measured`` part of RESULTS.md, keeping the hand-written text before it."""
    before = RESULTS.read_text().split("## Measured", 1)[0] if RESULTS.exists() else "# Benchmark results\n\n"
    RESULTS.write_text(before.rstrip() + "\n\n" + measured.rstrip() + "\n")


if __name__ == "__main__":
    sys.exit(main())
