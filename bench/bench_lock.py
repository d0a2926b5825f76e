"""Lock speed: ``cudaresolve lock`` against ``uv pip compile`` and ``pip install --dry-run`` on one local index.

    python bench/bench_lock.py                  # 15 rounds, ~120 wheels per project
    python bench/bench_lock.py --quick          # 3 rounds, smaller pages, no import/profile report
    python bench/bench_lock.py --repeat 30 --profile
    python bench/bench_lock.py --uv /path/to/uv --pip-python /path/to/venv/bin/python
    python bench/bench_lock.py --per-project 600  # PyPI-sized pages: how page parsing scales
    python bench/bench_lock.py --page-max-age 600  # pages fresh for 10 minutes, as PyPI sends them

uv comes from PATH, else from PyPI into a throwaway venv; pip is a throwaway venv's, upgraded
from PyPI (``--bundled-pip`` keeps ensurepip's). Both ignore this machine's pip/uv settings.

One PEP 503 tree is written to a temporary directory and served on 127.0.0.1 (a thread, port
0): ``/simple/<project>/`` pages with ``#sha256=`` fragments, ``data-requires-python`` and PEP
658 ``.metadata`` files, linking tiny real wheels (a few hundred bytes each). The wheels copy the
shipped compat database: for the newest releases of torch, torchrec, fbgemm-gpu, xformers and
flashinfer-python, every build (``2.14.1+cu130``, ``2.14.1+cu126``, ``2.14.1+cpu``, the plain
PyPI one ...) for CPython 3.10-3.13 on manylinux x86_64/aarch64 and Windows, with the database's
pairings as ``Requires-Dist`` (torchrec needs ``fbgemm-gpu==1.9.*`` and ``torch==2.14.*`` ...),
so uv and pip have to resolve. The real wheels' other dependencies (triton, nvidia-*, numpy) are
left out: that makes uv's and pip's job smaller, not larger.

The same request (``torch torchrec xformers flashinfer-python``) goes to every tool, each
pointed at that one index: uv and pip by ``--index-url .../simple``, cudaresolve by three
``--index-mirror`` flags, as a user behind a mirror writes them (PyPI to ``/simple``,
download.pytorch.org/whl to ``/whl``, flashinfer.ai/whl to ``/flashinfer``); the server answers
``/whl/cu130/torch/`` with ``/simple/torch/``, so every tool reads the same pages. Pages are
sent with ``Cache-Control: max-age=0`` and ``Last-Modified``, so with a warm cache every tool
revalidates each page it needs with a conditional GET (304); ``--page-max-age 600`` sends PyPI's
``max-age=600`` instead, and a warm tool then asks for nothing. Wheels and ``.metadata`` files are
immutable, as on PyPI. The ``--offline`` rows read their caches without asking. Each tool has
its own fresh cache directory, warmed by one untimed run; rounds interleave the tools so drift
hits all of them. The Python tools run with a bytecode cache in the temporary directory
(``PYTHONPYCACHEPREFIX``), as an installed package has ``.pyc`` files, even when the shell sets
``PYTHONDONTWRITEBYTECODE`` (``--no-bytecode`` keeps the shell's setting).

Times are wall clock of a whole process, as a user waits for it. A second section runs
cudaresolve's steps inside one interpreter (imports, database load, solve, fetch + hashes, the
whole CLI) to separate start-up from resolution. Budget (solver issue): an offline lock under
300 ms, and no slower than uv with a warm cache. Exits 1 when either is missed.
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from local_index import serving  # noqa: E402  (tools/: the server the tests use too)
from tiny_wheels import build_wheel  # noqa: E402  (tools/: the builder the tests use too)

from cudaresolve.db.database import CompatDB, PackageRelease, load_compat  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

REQUEST: Final = ("torch", "torchrec", "xformers", "flashinfer-python")
PROJECTS: Final = ("torch", "torchrec", "fbgemm-gpu", "xformers", "flashinfer-python")
TARGET: Final = ("--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64")
PYTHONS: Final = ("3.10", "3.11", "3.12", "3.13")
PLATFORM_TAGS: Final = {
    "linux_x86_64": "manylinux_2_28_x86_64",
    "linux_aarch64": "manylinux_2_28_aarch64",
    "win_amd64": "win_amd64",
}
PYPI_SIMPLE: Final = "https://pypi.org/simple"
MIRRORED_PREFIXES: Final = ("/whl/", "/flashinfer/")
BUDGET_MS: Final = 300.0
OFFLINE: Final = "cudaresolve lock --offline (embedded data, no page cache)"
OFFLINE_WARM: Final = "cudaresolve lock --offline (warm cache: hashes, no HTTP)"
ONLINE: Final = "cudaresolve lock (local index, warm cache)"
UV: Final = "uv pip compile (warm cache)"
UV_OFFLINE: Final = "uv pip compile --offline (warm cache)"
PIP: Final = "pip install --dry-run --report (warm cache)"


# ---------------------------------------------------------------------------------- the index


@dataclass(frozen=True)
class Wheel:
    project: str
    filename: str
    sha256: str
    metadata_sha256: str
    requires_python: str | None


def _release_files(release: PackageRelease) -> list[tuple[str, str, list[str]]]:
    """(version with local tag, wheel tag, Requires-Dist) for every wheel of one release."""
    pythons = [p for p in PYTHONS if p in release.python]
    requires = [str(r) for r in release.requires]
    if release.pure:
        return [(str(release.version), "py3-none-any", requires)]
    out = []
    for build in release.builds:
        version = f"{release.version}{build.local}"
        for platform in build.platforms:
            if platform not in PLATFORM_TAGS:
                continue
            for python in pythons:
                cp = "cp" + python.replace(".", "")
                out.append(
                    (version, f"{cp}-{cp}-{PLATFORM_TAGS[platform]}", requires + [str(r) for r in build.requires])
                )
    return out


def build_index(root: Path, db: CompatDB, per_project: int, projects: tuple[str, ...] = PROJECTS) -> dict[str, int]:
    """Wheels of the newest releases (whole releases, until ``per_project`` files) and their pages."""
    files_dir = root / "files"
    files_dir.mkdir(parents=True)
    counts = {}
    for project in projects:
        wheels: dict[str, Wheel] = {}
        for release in db.packages(project):
            if len(wheels) >= per_project:
                break
            low = min(release.python, key=lambda p: tuple(int(x) for x in p.split(".")), default=None)
            for version, tag, requires in _release_files(release):
                built = build_wheel(files_dir, project, version, tag, requires=requires, metadata_file=True)
                wheels[built.filename] = Wheel(
                    project, built.filename, built.sha256, built.metadata_sha256, f">={low}" if low else None
                )
        counts[project] = len(wheels)
        write_page(root / "simple" / project, list(wheels.values()))
    (root / "simple" / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n" + "".join(f'<a href="{p}/">{p}</a>\n' for p in projects) + "</body></html>\n"
    )
    return counts


def write_page(directory: Path, wheels: list[Wheel]) -> None:
    """A PEP 503 project page (API 1.1 meta, PEP 658/714 metadata attributes)."""
    lines = []
    for w in wheels:
        href = "/files/" + w.filename.replace("+", "%2B")  # absolute path, as download.pytorch.org writes them
        attrs = f' data-dist-info-metadata="sha256={w.metadata_sha256}" data-core-metadata="sha256={w.metadata_sha256}"'
        if w.requires_python:
            attrs += f' data-requires-python="{html.escape(w.requires_python)}"'
        lines.append(f'<a href="{href}#sha256={w.sha256}"{attrs}>{w.filename}</a><br/>\n')
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "index.html").write_text(
        '<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.1"></head><body>\n'
        + "".join(lines)
        + "</body></html>\n"
    )


class _Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real indexes do
    requests_seen = 0
    page_max_age = 0  # --page-max-age: PyPI sends max-age=600 on its pages

    def end_headers(self) -> None:
        # As PyPI does: wheels and .metadata never change; project pages are revalidated once stale.
        immutable = self.path.startswith("/files/")
        pages = f"max-age={self.page_max_age}"
        self.send_header("Cache-Control", "max-age=31536000, immutable" if immutable else pages)
        super().end_headers()

    def translate_path(self, path: str) -> str:
        """``/whl/<variant>/<project>/`` and ``/flashinfer/.../<project>/`` serve ``/simple/<project>/``."""
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if clean.startswith(MIRRORED_PREFIXES):
            parts = [p for p in clean.split("/") if p]
            path = f"/simple/{parts[-1]}/" if len(parts) > 1 else "/simple/"
        return super().translate_path(path)

    def log_message(self, format: str, *args: object) -> None:
        type(self).requests_seen += 1


@dataclass
class Server:
    root: Path
    base: str = ""
    _stack: ExitStack = field(default_factory=ExitStack, repr=False)

    def __enter__(self) -> Server:
        self.base = self._stack.enter_context(serving(partial(_Handler, directory=str(self.root))))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def mirror_flags(base: str) -> list[str]:
    """``--index-mirror`` for the three hosts, as a user behind a mirror writes them.

    The server answers every mirrored path from the one ``/simple`` tree, so cudaresolve reads
    the same pages uv and pip read (``/whl/cu130/torch/`` is ``/simple/torch/``).
    """
    return [
        f"--index-mirror={PYPI_SIMPLE}={base}/simple",
        f"--index-mirror=https://download.pytorch.org/whl={base}/whl",
        f"--index-mirror=https://flashinfer.ai/whl={base}/flashinfer",
    ]


# ---------------------------------------------------------------------------------- the tools


#: Where the Python tools keep bytecode: a user's install has .pyc files, so the runs under test
#: do too (PYTHONPYCACHEPREFIX, set by ``run``), also when this shell sets PYTHONDONTWRITEBYTECODE.
#: ``--no-bytecode`` keeps the shell's setting instead.
BYTECODE: dict[str, str] = {}


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without pip/uv/cudaresolve settings, proxies or Python path."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CUDARESOLVE_GPUS", "CUDARESOLVE_DRIVER"}
    if BYTECODE:
        drop |= {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_")) and k not in drop and "proxy" not in k.lower()
    }
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.update(BYTECODE)
    env.update(extra)
    return env


def find_uv(explicit: str | None, work: Path) -> str | None:
    """``--uv``, else ``uv`` on PATH, else uv installed from PyPI into a throwaway venv."""
    if explicit:
        return explicit
    if shutil.which("uv"):
        return shutil.which("uv")
    venv = work / "uv-venv"
    print("uv not on PATH: installing it from PyPI into a throwaway venv ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env())
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "uv", "--index-url", PYPI_SIMPLE],
        env=clean_env(),
        check=False,
    )
    return str(venv / "bin" / "uv") if done.returncode == 0 else None


def pip_python(explicit: str | None, work: Path, upgrade: bool) -> str:
    """``--pip-python``, else a throwaway venv's pip (ensurepip's, upgraded from PyPI if ``upgrade`` and reachable)."""
    if explicit:
        return explicit
    venv = work / "pip-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env())
    python = str(venv / "bin" / "python")
    if upgrade:
        subprocess.run(
            [python, "-m", "pip", "install", "-q", "--upgrade", "pip", "--index-url", PYPI_SIMPLE, "--timeout", "20"],
            env=clean_env(),
            check=False,
        )
    return python


def cudaresolve_argv() -> list[str]:
    """This checkout's cudaresolve (a copy of ``src`` as its wheel installs it on PYTHONPATH, see
    ``cudaresolve_env``), not an installed one."""
    return [sys.executable, "-m", "cudaresolve"]


def cudaresolve_env(**extra: str) -> dict[str, str]:
    return clean_env(PYTHONPATH=installed_src(), **extra)


_BUILT: Final = """
import shutil, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import hatch_build
for made, to in hatch_build.make(Path(tempfile.mkdtemp())).items():
    Path(sys.argv[2], to).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made, Path(sys.argv[2], to))
