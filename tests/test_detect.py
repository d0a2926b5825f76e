"""Detection without a GPU: parsers on captured texts, and the fallback order with fake ``Sources`` passed in."""

from __future__ import annotations

import ctypes.util
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.errors import DetectionError
from cudaresolve.target.detect import NvmlUnavailable, Sources, detect_host, query_nvml, run_nvidia_smi
from cudaresolve.target.readings import (
    DETECT_HINT,
    SMI_COLUMNS,
    SMI_COLUMNS_OLD,
    DetectedGpu,
    Host,
    NvmlDevice,
    NvmlReading,
    host_from_nvml,
    parse_cuda_visible_devices,
    parse_nvidia_smi_csv,
    parse_proc_gpu_information,
    parse_proc_version,
    select_visible,
)
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence

FIXTURES = Path(__file__).parent / "fixtures"
SMI = FIXTURES / "nvidia-smi"
PROC = FIXTURES / "proc"
GIB80 = 80 * 1024**3

# Real GPU and MIG UUIDs of one A100 host (influxdata/telegraf#5812, `nvidia-smi -L`).
A100_UUIDS = (
    "GPU-513536b6-7d19-9063-b049-1e69664bb298",
    "GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95",
)
A100_MIGS = ("MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "MIG-a45882f0-9215-5733-a0c1-49286ab31cb5")


def smi(name: str) -> str:
    return (SMI / name).read_text(encoding="utf-8")


def gpu(index: int, name: str, cc: tuple[int, int] | None, **kw: object) -> DetectedGpu:
    return DetectedGpu(index=index, name=name, cc=ComputeCapability(*cc) if cc else None, **kw)  # type: ignore[arg-type]


# -- /proc ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "version"),
    [
        ("version-open-550.144.03.txt", "550.144.03"),
        ("version-proprietary-375.74.txt", "375.74"),
        ("version-open-565.57.01.txt", "565.57.01"),
        ("version-proprietary-515.65.01.txt", "515.65.01"),
        ("version-open-aarch64-540.4.0.txt", "540.4.0"),
    ],
)
def test_parse_proc_version_reads_both_banner_shapes(fixture: str, version: str) -> None:
    driver = parse_proc_version((PROC / fixture).read_text(encoding="utf-8"))
    assert driver == parse_driver(version)
    assert str(driver) == version


@pytest.mark.parametrize("text", ["", "GCC version:  gcc version 12.2.0 (GCC)\n", "NVRM version: NVIDIA UNIX\n"])
def test_parse_proc_version_without_a_version_is_a_detection_error(text: str) -> None:
    with pytest.raises(DetectionError, match="no driver version line"):
        parse_proc_version(text)


def test_parse_proc_gpu_information() -> None:
    seen = parse_proc_gpu_information((PROC / "gpu-information-gtx650.txt").read_text(encoding="utf-8"), index=3)
    assert seen == DetectedGpu(index=3, name="GeForce GTX 650", uuid="GPU-e3f822b9-8c5f-95a5-b379-8dfdeefd7758")


def test_parse_proc_gpu_information_needs_a_model() -> None:
    with pytest.raises(DetectionError, match="no Model line"):
        parse_proc_gpu_information("IRQ:   44\n")


# -- nvidia-smi -------------------------------------------------------------------------------


def test_parse_nvidia_smi_a100() -> None:
    host = parse_nvidia_smi_csv(smi("a100-sxm4-80gb-r580.txt"))
    assert host == Host(
        source="nvidia-smi",
        driver=parse_driver("580.126.09"),
        gpus=(gpu(0, "NVIDIA A100-SXM4-80GB", (8, 0), memory_mib=81920),),
    )


def test_parse_nvidia_smi_mixed_host_with_header_and_other_columns() -> None:
    columns = ("compute_cap", "compute_mode", "driver_version", "name", "index")
    host = parse_nvidia_smi_csv(smi("mixed-titanv-rtx5880-r570-header.txt"), columns)
    assert host is not None
    assert host.driver == parse_driver("570.86.15")
    assert host.gpus == (
        gpu(0, "NVIDIA TITAN V", (7, 0)),
        gpu(1, "NVIDIA RTX 5880 Ada Generation", (8, 9)),
    )


