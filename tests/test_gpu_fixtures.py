"""What a real GPU said, against what cudaresolve reads and predicts.

The fixtures in tests/fixtures/gpu/h100-580 were recorded on 2026-11-26 by tools/gpu_proof/probe.py on
an NVIDIA H100 80GB HBM3 with driver 580.159.04, torch 2.11.0+cu130 and nvcc 13.0 (the folder's
README.md lists each file). These tests parse the real outputs with today's readers, run today's
fat-binary reader on the binaries that really ran there, and check that the coverage rules predict
which of them ran, that explain-error knows the real error texts, and that doctor judges the real
AOTInductor packages. The last tests need the GPU itself and are marked ``gpu``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudaresolve.binaries.inspect import inspect_file
from cudaresolve.cli import main
from cudaresolve.core.archs import Coverage, coverage, parse_arch, parse_cc
from cudaresolve.errorlog.signatures import match_errors
from cudaresolve.target import detect
from cudaresolve.target.readings import (
    SMI_COLUMNS,
    SMI_COLUMNS_OLD,
    NvmlDevice,
    NvmlReading,
    host_from_nvml,
    parse_nvidia_smi_csv,
    parse_proc_gpu_information,
    parse_proc_version,
)

H100 = Path(__file__).parent / "fixtures" / "gpu" / "h100-580"
KERNELS = H100 / "kernels"
GPU_NAME = "NVIDIA H100 80GB HBM3"
DRIVER = "580.159.04"
#: The builds of launch.cu that ran on the H100 (tools/gpu_proof/probe.py KERNEL_BUILDS).
BUILDS = ("sass80", "ptx80", "sass80ptx80", "sass86", "sass90", "sass90a", "sass100", "ptx100")


def _text(name: str) -> str:
    return (H100 / name).read_text(encoding="utf-8")


def _recorded_detect() -> dict[str, object]:
    return json.loads(_text("detect.json"))["target"]  # type: ignore[no-any-return]


def _smi_replay(args: list[str] | tuple[str, ...]) -> tuple[int, str] | None:
    """nvidia-smi as it answered on the H100, for the two queries detection makes."""
    query = {
        f"--query-gpu={','.join(SMI_COLUMNS)}": "nvidia-smi-query.out",
        f"--query-gpu={','.join(SMI_COLUMNS_OLD)}": "nvidia-smi-query-old.out",
    }
    return 0, _text(query[args[0]])


def _no_nvml() -> NvmlReading:
    raise detect.NvmlUnavailable("left out: the fallbacks are under test")


def _proc_dir(tmp_path: Path) -> Path:
    root = tmp_path / "nvidia"
    (root / "gpus" / "0000:00:06.0").mkdir(parents=True)
    shutil.copy(H100 / "proc" / "version", root / "version")
    shutil.copy(H100 / "proc" / "gpus__0000:00:06.0__information", root / "gpus" / "0000:00:06.0" / "information")
    return root


def test_nvidia_smi_answers_parse_to_the_gpu_nvml_reported() -> None:
    host = parse_nvidia_smi_csv(_text("nvidia-smi-query.out"), SMI_COLUMNS)
    assert host is not None and host.driver.text == DRIVER
    (gpu,) = host.gpus
    assert (gpu.name, gpu.cc, gpu.memory_mib) == (GPU_NAME, parse_cc("9.0"), 81559)
    old = parse_nvidia_smi_csv(_text("nvidia-smi-query-old.out"), SMI_COLUMNS_OLD)
    assert old is not None and old.gpus[0].name == GPU_NAME and old.gpus[0].cc is None


def test_proc_files_parse() -> None:
    assert parse_proc_version(_text("proc/version")).text == DRIVER
    gpu = parse_proc_gpu_information(_text("proc/gpus__0000:00:06.0__information"))
    assert gpu.name == GPU_NAME and gpu.cc is None


def test_nvml_reading_gives_what_detect_printed_there() -> None:
    """The NVML values of the run, through today's host_from_nvml, give the target detect --json printed."""
    line = _text("detect-smi-only.out").splitlines()[1]
    reading = eval(line, {"__builtins__": {}}, {"NvmlReading": NvmlReading, "NvmlDevice": NvmlDevice})
    host = host_from_nvml(reading)
    recorded = _recorded_detect()
    assert recorded["source"] == "nvml" and host.source == "nvml"
    assert host.driver.text == recorded["driver"]
    assert [(g.name, str(g.cc)) for g in host.gpus] == [(g["name"], g["cc"]) for g in recorded["gpus"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("skip_smi", [False, True], ids=["nvidia-smi", "proc"])
def test_fallbacks_find_the_same_gpu_as_nvml(tmp_path: Path, skip_smi: bool) -> None:
    sources = detect.Sources(
        nvml=_no_nvml, nvidia_smi=(lambda args: None) if skip_smi else _smi_replay, proc_dir=_proc_dir(tmp_path)
    )
    host = detect.detect_host({}, sources=sources)
    assert host is not None
    assert host.source == ("proc" if skip_smi else "nvidia-smi")
    assert host.driver.text == _recorded_detect()["driver"]
    assert [g.name for g in host.gpus] == [GPU_NAME]


def test_the_real_gpu_name_is_known(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--gpu", GPU_NAME, "--driver", DRIVER, "--json"]) == 0
    target = json.loads(capsys.readouterr().out)["target"]
    assert target["gpus"][0]["cc"] == "9.0" and target["cuda_driver_max"] == _recorded_detect()["cuda_driver_max"]


def _cuobjdump_lists(name: str) -> tuple[set[str], set[str]]:
    """SASS and PTX names from cuobjdump --list-elf --list-ptx as it printed them on the GPU machine."""
    text = (KERNELS / f"cuobjdump-{name}.out").read_text(encoding="utf-8")
    sass = set(re.findall(r"^ELF file\s+\d+: \S+\.(sm_\w+?)\.cubin$", text, re.M))
    ptx = {"compute_" + sm[3:] for sm in re.findall(r"^PTX file\s+\d+: \S+\.(sm_\w+?)\.ptx$", text, re.M)}
    return sass, ptx


@pytest.mark.parametrize("name", BUILDS)
def test_inspect_agrees_with_cuobjdump_on_the_binaries_that_ran(name: str) -> None:
    report = inspect_file(KERNELS / name)
    assert (set(report.sass), set(report.ptx)) == _cuobjdump_lists(name)


def _ran(output: str) -> bool:
    return output.startswith("launch cudaSuccess")


def _predicted(name: str, *, jit: str) -> bool:
    report = inspect_file(KERNELS / name)
    archs = [a for n in (*report.sass, *report.ptx) for a in parse_arch(n)]
    if jit == "force":  # CUDA_FORCE_PTX_JIT=1: the driver ignores SASS and compiles the PTX
        archs = [a for a in archs if a.ptx]
    return coverage(archs, parse_cc("9.0"), ptx_jit_ok=jit != "off") is not Coverage.NONE


@pytest.mark.parametrize("name", BUILDS)
def test_coverage_rules_predict_which_builds_ran_on_sm90(name: str) -> None:
    assert _predicted(name, jit="on") == _ran((KERNELS / f"run-{name}.out").read_text(encoding="utf-8"))
    for jit, suffix in (("off", "nojit"), ("force", "forcejit")):
        recorded = KERNELS / f"run-{name}-{suffix}.out"
        if recorded.exists():
            assert _predicted(name, jit=jit) == _ran(recorded.read_text(encoding="utf-8")), (name, jit)


def test_the_recorded_runs_cover_both_outcomes() -> None:
    outcomes = {_ran(p.read_text(encoding="utf-8")) for p in KERNELS.glob("run-*.out")}
    assert outcomes == {True, False}


def test_inspect_of_torch_libraries_agreed_with_cuobjdump_there() -> None:
    """libtorch_cuda.so (1 GB) is not committed: what inspect printed there against cuobjdump's listing."""
    files = {Path(f["path"]).name: f for f in json.loads(_text("inspect-torch.json"))["files"]}
    for library, listing in (
        ("libtorch_cuda.so", "cuobjdump-elf-libtorch_cuda.out"),
        ("_C.so", "cuobjdump-elf-_C.out"),
    ):
        names = re.findall(r"^ELF file\s+\d+: \S+\.(sm_\w+?)\.cubin$", _text(listing), re.M)
        assert names, listing
        assert set(files[library]["sass"]) == set(names)
    assert files["libtorch_cuda.so"]["entries"] == len(
        re.findall(r"^ELF file", _text("cuobjdump-elf-libtorch_cuda.out"), re.M)
    )


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("kernels/run-sass80.out", "no-kernel-image"),
        ("kernels/run-sass100.out", "no-kernel-image"),
        ("kernels/cupy-cubin80.out", "no-kernel-image"),
        ("kernels/run-ptx80-nojit.out", "ptx-jit-disabled"),
        ("kernels/cupy-ptx80-nojit.out", "ptx-jit-disabled"),
        ("ext.json", "no-kernel-image"),
    ],
)
def test_explain_error_knows_the_real_texts(source: str, code: str) -> None:
    text = _text(source)
    if source.endswith(".json"):  # torch's own text, from an extension built for sm_80 only
        text = json.loads(text)["traceback_tail"]
    assert code in [m.code for m in match_errors(text)]


def test_doctor_judges_the_real_aoti_packages(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["doctor", "--site-packages", str(tmp_path), "--driver", DRIVER, "--json"]
    pt2 = ["--pt2", str(H100 / "aoti" / "cuda.pt2"), "--pt2", str(H100 / "aoti" / "cpu.pt2")]
    main([*args, "--gpu", "H100", *pt2])
    report = {Path(p["path"]).name: p for p in json.loads(capsys.readouterr().out)["pt2"]}
    assert report["cuda.pt2"]["devices"] == ["cuda"] and report["cuda.pt2"]["sass"] == ["sm_90a"]
    assert report["cuda.pt2"]["problems"] == []
    assert [p["code"] for p in report["cpu.pt2"]["problems"]] == ["aoti-device-mismatch"]
    main([*args, "--gpu", "A100", *pt2])  # sm_90a code runs on nothing but 9.0
    report = {Path(p["path"]).name: p for p in json.loads(capsys.readouterr().out)["pt2"]}
    assert [p["code"] for p in report["cuda.pt2"]["problems"]] == ["sm-not-covered"]


@pytest.mark.gpu
def test_detect_on_this_gpu_matches_nvidia_smi() -> None:
    host = detect.detect_host()
    assert host is not None and host.source == "nvml"
    smi = subprocess.run(
        ["nvidia-smi", f"--query-gpu={','.join(SMI_COLUMNS)}", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    again = parse_nvidia_smi_csv(smi.stdout, SMI_COLUMNS)
    assert again is not None
    assert [(g.name, g.cc) for g in host.gpus] == [(g.name, g.cc) for g in again.gpus]


@pytest.mark.gpu
def test_doctor_run_passes_on_this_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    assert main(["doctor", "--run", "--offline", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
