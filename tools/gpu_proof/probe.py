"""The GPU proof: one prepared run on a machine with a real NVIDIA GPU, recording what the GPU, its
driver and its tools really say, for cudaresolve's fixtures (tests/fixtures/gpu/).

    PYTHONPATH=<deps>:src python3 tools/gpu_proof/probe.py OUT_DIR [BUDGET_SECONDS [CHAIN,...]]

What it records, each step under its own timeout, the independent ones side by side:
- the machine: nvidia-smi (plain, -L, -q, and the exact CSV query detection makes), /proc/driver/nvidia,
  pip list, nvcc and cuobjdump versions;
- `cudaresolve detect --json` through NVML, and through the nvidia-smi and /proc fallbacks alone;
- `cudaresolve doctor` and `doctor --run` against the machine's own Python and torch;
- `cudaresolve inspect` of torch's and torchvision's CUDA libraries beside `cuobjdump --list-elf/--list-ptx`;
- one kernel built by nvcc for several targets (SASS of an older SM, PTX only, this GPU's SM, a newer
  SM), run on the GPU, with PTX JIT disabled and forced, and the same as bare cubin/PTX modules
  loaded by CuPy: which builds run and the runtime's and driver's real error texts;
- two AOTInductor packages (CUDA, CPU) run right and wrong (aoti_probe.py), then inspected and
  checked by `doctor --pt2`;
- a torch extension built for sm_80 only, called on the GPU (ext_probe.py).
Everything lands in OUT_DIR/gpu-proof.tar.gz, with OUT_DIR/summary.txt naming each step's exit code
and seconds. Uses only the standard library, so it runs with the machine's own python3.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
SMI_COLUMNS = "name,compute_cap,driver_version,memory.total"
SMI_COLUMNS_OLD = "name,driver_version,memory.total"
KERNEL_BUILDS = {  # file name -> nvcc -gencode arguments
    "sass80": ["-gencode", "arch=compute_80,code=sm_80"],
    "ptx80": ["-gencode", "arch=compute_80,code=compute_80"],
    "sass80ptx80": ["-gencode", "arch=compute_80,code=[sm_80,compute_80]"],
    "sass86": ["-gencode", "arch=compute_86,code=sm_86"],
    "sass90": ["-gencode", "arch=compute_90,code=sm_90"],
    "sass90a": ["-gencode", "arch=compute_90a,code=sm_90a"],
    "sass100": ["-gencode", "arch=compute_100,code=sm_100"],
    "ptx100": ["-gencode", "arch=compute_100,code=compute_100"],
}


class Run:
    def __init__(self, work: Path, budget: float) -> None:
        self.work = work
        self.end = time.monotonic() + budget
        self.lock = threading.Lock()
        self.steps: list[dict[str, object]] = []

    def step(
        self, name: str, argv: list[str], *, timeout: float, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> int | None:
        left = self.end - time.monotonic()
        limit = max(1.0, min(timeout, left))
        started = time.monotonic()
        full_env = dict(os.environ, **(env or {}))
        try:
            done = subprocess.run(argv, capture_output=True, timeout=limit, env=full_env, cwd=cwd, check=False)
            code: int | None = done.returncode
            stdout, stderr = done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            code, stdout, stderr = None, exc.stdout or b"", (exc.stderr or b"") + b"\n[timed out]"
        except OSError as exc:
            code, stdout, stderr = 127, b"", str(exc).encode()
        seconds = round(time.monotonic() - started, 2)
        (self.work / f"{name}.out").write_bytes(stdout)
        if stderr:
            (self.work / f"{name}.err").write_bytes(stderr)
        record = {"name": name, "argv": argv, "env": env or {}, "rc": code, "seconds": seconds}
        with self.lock:
            self.steps.append(record)
            print(f"{name}: rc={code} {seconds}s", flush=True)
        return code


def machine(run: Run) -> None:
    run.step("date", ["date", "-u", "+%Y-%m-%dT%H:%M:%SZ"], timeout=5)
    run.step("uname", ["uname", "-a"], timeout=5)
    run.step("nvidia-smi", ["nvidia-smi"], timeout=30)
    run.step("nvidia-smi-L", ["nvidia-smi", "-L"], timeout=30)
    run.step("nvidia-smi-q", ["nvidia-smi", "-q"], timeout=60)
    run.step("nvidia-smi-query", ["nvidia-smi", f"--query-gpu={SMI_COLUMNS}", "--format=csv,noheader"], timeout=30)
    run.step(
        "nvidia-smi-query-old", ["nvidia-smi", f"--query-gpu={SMI_COLUMNS_OLD}", "--format=csv,noheader"], timeout=30
    )
    proc = Path("/proc/driver/nvidia")
    target = run.work / "proc"
    target.mkdir(exist_ok=True)
    for path in [proc / "version", *sorted((proc / "gpus").glob("*/information"))]:
        try:
            name = "version" if path.name == "version" else f"gpus__{path.parent.name}__information"
            (target / name).write_bytes(path.read_bytes())
        except OSError as exc:
            (target / "errors.txt").open("a").write(f"{path}: {exc}\n")
    run.step("pip-list", [PY, "-m", "pip", "list", "--format=freeze"], timeout=60)
    run.step("nvcc-version", ["nvcc", "--version"], timeout=30)
    run.step("cuobjdump-version", ["cuobjdump", "--version"], timeout=30)
    run.step(
        "torch-facts",
        [
            PY,
            "-c",
            (
                "import json, torch; d = torch.cuda.get_device_properties(0); print(json.dumps({"
                "'torch': torch.__version__, 'cuda': torch.version.cuda, 'cudnn': torch.backends.cudnn.version(),"
                "'arch_list': torch.cuda.get_arch_list(), 'capability': list(torch.cuda.get_device_capability(0)),"
                "'name': d.name, 'total_memory': d.total_memory, 'multi_processor_count': d.multi_processor_count,"
                "'cxx11_abi': torch._C._GLIBCXX_USE_CXX11_ABI"
                "}, indent=2))"
            ),
        ],
        timeout=120,
    )


FALLBACK = """
import json, sys
from cudaresolve.target import detect
def no_nvml():
    raise detect.NvmlUnavailable("proof: NVML left out")
