""".pt2 AOTInductor packages: device, compute capability and kernel SMs, read from the zip."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cudaresolve.binaries.aoti import package_report, read_package
from cudaresolve.binaries.aoti_check import check_package
from cudaresolve.binaries.inspect import inspect_path
from cudaresolve.cli import main
from cudaresolve.core.archs import ComputeCapability
from cudaresolve.text.catalogue import format_text as words

if TYPE_CHECKING:
    import pytest

    from cudaresolve.binaries.report import AotiPackage

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
CUDA_H100 = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": "90", "AOTI_PLATFORM": "linux",
             "AOTI_MACHINE": "x86_64", "AOTI_CPU_ISA": "VEC512", "model_version": "7"}


NOTELESS = "sm_90a without its .note.nv.tkinfo"


def make_pt2(path: Path, *, metadata: dict[str, Any] | str | None = None, kernels: dict[str, str] | None = None,
             model: str = "model") -> Path:
    """The layout torch.export.pt2_archive writes: a root folder named after the archive, members stored."""
    root = path.stem
    base = f"{root}/data/aotinductor/{model}"
    kernels = {"cabc.so": "nogpu.so", "triton_poi_fused_0.cubin": NOTELESS} if kernels is None else kernels
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{root}/archive_format", "pt2")
        archive.writestr(f"{root}/archive_version", "0")
        archive.writestr(f"{root}/.data/version", "6\n")
        if metadata is not None:
            text = metadata if isinstance(metadata, str) else json.dumps(metadata)
            archive.writestr(f"{base}/cabc_metadata.json", text)
        archive.writestr(f"{base}/cabc.cpp", "// generated\n")
        for name, fixture in kernels.items():
            if fixture == NOTELESS:  # the cubin with its toolkit note renamed: its suffix is then Triton's name's
                data = (FIXTURES / "sm_90a.cubin").read_bytes().replace(b".note.nv.tkinfo", b".note.nv.zzinfo")
                archive.writestr(f"{base}/{name}", data)
            else:
                archive.write(FIXTURES / fixture, f"{base}/{name}")
        archive.writestr(f"{root}/data/weights/weight_0", b"\0" * 64)
    return path


def test_cuda_package_reports_device_and_kernel_sms(tmp_path: Path) -> None:
    path = make_pt2(tmp_path / "model.pt2", metadata=CUDA_H100)
    report = package_report(path)
    assert (report.format, report.sass, report.ptx, report.error) == ("aoti", ("sm_90a",), (), None)
    package = report.package
    assert package is not None and package.devices == ("cuda",)
    (model,) = package.models
    assert (model.name, model.device, model.compute_capability) == ("model", "cuda", ComputeCapability(9, 0))
    assert [Path(k.path.split("!")[1]).name for k in model.kernels] == ["cabc.so", "triton_poi_fused_0.cubin"]
    assert tuple(map(words, model.notes)) == (
        "model/data/aotinductor/model/triton_poi_fused_0.cubin: 'a' suffix inferred for sm_90a (Triton's naming)",)


def test_to_dict(tmp_path: Path) -> None:
    data = package_report(make_pt2(tmp_path / "m.pt2", metadata=CUDA_H100)).to_dict()
    assert data["format"] == "aoti" and data["sass"] == ["sm_90a"]
    model = data["aoti"]["models"][0]
    assert {k: model[k] for k in ("name", "device", "compute_capability", "platform", "machine", "sass", "ptx")} == {
        "name": "model", "device": "cuda", "compute_capability": "9.0", "platform": "linux", "machine": "x86_64",
        "sass": ["sm_90a"], "ptx": []}
    assert data["aoti"]["devices"] == ["cuda"]


def test_kernels_in_a_fatbin_and_the_so(tmp_path: Path) -> None:
    path = make_pt2(tmp_path / "m.pt2", metadata={**CUDA_H100, "AOTI_COMPUTE_CAPABILITY": "100"},
                    kernels={"m.so": "embedded.so", "k0.fatbin": "kernel.fatbin"})
    report = package_report(path)
    assert (report.sass, report.ptx) == (("sm_75", "sm_90a"), ("compute_120",))
    assert report.package is not None
    assert report.package.models[0].compute_capability == ComputeCapability(10, 0)


def test_cpu_package(tmp_path: Path) -> None:
    metadata = {"AOTI_DEVICE_KEY": "cpu", "AOTI_COMPUTE_CAPABILITY": "", "AOTI_PLATFORM": "linux"}
    report = package_report(make_pt2(tmp_path / "cpu.pt2", metadata=metadata, kernels={"c.so": "nogpu.so"}))
    assert report.package is not None
    (model,) = report.package.models
    assert (model.device, model.compute_capability, report.sass) == ("cpu", None, ())


def test_missing_or_bad_metadata_is_a_note(tmp_path: Path) -> None:
    missing = package_report(make_pt2(tmp_path / "a.pt2", metadata=None)).package
    assert missing is not None and missing.models[0].device is None
    assert words(missing.models[0].notes[0]) == (
        "model model has no *_metadata.json: the device it was compiled for is unknown")
    bad = package_report(make_pt2(tmp_path / "b.pt2", metadata="{not json")).package
    assert bad is not None and words(bad.models[0].notes[0]).startswith("model model: ")
    assert "is not JSON" in words(bad.models[0].notes[0])
    listed = package_report(make_pt2(tmp_path / "c.pt2", metadata="[1, 2]")).package
    assert listed is not None and "is not a JSON object" in words(listed.models[0].notes[0])


def test_damaged_kernel_is_a_package_error(tmp_path: Path) -> None:
    path = make_pt2(tmp_path / "m.pt2", metadata=CUDA_H100, kernels={"k.cubin": "kernel.cu"})
    report = package_report(path)
    assert report.error is not None and report.error.code == "invalid-binary"
    assert words(report.error.text).startswith("1 kernel file(s) unreadable; first: ")


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "junk.pt2"
    path.write_bytes(b"\0" * 100)
    report = package_report(path)
    assert report.error is not None and words(report.error.text).startswith("cannot read package:")


def test_inspect_path_and_cli_dispatch_pt2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_pt2(tmp_path / "model.pt2", metadata=CUDA_H100)
    (report,) = inspect_path(path)
    assert report.format == "aoti"
    assert [r.format for r in inspect_path(tmp_path)] == ["aoti"]
    assert main(["inspect", str(path), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert (entry["sass"], entry["aoti"]["models"][0]["compute_capability"]) == (["sm_90a"], "9.0")
    assert main(["inspect", str(path)]) == 0
    assert "model model for device cuda, compiled on a 9.0 GPU; kernels sm_90a" in capsys.readouterr().out


def _package(tmp_path: Path, **kwargs: Any) -> AotiPackage:
    with zipfile.ZipFile(make_pt2(tmp_path / "m.pt2", **kwargs)) as archive:
        return read_package(archive, "m.pt2")


def test_check_package_on_matching_and_other_gpus(tmp_path: Path) -> None:
    package = _package(tmp_path, metadata=CUDA_H100)
    assert check_package(package, [ComputeCapability(9, 0)]) == ()
    (finding,) = check_package(package, [ComputeCapability(9, 0), ComputeCapability(8, 6)])
    assert (finding.code, finding.required, finding.found) == ("sm-not-covered", "8.6", "sm_90a")
    assert finding.message == ("model 'model' has kernels for sm_90a, none of which runs on a 8.6 GPU; "
                               "compile the package again on that GPU")


def test_check_package_runner_device(tmp_path: Path) -> None:
    package = _package(tmp_path, metadata=CUDA_H100)
    (cpu_host,) = check_package(package, [])
    assert (cpu_host.code, cpu_host.required, cpu_host.found) == ("aoti-device-mismatch", "cuda", "cpu")
    (cpu_runner,) = check_package(package, [ComputeCapability(9, 0)], runner_device="cpu")
    assert "invalid argument" in cpu_runner.message
    (tmp_path / "cpu").mkdir()
    cpu = _package(tmp_path / "cpu", metadata={"AOTI_DEVICE_KEY": "cpu"}, kernels={"c.so": "nogpu.so"})
    assert check_package(cpu, []) == ()


def test_check_package_falls_back_to_metadata_without_kernels(tmp_path: Path) -> None:
    package = _package(tmp_path, metadata={**CUDA_H100, "AOTI_COMPUTE_CAPABILITY": "100"},
                       kernels={"m.so": "nogpu.so"})
    assert check_package(package, [ComputeCapability(10, 0)]) == ()
    (finding,) = check_package(package, [ComputeCapability(10, 3)])
    assert finding.found == "sm_100a"


def test_notes_and_errors_are_said_in_chinese(tmp_path: Path) -> None:
    package = package_report(make_pt2(tmp_path / "m.pt2", metadata=CUDA_H100)).package
    assert package is not None
    assert words(package.models[0].notes[0], "zh") == (
        "m/data/aotinductor/model/triton_poi_fused_0.cubin：按 Triton 的命名规则，推断 sm_90a 带有后缀 'a'")  # noqa: RUF001
    junk = tmp_path / "junk.pt2"
    junk.write_bytes(b"\0" * 100)
    error = package_report(junk).error
    assert error is not None and words(error.text, "zh").startswith("无法读取包：")  # noqa: RUF001


def test_a_kernel_cubin_with_its_toolkit_note_needs_no_inference(tmp_path: Path) -> None:
    path = make_pt2(tmp_path / "m.pt2", metadata=CUDA_H100,
                    kernels={"cabc.so": "nogpu.so", "triton_poi_fused_0.cubin": "sm_90a.cubin"})  # fmt: skip
    report = package_report(path)
    assert report.sass == ("sm_90a",)
    assert report.package is not None and report.package.models[0].notes == ()
