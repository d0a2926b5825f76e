"""Issue 24: installing a lock into a fresh venv: ``cudaresolve install --from``, ``uv pip sync`` and pip, cold and
warm cache, rounds interleaved. Run by hand, not in CI; prints one table and the ratios to uv.

    .venv/bin/python bench/bench_install.py                      # 28 packages, about 230 MB, 3 rounds
    .venv/bin/python bench/bench_install.py --packages 70 --rounds 3
    .venv/bin/python bench/bench_install.py --scale 0.1          # a tenth of the bytes (quick)
    .venv/bin/python bench/bench_install.py --lock pylock.toml   # a real lock, its files from their URLs

What it does:

1. Writes ``--packages`` real wheels (a module, METADATA, RECORD, and a payload of random,
   incompressible bytes stored uncompressed): one the size of a CUDA library (``--scale`` x 120 MB),
   five of 15 MB, the rest of 1 MB, like a torch stack's long tail. No ``Requires-Dist``: the lock is
   the whole environment for every tool.
2. Serves them on 127.0.0.1 (PEP 503 pages with ``#sha256=``, TCP_NODELAY) and writes the same lock
   twice: ``pylock.toml`` (URLs and hashes) for cudaresolve and uv, ``requirements.txt`` (pins with
   ``--hash``) for pip.
3. Each round, each tool in turn (the order rotated), installs into a fresh venv made beforehand
   (untimed; ``--without-pip`` for cudaresolve and uv, with pip for pip):
   * cold: the tool's caches empty (``CUDARESOLVE_CACHE_DIR`` for cudaresolve, which unpacks and links the
     wheels itself, and ``UV_CACHE_DIR`` should it run uv; ``UV_CACHE_DIR`` for uv; ``--cache-dir`` for pip);
   * warm: the tool's caches as its previous run left them (one untimed run first).
   Commands: ``python -m cudaresolve install --from pylock.toml --python VENV --cpu -q`` (the synthetic
   wheels hold nothing the doctor pass checks, so it loads no database and runs no doctor pass; a real
   torch lock, ``--lock``, has both), ``uv pip sync --no-config --python VENV pylock.toml``,
   ``VENV/bin/python -m pip install --no-deps --require-hashes --index-url URL --cache-dir DIR -r requirements.txt``.
   * again: the same command once more into the venv the warm run just filled (nothing to do).
4. Counts the server's requests during cudaresolve's warm runs: a fresh venv should fetch nothing.

With ``--lock PATH`` steps 1 and 2 are skipped: that pylock.toml is installed from its own URLs (a real index,
the network in the cold rows), pip from a requirements file of the same pins and hashes and the lock's index.

The machine's pip and uv settings are ignored (``PIP_CONFIG_FILE=/dev/null``, no ``PIP_*``/``UV_*``).
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from base64 import urlsafe_b64encode
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from cudaresolve.install.installer import find_uv  # noqa: E402
from cudaresolve.lock.lockfile import write_lock  # noqa: E402
from cudaresolve.lock.model import Lock  # noqa: E402
from cudaresolve.resolve.model import LockedPackage  # noqa: E402

MB = 1024 * 1024


def _wheel(dest: Path, name: str, size: int) -> tuple[str, str]:
    """A wheel of ``name`` 1.0 holding ``size`` random bytes; (file name, sha256)."""
    dist = name.replace("-", "_")
    info = f"{dist}-1.0.dist-info"
    files = {
        f"{dist}/__init__.py": b'__version__ = "1.0"\n',
        f"{dist}/payload.bin": os.urandom(size),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{p},sha256={urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}"
              for p, b in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    filename = f"{dist}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(dest / filename, "w", zipfile.ZIP_STORED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return filename, hashlib.sha256((dest / filename).read_bytes()).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        self.server.requests += 1  # type: ignore[attr-defined]


class _Server(http.server.ThreadingHTTPServer):
    requests = 0

    def server_bind(self) -> None:
        import socket

        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().server_bind()


def _env(**extra: str) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would make cudaresolve compile its own modules on every run (an installed copy has
    # its byte-code): it is dropped, and main() compiles the worktree's modules once before the first round
    drop = ("PIP_", "UV_", "CUDARESOLVE_", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", **extra)
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", type=int, default=28)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every payload size")
    parser.add_argument("--lock", help="install this pylock.toml instead of synthetic wheels")
    parser.add_argument("--before", metavar="SRC", help="also time the cudaresolve whose src/ folder this is "
                        "(an earlier commit, e.g. from git archive), as the row 'before'")
    args = parser.parse_args()
    uv = find_uv()
    if uv is None:
        print("uv is needed (pip install uv)")
        return 2
    python = sys.executable
    for src in (str(ROOT / "src"), *([args.before] if args.before else [])):
        subprocess.run([python, "-m", "compileall", "-q", src], check=True, env=_env())
    work = Path(tempfile.mkdtemp(prefix="bench-install-"))
    try:
        return _run(args, uv, python, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _given(path: str, work: Path) -> tuple[tuple[LockedPackage, ...], str]:
    """A real lock: its packages and the index most of them name (pip's --index-url), copied to
    ``work/pylock.toml``."""
    from cudaresolve.lock.lockfile import read_lock

    lock = read_lock(path)
    shutil.copyfile(path, work / "pylock.toml")
    indexes = [p.index for p in lock.packages if p.index]  # pip's one index: the one most packages name
    return lock.packages, max(set(indexes), key=indexes.count)


def _run(args: argparse.Namespace, uv: str, python: str, work: Path) -> int:
    server = None
    if args.lock:
        packages, index = _given(args.lock, work)
        names = {re.sub(r"[-_.]+", "-", p.name).lower() for p in packages}
        print(f"{len(packages)} packages of {args.lock} from their URLs; {args.rounds} rounds; uv {uv}")
    else:
        packages, index, server = _synthetic(args, work)
        names = {p.name for p in packages}
    (work / "requirements.txt").write_text("".join(f"{p.name}=={p.version} --hash=sha256:{p.sha256}\n"
                                                  for p in packages))
    return _rounds(args, uv, python, work, index, names, server)


def _synthetic(
    args: argparse.Namespace, work: Path
) -> tuple[tuple[LockedPackage, ...], str, _Server]:
    """Steps 1 and 2 of the module docstring: the wheels, their index on 127.0.0.1 and ``work/pylock.toml``."""
    files = work / "site" / "files"
    files.mkdir(parents=True)
    sizes = [int(120 * MB * args.scale)] + [int(15 * MB * args.scale)] * 5 + [int(MB * args.scale)] * 200
    wheels = {f"pkg-{i:03d}": _wheel(files, f"pkg-{i:03d}", sizes[i]) for i in range(args.packages)}
    for name, (filename, sha) in wheels.items():
        page = work / "site" / "simple" / name / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(f'<a href="../../files/{filename}#sha256={sha}">{filename}</a>\n')
    server = _Server(("127.0.0.1", 0), partial(_Handler, directory=str(work / "site")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    index = f"{base}/simple"
    packages = tuple(LockedPackage(name=n, version="1.0", index=index, url=f"{base}/files/{f}", filename=f, sha256=s)
                     for n, (f, s) in wheels.items())
    write_lock(work / "pylock.toml", Lock(packages=packages, index_url=index))
    total = sum((files / f).stat().st_size for f, _ in wheels.values())
    print(f"{args.packages} wheels, {total / MB:.0f} MB, served at {base}; {args.rounds} rounds")
    return packages, index, server


def _rounds(
    args: argparse.Namespace, uv: str, python: str, work: Path, index: str, names: set[str], server: _Server | None
) -> int:
    """Step 3 and 4: every tool, cold, warm and again, rounds interleaved; the table."""

    def command(tool: str, venv: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
        py = str(venv / "bin" / "python")
        if tool in ("cudaresolve", "before"):
            src = args.before if tool == "before" else str(ROOT / "src")
            argv = [python, "-m", "cudaresolve", "install", "--from", str(work / "pylock.toml"), "--python", py,
                    "--cpu", "-q"]
            return argv, _env(CUDARESOLVE_CACHE_DIR=str(cache / "cr"), UV_CACHE_DIR=str(cache / "uv"),
                              PYTHONPATH=src)
        if tool == "uv":
            return [uv, "pip", "sync", "--no-config", "--python", py, str(work / "pylock.toml")], _env(
                UV_CACHE_DIR=str(cache / "uv"))
        argv = [py, "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "--index-url", index,
                "--cache-dir", str(cache / "pip"), "-r", str(work / "requirements.txt")]
        return argv, _env()

    def fresh_venv(tool: str) -> Path:
        venv = Path(tempfile.mkdtemp(dir=work, prefix=f"venv-{tool}-"))
        flags = [] if tool == "pip" else ["--without-pip"]
        subprocess.run([python, "-m", "venv", *flags, str(venv)], check=True, env=_env())
        return venv

    cpu: dict[tuple[str, str], list[float]] = {}

    def run(argv: list[str], env: dict[str, str], tool: str, mode: str) -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        took = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # its children too (cudaresolve waits for uv)
        spent = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
        cpu.setdefault((tool, mode), []).append(spent)
        if done.returncode != 0:
            raise SystemExit(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}")
        return took

    def timed(tool: str, cache: Path, mode: str, again: list[float] | None = None) -> float:
        venv = fresh_venv(tool)
        argv, env = command(tool, venv, cache)
        took = run(argv, env, tool, mode)
        if again is not None:  # the same install into the venv it just filled: nothing to do
            again.append(run(argv, env, tool, "again"))
        listed = subprocess.run([uv, "pip", "list", "--python", str(venv / "bin" / "python"), "--format", "freeze"],
                                capture_output=True, text=True, env=_env(), check=True).stdout
        got = {re.sub(r"[-_.]+", "-", re.sub(r"==.*", "", line)).lower() for line in listed.split()}
        got -= {"pip", "setuptools"}
        if got != names:
            raise SystemExit(f"{tool} installed {sorted(got)[:5]}..., not the lock")
        shutil.rmtree(venv, ignore_errors=True)
        return took

    tools = ["cudaresolve", "uv", "pip", *(["before"] if args.before else [])]
    warm_caches = {t: work / f"warm-{t}" for t in tools}
    for tool in tools:
        timed(tool, warm_caches[tool], "first")  # untimed: fills the warm caches
    times: dict[tuple[str, str], list[float]] = {}
    fetched_warm: list[int] = []
    for number in range(args.rounds):
        order = tools[number % len(tools):] + tools[: number % len(tools)]
        for mode in ("cold", "warm"):
            for tool in order:
                cache = Path(tempfile.mkdtemp(dir=work, prefix="cold-")) if mode == "cold" else warm_caches[tool]
                before = server.requests if server is not None else 0
                again = times.setdefault((tool, "again"), []) if mode == "warm" else None
                times.setdefault((tool, mode), []).append(timed(tool, cache, mode, again))
                if mode == "warm" and tool == "cudaresolve" and server is not None:
                    fetched_warm.append(server.requests - before)
                if mode == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
    if server is not None:
        server.shutdown()
    print(f"\n| tool | cold (median of {args.rounds}) | warm | again | cold / uv | warm / uv | again / uv |")
    print("|---|---|---|---|---|---|---|")
    for tool in tools:
        got = {mode: statistics.median(times[(tool, mode)]) for mode in ("cold", "warm", "again")}
        uv = {mode: statistics.median(times[("uv", mode)]) for mode in ("cold", "warm", "again")}
        ratios = " | ".join(f"{got[m] / uv[m]:.2f}x" for m in ("cold", "warm", "again"))
        print(f"| {tool} | {got['cold']:.2f} s | {got['warm']:.2f} s | {got['again']:.2f} s | {ratios} |")
    print(f"\nCPU time (user + system, children included; median of {args.rounds}):\n")
    print("| tool | cold | warm | again | cold / uv | warm / uv | again / uv |")
    print("|---|---|---|---|---|---|---|")
    for tool in tools:
        got = {mode: statistics.median(cpu[(tool, mode)]) for mode in ("cold", "warm", "again")}
        uv = {mode: statistics.median(cpu[("uv", mode)]) for mode in ("cold", "warm", "again")}
        ratios = " | ".join(f"{got[m] / max(uv[m], 0.001):.2f}x" for m in ("cold", "warm", "again"))
        print(f"| {tool} | {got['cold']:.2f} s | {got['warm']:.2f} s | {got['again']:.2f} s | {ratios} |")
    if server is not None:
        print(f"\nrequests to the server during cudaresolve's warm runs (fresh venvs): {fetched_warm}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
