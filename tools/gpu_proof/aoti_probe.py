"""Compile two tiny AOTInductor packages on a real GPU machine (one for CUDA, one for the CPU), run
each right and wrong, and record the real errors as JSON (tools/gpu_proof/probe.py runs this).

    python3 aoti_probe.py OUT_DIR

Writes OUT_DIR/cuda.pt2, OUT_DIR/cpu.pt2 and OUT_DIR/aoti.json: how each compile went, then for
each run case (CASES) the child's exit code and output: "OK <device>", or "ERR <type>" and the text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path


def _attempt(name: str, results: dict[str, object], action) -> None:  # type: ignore[no-untyped-def]
    try:
        value = action()
        results[name] = {
            "ok": True,
            "device": str(getattr(value, "device", "")),
            "shape": list(getattr(value, "shape", [])),
        }
    except BaseException as exc:  # record every failure as the user would see it
        results[name] = {
            "ok": False,
            "type": type(exc).__name__,
            "text": str(exc)[:20000],
            "traceback_tail": "".join(traceback.format_exception(exc))[-4000:],
        }


#: Each run case: (package device, input device, CUDA_VISIBLE_DEVICES or None). Each runs in a child
#: process, so that a crash (a wrong-device input can end the process with SIGSEGV) is recorded too.
CASES = {
    "cuda-package-cuda-input": ("cuda", "cuda", None),
    "cuda-package-cpu-input": ("cuda", "cpu", None),
    "cuda-package-no-visible-gpu": ("cuda", "cpu", ""),
    "cpu-package-cpu-input": ("cpu", "cpu", None),
    "cpu-package-cuda-input": ("cpu", "cuda", None),
}
RUN_CASE = (
    "import sys, torch\n"
    "try:\n"
    "    runner = torch._inductor.aoti_load_package(sys.argv[1])\n"
    "    out = runner(torch.randn(8, 8, device=sys.argv[2]))\n"
    "    out = out[0] if isinstance(out, (list, tuple)) else out\n"
    "    print('OK', out.device)\n"
    "except BaseException as exc:\n"
    "    print('ERR', type(exc).__name__)\n"
    "    print(str(exc)[:20000])\n"
    "    sys.exit(1)\n"
)


def _run_case(package: Path, input_device: str, visible: str | None) -> dict[str, object]:
    env = dict(os.environ)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    try:
        done = subprocess.run(
            [sys.executable, "-c", RUN_CASE, str(package), input_device],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    return {"returncode": done.returncode, "stdout": done.stdout[-20000:], "stderr": done.stderr[-6000:]}


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    import torch

    class Tiny(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x @ x.T) + 1.0

    results: dict[str, object] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    packages: dict[str, Path] = {}
    for device in ("cuda", "cpu"):
        example = torch.randn(8, 8, device=device)
        path = out / f"{device}.pt2"

        def compile_one(example: torch.Tensor = example, path: Path = path) -> torch.Tensor:
            exported = torch.export.export(Tiny().to(example.device), (example,))
            torch._inductor.aoti_compile_and_package(exported, package_path=str(path))
            return example

        _attempt(f"compile-{device}", results, compile_one)
        if path.exists():
            packages[device] = path
    for case, (package_device, input_device, visible) in CASES.items():
        if package_device in packages:
            results[case] = _run_case(packages[package_device], input_device, visible)
            (out / "aoti.json").write_text(json.dumps(results, indent=2, sort_keys=True), encoding="utf-8")
    (out / "aoti.json").write_text(json.dumps(results, indent=2, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
