"""``doctor --run`` without a GPU: fake packages on a fake interpreter (a venv) and fake detection.

The fakes (``fixtures/fakegpu``) run the real snippets of ``doctor/smoke.toml``; ``_fakegpu`` makes
each op pass, raise a real CUDA error text, warn, compute a wrong answer, hang, exit, segfault or
eat memory, per package and per GPU (``CUDA_VISIBLE_DEVICES``, which the parent sets per child).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from cudaresolve.cli import main
from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.doctor.child import ChildLimits
from cudaresolve.doctor.smoke import RunReport, gpu_slots, load_snippets, run_smoke
from cudaresolve.target import detect
from cudaresolve.target.detect import Sources
from cudaresolve.target.readings import DetectedGpu, Host, NvmlDevice, NvmlReading
from cudaresolve.text.catalogue import format_text
from test_cli_detect import no_nvml
from test_doctor import DB_DATA, make_dist, make_pt2, make_target

FAKES = Path(__file__).parent / "fixtures" / "fakegpu"
NO_KERNEL = ("CUDA error: no kernel image is available for execution on the device\nCUDA kernel errors might be "
             "asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
H100 = DetectedGpu(index=0, name="NVIDIA H100 80GB HBM3", cc=ComputeCapability(9, 0), uuid="GPU-aaaa")
A100 = DetectedGpu(index=1, name="NVIDIA A100-SXM4-80GB", cc=ComputeCapability(8, 0), uuid="GPU-bbbb")
HOST = Host(source="nvml", driver=parse_driver("570.86.15"), gpus=(H100, A100))
DISTS = {"torch": "2.7.1+cu126", "torchvision": "0.22.1+cu126", "torchaudio": "2.7.1+cu126",
         "fbgemm-gpu": "1.2.0+cu126", "torchrec": "1.2.0", "xformers": "0.0.31", "flashinfer-python": "0.2.0"}
SNIPPET_PACKAGES = ["torch", "torchvision", "torchaudio", "fbgemm-gpu", "xformers", "flashinfer-python"]


@pytest.fixture
def db() -> CompatDB:
    return CompatDB.from_dict(copy.deepcopy(DB_DATA))


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    """A venv whose site-packages holds the fake GPU packages, each with its dist-info."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    modules = {"torch": ["torch", "_fakegpu.py"], "torchvision": ["torchvision"], "torchaudio": ["torchaudio"],
               "fbgemm-gpu": ["fbgemm_gpu"], "xformers": ["xformers"], "flashinfer-python": ["flashinfer"]}
    for name, version in DISTS.items():
        files: dict[str, str | Path] = {}
        for top in modules.get(name, []):
            source = FAKES / top
            for path in [source] if source.is_file() else sorted(source.rglob("*.py")):
                files[str(path.relative_to(FAKES))] = path
        make_dist(site, name, version, files)
    make_dist(site, "nvidia-cuda-runtime-cu12", "12.6.77")
    return str(python)