which = sys.argv[1]
if which == "smi":
    sources = detect.Sources(nvml=no_nvml)
else:
    sources = detect.Sources(nvml=no_nvml, nvidia_smi=lambda args: None)
host = detect.detect_host(sources=sources)
print(repr(host))
reading = None
if which == "smi":
    try:
        reading = detect.query_nvml()
    except Exception as exc:
        reading = exc
    print(repr(reading))
"""


def detection(run: Run) -> None:
    run.step("detect-json", [PY, "-m", "cudaresolve", "detect", "--json"], timeout=60)
    run.step("detect", [PY, "-m", "cudaresolve", "detect", "--color", "never"], timeout=60)
    run.step("detect-smi-only", [PY, "-c", FALLBACK, "smi"], timeout=60)
    run.step("detect-proc-only", [PY, "-c", FALLBACK, "proc"], timeout=60)
    run.step("gpus-h100", [PY, "-m", "cudaresolve", "gpus", "H100", "--json"], timeout=60)


def doctor(run: Run) -> None:
    base = [PY, "-m", "cudaresolve", "doctor", "--python", PY, "--offline"]
    run.step("doctor-json", [*base, "--json"], timeout=120)
    run.step("doctor", [*base, "--color", "never"], timeout=120)
    run.step("doctor-run-json", [*base, "--run", "--json"], timeout=300)
    run.step("doctor-run", [*base, "--run", "--color", "never"], timeout=300)


def torch_libraries(run: Run) -> None:
    code = (
        "import importlib.util as u, json; print(json.dumps({n: (u.find_spec(n).submodule_search_locations or [''])[0]"
        " for n in ('torch', 'torchvision', 'torchaudio') if u.find_spec(n)}))"
    )
    found = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    roots = json.loads(found.stdout or "{}")
    (run.work / "package-roots.json").write_text(json.dumps(roots, indent=2))
    files = []
    if "torch" in roots:
        files += [Path(roots["torch"]) / "lib" / n for n in ("libtorch_cuda.so", "libc10_cuda.so")]
    if "torchvision" in roots:
        files.append(Path(roots["torchvision"]) / "_C.so")
    files = [f for f in files if f.exists()]
    (run.work / "inspected-files.json").write_text(json.dumps([str(f) for f in files], indent=2))
    run.step("inspect-torch-json", [PY, "-m", "cudaresolve", "inspect", "--json", *map(str, files)], timeout=240)
    with ThreadPoolExecutor(4) as pool:
        for f in files:
            stem = f.stem.replace(".", "_")
            pool.submit(run.step, f"cuobjdump-elf-{stem}", ["cuobjdump", "--list-elf", str(f)], timeout=300)
            pool.submit(run.step, f"cuobjdump-ptx-{stem}", ["cuobjdump", "--list-ptx", str(f)], timeout=300)


def kernels(run: Run) -> None:
    work = run.work / "kernels"
    work.mkdir(exist_ok=True)
    shutil.copy(HERE / "launch.cu", work / "launch.cu")
    shutil.copy(HERE / "module.cu", work / "module.cu")
    built = []
    for name, gencode in KERNEL_BUILDS.items():
        code = run.step(
            f"nvcc-{name}",
            ["nvcc", "-O2", "-cudart", "shared", *gencode, "-o", name, "launch.cu"],
            timeout=120,
            cwd=work,
        )
        if code == 0:
            built.append(name)
    lib = {
        "LD_LIBRARY_PATH": ":".join(p for p in ("/usr/local/cuda/lib64", os.environ.get("LD_LIBRARY_PATH", "")) if p)
    }
    for name in built:
        run.step(f"run-{name}", [str(work / name)], timeout=60, env=lib, cwd=work)
    for name in ("ptx80", "sass80ptx80", "ptx100"):
        if name in built:
            run.step(
                f"run-{name}-nojit",
                [str(work / name)],
                timeout=60,
                env={**lib, "CUDA_DISABLE_PTX_JIT": "1", "CUDA_CACHE_DISABLE": "1"},
                cwd=work,
            )
            run.step(
                f"run-{name}-forcejit", [str(work / name)], timeout=60, env={**lib, "CUDA_FORCE_PTX_JIT": "1"}, cwd=work
            )
    if built:
        run.step(
            "inspect-kernels-json",
            [PY, "-m", "cudaresolve", "inspect", "--json", *(str(work / n) for n in built)],
            timeout=60,
        )
        for name in built:
            run.step(f"cuobjdump-{name}", ["cuobjdump", "--list-elf", "--list-ptx", str(work / name)], timeout=60)
    run.step("nvcc-cubin80", ["nvcc", "-cubin", "-arch=sm_80", "-o", "m80.cubin", "module.cu"], timeout=60, cwd=work)
    run.step("nvcc-ptx80", ["nvcc", "-ptx", "-arch=compute_80", "-o", "m80.ptx", "module.cu"], timeout=60, cwd=work)
    cupy = (
        "import sys, cupy\n"
        "try:\n"
        "    f = cupy.RawModule(path=sys.argv[1]).get_function('add_one')\n"
        "    x = cupy.zeros(32, dtype=cupy.float32)\n"
        "    f((1,), (32,), (x, cupy.int32(32)))\n"
        "    cupy.cuda.Device().synchronize()\n"
        "    print('ok', float(x.sum()))\n"
        "except BaseException as exc:\n"
        "    print(type(exc).__module__ + '.' + type(exc).__name__ + ': ' + str(exc)); sys.exit(1)\n"
    )
    run.step("cupy-cubin80", [PY, "-c", cupy, "m80.cubin"], timeout=60, cwd=work)
    run.step("cupy-ptx80", [PY, "-c", cupy, "m80.ptx"], timeout=60, cwd=work)
    run.step(
        "cupy-ptx80-nojit",
        [PY, "-c", cupy, "m80.ptx"],
        timeout=60,
        cwd=work,
        env={"CUDA_DISABLE_PTX_JIT": "1", "CUDA_CACHE_DISABLE": "1"},
    )


def aoti(run: Run) -> None:
    work = run.work / "aoti"
    run.step("aoti-probe", [PY, str(HERE / "aoti_probe.py"), str(work)], timeout=300)
    packages = [str(p) for p in sorted(work.glob("*.pt2"))]
    if packages:
        run.step("inspect-pt2-json", [PY, "-m", "cudaresolve", "inspect", "--json", *packages], timeout=60)
        pt2 = [a for p in packages for a in ("--pt2", p)]
        run.step(
            "doctor-pt2-json",
            [PY, "-m", "cudaresolve", "doctor", "--python", PY, "--offline", "--json", *pt2],
            timeout=120,
        )
        run.step(
            "doctor-pt2",
            [PY, "-m", "cudaresolve", "doctor", "--python", PY, "--offline", "--color", "never", *pt2],
            timeout=120,
        )


def extension(run: Run) -> None:
    run.step("ext-probe", [PY, str(HERE / "ext_probe.py"), str(run.work / "ext")], timeout=300)


def main() -> int:
    out = Path(sys.argv[1])
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 420.0
    chains = {f.__name__: f for f in (machine, detection, doctor, torch_libraries, kernels, aoti, extension)}
    chosen = sys.argv[3].split(",") if len(sys.argv) > 3 else list(chains)
    work = Path("/tmp/gpu-proof")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run = Run(work, budget)
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(chains[name], run) for name in chosen]
        for f in futures:
            try:
                f.result()
            except Exception as exc:  # one broken chain must not lose the others' records
                print(f"chain failed: {exc!r}", flush=True)
                with run.lock:
                    run.steps.append({"name": "chain-error", "error": repr(exc)})
    (work / "steps.json").write_text(json.dumps(run.steps, indent=2))
    for big in work.rglob("*"):  # build trees are not fixtures: keep sources, binaries, packages, records
        if big.is_file() and big.suffix in {".o", ".ninja_deps", ".ninja_log"}:
            big.unlink()
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "gpu-proof.tar.gz", "w:gz") as tar:
        tar.add(work, arcname="gpu-proof")
    lines = [f"{s.get('name')}: rc={s.get('rc')} {s.get('seconds')}s" for s in run.steps]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