"""


@functools.cache
def installed_src() -> str:
    """A folder for PYTHONPATH holding this checkout's package as its wheel installs it: with what ``hatch_build.py``
    puts in the wheel (the database built, the compiled code of this Python; a checkout has neither, and without
    them every run with an empty cache makes them). Made once per bench run, removed at its end."""
    import atexit

    root = Path(tempfile.mkdtemp(prefix="bench-installed-"))
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(ROOT / "src" / "cudaresolve", root / "cudaresolve", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-c", _BUILT, str(ROOT), str(root)], env=clean_env(PYTHONPATH=str(root)),
                   check=True)  # fmt: skip
    return str(root)


@dataclass
class Case:
    label: str
    argv: list[str]
    env: dict[str, str]
    picks: Callable[[], dict[str, str]]  # name -> version this tool chose, read from its output
    stdout_to: Path | None = None  # keep stdout (cudaresolve --json) here
    cli_args: list[str] | None = None  # cudaresolve's arguments, for the import and profile reports
    times: list[float] = field(default_factory=list)
    requests: int = 0  # HTTP requests the server saw during this case's timed runs

    def run(self, cwd: Path) -> float:
        start = time.perf_counter()
        done = subprocess.run(self.argv, cwd=cwd, env=self.env, capture_output=True, check=False)
        elapsed = (time.perf_counter() - start) * 1000
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")[-3000:]
            raise SystemExit(f"{self.label} failed ({done.returncode}): {' '.join(self.argv)}\n{output}")
        if self.stdout_to is not None:
            self.stdout_to.write_bytes(done.stdout)
        return elapsed


def read_cudaresolve(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text())
    return {p["name"]: p["version"] + ("" if p.get("sha256") else " (no hash)") for p in data["packages"]}


def read_requirements(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and not line.startswith("#"):
            out[name.strip()] = version.split()[0]
    return out


def read_pip_report(path: Path) -> dict[str, str]:
    return {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(path.read_text())["install"]}


def make_cases(work: Path, server: Server, uv: str | None, pip_py: str | None) -> list[Case]:
    simple = f"{server.base}/simple"
    req_in = work / "req.in"
    req_in.write_text("".join(f"{r}\n" for r in REQUEST))
    warm, empty = work / "cr-cache", work / "cr-empty"
    base_args = ["lock", *REQUEST, *TARGET, "--json", *mirror_flags(server.base)]

    def lock(label: str, extra: list[str], cache: Path, out: str) -> Case:
        cli_args = [*base_args, *extra]
        return Case(
            label,
            [*cudaresolve_argv(), *cli_args],
            cudaresolve_env(CUDARESOLVE_CACHE_DIR=str(cache)),
            lambda: read_cudaresolve(work / out),
            stdout_to=work / out,
            cli_args=cli_args,
        )

    cases = [
        lock(OFFLINE, ["--offline", "--format", "requirements", "-o", str(work / "off.txt")], empty, "cr-off.json"),
        lock(OFFLINE_WARM, ["--offline", "-o", str(work / "pylock.offline.toml")], warm, "cr-off-warm.json"),
        lock(ONLINE, ["-o", str(work / "pylock.toml")], warm, "cr-online.json"),
    ]
    if uv:
        uv_env = clean_env(UV_CACHE_DIR=str(work / "uv-cache"), UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
        compile_ = [uv, "pip", "compile", str(req_in), "--no-config", "--quiet", "--no-header", "--no-annotate"]
        compile_ += ["--index-url", simple, "--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]
        cases += [
            Case(
                UV,
                [*compile_, "-o", str(work / "uv.txt")],
                uv_env,
                lambda: read_requirements(work / "uv.txt"),
            ),
            Case(
                UV_OFFLINE,
                [*compile_, "--offline", "-o", str(work / "uv-off.txt")],
                uv_env,
                lambda: read_requirements(work / "uv-off.txt"),
            ),
        ]
    if pip_py:
        report = work / "pip-report.json"
        pip_index = ["--index-url", simple, "-r", str(req_in)]
        dry_run = [pip_py, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q", "--report", str(report)]
        pip_env = clean_env(PIP_CACHE_DIR=str(work / "pip-cache"))
        cases.append(Case(PIP, [*dry_run, *pip_index], pip_env, lambda: read_pip_report(report)))
    return cases


# ----------------------------------------------------------------------- in-process breakdown

_INPROC: Final = r"""
import contextlib, io, json, sys, time
argv, mirrors, repeat = json.loads(sys.argv[1])
out = {}
def timed(label, fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter(); value = fn(); times.append((time.perf_counter() - t) * 1000)
    out[label] = times
    return value
def imports():
    import cudaresolve.cli, cudaresolve.cli.lock, cudaresolve.lock.flow
    import cudaresolve.resolve.solve, cudaresolve.target.build
    import cudaresolve.db.database, cudaresolve.lock.lockfile, cudaresolve.render
timed("import cudaresolve (cli, locking, solve, target, lockfile)", imports, 1)
timed("import httpx", lambda: __import__("httpx"), 1)
timed("import resolvelib", lambda: __import__("resolvelib"), 1)
from cudaresolve.cli import main
from cudaresolve.db.database import load_compat
from cudaresolve.lock.flow import LockInputs, resolve_inputs
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
db = timed("load_compat()", load_compat, repeat)
opts = TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11", platform="linux_x86_64")
target = timed("build_target()", lambda: build_target(opts, db), repeat)
reqs = ("torch", "torchrec", "xformers", "flashinfer-python")
timed("solve() (first: reads the package rows)", lambda: solve(reqs, db, target), repeat)
off = LockInputs(requirements=reqs, target=target, db=db, offline=True, mirrors=mirrors)
timed("resolve_inputs() --offline, warm cache (solve + parse 5 pages)", lambda: resolve_inputs(off), repeat)
req = LockInputs(requirements=reqs, target=target, db=db, offline=False, mirrors=mirrors)
timed("resolve_inputs() online (solve + 5 pages: 304s, or none when fresh)", lambda: resolve_inputs(req), repeat)
def cli():
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
timed("cli main(['lock', ...]) online, the whole command", cli, repeat)
print(json.dumps(out))
"""


def in_process(work: Path, server: Server, repeat: int) -> dict[str, list[float]]:
    """cudaresolve's steps in one fresh interpreter, in order: the first call pays for lazy work."""
    from cudaresolve.index.client import parse_mirrors

    mirrors = parse_mirrors([f.split("=", 1)[1] for f in mirror_flags(server.base)])
    argv = ["lock", *REQUEST, *TARGET, "--json", "-o", str(work / "pylock.inproc.toml"), *mirror_flags(server.base)]
    done = subprocess.run(
        [sys.executable, "-c", _INPROC, json.dumps([argv, mirrors, repeat])],
        cwd=work,
        env=cudaresolve_env(CUDARESOLVE_CACHE_DIR=str(work / "cr-cache")),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"in-process run failed:\n{done.stderr[-3000:]}")
    result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------------- diagnostics


def import_report(case: Case, work: Path, top: int) -> None:
    """``python -X importtime -m cudaresolve ...``: the imports that cost most."""
    assert case.cli_args is not None
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cudaresolve", *case.cli_args],
        cwd=work,
        env=case.env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_text, cumulative_text, name = line[len("import time:") :].split("|")
            rows.append((int(self_text), int(cumulative_text), name.rstrip()))
    total = sum(r[0] for r in rows) / 1000
    print(f"\n-X importtime, {case.label}: {len(rows)} modules, {total:.0f} ms of import time in all")
    print("  top by cumulative (indent = nesting):")
    for _, cumulative, name in sorted(rows, key=lambda r: -r[1])[:top]:
        print(f"    {cumulative / 1000:7.1f} ms  {name}")
    print("  top by self time:")
    for self_us, _, name in sorted(rows, key=lambda r: -r[0])[:top]:
        print(f"    {self_us / 1000:7.1f} ms  {name.strip()}")


def profile_report(case: Case, work: Path, top: int) -> None:
    """``python -m cProfile -m cudaresolve ...``: where one fresh run spends its time, by file:line."""
    assert case.cli_args is not None
    stats_file = work / "lock.prof"
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(stats_file), "-m", "cudaresolve", *case.cli_args],
        cwd=work,
        env=case.env,
        capture_output=True,
        check=True,
    )
    stats: Any = pstats.Stats(str(stats_file))
    total = max(v[3] for v in stats.stats.values()) * 1000
    print(f"\ncProfile, {case.label}: {total:.0f} ms under the profiler (imports included; profiling inflates)")
    for index, title in ((3, "cumulative"), (2, "own time")):
        print(f"  top {top} by {title} (ms cumulative, ms own, calls, where):")
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][index])
        shown = 0
        for (path, line, func), (_prim, calls, own, cumulative, _callers) in rows:
            if index == 3 and (path.startswith("<") or "runpy" in path or "cProfile" in path or func == "<module>"):
                continue
            where = path.replace(str(ROOT) + "/", "").replace(sys.prefix + "/", "")
            print(f"    {cumulative * 1000:7.1f} {own * 1000:7.1f} {calls:7d}  {where}:{line}({func})")
            shown += 1
            if shown >= top:
                break


