"""why-not answers every spec lock takes, with lock's verdict: possible exactly when lock finds a set,
the same coded error where lock refuses the input, and never an internal name (``<cuda>``)."""

from __future__ import annotations

import json

import pytest
from packaging.requirements import Requirement

from cudaresolve.cli import main
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.errors import CudaResolveError, NoSolution
from cudaresolve.resolve.needs import parse_requests
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.build import resolve_gpu
from cudaresolve.target.model import Target

DB = load_compat()
TARGETS = {
    "a100-r535": ("A100", "535.104.05", "linux_x86_64"),
    "l4-r580": ("L4", "580.65.06", "linux_x86_64"),
    "k80-r470": ("Tesla K80", "470.82.01", "linux_x86_64"),
    "rtx3060-win": ("RTX 3060", "580.65.06", "win_amd64"),
    "cpu-mac": (None, None, "macosx_arm64"),
    "h100-r570": ("H100", "570.86.10", "linux_x86_64"),
    "rtx3090-r580": ("RTX 3090", "580.65.06", "linux_x86_64"),
}
SPECS = [
    "torch", "torch==2.9.0+cpu", "torch==2.9.0+cu128", "torch==2.7.1", "torchaudio", "xformers",
    "flashinfer-python", "fbgemm-gpu==1.9.0", "torchvision==0.29.1", "torch<2.1",
    "torch @ file:///etc/passwd", "torch @ https://example.com/torch-2.9.0-cp312-cp312-linux_x86_64.whl",
    # the issue-28 packages: prebuilt release wheels, find-links pages, exact torch pins, cuDNN majors
    "flash-attn", "flash-attn==2.8.3", "torch-scatter", "pyg-lib", "torch-sparse", "mmcv", "vllm", "sglang",
    "sgl-kernel", "onnxruntime-gpu", "fbgemm-gpu-genai",
]


def _target(key: str) -> Target:
    gpu, driver, platform = TARGETS[key]
    if gpu is None:
        return Target(platform=platform, python="3.12", source="flags")
    return Target(gpus=(resolve_gpu(gpu, DB),), driver=parse_driver(driver or ""), platform=platform,
                  python="3.12", source="flags")


def _lock(spec: str, target: Target) -> str:
    try:
        parse_requests([spec], direct=True)  # lock's own reading of the requests (direct references checked)
        solve([spec], DB, target)
    except NoSolution:
        return "impossible"
    except CudaResolveError as exc:
        return exc.code
    return "possible"


def _why_not(spec: str, target: Target) -> str:
    try:
        answer = why_not(spec, [], DB, target)
    except CudaResolveError as exc:
        return exc.code
    for reason in answer.reasons:
        for internal in ("<cuda>", "<cudnn>", "<python>"):
            assert internal not in reason.message, reason.message
    return "possible" if answer.possible else "impossible"


@pytest.mark.parametrize("key", sorted(TARGETS))
@pytest.mark.parametrize("spec", SPECS)
def test_why_not_gives_locks_verdict(spec: str, key: str) -> None:
    target = _target(key)
    lock = _lock(spec, target)
    if "@ https://" in spec:  # lock reads a wheel URL's file (network); why-not refuses it with a coded error
        assert _why_not(spec, target) == "invalid-input"
        return
    if Requirement(spec).name not in DB.package_names:  # the index's to answer at lock time: why-not gives no verdict
        assert _why_not(spec, target) == "invalid-input"
        return
    assert _why_not(spec, target) == lock


@pytest.mark.parametrize("variant", ["cpu", "cu118", "cu128", "cu130"])
@pytest.mark.parametrize("key", sorted(TARGETS))
def test_a_variant_spec_is_never_answered_with_an_internal_name(variant: str, key: str) -> None:
    answer = why_not(variant, [], DB, _target(key))
    assert all("<cuda>" not in r.message for r in answer.reasons)
    if answer.possible:
        assert answer.solution is not None and answer.solution.variant == variant


def test_why_not_cpu_on_a_gpu_target_says_how_to_take_it(capsys: pytest.CaptureFixture[str]) -> None:
    main(["why-not", "cpu", "--gpu", "L4", "--driver", "580.65.06", "--offline", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["possible"] is False
    assert [r["code"] for r in result["reasons"]] == ["cpu-build-on-gpu"]
    assert "--cpu" in result["reasons"][0]["message"]