def test_parse_nvidia_smi_without_compute_cap_leaves_cc_unknown() -> None:
    columns = ("name", "memory.total", "driver_version", "pci.device_id")
    host = parse_nvidia_smi_csv(smi("rtx-a5000-r570-no-compute-cap.txt"), columns)
    assert host is not None
    assert host.gpus == (gpu(0, "NVIDIA RTX A5000", None, memory_mib=24564),)


@pytest.mark.parametrize(("memory", "expected"), [("81920", 81920), ("81920 MiB", 81920), ("[N/A]", None)])
def test_parse_nvidia_smi_memory_forms(memory: str, expected: int | None) -> None:
    host = parse_nvidia_smi_csv(f"NVIDIA GB10, 12.1, 580.95.05, {memory}\n")
    assert host is not None
    assert host.gpus[0].memory_mib == expected


def test_parse_nvidia_smi_no_rows_is_none() -> None:
    assert parse_nvidia_smi_csv("\n") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (smi("r470-compute-cap-not-valid.txt"), "printed 1 fields where 4 were asked"),
        ("NVIDIA A100, 8.0, abc, 81920 MiB\n", "unreadable driver version 'abc'"),
        ("NVIDIA A100, 8.x, 535.104.05, 81920 MiB\n", "unreadable compute_cap '8.x'"),
        ("NVIDIA A100, 8.0, 535.104.05, lots\n", "unreadable memory size 'lots'"),
    ],
)
def test_parse_nvidia_smi_garbage_is_a_detection_error(text: str, message: str) -> None:
    with pytest.raises(DetectionError, match=message) as info:
        parse_nvidia_smi_csv(text)
    assert info.value.exit_code == 2


# -- NVML reading -----------------------------------------------------------------------------


def mixed_reading() -> NvmlReading:
    return NvmlReading(
        driver="535.129.03",
        cuda_driver_version=12020,
        devices=(
            NvmlDevice(name="NVIDIA GeForce RTX 2080", cc=(7, 5), memory_total=8 * 1024**3, uuid="GPU-aaaa1111"),
            NvmlDevice(name="NVIDIA GeForce RTX 3090", cc=(8, 6), memory_total=24 * 1024**3, uuid="GPU-bbbb2222"),
        ),
    )


def test_host_from_nvml() -> None:
    host = host_from_nvml(mixed_reading())
    assert host == Host(
        source="nvml",
        driver=parse_driver("535.129.03"),
        cuda_driver=CudaVersion(12, 2),
        gpus=(
            gpu(0, "NVIDIA GeForce RTX 2080", (7, 5), memory_mib=8192, uuid="GPU-aaaa1111"),
            gpu(1, "NVIDIA GeForce RTX 3090", (8, 6), memory_mib=24576, uuid="GPU-bbbb2222"),
        ),
    )


def test_host_from_nvml_without_cuda_version_or_memory() -> None:
    reading = NvmlReading(
        driver="580.95.05", cuda_driver_version=0, devices=(NvmlDevice(name="NVIDIA GB10", cc=(12, 1)),)
    )
    host = host_from_nvml(reading)
    assert host.cuda_driver is None
    assert host.gpus == (gpu(0, "NVIDIA GB10", (12, 1)),)


def test_host_from_nvml_with_a_bad_driver_string() -> None:
    with pytest.raises(DetectionError, match="NVML reported an unreadable driver version 'abc'"):
        host_from_nvml(NvmlReading(driver="abc", cuda_driver_version=None))


@pytest.mark.skipif(ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has an NVML library")
def test_real_query_nvml_without_a_library_is_unavailable() -> None:
    with pytest.raises(NvmlUnavailable):
        query_nvml()


# -- CUDA_VISIBLE_DEVICES ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "count", "expected"),
    [
        (None, 4, None),
        ("", 4, ()),
        ("-1", 4, ()),
        ("0,2,-1,1", 4, (0, 2)),  # the example in NVIDIA's documentation
        ("2,1", 4, (2, 1)),
        (" 1 , 0 ", 2, (1, 0)),
        ("5", 4, ()),
        ("0,0,1", 2, (0,)),
        ("nope,0", 2, ()),
        ("GPU-8932f937", 2, ("GPU-8932f937",)),
        ("1,GPU-8932f937,MIG-ce861fb0", 2, (1, "GPU-8932f937", "MIG-ce861fb0")),
        ("GPU-", 2, ()),
    ],
)
def test_parse_cuda_visible_devices(value: str | None, count: int, expected: tuple[int | str, ...] | None) -> None:
    assert parse_cuda_visible_devices(value, count) == expected


