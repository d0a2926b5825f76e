"""Shared fixtures: a tiny valid database dict, captured consoles."""

from __future__ import annotations

import copy
import os
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

# CI must not go red by the luck of a seed, nor by a slow machine: property tests run a fixed set of examples by
# default, with no per-example deadline (Hypothesis' 200 ms fails a test whose example ran slow once under load).
# HYPOTHESIS_PROFILE=explore gives fresh random examples each run, to hunt for new failures by hand.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if TYPE_CHECKING:
    from collections.abc import Iterator

@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test writes outside a temporary directory: the user cache moves into one per test."""
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # install never fills the venv the tests run in


_TINY: dict[str, Any] = {
    "schema-version": 1,
    "index": {"default": "https://pypi.org/simple", "pytorch-root": "https://download.pytorch.org/whl",
              "allowed-hosts": ["download.pytorch.org", "pypi.org", "flashinfer.ai"], "source": "s"},
    "packages": {"tables": ["torch", "torchvision", "torchaudio", "fbgemm-gpu", "torchrec", "xformers", "flashinfer",
                            "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"],
                 "anchor": "torch", "source": "s"},
    "cuda": [
        {
            "version": "12.1",
            "min-driver-linux": "530.30.02",
            "minor-compat-driver-linux": "525.60.13",
            "nvcc-sm": ["sm_80", "sm_90"],
            "source": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/",
        },
        {
            "version": "11.8",
            "min-driver-linux": "520.61.05",
            "minor-compat-driver-linux": "450.80.02",
            "nvcc-sm": ["sm_80"],
            "source": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/",
        },
    ],
    "gpu": [
        {
            "name": "NVIDIA A800",
            "aliases": ["A800-SXM4-80GB"],
            "cc": "8.0",
            "arch": "Ampere",
            "datacenter": True,
            "source": "https://developer.nvidia.com/cuda-gpus",
        },
    ],
    "variant": [
        {"name": "cu121", "cuda": "12.1", "index-url": "https://download.pytorch.org/whl/cu121", "source": "s"},
        {"name": "cu118", "cuda": "11.8", "index-url": "https://download.pytorch.org/whl/cu118", "source": "s"},
    ],
    "torch": [
        {
            "version": "2.1.0",
            "python": ["3.11"],
            "source": "s",
            "build": [{"variant": "cu121", "sass": ["sm_80"]}, {"variant": "cu118", "sass": ["sm_80"]}],
        },
    ],
    "fbgemm-gpu": [
        {
            "version": "0.5.0",
            "python": ["3.11"],
            "requires": ["torch==2.1.*"],
            "source": "s",
            "build": [{"variant": "cu118", "sass": ["sm_80"]}],
        },
    ],
}


@pytest.fixture
def tiny_db_dict() -> dict[str, Any]:
    """A small database that passes validation; tests break copies of it."""
    return copy.deepcopy(_TINY)


@pytest.fixture(autouse=True)
def _no_env_overrides(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("CUDARESOLVE_GPUS", "CUDARESOLVE_DRIVER", "CUDA_VISIBLE_DEVICES", "CUDARESOLVE_INSTALLER",
                 "CUDARESOLVE_NETWORK_TIMEOUT", "CUDARESOLVE_BUILD_TIMEOUT"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    # the machine's own default and extra indexes (a PyPI mirror) must not reach the locks under test
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
                 "UV_CONFIG_FILE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # nor its pip.conf files (/etc, ~/.pip, ~/.config, XDG)
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    # nor its terminal and locale: colour, width and language of what the tests read
    for name in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    yield
