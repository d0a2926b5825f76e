"""Real projects locked against real PyPI, as issue 22 tried them (the PyTorch index as the network gives it:
unreachable from the machines here). Marked ``network``: skipped by default, run with ``pytest -m network``."""

from __future__ import annotations

import json
import tomllib
from typing import TYPE_CHECKING

import pytest
from packaging.pylock import Pylock

from test_direct_e2e import SRC

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.network


def _lock(args: list[str], tmp_path: Path) -> dict[str, str]:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "CUDARESOLVE_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run(  # an sdist built for its metadata may install torch into its build environment
        [sys.executable, "-m", "cudaresolve", "lock", *args, "--json"], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=1500,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = json.loads(result.stdout)
    assert out["complete"] is True and out["output"]
    data = tomllib.loads((tmp_path / out["output"]).read_text())
    Pylock.from_dict(data)
    return {p["name"]: p.get("version", "") for p in data["packages"]}


def test_torchrec_on_an_a800_at_driver_470_locks_iopath_too(tmp_path: Path) -> None:
    pins = _lock(["torch", "torchrec", "--gpu", "A800", "--driver", "470.129.06", "--python-version", "3.11"], tmp_path)
    assert {"torch", "torchrec", "fbgemm-gpu", "iopath"} <= set(pins)


def test_a_torchrec_project_for_an_rtx_3090(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\n'
        'dependencies = ["torch", "torchrec==1.5.*", "transformers", "numpy<2"]\n'
    )
    pins = _lock(["--gpu", "RTX 3090", "--driver", "535.104.05", "--python-version", "3.11"], tmp_path)
    assert pins["torchrec"].startswith("1.5.") and pins["numpy"].startswith("1.") and "iopath" in pins


@pytest.mark.parametrize(
    "args",
    [
        ["deepspeed", "--cpu"],
        ["vllm", "--gpu", "H100", "--driver", "580.65.06"],
        ["torch", "numpy", "--cpu"],
    ],
    ids=["deepspeed-cpu", "vllm-h100", "torch-numpy-cpu"],
)
def test_projects_that_did_not_lock(tmp_path: Path, args: list[str]) -> None:
    pins = _lock([*args, "--python-version", "3.11"], tmp_path)
    assert args[0] in pins and "torch" in pins


def test_no_build_takes_the_newest_iopath_with_a_wheel(tmp_path: Path) -> None:
    pins = _lock(["iopath", "--cpu", "--python-version", "3.11", "--no-build"], tmp_path)
    assert pins["iopath"] == "0.1.9"  # 0.1.10 is an sdist with dynamic metadata