# ------------------------------------------------------------------------------------- main


def fmt(times: list[float]) -> str:
    return f"{statistics.median(times):8.1f} {min(times):8.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeat", type=int, help="timed rounds per command (default 15; 3 with --quick)")
    parser.add_argument("--quick", action="store_true", help="3 rounds, ~40 wheels per project, no reports")
    parser.add_argument("--per-project", type=int, help="wheel files per project page, about (default 120; 40 quick)")
    parser.add_argument("--uv", help="uv executable (default: uv on PATH, else installed from PyPI into a temp venv)")
    parser.add_argument("--no-uv", action="store_true", help="skip uv")
    parser.add_argument("--pip-python", help="interpreter whose pip to time (default: a throwaway venv's)")
    parser.add_argument("--no-pip", action="store_true", help="skip pip")
    parser.add_argument(
        "--bundled-pip", action="store_true", help="time ensurepip's pip as it is (default: upgrade it from PyPI)"
    )
    parser.add_argument("--profile", action="store_true", help="print the import and cProfile reports even in budget")
    parser.add_argument("--top", type=int, default=15, help="rows in the import/profile reports (default 15)")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE from the shell (no .pyc cache)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    parser.add_argument(
        "--page-max-age", type=int, default=0, help="Cache-Control max-age of project pages (default 0; PyPI: 600)"
    )
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 15)
    _Handler.page_max_age = args.page_max_age
    per_project = args.per_project or (40 if args.quick else 120)

    work = Path(tempfile.mkdtemp(prefix="bench-lock-"))
    try:
        return run(args, work, repeat, per_project)
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def tool_versions(uv: str | None, pip_py: str | None) -> list[str]:
    out = []
    if uv:
        out.append(subprocess.run([uv, "--version"], capture_output=True, text=True, check=False).stdout.strip())
    if pip_py:
        done = subprocess.run([pip_py, "-m", "pip", "--version"], capture_output=True, text=True, env=clean_env())
        out.append(done.stdout.split(" from ")[0])
    return out