@pytest.fixture
def fake_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``fake_gpu(config)`` sets how the fake GPU behaves in every child started from now on."""
    path = tmp_path / "fakegpu.json"

    def configure(config: dict[str, Any]) -> None:
        path.write_text(json.dumps(config))
        monkeypatch.setenv("FAKEGPU_CONFIG", str(path))

    configure({})
    return configure


def smoke(python: str, db: CompatDB, *, host: Host | None = HOST, installed: list[str] | None = None,
          limits: ChildLimits | None = None) -> RunReport:
    target = make_target() if host is None else None
    return run_smoke(python, installed or list(DISTS), detect=lambda: host, db=db, target=target,
                     limits=limits or ChildLimits(timeout_s=30, total_s=300))


def outcomes(report: RunReport) -> dict[tuple[str, int], str]:
    return {(r.package, r.gpu.index): r.status for r in report.runs}


# -- the table --------------------------------------------------------------------------------


def test_every_snippet_names_a_package_of_the_shipped_database() -> None:
    kinds = set(load_compat().package_kinds)
    names = [n for s in load_snippets() for n in s.names]
    assert set(SNIPPET_PACKAGES) <= set(names)
    assert set(names) <= kinds
    assert len(names) == len(set(names))
    for snippet in load_snippets():
        compile(snippet.code, snippet.names[0], "exec")  # each is Python


def test_gpu_slots_give_each_child_one_gpu() -> None:
    mig = DetectedGpu(index=2, name="NVIDIA A100", cc=ComputeCapability(8, 0), uuid="GPU-c", mig_uuids=("MIG-1",))
    bare = DetectedGpu(index=5, name="NVIDIA A100", cc=None)
    host = Host(source="nvidia-smi", driver=parse_driver("570.86.15"), gpus=(H100, mig, bare))
    slots = gpu_slots(host)
    assert [(s.index, s.visible, s.cc) for s in slots] == [(0, "GPU-aaaa", "9.0"), (1, "MIG-1", "8.0"), (2, "5", None)]
    assert gpu_slots(None) == ()


# -- each branch ------------------------------------------------------------------------------


def test_every_package_passes_on_every_gpu(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    report = smoke(fake_python, db)
    assert outcomes(report) == {(p, i): "ok" for i in (0, 1) for p in SNIPPET_PACKAGES}
    assert report.ok and report.untested == ("torchrec",)
    data = report.to_dict()
    assert data["gpu"] is True and [g["name"] for g in data["run_gpus"]] == [H100.name, A100.name]
    assert data["runs"][0] == {"package": "torch", "gpu": 0, "gpu_name": H100.name, "ok": True, "status": "ok",
                               "seconds": data["runs"][0]["seconds"]}


def test_a_real_cuda_error_is_explained_on_that_gpu_alone(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"xformers": {"GPU-bbbb": "raise:" + NO_KERNEL}})
    report = smoke(fake_python, db)
    failed = [r for r in report.runs if not r.ok]
    assert [(r.package, r.gpu.index, r.status) for r in failed] == [("xformers", 1, "error")]
    run = failed[0]
    error = format_text(run.error) if run.error else ""
    assert error.startswith("Traceback") and error.rstrip().endswith("might be incorrect.")
    assert "RuntimeError: CUDA error: no kernel image is available" in error
    assert [e.code for e in run.explanations] == ["no-kernel-image"]
    assert "xformers" in format_text(run.explanations[0].cause)  # found from the traceback's xformers/ops.py
    data = run.to_dict()
    assert data["ok"] is False and data["matches"] == ["no-kernel-image"] and data["fixes"]
    assert not report.ok


def test_an_error_nobody_knows_has_no_cause(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"fbgemm-gpu": {"*": "raise:something odd"}})
    run = next(r for r in smoke(fake_python, db, installed=["torch", "fbgemm-gpu"]).runs if not r.ok)
    assert run.explanations == () and "cause" not in run.to_dict()
    assert format_text(run.error).endswith("RuntimeError: something odd") if run.error else False


def test_a_wrong_answer_fails(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"torch": {"GPU-aaaa": "wrong"}, "fbgemm-gpu": {"*": "wrong"}})
    report = smoke(fake_python, db, installed=["torch", "fbgemm-gpu"])
    assert outcomes(report) == {("torch", 0): "error", ("fbgemm-gpu", 0): "error",
                                ("torch", 1): "ok", ("fbgemm-gpu", 1): "error"}
    texts = [format_text(r.error) for r in report.runs if r.error]
    assert "AssertionError: wrong result: (ones @ ones) * 2 + 1 summed" in texts[0]


def test_a_hang_is_killed_at_the_child_bound(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"torchvision": {"GPU-aaaa": "hang"}})
    start = time.monotonic()
    report = smoke(fake_python, db, installed=["torchvision"], limits=ChildLimits(timeout_s=2, total_s=60))
    assert time.monotonic() - start < 15
    assert outcomes(report) == {("torchvision", 0): "timeout", ("torchvision", 1): "ok"}
    assert format_text(report.runs[0].error) == "did not finish within 2 s; the child was killed"


def test_the_whole_run_has_one_bound(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"torch": {"*": "hang"}})
    start = time.monotonic()
    report = smoke(fake_python, db, installed=["torch", "xformers"], limits=ChildLimits(timeout_s=60, total_s=2))
    assert time.monotonic() - start < 15
    assert outcomes(report) == {("torch", 0): "timeout", ("xformers", 0): "not-run",
                                ("torch", 1): "not-run", ("xformers", 1): "not-run"}
    assert format_text(report.runs[0].error) == "did not finish within 2 s; the child was killed"  # not 60
    assert format_text(report.runs[1].error) == "not run: the whole run's bound of 2 s was spent"
    assert not report.ok


@pytest.mark.parametrize(("behaviour", "how"), [("exit", "exit 3"), ("segv", "SIGSEGV")])
def test_a_crashed_child_fails_without_a_result(
    fake_python: str, fake_gpu: Any, db: CompatDB, behaviour: str, how: str,
) -> None:
    fake_gpu({"flashinfer-python": {"*": behaviour}})
    report = smoke(fake_python, db, installed=["flashinfer-python"])
    assert [r.status for r in report.runs] == ["crash", "crash"]
    assert format_text(report.runs[0].error).startswith(f"the child ended without a result ({how})")


def test_memory_past_the_bound_kills_the_child(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"torchaudio": {"GPU-bbbb": "memory"}})
    report = smoke(fake_python, db, installed=["torchaudio"], limits=ChildLimits(timeout_s=60, memory_mib=200))
    assert outcomes(report) == {("torchaudio", 0): "ok", ("torchaudio", 1): "memory"}
    assert format_text(report.runs[1].error) == "used more than 200 MiB of memory; the child was killed"


def test_an_arch_list_without_the_gpu_fails_torch(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"arch_list": ["sm_80", "sm_86"], "capability": {"GPU-aaaa": [9, 0], "GPU-bbbb": [8, 0]}})
    report = smoke(fake_python, db, installed=["torch"])
    assert outcomes(report) == {("torch", 0): "arch-list", ("torch", 1): "ok"}
    run = report.runs[0]
    assert format_text(run.error) == "torch.cuda.get_arch_list() is [sm_80 sm_86]: no code for sm_90"
    assert [e.code for e in run.explanations] == ["torch-sm-unsupported"]
    assert "sm_90" in format_text(run.explanations[0].cause)


def test_ptx_in_the_arch_list_reaches_a_newer_gpu(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    fake_gpu({"arch_list": ["sm_80", "compute_80"], "capability": {"*": [9, 0]}})
    assert outcomes(smoke(fake_python, db, installed=["torch"])) == {("torch", 0): "ok", ("torch", 1): "ok"}


def test_torch_warnings_reach_the_matcher(fake_python: str, fake_gpu: Any, db: CompatDB) -> None:
    warning = ("NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible with the current PyTorch "
               "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_80.")
    fake_gpu({"torchvision": {"*": "raise:" + NO_KERNEL}, "torch": {"*": "warn:" + warning}})
    report = smoke(fake_python, db, installed=["torch", "torchvision"], host=Host(
        source="nvml", driver=parse_driver("570.86.15"), gpus=(H100,)))
    assert outcomes(report) == {("torch", 0): "ok", ("torchvision", 0): "error"}
    assert [e.code for e in report.runs[1].explanations] == ["no-kernel-image"]


def test_an_interpreter_that_cannot_start(tmp_path: Path, db: CompatDB) -> None:
    report = smoke(str(tmp_path / "no-python"), db, installed=["torch"])
    assert [r.status for r in report.runs] == ["not-started", "not-started"]
    assert "could not be started" in format_text(report.runs[0].error)


def test_no_gpu_runs_nothing(fake_python: str, db: CompatDB) -> None:
    report = smoke(fake_python, db, host=None)
    assert (report.gpus, report.runs, report.ok) == ((), (), True)
    assert report.to_dict()["gpu"] is False


# -- through the command line -----------------------------------------------------------------


@pytest.fixture
def compat(tmp_path: Path) -> list[str]:
    path = tmp_path / "compat.toml"
    path.write_text(tomlkit.dumps(DB_DATA))
    return ["--compat", str(path)]


def machine(monkeypatch: pytest.MonkeyPatch, *devices: NvmlDevice) -> None:
    """This machine's NVML answers with ``devices`` (none: no NVIDIA driver at all)."""
    def reading() -> NvmlReading:
        return NvmlReading(driver="570.86.15", cuda_driver_version=12080, devices=devices)

    proc = Path(__file__).parent / "absent"
    sources = Sources(nvml=reading if devices else no_nvml, nvidia_smi=lambda args: None, proc_dir=proc)
    monkeypatch.setattr(detect, "SYSTEM", sources)


