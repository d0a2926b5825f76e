"""Building the Target: GPU names and CCs, what wins over what, host files, detection faked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.platforms import normalize_platform
from cudaresolve.core.versions import CudaVersion, parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import DetectionError, InvalidArch, InvalidDriver, InvalidInput, UnknownGpu
from cudaresolve.target.build import (
    HOST_FILE_MAX_BYTES,
    TargetOptions,
    build_target,
    load_host_file,
    resolve_gpu,
    split_gpu_list,
    target_from_dict,
    target_from_host,
    this_platform,
    this_python,
)
from cudaresolve.target.model import Gpu, Target
from cudaresolve.target.readings import DetectedGpu, Host

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

#: "470.129.06" in Arabic-Indic digits: str.isdigit, \\d and int() take them (issue 12, item 5).
ARABIC_DRIVER = "\u0664\u0667\u0660.\u0661\u0662\u0669.\u0660\u0666"
HOSTS = Path(__file__).parent / "fixtures" / "hosts"


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(HOSTS / "compat-detect.toml")


def no_detection(environ: Mapping[str, str]) -> Host | None:
    raise AssertionError("detection must not run when the target is declared")


def detected(host: Host | None) -> Callable[[Mapping[str, str]], Host | None]:
    return lambda environ: host


MIXED_HOST = Host(
    source="nvml",
    driver=parse_driver("535.129.03"),
    cuda_driver=CudaVersion(12, 2),
    gpus=(
        DetectedGpu(index=0, name="NVIDIA GeForce RTX 2080", cc=ComputeCapability(7, 5), memory_mib=8192),
        DetectedGpu(index=1, name="NVIDIA GeForce RTX 3090", cc=ComputeCapability(8, 6), memory_mib=24576),
    ),
)
RTX2080 = Gpu(name="NVIDIA GeForce RTX 2080", cc=ComputeCapability(7, 5), memory_mib=8192)
RTX3090 = Gpu(name="NVIDIA GeForce RTX 3090", cc=ComputeCapability(8, 6), memory_mib=24576)
A800 = Gpu(name="NVIDIA A800", cc=ComputeCapability(8, 0), datacenter=True)


def build(db: CompatDB, env: Mapping[str, str] | None = None, detect: Any = no_detection, **options: Any) -> Target:
    defaults: dict[str, Any] = {"python": "3.11", "platform": "linux_x86_64"}
    return build_target(TargetOptions(**{**defaults, **options}), db, environ=env or {}, detect=detect)


# -- GPU names and compute capabilities ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A800", A800),
        ("a800", A800),
        ("NVIDIA A800-SXM4-80GB", A800),
        ("RTX 3090", Gpu(name="NVIDIA GeForce RTX 3090", cc=ComputeCapability(8, 6))),
        ("GeForce GTX 1080 Ti", Gpu(name="NVIDIA GeForce GTX 1080 Ti", cc=ComputeCapability(6, 1))),
        ("8.6", Gpu(name="sm_86", cc=ComputeCapability(8, 6))),
        ("sm_86", Gpu(name="sm_86", cc=ComputeCapability(8, 6))),
        ("86", Gpu(name="sm_86", cc=ComputeCapability(8, 6))),
        # every 8.0 part in the database is a data-center one, every 8.7 part a Jetson
        ("8.0", Gpu(name="sm_80", cc=ComputeCapability(8, 0), datacenter=True)),
        ("8.7", Gpu(name="sm_87", cc=ComputeCapability(8, 7), tegra=True)),
        ("7.5", Gpu(name="sm_75", cc=ComputeCapability(7, 5))),  # Tesla T4 and RTX 2080 disagree
        ("12.0", Gpu(name="sm_120", cc=ComputeCapability(12, 0))),
        ("9.9", Gpu(name="sm_99", cc=ComputeCapability(9, 9))),  # unknown CC: taken as given
    ],
)
def test_resolve_gpu(db: CompatDB, text: str, expected: Gpu) -> None:
    assert resolve_gpu(text, db) == expected


def test_unknown_gpu_name_is_an_error_with_a_hint(db: CompatDB) -> None:
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu("Radeon RX 7900", db)
    assert info.value.message == "unknown GPU: 'Radeon RX 7900'"
    assert info.value.hint == (
        "'cudaresolve gpus' lists the names it knows; or give the compute capability, e.g. --gpu 8.6"
    )
    assert info.value.code == "unknown-gpu"
    assert info.value.exit_code == 1


@pytest.mark.parametrize(
    ("text", "error"), [("sm_90a", InvalidArch), ("compute_86", InvalidArch), ("  ", InvalidInput)]
)
def test_resolve_gpu_bad_input(db: CompatDB, text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        resolve_gpu(text, db)


def test_split_gpu_list() -> None:
    assert split_gpu_list(" RTX 2080 ,RTX 3090,, ") == ("RTX 2080", "RTX 3090")
    assert split_gpu_list("") == ()


# -- declared targets -------------------------------------------------------------------------


def test_flags_give_the_target_and_the_highest_cuda(db: CompatDB) -> None:
    target = build(db, gpus=("A800",), driver="470.129.06")
    assert target == Target(
        gpus=(A800,),
        driver=parse_driver("470.129.06"),
        cuda_driver_max=CudaVersion(11, 4),
        platform="linux_x86_64",
        python="3.11",
        source="flags",
    )


def test_gpus_without_a_driver_leave_it_unconstrained(db: CompatDB) -> None:
    target = build(db, gpus=("RTX 2080", "RTX 3090"))
    assert target.driver is None
    assert target.cuda_driver_max is None
    assert target.ccs == (ComputeCapability(7, 5), ComputeCapability(8, 6))
    assert target.source == "flags"


def test_windows_platform_uses_windows_minimums(db: CompatDB) -> None:
    # 551.61 is CUDA 12.4's Windows minimum; on Linux 12.4 needs 550.54.14, so both reach 12.4,
    # but 550.54.14 on Windows is below 551.61 and stops at 12.2.
    assert build(db, gpus=("8.6",), driver="550.54.14", platform="win_amd64").cuda_driver_max == CudaVersion(12, 2)
    assert build(db, gpus=("8.6",), driver="550.54.14").cuda_driver_max == CudaVersion(12, 4)


def test_windows_own_number_of_a_driver_is_read_as_nvidias(db: CompatDB) -> None:
    """Found by the hardware audit: Device Manager and WMI show NVIDIA's driver 551.61 as Windows numbers it,
    32.0.15.5161, and --driver refused that as no driver version. Its last five digits are NVIDIA's number."""
    target = build(db, gpus=("8.6",), driver="32.0.15.5161", platform="win_amd64")
    assert (str(target.driver), target.cuda_driver_max) == ("551.61", CudaVersion(12, 4))
    assert build(db, {"CUDARESOLVE_DRIVER": "27.21.14.5122"}, gpus=("8.6",)).driver == parse_driver("451.22")
    assert parse_driver("32.0.15.6636") == parse_driver("566.36")
    with pytest.raises(InvalidDriver):  # four numbers that are no Windows driver number stay refused
        parse_driver("32.0.15.663")