MIXED = (
    gpu(0, "NVIDIA GeForce RTX 2080", (7, 5), uuid="GPU-aaaa1111"),
    gpu(1, "NVIDIA GeForce RTX 3090", (8, 6), uuid="GPU-bbbb2222"),
)
SAME = tuple(gpu(i, "NVIDIA A100-SXM4-80GB", (8, 0), uuid=u) for i, u in enumerate(A100_UUIDS))
SAME_MIG = (
    gpu(0, "NVIDIA A100-SXM4-80GB", (8, 0), uuid=A100_UUIDS[0], mig_uuids=A100_MIGS),
    gpu(1, "NVIDIA A100-SXM4-80GB", (8, 0), uuid=A100_UUIDS[1]),
)
NO_UUIDS = tuple(DetectedGpu(index=g.index, name=g.name, cc=g.cc) for g in MIXED)


@pytest.mark.parametrize(
    ("gpus", "value", "pci", "expected"),
    [
        (MIXED, None, False, MIXED),
        (MIXED, "1", True, (MIXED[1],)),
        (MIXED, "1,0", True, (MIXED[1], MIXED[0])),
        (MIXED, "1", False, MIXED),  # fastest-first order: which one is index 1 is unknown
        (MIXED, "GPU-bbbb", False, (MIXED[1],)),
        (MIXED, "GPU-BBBB", False, (MIXED[1],)),
        (MIXED, "GPU-cccc,GPU-aaaa", False, ()),  # an unknown UUID ends the list
        (MIXED, "GPU-", False, ()),  # not a UUID: CUDA stops there, so nothing is visible
        (MIXED, "", False, ()),
        (MIXED, "-1", True, ()),
        (SAME, "1", False, (SAME[1],)),
        (SAME_MIG, "MIG-a45882f0", False, (SAME_MIG[0],)),
        (SAME_MIG, f"MIG-{A100_UUIDS[1]}/1/0", False, (SAME_MIG[1],)),
        (NO_UUIDS, "GPU-bbbb", False, NO_UUIDS),  # nvidia-smi gave no UUIDs: keep both
        (NO_UUIDS, "0", True, (NO_UUIDS[0],)),
    ],
)
def test_select_visible(
    gpus: tuple[DetectedGpu, ...], value: str | None, pci: bool, expected: tuple[DetectedGpu, ...]
) -> None:
    selectors = parse_cuda_visible_devices(value, len(gpus))
    assert select_visible(gpus, selectors, pci_bus_order=pci) == expected


def test_select_visible_same_model_without_uuids_takes_one_per_selector() -> None:
    plain = tuple(DetectedGpu(index=g.index, name=g.name, cc=g.cc) for g in SAME)
    assert select_visible(plain, ("GPU-513536b6", "GPU-d8594bd4"), pci_bus_order=False) == plain
    assert select_visible(plain, ("GPU-513536b6",), pci_bus_order=False) == plain[:1]


# -- the cascade, with every source faked -----------------------------------------------------


class FakeSmi:
    """An nvidia-smi source (``Sources.nvidia_smi``): answers in turn and records the arguments."""

    def __init__(self, *answers: tuple[int, str] | None) -> None:
        self.answers = list(answers)
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str]) -> tuple[int, str] | None:
        self.calls.append(list(args))
        return self.answers.pop(0)


def query_args(columns: Sequence[str]) -> list[str]:
    return [f"--query-gpu={','.join(columns)}", "--format=csv,noheader"]


def no_nvml() -> NvmlReading:
    raise NvmlUnavailable("NVML Shared Library Not Found")


def broken_nvml() -> NvmlReading:
    raise DetectionError(
        Text.of("target.detect.nvml-init", error="RM has detected an NVML/RM version mismatch."),
        hint=DETECT_HINT,
    )