def run(args: argparse.Namespace, work: Path, repeat: int, per_project: int) -> int:
    if not args.no_bytecode:
        BYTECODE["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    db = load_compat()
    start = time.perf_counter()
    counts = build_index(work / "index", db, per_project)
    built = (time.perf_counter() - start) * 1000
    uv = None if args.no_uv else find_uv(args.uv, work)
    pip_py = None if args.no_pip else pip_python(args.pip_python, work, not args.bundled_pip)
    tools = ", ".join(tool_versions(uv, pip_py)) or "no uv, no pip"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    shell = os.environ.get("PYTHONDONTWRITEBYTECODE")
    bytecode = ".pyc cached in the temp dir" if BYTECODE else f"bytecode as the shell has it ({shell=})"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load:.2f}; {tools}; {bytecode}")
    listed = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(f"index: {sum(counts.values())} wheels ({listed}), built in {built:.0f} ms")
    print(f"request: {' '.join(REQUEST)}; target: {' '.join(TARGET)}; {repeat} rounds after 1 warm-up")

    with Server(work / "index") as server:
        cases = make_cases(work, server, uv, pip_py)
        for case in sorted(cases, key=lambda c: "--offline" in c.label):  # warm-up: online first, to fill caches
            case.run(work)
        for _ in range(repeat):
            for case in cases:
                _Handler.requests_seen = 0
                case.times.append(case.run(work))
                case.requests += _Handler.requests_seen
        bare = Case("python -c pass", [sys.executable, "-c", "pass"], clean_env(), dict)
        python_pass = [bare.run(work) for _ in range(repeat)]
        inproc = in_process(work, server, max(repeat, 5))

        print(f"\n{'wall ms, whole process':62} {'median':>8} {'min':>8} {'HTTP':>5}")
        print(f"{'python -c pass (interpreter start, for scale)':62} {fmt(python_pass)}")
        for case in cases:
            print(f"{case.label:62} {fmt(case.times)} {case.requests / repeat:5.0f}")
        print("(HTTP: requests the local index answered per run)")

        by = {c.label: statistics.median(c.times) for c in cases}
        print("\nratios of medians (< 1: cudaresolve is faster):")
        pairs = (
            ("lock, warm cache / uv pip compile, warm cache", ONLINE, UV),
            ("lock --offline, warm cache / uv --offline, warm cache", OFFLINE_WARM, UV_OFFLINE),
            ("lock --offline, embedded data / uv --offline, warm cache", OFFLINE, UV_OFFLINE),
            ("lock, warm cache / pip --dry-run, warm cache", ONLINE, PIP),
        )
        for text, mine, theirs in pairs:
            if theirs in by:
                print(f"  {text:60} {by[mine] / by[theirs]:5.2f}")
        print("\nwhat each picked:")
        for case in cases:
            picks = case.picks()
            print(f"  {case.label}\n      " + ", ".join(f"{k} {v}" for k, v in sorted(picks.items())))
            if case.label != OFFLINE and any(v.endswith("(no hash)") for v in picks.values()):
                print("      WARNING: no hashes, so the local index was not read; the timing is not comparable")

        print(f"\n{'in one interpreter, in this order (ms)':62} {'first':>8} {'median':>8} {'min':>8}")
        for label, times in inproc.items():
            rest = fmt(times[1:]) if len(times) > 1 else ""
            print(f"{label:62} {times[0]:8.1f} {rest}")
        print("(first: the first call in a fresh interpreter; median and min: the calls after it)")

        over = by[OFFLINE] > BUDGET_MS
        slower = UV in by and by[ONLINE] > by[UV]
        verdict = [f"offline lock {by[OFFLINE]:.0f} ms: {'OVER' if over else 'within'} the {BUDGET_MS:.0f} ms budget"]
        if UV in by:
            verdict.append(
                f"{'SLOWER' if slower else 'not slower'} than uv, warm ({by[ONLINE]:.0f} vs {by[UV]:.0f} ms)"
            )
        print("\n" + "; ".join(verdict))
        if (over or slower or args.profile) and not args.quick:
            offline_case = next(c for c in cases if c.label == OFFLINE)
            online_case = next(c for c in cases if c.label == ONLINE)
            import_report(offline_case, work, args.top)
            profile_report(offline_case, work, args.top)
            profile_report(online_case, work, args.top)
    return 1 if over or slower else 0


if __name__ == "__main__":
    sys.exit(main())