def test_environment_declares_the_target(db: CompatDB) -> None:
    env = {"CUDARESOLVE_GPUS": "RTX 2080, RTX 3090", "CUDARESOLVE_DRIVER": "535.104.05"}
    target = build(db, env)
    assert [g.name for g in target.gpus] == ["NVIDIA GeForce RTX 2080", "NVIDIA GeForce RTX 3090"]
    assert target.driver == parse_driver("535.104.05")
    assert target.cuda_driver_max == CudaVersion(12, 2)
    assert target.source == "env"


def test_flags_win_over_the_environment(db: CompatDB) -> None:
    env = {"CUDARESOLVE_GPUS": "A800", "CUDARESOLVE_DRIVER": "470.129.06"}
    target = build(db, env, gpus=("8.6",), driver="570.195.03")
    assert target.ccs == (ComputeCapability(8, 6),)
    assert target.driver == parse_driver("570.195.03")
    assert target.source == "flags"


def test_flag_gpus_with_an_environment_driver(db: CompatDB) -> None:
    target = build(db, {"CUDARESOLVE_DRIVER": "535.104.05"}, gpus=("A800",))
    assert target.driver == parse_driver("535.104.05")
    assert target.source == "flags+env"


@pytest.mark.parametrize(
    ("env", "options", "error", "message"),
    [
        ({}, {"gpus": ("8.6",), "driver": "abc"}, InvalidDriver, "not an NVIDIA driver version: 'abc'"),
        # a branch alone (hardware audit): '570' was read as 570.0, below every R570 release, so an RTX 5090 on any
        # R570 driver was refused for needing 570.26
        (
            {},
            {"gpus": ("8.6",), "driver": "570"},
            InvalidDriver,
            "'570' names the driver branch R570, not a driver: its releases run different CUDA versions and GPUs",
        ),
        (
            {"CUDARESOLVE_DRIVER": "R580"},
            {"gpus": ("8.6",)},
            InvalidDriver,
            "CUDARESOLVE_DRIVER is not an NVIDIA driver version: 'R580'",
        ),
        (
            {},
            {"gpus": ("8.6",), "driver": "R470"},
            InvalidDriver,
            "'R470' names the driver branch R470, not a driver: its releases run different CUDA versions and GPUs",
        ),
        (
            {"CUDARESOLVE_DRIVER": "abc"},
            {"gpus": ("8.6",)},
            InvalidDriver,
            "CUDARESOLVE_DRIVER is not an NVIDIA driver version: 'abc'",
        ),
        ({"CUDARESOLVE_GPUS": "Voodoo 5"}, {}, UnknownGpu, "unknown GPU: 'Voodoo 5'"),
        ({}, {"cpu": True, "gpus": ("8.6",)}, InvalidInput, "--cpu cannot be combined with --gpu or --driver"),
        ({}, {"gpus": ("8.6",), "python": "2.7"}, InvalidInput, "not a Python version: '2.7'"),
        ({}, {"gpus": ("8.6",), "platform": "linux_ppc64le"}, InvalidInput, "unknown --platform 'linux_ppc64le'"),
    ],
)
def test_bad_input_is_one_error_with_a_hint(
    db: CompatDB, env: dict[str, str], options: dict[str, Any], error: type[InvalidInput], message: str
) -> None:
    with pytest.raises(error) as info:
        build(db, env, **options)
    assert info.value.message == message
    assert info.value.hint
    assert info.value.exit_code == 1