def write_proc(root: Path, version_fixture: str, information: dict[str, str]) -> Path:
    (root / "gpus").mkdir(parents=True)
    (root / "version").write_text((PROC / version_fixture).read_text(encoding="utf-8"), encoding="utf-8")
    for bus_id, text in information.items():
        (root / "gpus" / bus_id).mkdir()
        (root / "gpus" / bus_id / "information").write_text(text, encoding="utf-8")
    return root


# Same layout as gpu-information-gtx650.txt (canonical/lxd#3950), written for a Tesla T4.
T4_INFORMATION = (
    "Model:           Tesla T4\nIRQ:             38\nGPU UUID:        GPU-5d49bdf4-b8d0-21ce-9260-a89c66748d92\n"
    "Video BIOS:      90.04.38.00.03\nBus Type:        PCIe\nDMA Size:        47 bits\n"
    "DMA Mask:        0x7fffffffffff\nBus Location:    0000:00:1e.0\nDevice Minor:    0\n"
)


def test_nvml_answers_first(tmp_path: Path) -> None:
    smi_fake = FakeSmi()
    sources = Sources(nvml=mixed_reading, nvidia_smi=smi_fake, proc_dir=tmp_path / "absent")
    host = detect_host({}, sources=sources)
    assert host == host_from_nvml(mixed_reading())
    assert smi_fake.calls == []