TARGET = ["--gpu", "A100", "--driver", "570.86.15", "--python-version", "3.11", "--platform", "linux_x86_64"]


def test_cli_json_runs_and_exit_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fake_python: str, fake_gpu: Any,
    compat: list[str],
) -> None:
    machine(monkeypatch, NvmlDevice(name="NVIDIA A100-SXM4-80GB", cc=(8, 0), memory_total=None, uuid="GPU-bbbb"))
    code = main(["doctor", "--python", fake_python, *TARGET, *compat, "--run", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert (code, data["ok"], data["gpu"], len(data["runs"])) == (0, True, True, 6)
    assert data["untested"] == ["torchrec"]
    fake_gpu({"fbgemm-gpu": {"GPU-bbbb": "raise:" + NO_KERNEL}})
    code = main(["doctor", "--python", fake_python, *TARGET, *compat, "--run", "--json"])
    data = json.loads(capsys.readouterr().out)
    failed = [r for r in data["runs"] if not r["ok"]]
    assert (code, data["ok"], [r["package"] for r in failed]) == (1, False, ["fbgemm-gpu"])
    assert "no kernel image" in failed[0]["error"] and "fbgemm" in failed[0]["cause"] and failed[0]["fixes"]
    assert isinstance(failed[0]["fixes"][0], str)


def test_cli_human_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fake_python: str, fake_gpu: Any,
    compat: list[str],
) -> None:
    machine(monkeypatch, NvmlDevice(name="NVIDIA A100-SXM4-80GB", cc=(8, 0), memory_total=None, uuid="GPU-bbbb"))
    fake_gpu({"xformers": {"*": "raise:" + NO_KERNEL}})
    code = main(["doctor", "--python", fake_python, *TARGET, *compat, "--run"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"doctor --run with {fake_python}, one child per package and GPU:" in out
    assert "✓ torch on GPU 0 (NVIDIA A100-SXM4-80GB): pass in" in out
    assert "✗ xformers on GPU 0 (NVIDIA A100-SXM4-80GB): FAIL in" in out
    assert "RuntimeError: CUDA error: no kernel image is available" in out and "cause: " in out
    assert "no operation to run for: torchrec" in out
    assert out.rstrip().endswith("1 problem(s), 0 warning(s)")  # the failed run; the static checks are clean


def test_cli_no_gpu_is_static_checks_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fake_python: str, fake_gpu: Any,
    compat: list[str],
) -> None:
    machine(monkeypatch)
    fake_gpu({"torch": {"*": "raise:" + NO_KERNEL}})  # never run: there is no GPU
    code = main(["doctor", "--python", fake_python, *TARGET, *compat, "--run"])
    out = capsys.readouterr().out
    assert code == 0  # the static doctor's exit code
    assert "no GPU: static checks only" in out
    code = main(["doctor", "--python", fake_python, *TARGET, *compat, "--run", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert (code, data["gpu"], data["runs"], data["run_gpus"]) == (0, False, [], [])


def test_cli_without_run_keeps_the_json_as_it_was(
    capsys: pytest.CaptureFixture[str], fake_python: str, compat: list[str],
) -> None:
    main(["doctor", "--python", fake_python, *TARGET, *compat, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert not {"gpu", "runs", "run_gpus", "untested", "run_python"} & set(data)


@pytest.mark.parametrize("argv", [["--run-timeout", "0"], ["--run-memory", "lots"], ["--run-budget", "inf"]])
def test_cli_bad_bounds_are_one_line(capsys: pytest.CaptureFixture[str], compat: list[str], argv: list[str]) -> None:
    code = main(["doctor", *TARGET, *compat, "--run", *argv])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: invalid-input: ") and argv[0] in err and len(err.splitlines()) == 1


def test_cli_run_needs_an_interpreter(capsys: pytest.CaptureFixture[str], tmp_path: Path, compat: list[str]) -> None:
    code = main(["doctor", "--site-packages", str(tmp_path), *TARGET, *compat, "--run"])
    err = capsys.readouterr().err
    assert code == 1 and "--run runs the environment's own interpreter" in err



# -- AOTInductor packages ---------------------------------------------------------------------


def pt2_file(path: Path, device: str, *, sample: str | None = "[1.0, 2.0]") -> Path:
    make_pt2(path, device, "90" if device == "cuda" else "")
    if sample is not None:
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr(f"{path.stem}/data/sample_inputs/model.pt", sample)
    return path


def test_a_pt2_is_loaded_and_run_on_each_gpu(fake_python: str, fake_gpu: Any, db: CompatDB, tmp_path: Path) -> None:
    path = str(pt2_file(tmp_path / "model.pt2", "cuda"))
    bare = str(pt2_file(tmp_path / "bare.pt2", "cuda", sample=None))
    report = run_smoke(fake_python, ["torch"], detect=lambda: HOST, db=db, pt2=[(path, "cuda"), (bare, "cuda")])
    assert outcomes(report) == {(name, i): "ok" for i in (0, 1) for name in ("torch", path, bare)}
    notes = {r.package: r.note for r in report.runs}
    assert notes[path] is None
    assert format_text(notes[bare]).startswith("loaded with the runner its metadata names, but not run")


def test_a_pt2_on_the_wrong_device_is_explained(
    fake_python: str, fake_gpu: Any, db: CompatDB, tmp_path: Path,
) -> None:
    fake_gpu({"pt2": {"*": "raise:run_func_( container_handle_, input_handles) API call failed at "
                            "model_container_runner.cpp, line 125\nCUDA error: invalid argument"}})
    path = str(pt2_file(tmp_path / "cpu.pt2", "cpu"))
    report = run_smoke(fake_python, [], detect=lambda: HOST, db=db, pt2=[(path, "cpu")])
    assert [(r.package, r.status) for r in report.runs] == [(path, "error"), (path, "error")]
    assert [e.code for e in report.runs[0].explanations] == ["aoti-device-mismatch"]


def test_cli_runs_a_pt2_given_with_pt2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fake_python: str, fake_gpu: Any,
    compat: list[str], tmp_path: Path,
) -> None:
    machine(monkeypatch, NvmlDevice(name="NVIDIA A100-SXM4-80GB", cc=(8, 0), memory_total=None, uuid="GPU-bbbb"))
    path = pt2_file(tmp_path / "model.pt2", "cuda")
    main(["doctor", "--python", fake_python, *TARGET, *compat, "--run", "--pt2", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [(r["package"], r["ok"]) for r in data["runs"]][-1] == (str(path), True)