def test_cpu_flag(db: CompatDB) -> None:
    target = build(db, {"CUDARESOLVE_GPUS": "A800"}, cpu=True)
    assert target == Target(platform="linux_x86_64", python="3.11", source="flags")
    assert target.is_cpu


@pytest.mark.parametrize("gpus", [("GH200",), ("NVIDIA GB200", "GB200"), ("GB10",), ("NVIDIA GH200 480GB", "GB300")])
def test_a_grace_superchip_named_without_a_platform_is_an_aarch64_target(gpus: tuple[str, ...]) -> None:
    """Found by the fleet audit: ``--gpu GH200`` without ``--platform`` was locked for this machine's x86_64, a
    lock no GH200 can install (its host is a Grace CPU). GPUs whose every host is aarch64 make the target aarch64
    when nothing names the platform; a platform named, or a GPU that may sit in any host, keeps the rule before."""
    db = load_compat()  # the shipped rows: they say which GPUs live only in Grace hosts
    assert build(db, platform=None, gpus=gpus).platform == "linux_aarch64"
    assert build(db, platform=None, env={"CUDARESOLVE_GPUS": ",".join(gpus)}).platform == "linux_aarch64"
    assert build(db, platform="linux_x86_64", gpus=gpus).platform == "linux_x86_64"  # the user's word
    mixed = build(db, platform=None, gpus=(*gpus, "H100"))
    assert mixed.platform == this_platform()


def test_python_and_platform(db: CompatDB) -> None:
    target = build(db, gpus=("8.6",), python="3.12.4", platform="manylinux_2_28_aarch64")
    assert (target.python, target.platform) == ("3.12", "linux_aarch64")
    default = build_target(TargetOptions(gpus=("8.6",)), db, environ={}, detect=no_detection)
    assert (default.python, default.platform) == (this_python(), this_platform())


# -- detection --------------------------------------------------------------------------------


