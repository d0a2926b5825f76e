"""``cudaresolve doctor`` through ``main(argv)``: exit codes, the JSON contract, human output, a real venv."""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
import tomlkit

from cudaresolve.cli import main
from test_doctor import DB_DATA, FIXTURES, make_dist, make_pt2, torch_files

if TYPE_CHECKING:
    from pathlib import Path

TARGET = ["--gpu", "A100", "--gpu", "RTX 3090", "--driver", "535.104.05", "--python-version", "3.11",
          "--platform", "linux_x86_64"]


@pytest.fixture(autouse=True)
def _no_arch_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TORCH_CUDA_ARCH_LIST", "FLASHINFER_CUDA_ARCH_LIST"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def compat(tmp_path: Path) -> list[str]:
    path = tmp_path / "compat.toml"
    path.write_text(tomlkit.dumps(DB_DATA))
    return ["--compat", str(path)]


@pytest.fixture
def broken_env(tmp_path: Path) -> Path:
    """torch 2.7.1+cu118 and fbgemm-gpu 1.1.0+cu118 (built for torch 2.6, with sm_86 code only)."""
    site = tmp_path / "site-packages"
    make_dist(site, "torch", "2.7.1+cu118", torch_files())
    make_dist(site, "fbgemm-gpu", "1.1.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "rdc.so"})
    make_dist(site, "nvidia-cuda-runtime-cu11", "11.8.89")
    return site


@pytest.fixture
def good_env(tmp_path: Path) -> Path:
    site = tmp_path / "good"
    make_dist(site, "torch", "2.7.1+cu118", torch_files())
    make_dist(site, "fbgemm-gpu", "1.2.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "uncompressed.so"})
    return site


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["doctor", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *argv, "--json")
    return code, json.loads(out)


def test_json_report_of_a_broken_environment(
    capsys: pytest.CaptureFixture[str], compat: list[str], broken_env: Path,
) -> None:
    code, data = run_json(capsys, "--site-packages", str(broken_env), *TARGET, *compat)
    assert code == 1
    assert (data["schema"], data["ok"], data["site_packages"]) == (1, False, [str(broken_env)])
    assert [g["name"] for g in data["target"]["gpus"]] == ["NVIDIA A100", "NVIDIA GeForce RTX 3090"]
    assert [(p["name"], p["version"], p["variant"], p["sass"], p["ptx"], p["coverage"]) for p in data["packages"]] == [
        ("torch", "2.7.1+cu118", "cu118", ["sm_80"], ["compute_80"], {"8.0": "sass", "8.6": "sass"}),
        ("fbgemm-gpu", "1.1.0+cu118", "cu118", ["sm_86"], [], {"8.0": "none", "8.6": "sass"}),
    ]
    # the fixture's library links libcudart.so.13 and no package here provides it (the ABI check)
    assert [[(q["code"], q["severity"]) for q in p["problems"]] for p in data["packages"]] == [
        [], [("sm-not-covered", "error"), ("abi-mismatch", "error"), ("missing-cuda-library", "error")]]
    assert data["packages"][1]["problems"][2]["libraries"] == [
        str(broken_env / "fbgemm_gpu/fbgemm_gpu_py.so"), "libcudart.so.13"]
    assert data["packages"][1]["libraries"] == [{
        "path": str(broken_env / "fbgemm_gpu/fbgemm_gpu_py.so"), "sass": ["sm_86"], "ptx": [],
        "coverage": {"8.0": "none", "8.6": "sass"}}]
    assert data["runtimes"] == [{"name": "nvidia-cuda-runtime-cu11", "version": "11.8.89", "cuda": "11.8",
                                 "driver_support": "full"}]
    assert data["problems"] == []
    assert "Install fbgemm-gpu==1.2.0, the fbgemm-gpu release paired with torch 2.7.1+cu118." in data["fixes"]


def test_human_report_ends_with_the_problems(
    capsys: pytest.CaptureFixture[str], compat: list[str], broken_env: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0")
    monkeypatch.setenv("FLASHINFER_CUDA_ARCH_LIST", "9.0a")
    code, out, err = run(capsys, "--site-packages", str(broken_env), *TARGET, *compat)
    assert (code, err) == (1, "")
    assert [line.rstrip() for line in out.splitlines()] == [
        "target: NVIDIA A100 (8.0), NVIDIA GeForce RTX 3090 (8.6); driver 535.104.05",
        f"environment: {broken_env}",
        "package     version      variant  8.0   8.6",
        "torch       2.7.1+cu118  cu118    sass  sass",
        "fbgemm-gpu  1.1.0+cu118  cu118    none  sass",
        "library                      SASS and PTX",
        "torch/lib/libtorch_cuda.so   sm_80 compute_80",
        "fbgemm_gpu/fbgemm_gpu_py.so  sm_86",
        "  ✗ sm-not-covered: fbgemm-gpu 1.1.0+cu118 (cu118) has no code for sm_80 (NVIDIA A100, compute capability "
        "8.0); it carries sm_86",
        "      fix: fbgemm-gpu releases with native code for sm_80, sm_86: 1.2.0 (cu118, cu126); 1.1.0 (cu118).",
        "      fix: Run 'cudaresolve lock fbgemm-gpu --gpu 8.0 --gpu 8.6 --driver 535.104.05' to pick builds with "
        "native code for every GPU here, then 'cudaresolve install' to install them.",
        '      fix: Build fbgemm-gpu from source with TORCH_CUDA_ARCH_LIST="8.0;8.6" so that it carries code for '
        "these GPUs.",
        "  ✗ abi-mismatch: fbgemm-gpu 1.1.0+cu118 was built for torch 2.6.*, but torch 2.7.1+cu118 is installed",
        "      fix: Install fbgemm-gpu==1.2.0, the fbgemm-gpu release paired with torch 2.7.1+cu118.",
        "      fix: Alternatively install torch 2.6.*, the version that fbgemm-gpu 1.1.0+cu118 is paired with.",
        "      fix: Install torch and fbgemm-gpu together: cudaresolve install torch fbgemm-gpu "
        "(with the other GPU packages you use) takes a matching set from one index, PyPI or "
        "https://download.pytorch.org/whl/<variant>, whichever serves it and answers.",
        "  ✗ missing-cuda-library: fbgemm-gpu 1.1.0+cu118: fbgemm_gpu/fbgemm_gpu_py.so needs libcudart.so.13, which "
        "no package in this environment provides (nor its RUNPATH, LD_LIBRARY_PATH or a library torch loads); "
        "importing it fails with 'cannot open shared object file'",
        "      fix: Install the fbgemm-gpu build made for the CUDA major version of your torch: 'cudaresolve lock "
        "fbgemm-gpu' keeps one CUDA major version across the environment.",
        "      fix: Or install the package that provides libcudart.so.13 (for NVIDIA's libraries, the nvidia-* wheel "
        "of that CUDA major version), if two CUDA major versions side by side are what you want.",
        "CUDA runtime nvidia-cuda-runtime-cu11 11.8.89 (CUDA 11.8); driver support: full",
        "environment",
        '  ✗ arch-list-excludes-gpu: FLASHINFER_CUDA_ARCH_LIST="9.0a" leaves out NVIDIA A100 (compute capability '
        "8.0): extensions built or JIT-compiled in this environment get no code for it",
        "      fix: Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or set them to this machine's GPUs: "
        '"8.0;8.6".',
        '  ✗ arch-list-excludes-gpu: FLASHINFER_CUDA_ARCH_LIST="9.0a" leaves out NVIDIA GeForce RTX 3090 (compute '
        "capability 8.6): extensions built or JIT-compiled in this environment get no code for it",
        "      fix: Unset TORCH_CUDA_ARCH_LIST and FLASHINFER_CUDA_ARCH_LIST, or set them to this machine's GPUs: "
        '"8.0;8.6".',
        "5 problem(s), 0 warning(s)",
    ]


def test_an_ok_environment_exits_0_and_says_ok(
    capsys: pytest.CaptureFixture[str], compat: list[str], good_env: Path,
) -> None:
    code, out, _ = run(capsys, "--site-packages", str(good_env), *TARGET, *compat)
    assert code == 0
    assert out.splitlines()[-1] == "ok, with 1 warning(s)"  # cuda-runtime-missing: no nvidia-* package beside torch
    code, data = run_json(capsys, "--site-packages", str(good_env), *TARGET, *compat)
    assert (code, data["ok"], [p["problems"] for p in data["packages"]]) == (0, True, [[], []])


def test_warnings_only_still_exit_0(capsys: pytest.CaptureFixture[str], compat: list[str], good_env: Path) -> None:
    code, out, _ = run(capsys, "--site-packages", str(good_env), "--gpu", "9.0", "--driver", "535.104.05", *compat)
    assert code == 0
    assert out.splitlines()[-1] == "ok, with 3 warning(s)"  # PTX only for torch and fbgemm-gpu; no CUDA runtime


def test_chinese(capsys: pytest.CaptureFixture[str], compat: list[str], good_env: Path) -> None:
    make_dist(good_env, "nvidia-cuda-runtime-cu13", "13.0.48")
    code, out, _ = run(capsys, "--site-packages", str(good_env), *TARGET, *compat, "--lang", "zh")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "目标机器：NVIDIA A100（8.0）、NVIDIA GeForce RTX 3090（8.6）；驱动 535.104.05"
    assert "  ✗ driver-too-old: CUDA 13.0 的 wheel（cu130）至少需要驱动 580.65.06（完全兼容需要 580.65.06）；" \
           "本机驱动为 535.104.05" in lines
    assert lines[-1] == "1 个问题，0 条警告"


def test_pt2_packages_are_checked(
    capsys: pytest.CaptureFixture[str], compat: list[str], good_env: Path, tmp_path: Path,
) -> None:
    pt2 = make_pt2(tmp_path / "model.pt2", "cpu", "")
    code, data = run_json(capsys, "--site-packages", str(good_env), *TARGET, *compat, "--pt2", str(pt2))
    assert code == 1
    assert [(c["path"], c["devices"], [p["code"] for p in c["problems"]]) for c in data["pt2"]] == [
        (str(pt2), ["cpu"], ["aoti-device-mismatch"])]
    absent = tmp_path / "absent.pt2"
    code, data = run_json(capsys, "--site-packages", str(good_env), *TARGET, *compat, "--pt2", str(absent))
    assert (code, data["error"]["code"], data["error"]["message"]) == (1, "invalid-input", f"no such file: {absent}")


def test_bad_python_is_a_one_line_error(capsys: pytest.CaptureFixture[str], compat: list[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "--python", str(tmp_path / "nope"), *TARGET, *compat)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: invalid-input: cannot run {tmp_path / 'nope'}: No such file or directory")
    code, _, err = run(capsys, "--python", sys.executable, "--site-packages", str(tmp_path), *TARGET, *compat)
    assert code == 2 and err.startswith("error: usage: ") and "not allowed with argument" in err


def test_python_of_a_real_venv(capsys: pytest.CaptureFixture[str], compat: list[str], tmp_path: Path) -> None:
    """A venv made by ``python -m venv``: its interpreter names its own site-packages."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (site,) = (venv / "lib").glob("python3.*/site-packages")
    make_dist(site, "torch", "2.7.1+cu118", torch_files())
    make_dist(site, "fbgemm-gpu", "1.1.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "rdc.so"})
    code, data = run_json(capsys, "--python", str(python), *TARGET, *compat)
    assert code == 1
    assert str(site) in data["site_packages"]
    assert [(p["name"], [q["code"] for q in p["problems"]]) for p in data["packages"]] == [
        ("torch", []), ("fbgemm-gpu", ["sm-not-covered", "abi-mismatch", "missing-cuda-library"])]


def _with_ptx_isa(tmp_path: Path) -> list[str]:
    """The test database with two ``[[ptx-isa]]`` rows (nvcc 13.0 writes PTX ISA 9.0; 12.6 writes 8.5)."""
    data = dict(DB_DATA, **{"ptx-isa": [{"isa": "9.0", "cuda": "13.0", "source": "s"},
                                        {"isa": "8.5", "cuda": "12.6", "source": "s"}]})
    path = tmp_path / "compat-ptx.toml"
    path.write_text(tomlkit.dumps(data))
    return ["--compat", str(path)]


def test_ptx_newer_than_the_driver_does_not_jit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """compute_80 PTX at PTX ISA 9.0 (nvcc 13.0) on a CUDA 12.2 driver: not "will JIT" but no code for the GPU."""
    site = tmp_path / "site-packages"  # a release the database does not hold: its variant says nothing
    make_dist(site, "fbgemm-gpu", "9.9.9", {"fbgemm_gpu/fbgemm_gpu_py.so": FIXTURES / "compress-size.so"})
    compat = _with_ptx_isa(tmp_path)
    code, data = run_json(capsys, "--site-packages", str(site), "--gpu", "9.0", "--driver", "535.104.05", *compat)
    (pkg,) = data["packages"]
    assert (code, pkg["coverage"], [p["code"] for p in pkg["problems"]]) == (1, {"9.0": "none"}, ["sm-not-covered"])
    assert pkg["libraries"][0]["ptx_too_new"] == [
        {"ptx": "compute_80", "ptx_isa": "9.0", "cuda": "13.0", "min_driver": "580.65.06"}]
    code, out, _ = run(capsys, "--site-packages", str(site), "--gpu", "9.0", "--driver", "535.104.05", *compat)
    assert "only through PTX (compute_80) at PTX ISA 9.0, which needs CUDA 13.0: driver 535.104.05 cannot " \
           "JIT-compile it" in " ".join(out.split())
    code, data = run_json(capsys, "--site-packages", str(site), "--gpu", "9.0", "--driver", "580.65.06", *compat)
    assert (code, [p["code"] for p in data["packages"][0]["problems"]]) == (0, ["ptx-jit-only"])


def test_a_windows_environment_has_its_pyd_modules_read(capsys: pytest.CaptureFixture[str], compat: list[str],
                                                         tmp_path: Path) -> None:
    """``Lib/site-packages`` (a Windows venv), or a Windows target: doctor reads ``.pyd``/``.dll`` as ``.so``."""
    windows = tmp_path / "venv" / "Lib" / "site-packages"
    plain = tmp_path / "copied"
    for site in (windows, plain):
        make_dist(site, "fbgemm-gpu", "1.2.0+cu118", {"fbgemm_gpu/fbgemm_gpu_py.pyd": FIXTURES / "windows.pyd"})
    expected = [{"path": str(windows / "fbgemm_gpu" / "fbgemm_gpu_py.pyd"), "sass": ["sm_75", "sm_86", "sm_90a",
                 "sm_100a"], "ptx": ["compute_90"], "coverage": {"8.0": "none", "8.6": "sass"}}]
    _, data = run_json(capsys, "--site-packages", str(windows), *TARGET, *compat)
    assert data["packages"][0]["libraries"] == expected
    assert "sm-not-covered" in [p["code"] for p in data["packages"][0]["problems"]]
    win = [*TARGET[:-1], "win_amd64"]  # a folder of no telling layout, for a Windows target
    _, data = run_json(capsys, "--site-packages", str(plain), *win, *compat)
    paths = [lib["path"] for lib in data["packages"][0]["libraries"]]
    assert paths == [str(plain / "fbgemm_gpu" / "fbgemm_gpu_py.pyd")]
    _, data = run_json(capsys, "--site-packages", str(plain), *TARGET, *compat)  # Linux: a .pyd is never loaded
    assert data["packages"][0]["libraries"] == []
