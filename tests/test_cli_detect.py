"""``cudaresolve detect`` and ``arch-list`` through ``main(argv)``: the JSON contract, errors, human output."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cudaresolve.cli import main
from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.errors import DetectionError
from cudaresolve.render.detect import format_detect
from cudaresolve.target import detect
from cudaresolve.target.detect import NvmlUnavailable, Sources
from cudaresolve.target.model import Gpu, Target
from cudaresolve.target.readings import DETECT_HINT, NvmlDevice, NvmlReading
from cudaresolve.text.model import Text

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
COMPAT = str(HOSTS / "compat-detect.toml")
TARGET = ["--compat", COMPAT, "--python-version", "3.11", "--platform", "linux_x86_64"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *argv, "--json")
    return code, json.loads(out)


def no_nvml() -> NvmlReading:
    raise NvmlUnavailable("NVML Shared Library Not Found")


def machine(monkeypatch: pytest.MonkeyPatch, sources: Sources) -> None:
    """Make ``sources`` this machine's for the CLI: ``detect.SYSTEM`` is what ``main`` detects through
    (argv cannot carry a source, so this one public value is replaced; nothing private is patched)."""
    monkeypatch.setattr(detect, "SYSTEM", sources)


@pytest.fixture
def no_gpu_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Sources:
    """Detection on a machine without any NVIDIA driver, whatever machine runs the tests."""
    sources = Sources(nvml=no_nvml, nvidia_smi=lambda args: None, proc_dir=tmp_path / "absent")
    machine(monkeypatch, sources)
    return sources


# -- detect --json ----------------------------------------------------------------------------


def test_detect_json_for_declared_gpu_and_driver(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, "detect", "--gpu", "A800", "--driver", "470.129.06", *TARGET)
    assert code == 0
    assert data == {
        "schema": 1,
        "target": {
            "gpus": [{"name": "NVIDIA A800", "cc": "8.0", "memory_mib": None, "datacenter": True}],
            "driver": "470.129.06",
            "cuda_driver_max": "11.4",
            "platform": "linux_x86_64",
            "python": "3.11",
            "source": "flags",
        },
    }


def test_detect_json_from_a_host_file_repeats_it(capsys: pytest.CaptureFixture[str]) -> None:
    path = HOSTS / "mixed-2080-3090-r535.json"
    code, data = run_json(capsys, "detect", "--host", str(path), "--compat", COMPAT)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert code == 0
    assert data == {"schema": 1, "target": {**saved["target"], "source": "host-file"}}


def test_detect_json_on_a_machine_without_gpu(capsys: pytest.CaptureFixture[str], no_gpu_here: Sources) -> None:
    code, data = run_json(capsys, "detect", *TARGET)
    assert code == 0
    assert data == json.loads((HOSTS / "no-gpu.json").read_text(encoding="utf-8"))


def test_detect_json_with_nvml_faked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_gpu_here: Sources
) -> None:
    reading = NvmlReading(
        driver="535.129.03",
        cuda_driver_version=12020,
        devices=(
            NvmlDevice(name="NVIDIA GeForce RTX 2080", cc=(7, 5), memory_total=8 * 1024**3, uuid="GPU-aaaa"),
            NvmlDevice(name="NVIDIA GeForce RTX 3090", cc=(8, 6), memory_total=24 * 1024**3, uuid="GPU-bbbb"),
        ),
    )
    machine(monkeypatch, replace(no_gpu_here, nvml=lambda: reading))
    code, data = run_json(capsys, "detect", *TARGET)
    assert code == 0
    assert data == {
        "schema": 1,
        "target": {
            "gpus": [
                {"name": "NVIDIA GeForce RTX 2080", "cc": "7.5", "memory_mib": 8192, "datacenter": False},
                {"name": "NVIDIA GeForce RTX 3090", "cc": "8.6", "memory_mib": 24576, "datacenter": False},
            ],
            "driver": "535.129.03",
            "cuda_driver_max": "12.2",
            "platform": "linux_x86_64",
            "python": "3.11",
            "source": "nvml",
        },
    }
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-bbbb")
    code, data = run_json(capsys, "detect", *TARGET)
    assert [g["name"] for g in data["target"]["gpus"]] == ["NVIDIA GeForce RTX 3090"]


def test_detect_json_with_environment_overrides(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDARESOLVE_GPUS", "RTX 2080,RTX 3090")
    monkeypatch.setenv("CUDARESOLVE_DRIVER", "570.195.03")
    code, data = run_json(capsys, "detect", *TARGET)
    assert code == 0
    assert [g["cc"] for g in data["target"]["gpus"]] == ["7.5", "8.6"]
    assert (data["target"]["driver"], data["target"]["cuda_driver_max"], data["target"]["source"]) == (
        "570.195.03",
        "12.8",
        "env",
    )


# -- arch-list --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--gpu", "RTX 2080", "--gpu", "RTX 3090"], "7.5;8.6\n"),
        (["--gpu", "RTX 3090", "--gpu", "RTX 2080", "--ptx"], "7.5;8.6+PTX\n"),
        (["--gpu", "RTX 3090,RTX 3090,8.6"], "8.6\n"),
        (["--gpu", "A800", "--gpu", "sm_90", "--gpu", "12.0"], "8.0;9.0;12.0\n"),
        (["--host", str(HOSTS / "mixed-2080-3090-r535.json")], "7.5;8.6\n"),
    ],
)
def test_arch_list(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    code, out, err = run(capsys, "arch-list", *argv, "--compat", COMPAT)
    assert (code, out, err) == (0, expected, "")


def test_arch_list_from_the_environment(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDARESOLVE_GPUS", "GeForce GTX 1080 Ti, RTX 3090")
    assert run(capsys, "arch-list", "--compat", COMPAT) == (0, "6.1;8.6\n", "")


def test_an_arch_list_no_one_toolkit_compiles_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """sm_37 left the toolkits at CUDA 12.0 and sm_120 came with 12.8 (the shipped [[cuda]] nvcc-sm): the list is
    still printed, with a warning on stderr and in the JSON, as ``plan`` says of a fleet."""
    code, out, err = run(capsys, "arch-list", "--gpu", "Tesla K80", "--gpu", "RTX 5090")
    assert (code, out) == (0, "3.7;12.0\n")
    assert err.startswith("warning: arch-list-split: no single CUDA toolkit compiles every GPU here")
    assert run(capsys, "arch-list", "--gpu", "T4", "--gpu", "RTX 5090") == (0, "7.5;12.0\n", "")
    code, out, _ = run(capsys, "arch-list", "--gpu", "Tesla K80", "--gpu", "RTX 5090", "--json")
    assert [w["code"] for w in json.loads(out)["warnings"]] == ["arch-list-split"]


@pytest.mark.parametrize(
    "argv", [["--cpu"], ["--host", str(HOSTS / "no-gpu.json")]], ids=["cpu-flag", "no-gpu-host-file"]
)
def test_arch_list_without_gpu_is_an_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, "arch-list", *argv, "--compat", COMPAT)
    assert (code, out) == (1, "")
    assert err.startswith("error: invalid-input: no GPU in the target")
    assert "Traceback" not in err


# -- bad input everywhere: one line, a code, a hint, exit 1 -----------------------------------


@pytest.mark.parametrize(
    ("argv", "code", "message", "hint"),
    [
        (
            ["detect", "--gpu", "Radeon RX 7900"],
            "unknown-gpu",
            "unknown GPU: 'Radeon RX 7900'",
            "'cudaresolve gpus' lists the names it knows; or give the compute capability, e.g. --gpu 8.6",
        ),
        (
            ["detect", "--gpu", "8.6", "--driver", "abc"],
            "invalid-driver",
            "not an NVIDIA driver version: 'abc'",
            "give the version nvidia-smi prints, e.g. --driver 535.104.05",
        ),
        (
            ["arch-list", "--gpu", "Radeon RX 7900"],
            "unknown-gpu",
            "unknown GPU: 'Radeon RX 7900'",
            "'cudaresolve gpus' lists the names it knows; or give the compute capability, e.g. --gpu 8.6",
        ),
        (
            ["arch-list", "--gpu", "8.6", "--driver", "abc"],
            "invalid-driver",
            "not an NVIDIA driver version: 'abc'",
            "give the version nvidia-smi prints, e.g. --driver 535.104.05",
        ),
        (
            ["detect", "--gpu", "sm_9x"],
            "unknown-gpu",
            "unknown GPU: 'sm_9x'",
            "'cudaresolve gpus' lists the names it knows; or give the compute capability, e.g. --gpu 8.6",
        ),
        (
            ["detect", "--gpu", " , "],
            "invalid-input",
            "--gpu needs a GPU name or compute capability",
            "e.g. --gpu A800 or --gpu 8.6",
        ),
        (
            ["detect", "--gpu", "8.6", "--python-version", "2.7"],
            "invalid-input",
            "not a Python version: '2.7'",
            "write it as 3.X, e.g. --python-version 3.11",
        ),
        (
            ["detect", "--host", "/nonexistent/host.json"],
            "invalid-input",
            "cannot read host file /nonexistent/host.json: No such file or directory",
            "write the file as 'cudaresolve detect --json' prints it",
        ),
    ],
)
def test_bad_input_gives_one_line_error_with_code_and_hint(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: str, message: str, hint: str
) -> None:
    exit_code, out, err = run(capsys, *argv, "--compat", COMPAT)
    assert (exit_code, out) == (1, "")
    assert err.startswith(f"error: {code}: {message}")
    assert hint in err
    assert "Traceback" not in err
    if argv[0] == "arch-list":  # prints text only (README, "Commands")
        return
    json_code, data = run_json(capsys, *argv, "--compat", COMPAT)
    assert json_code == 1
    assert data == {"schema": 1, "error": {"code": code, "message": message, "hint": hint, "findings": []}}


def test_bad_environment_driver(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDARESOLVE_DRIVER", "abc")
    code, data = run_json(capsys, "detect", "--gpu", "8.6", "--compat", COMPAT)
    assert code == 1
    assert data["error"]["code"] == "invalid-driver"
    assert data["error"]["message"] == "CUDARESOLVE_DRIVER is not an NVIDIA driver version: 'abc'"


def test_nvml_failure_without_fallback_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_gpu_here: Sources
) -> None:
    def broken() -> NvmlReading:
        raise DetectionError(Text.of("target.detect.nvml-init", error="Unknown Error"), hint=DETECT_HINT)

    machine(monkeypatch, replace(no_gpu_here, nvml=broken))
    code, out, err = run(capsys, "detect", "--compat", COMPAT)
    assert (code, out) == (2, "")
    assert err.startswith("error: nvml-failed: NVML failed to initialise: Unknown Error")
    assert "Traceback" not in err


# -- human output -----------------------------------------------------------------------------


def rendered(target: Target) -> str:
    return format_detect(target)


def test_render_detect_mixed_host() -> None:
    target = Target(
        gpus=(
            Gpu(name="NVIDIA GeForce RTX 2080", cc=ComputeCapability(7, 5), memory_mib=8192),
            Gpu(name="NVIDIA GeForce RTX 3090", cc=ComputeCapability(8, 6), memory_mib=24576),
        ),
        driver=parse_driver("535.129.03"),
        cuda_driver_max=CudaVersion(12, 2),
        platform="linux_x86_64",
        python="3.11",
        source="nvml",
    )
    assert [line.rstrip() for line in rendered(target).splitlines()] == [
        "#  GPU                      compute capability     memory",
        "0  NVIDIA GeForce RTX 2080  7.5 (sm_75)          8192 MiB",
        "1  NVIDIA GeForce RTX 3090  8.6 (sm_86)         24576 MiB",
        "driver: 535.129.03",
        "highest CUDA: 12.2",
        "platform: linux_x86_64",
        "python: 3.11",
        "from: NVML",
    ]


def test_render_detect_cpu_and_unknown_driver() -> None:
    cpu = Target(platform="linux_x86_64", python="3.12", source="none")
    assert rendered(cpu).splitlines() == [
        "no NVIDIA GPU: a CPU target",
        "driver: none (CPU target)",
        "highest CUDA: none",
        "platform: linux_x86_64",
        "python: 3.12",
        "from: detection (no NVIDIA driver found)",
    ]
    declared = Target(gpus=(Gpu(name="sm_86", cc=ComputeCapability(8, 6)),), source="flags+env")
    lines = rendered(declared).splitlines()
    assert lines[-5:-2] == ["driver: unknown (not constrained)", "highest CUDA: unknown", "platform: linux_x86_64"]
    assert lines[-1] == "from: command-line flags + CUDARESOLVE_* environment"


def test_detect_human_output_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "detect", "--gpu", "A800", "--driver", "470.129.06", *TARGET)
    assert (code, err) == (0, "")
    assert "NVIDIA A800" in out
    assert "8.0 (sm_80)" in out
    assert "highest CUDA: 11.4" in out


def test_detect_help_lists_the_target_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["detect", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--gpu NAME|CC", "--driver VERSION", "--cpu", "--python-version X.Y", "--platform TAG", "--host FILE"):
        assert flag in out
    assert "CUDARESOLVE_GPUS" in out


def test_a_gpu_name_with_control_characters_is_shown_escaped() -> None:
    """Found by the hostile-input audit: a GPU name as a (fake or broken) nvidia-smi prints it went to the terminal
    with its escape sequences (a colour, a window title); the table now shows them as Python writes them."""
    name = "NVIDIA H100\x1b[31mRED\x1b]0;title\x07"
    target = Target(gpus=(Gpu(name=name, cc=ComputeCapability(9, 0)),), source="nvidia-smi")
    text = rendered(target)
    assert "\x1b" not in text and "\x07" not in text
    assert "NVIDIA H100\\x1b[31mRED\\x1b]0;title\\x07" in text.splitlines()[1]


def test_a_machine_reporting_more_gpus_than_one_target_holds_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Found by the hostile-input audit: ``--gpu``, ``CUDARESOLVE_GPUS`` and host files are bounded to 1,024 GPUs (each
    costs a database lookup), but an nvidia-smi that printed 1,100 rows was taken whole. Detection is bounded alike."""
    rows = "".join("NVIDIA H100 80GB HBM3, 9.0, 580.65.06, 81559\n" for _ in range(1100))
    machine(monkeypatch, Sources(nvml=no_nvml, nvidia_smi=lambda args: (0, rows), proc_dir=tmp_path / "absent"))
    assert main(["detect"]) != 0
    assert "error: invalid-input: 1100 GPUs" in capsys.readouterr().err
    fewer = "".join("NVIDIA H100 80GB HBM3, 9.0, 580.65.06, 81559\n" for _ in range(8))
    machine(monkeypatch, Sources(nvml=no_nvml, nvidia_smi=lambda args: (0, fewer), proc_dir=tmp_path / "absent"))
    assert main(["detect", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["target"]["gpus"]) == 8