def test_detected_mixed_host(db: CompatDB) -> None:
    target = build(db, detect=detected(MIXED_HOST))
    assert target == Target(
        gpus=(RTX2080, RTX3090),
        driver=parse_driver("535.129.03"),
        cuda_driver_max=CudaVersion(12, 2),
        platform="linux_x86_64",
        python="3.11",
        source="nvml",
    )


def test_no_driver_is_a_cpu_target(db: CompatDB) -> None:
    assert build(db, detect=detected(None)) == Target(platform="linux_x86_64", python="3.11", source="none")


def test_all_gpus_hidden_is_a_cpu_target(db: CompatDB) -> None:
    hidden = Host(source="nvml", driver=parse_driver("535.129.03"), gpus=())
    target = build(db, detect=detected(hidden))
    assert target.is_cpu
    assert target.driver is None
    assert target.source == "nvml"


def test_declared_driver_replaces_the_detected_one(db: CompatDB) -> None:
    target = build(db, detect=detected(MIXED_HOST), driver="570.195.03")
    assert target.gpus == (RTX2080, RTX3090)
    assert target.driver == parse_driver("570.195.03")
    assert target.cuda_driver_max == CudaVersion(12, 8)
    assert target.source == "nvml+flags"


def test_declared_driver_without_any_gpu_is_an_error(db: CompatDB) -> None:
    with pytest.raises(InvalidInput, match="no GPU was declared or detected") as info:
        build(db, {"CUDARESOLVE_DRIVER": "535.104.05"}, detect=detected(None))
    assert info.value.hint == "name the GPUs too, e.g. --gpu A800 --driver 470.129.06"


def test_detected_gpu_without_cc_takes_the_database_one(db: CompatDB) -> None:
    host = Host(
        source="nvidia-smi",
        driver=parse_driver("470.129.06"),
        gpus=(DetectedGpu(index=0, name="NVIDIA A800-SXM4-80GB", memory_mib=81251),),
    )
    target = build(db, detect=detected(host))
    assert target.gpus == (
        Gpu(name="NVIDIA A800-SXM4-80GB", cc=ComputeCapability(8, 0), memory_mib=81251, datacenter=True),
    )
    assert target.cuda_driver_max == CudaVersion(11, 4)


def test_detected_unknown_gpu_without_cc_is_an_error(db: CompatDB) -> None:
    host = Host(source="proc", driver=parse_driver("565.57.01"), gpus=(DetectedGpu(index=0, name="GeForce GTX 650"),))
    with pytest.raises(UnknownGpu) as info:
        build(db, detect=detected(host))
    assert info.value.message == (
        "proc reports a GPU 'GeForce GTX 650' without its compute capability, and the database does not know it"
    )
    assert info.value.hint == "declare it: --gpu <compute capability>, e.g. --gpu 8.6"


def test_detected_unknown_gpu_with_cc_is_fine(db: CompatDB) -> None:
    host = Host(
        source="nvml",
        driver=parse_driver("570.86.15"),
        gpus=(DetectedGpu(index=0, name="NVIDIA TITAN V", cc=ComputeCapability(7, 0), memory_mib=12288),),
    )
    target = target_from_host(host, db, platform="linux_x86_64", python="3.11")
    assert target.gpus == (Gpu(name="NVIDIA TITAN V", cc=ComputeCapability(7, 0), memory_mib=12288),)
    assert target.cuda_driver_max == CudaVersion(12, 8)


def test_nvml_cuda_version_fills_in_below_the_database(db: CompatDB) -> None:
    host = Host(
        source="nvml",
        driver=parse_driver("455.32.00"),
        cuda_driver=CudaVersion(11, 1),
        gpus=(DetectedGpu(index=0, name="Tesla T4", cc=ComputeCapability(7, 5)),),
    )
    assert build(db, detect=detected(host)).cuda_driver_max == CudaVersion(11, 1)


def test_detection_errors_propagate(db: CompatDB) -> None:
    def broken(environ: Mapping[str, str]) -> Host | None:
        raise DetectionError("NVML query failed: GPU is lost")

    with pytest.raises(DetectionError) as info:
        build(db, detect=broken)
    assert info.value.exit_code == 2