def test_cuda_visible_devices_applies_to_the_nvml_reading(tmp_path: Path) -> None:
    env = {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    sources = Sources(nvml=mixed_reading, nvidia_smi=FakeSmi(), proc_dir=tmp_path)
    host = detect_host(env, sources=sources)
    assert host is not None
    assert [g.name for g in host.gpus] == ["NVIDIA GeForce RTX 3090"]
    hidden = detect_host({"CUDA_VISIBLE_DEVICES": ""}, sources=sources)
    assert hidden is not None
    assert hidden.gpus == ()
    assert hidden.driver == parse_driver("535.129.03")


def test_no_driver_anywhere_is_none(tmp_path: Path) -> None:
    not_installed = FakeSmi(None)
    sources = Sources(nvml=no_nvml, nvidia_smi=not_installed, proc_dir=tmp_path / "absent")
    assert detect_host({}, sources=sources) is None


@pytest.mark.parametrize(("code", "fixture"), [(9, "no-driver.txt"), (6, "no-driver.txt"), (255, "no-driver.txt")])
def test_nvidia_smi_without_a_driver_is_none(
    tmp_path: Path, code: int, fixture: str
) -> None:
    sources = Sources(nvml=no_nvml, nvidia_smi=FakeSmi((code, smi(fixture))), proc_dir=tmp_path / "absent")
    assert detect_host({}, sources=sources) is None


def test_nvidia_smi_answers_when_nvml_is_missing(tmp_path: Path) -> None:
    smi_fake = FakeSmi((0, smi("a100-sxm4-80gb-r580.txt")))
    sources = Sources(nvml=no_nvml, nvidia_smi=smi_fake, proc_dir=tmp_path / "absent")
    host = detect_host({}, sources=sources)
    assert host == parse_nvidia_smi_csv(smi("a100-sxm4-80gb-r580.txt"))
    assert smi_fake.calls == [query_args(SMI_COLUMNS)]


def test_old_nvidia_smi_is_asked_again_without_compute_cap(tmp_path: Path) -> None:
    # The second answer is written for this test (no capture of this query on R470 was found).
    smi_fake = FakeSmi(
        (2, smi("r470-compute-cap-not-valid.txt")), (0, "NVIDIA A800-SXM4-80GB, 470.129.06, 81251 MiB\n")
    )
    sources = Sources(nvml=no_nvml, nvidia_smi=smi_fake, proc_dir=tmp_path / "absent")
    host = detect_host({}, sources=sources)
    assert host == Host(
        source="nvidia-smi",
        driver=parse_driver("470.129.06"),
        gpus=(gpu(0, "NVIDIA A800-SXM4-80GB", None, memory_mib=81251),),
    )
    assert smi_fake.calls == [query_args(SMI_COLUMNS), query_args(SMI_COLUMNS_OLD)]


def test_proc_answers_when_nvml_and_nvidia_smi_fail(tmp_path: Path) -> None:
    mismatch = (18, smi("nvml-mismatch.txt"))
    gtx650 = (PROC / "gpu-information-gtx650.txt").read_text(encoding="utf-8")
    proc = write_proc(
        tmp_path / "nvidia", "version-open-565.57.01.txt", {"0000:04:00.0": gtx650, "0000:00:1e.0": T4_INFORMATION}
    )
    sources = Sources(nvml=broken_nvml, nvidia_smi=FakeSmi(mismatch, mismatch), proc_dir=proc)
    host = detect_host({}, sources=sources)
    assert host == Host(
        source="proc",
        driver=parse_driver("565.57.01"),
        gpus=(  # sorted by PCI bus id
            DetectedGpu(index=0, name="Tesla T4", uuid="GPU-5d49bdf4-b8d0-21ce-9260-a89c66748d92"),
            DetectedGpu(index=1, name="GeForce GTX 650", uuid="GPU-e3f822b9-8c5f-95a5-b379-8dfdeefd7758"),
        ),
    )
    visible = detect_host({"CUDA_VISIBLE_DEVICES": "GPU-e3f8"}, sources=sources)
    assert visible is not None
    assert [g.name for g in visible.gpus] == ["GeForce GTX 650"]


def test_nvml_failing_with_no_fallback_raises_its_error(tmp_path: Path) -> None:
    failing_smi = FakeSmi((18, smi("nvml-mismatch.txt")))
    sources = Sources(nvml=broken_nvml, nvidia_smi=failing_smi, proc_dir=tmp_path / "absent")
    with pytest.raises(DetectionError, match="NVML failed to initialise") as info:
        detect_host({}, sources=sources)
    assert info.value.code == "nvml-failed"
    assert info.value.exit_code == 2


def test_nvidia_smi_failing_alone_raises(tmp_path: Path) -> None:
    failing_smi = FakeSmi((18, smi("nvml-mismatch.txt")))
    sources = Sources(nvml=no_nvml, nvidia_smi=failing_smi, proc_dir=tmp_path / "absent")
    with pytest.raises(DetectionError) as info:
        detect_host({}, sources=sources)
    assert (
        info.value.message == "nvidia-smi failed (exit 18): Failed to initialize NVML: Driver/library version mismatch"
    )


# -- a real GPU -------------------------------------------------------------------------------


@pytest.mark.gpu
def test_real_nvml_reading() -> None:
    try:
        reading = query_nvml()
    except NvmlUnavailable:
        pytest.skip("no NVML library or no NVIDIA driver here")
    assert reading.devices, "NVML initialised but listed no GPU"
    host = host_from_nvml(reading)
    assert host.driver.branch >= 400
    assert host.cuda_driver is not None
    assert host.cuda_driver.major >= 11
    for seen in host.gpus:
        assert seen.cc is not None
        assert seen.cc.major >= 3
        assert seen.uuid is not None
        assert seen.uuid.startswith("GPU-")
        assert seen.memory_mib is None or seen.memory_mib > 1024
    result = run_nvidia_smi([f"--query-gpu={','.join(SMI_COLUMNS)}", "--format=csv,noheader"])
    if result is not None and result[0] == 0:  # nvidia-smi agrees with NVML
        smi_host = parse_nvidia_smi_csv(result[1])
        assert smi_host is not None
        assert smi_host.driver == host.driver
        assert [(g.name, g.cc) for g in smi_host.gpus] == [(g.name, g.cc) for g in host.gpus]


def test_unreadable_proc_gpu_entry_is_a_detection_error(tmp_path: Path) -> None:
    proc = write_proc(tmp_path / "nvidia", "version-open-550.144.03.txt", {})
    (proc / "gpus" / "0000:01:00.0").mkdir()  # a GPU directory without its information file
    sources = Sources(nvml=no_nvml, nvidia_smi=FakeSmi(None), proc_dir=proc)
    with pytest.raises(DetectionError) as info:
        detect_host({}, sources=sources)
    assert info.value.message == f"cannot read {proc / 'gpus'}: No such file or directory"