def test_detection_sees_the_environment(db: CompatDB) -> None:
    seen: list[Mapping[str, str]] = []

    def spy(environ: Mapping[str, str]) -> Host | None:
        seen.append(environ)
        return None

    build(db, {"CUDA_VISIBLE_DEVICES": "1"}, detect=spy)
    assert seen == [{"CUDA_VISIBLE_DEVICES": "1"}]


# -- host files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["a100-r535.json", "h100-r550.json", "rtx5090-r570.json", "mixed-2080-3090-r535.json", "no-gpu.json"]
)
def test_host_files_round_trip(db: CompatDB, name: str) -> None:
    saved = json.loads((HOSTS / name).read_text(encoding="utf-8"))
    target = load_host_file(str(HOSTS / name), db)
    assert target.source == "host-file"
    assert {**target.to_dict(), "source": saved["target"]["source"]} == saved["target"]


def test_bare_target_is_accepted(db: CompatDB) -> None:
    saved = json.loads((HOSTS / "mixed-2080-3090-r535.json").read_text(encoding="utf-8"))
    assert target_from_dict(saved["target"], db) == target_from_dict(saved, db)


def test_host_file_is_recomputed_with_this_database(db: CompatDB) -> None:
    data = {"gpus": [{"name": "NVIDIA A800", "cc": "8.0"}], "driver": "470.129.06", "cuda_driver_max": "12.8"}
    target = target_from_dict(data, db)
    assert target.cuda_driver_max == CudaVersion(11, 4)
    assert target.gpus == (A800,)
    assert (target.platform, target.python) == (this_platform(), this_python())


def test_host_file_beats_the_environment_and_flags_beat_the_file(db: CompatDB) -> None:
    path = str(HOSTS / "a100-r535.json")
    env = {"CUDARESOLVE_GPUS": "RTX 3090", "CUDARESOLVE_DRIVER": "470.129.06"}
    from_file = build(db, env, host_file=path, python=None, platform=None)
    assert [g.name for g in from_file.gpus] == ["NVIDIA A100-SXM4-80GB"]
    assert from_file.driver == parse_driver("535.104.05")
    newer = build(db, env, host_file=path, driver="570.195.03")
    assert (newer.driver, newer.cuda_driver_max, newer.source) == (
        parse_driver("570.195.03"),
        CudaVersion(12, 8),
        "host-file",
    )
    other = build(db, env, host_file=path, gpus=("RTX 3090",))
    assert [g.name for g in other.gpus] == ["NVIDIA GeForce RTX 3090"]
    assert other.driver == parse_driver("535.104.05")
    assert other.source == "flags"


_MISSING = (
    '{where}: needs the key "{key}" (a host file must say which GPUs and driver it stands for; '
    "use [] and null for a machine without a GPU)"
)


def test_an_explicit_empty_gpu_list_is_a_cpu_target(db: CompatDB) -> None:
    target = target_from_dict({"gpus": [], "driver": None}, db)
    assert target.is_cpu
    assert target.source == "host-file"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "host file: expected a JSON object"),
        ({"schema": 2, "target": {}}, "host file: schema 2 is not supported (this version reads 1)"),
        ({"gpus": [{"name": "A800"}], "driver": None}, 'host file.gpus[0]: needs a "cc" string such as "8.6"'),
        ({"schema": 1, "target": {"gpus": "A800", "driver": None}}, "host file: target.gpus: expected list, got str"),
        (
            {"gpus": [{"cc": "8.0", "memory_mib": "80G"}], "driver": None},
            "host file.gpus[0].memory_mib: expected int, got str",
        ),
        ({"gpus": [], "driver": 535}, "host file.driver: expected str, got int"),
        # issue 12, item 5: a host file must say what it is; {} used to be a CPU target
        ({}, _MISSING.format(where="host file", key="gpus")),
        ({"schema": 1}, _MISSING.format(where="host file", key="gpus")),
        ({"gpus": []}, _MISSING.format(where="host file", key="driver")),
        ({"schema": 1, "target": {}}, _MISSING.format(where="host file: target", key="gpus")),
        ({"schema": 1, "target": []}, "host file.target: expected dict, got list"),
        ({"schema": 1, "target": None}, "host file.target: expected dict, got NoneType"),
        (
            {"schema": 1, "target": {"target": {"gpus": [], "driver": None}}},
            _MISSING.format(where="host file: target", key="gpus"),
        ),
        (
            {"gpus": [{"cc": "8.0", "memory_mib": True}], "driver": None},
            "host file.gpus[0].memory_mib: expected int, got bool",
        ),
        ({"gpus": [{"cc": "8.0", "name": 7}], "driver": None}, "host file.gpus[0].name: expected str, got int"),
        ({"gpus": [{"cc": 8.0}], "driver": None}, 'host file.gpus[0]: needs a "cc" string such as "8.6"'),
        ({"gpus": [["8.0"]], "driver": None}, 'host file.gpus[0]: needs a "cc" string such as "8.6"'),
        ({"gpus": [{"cc": "\u0668.\u0660"}], "driver": None}, "not a compute capability or arch: '\u0668.\u0660'"),
        (
            {"gpus": [{"cc": "8.0"}], "driver": ARABIC_DRIVER},
            f"not an NVIDIA driver version: {ARABIC_DRIVER!r}",
        ),
    ],
)
def test_bad_host_files(db: CompatDB, data: Any, message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        target_from_dict(data, db)
    assert info.value.message == message


def test_unreadable_host_files(db: CompatDB, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")
    with pytest.raises(InvalidInput) as absent:
        load_host_file(missing, db)
    assert absent.value.message == f"cannot read host file {missing}: No such file or directory"
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput, match="is not valid JSON") as info:
        load_host_file(str(broken), db)
    assert info.value.hint == "write the file as 'cudaresolve detect --json' prints it"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_host_file_must_be_a_regular_file(db: CompatDB, tmp_path: Path) -> None:
    """Issue 12, item 11: /dev/zero, a FIFO and a directory are refused before any read, without blocking."""
    fifo = tmp_path / "host.fifo"
    os.mkfifo(fifo)  # no writer: a blocking open would hang here
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        with pytest.raises(InvalidInput) as info:
            load_host_file(path, db)
        assert info.value.message.startswith(f"host file {path} is not a regular file")


def test_host_file_read_is_capped(db: CompatDB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most HOST_FILE_MAX_BYTES + 1 bytes are read, however large the file."""
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of NULs
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        reads.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counting_read)
    with pytest.raises(InvalidInput) as info:
        load_host_file(str(big), db)
    limit = HOST_FILE_MAX_BYTES
    assert info.value.message == f"host file {big} is larger than {limit} bytes, the most a host file may hold"
    assert sum(reads) == HOST_FILE_MAX_BYTES + 1


@pytest.mark.parametrize("depth", [100_000, 1_000_000 // 2 - 1])
def test_deeply_nested_host_file_is_a_coded_error(db: CompatDB, tmp_path: Path, depth: int) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * depth + "]" * depth, encoding="utf-8")
    with pytest.raises(InvalidInput) as info:
        load_host_file(str(deep), db)
    assert info.value.message == f"host file {deep} is JSON nested too deeply to be a host file"


def test_host_file_of_binary_bytes_is_bad_json(db: CompatDB, tmp_path: Path) -> None:
    binary = tmp_path / "bin.json"
    binary.write_bytes(bytes(range(256)))
    with pytest.raises(InvalidInput, match="is not valid JSON"):
        load_host_file(str(binary), db)


@pytest.mark.parametrize("platform", ["macosx_14_0_arm64", "win_amd64", "linux_aarch64"])
def test_another_machines_platform_is_not_given_this_ones_gpus(db: CompatDB, platform: str) -> None:
    """A declared platform other than this machine's names another machine: without --gpu it is a CPU target, this
    machine's nvidia-smi is never asked, and a --driver without a GPU is refused as ever."""
    from cudaresolve.target.build import this_platform

    if this_platform() == normalize_platform(platform):
        pytest.skip("this machine has that platform")
    target = build(db, detect=no_detection, platform=platform)
    assert target.gpus == () and target.platform == normalize_platform(platform)
    with pytest.raises(InvalidInput):
        build(db, detect=no_detection, platform=platform, driver="580.65.06")
