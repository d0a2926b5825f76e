"""Read this machine's NVIDIA driver and GPUs: NVML, else nvidia-smi, else /proc. Does I/O: NVML, a subprocess, /proc.

Sources are tried in this order; the first that answers wins (uv's ``Accelerator::detect``
cascade, crates/uv-torch/src/accelerator.rs):

1. NVML through nvidia-ml-py. ``query_nvml()`` is the only function that imports ``pynvml``;
   it returns a plain ``NvmlReading`` that ``readings.host_from_nvml`` turns into a ``Host``.
2. ``nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader``
   (drivers older than the ``compute_cap`` field get the query without it).
3. ``/proc/driver/nvidia/version`` for the driver and ``/proc/driver/nvidia/gpus/*/information``
   for the GPU names (Linux only; compute capabilities then come from the database). The
   kernel lists every GPU of the machine there, even those a container was not given.

The three sources are a ``Sources`` value passed to ``detect_host``; ``SYSTEM`` holds this
machine's (``query_nvml``, ``run_nvidia_smi``, ``/proc/driver/nvidia``), and tests pass fakes.
The parsing is pure and lives in ``readings``.

"No driver" (no NVML library, driver not loaded, no nvidia-smi, no /proc entry) is ``None``:
a CPU machine, not an error. A source that is present but fails raises ``DetectionError``
only when no later source answers. ``CUDA_VISIBLE_DEVICES`` then applies to what was read
(``readings.select_visible``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.errors import DetectionError
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
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["PROC_DIR", "SYSTEM", "NvmlUnavailable", "Sources", "detect_host", "query_nvml", "run_nvidia_smi"]

PROC_DIR: Final = Path("/proc/driver/nvidia")
_SMI_TIMEOUT_S: Final = 15
#: The most of nvidia-smi's output (each stream) kept: what it prints for a box of 64 GPUs is a few KB.
_SMI_OUTPUT: Final = 1 << 20
# nvidia-smi exit codes that mean "no driver or no GPU here" (nvidia-smi(1), RETURN VALUE):
# 6 no device found, 9 driver not loaded, 12 NVML library not found.
_SMI_NOTHING_HERE: Final = frozenset({6, 9, 12})


class NvmlUnavailable(Exception):
    """No NVML library or no loaded driver: this machine has no usable NVIDIA GPU. Not an error."""


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def query_nvml() -> NvmlReading:
    """Read driver and devices through NVML. The only place ``pynvml`` is imported.

    Raises ``NvmlUnavailable`` when there is no NVML library or no driver, ``DetectionError``
    when NVML is there but fails.
    """
    try:
        import pynvml  # type: ignore[import-untyped]
    except ImportError as exc:
        raise NvmlUnavailable("nvidia-ml-py is not installed") from exc
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        if exc.value in (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, pynvml.NVML_ERROR_DRIVER_NOT_LOADED):
            raise NvmlUnavailable(str(exc)) from exc
        raise DetectionError(Text.of("target.detect.nvml-init", error=str(exc)), hint=DETECT_HINT) from exc
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        try:
            cuda: int | None = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        except pynvml.NVMLError:
            cuda = None
        devices = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            try:
                memory: int | None = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
            except pynvml.NVMLError:  # e.g. unified-memory parts report Not Supported
                memory = None
            devices.append(
                NvmlDevice(
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    cc=(int(major), int(minor)),
                    memory_total=memory,
                    uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                    mig_uuids=_mig_uuids(pynvml, handle),
                )
            )
        return NvmlReading(driver=driver, cuda_driver_version=cuda, devices=tuple(devices))
    except pynvml.NVMLError as exc:
        raise DetectionError(Text.of("target.detect.nvml-query", error=str(exc)), hint=DETECT_HINT) from exc
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def _mig_uuids(nv: Any, handle: Any) -> tuple[str, ...]:
    """UUIDs of the MIG devices of one GPU (``nv`` is the pynvml module); () when MIG is off."""
    try:
        current, _pending = nv.nvmlDeviceGetMigMode(handle)
        if current != nv.NVML_DEVICE_MIG_ENABLE:
            return ()
        count = int(nv.nvmlDeviceGetMaxMigDeviceCount(handle))
    except nv.NVMLError:  # not a MIG-capable GPU
        return ()
    uuids = []
    for slot in range(count):
        try:
            mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
        except nv.NVMLError:  # an empty slot
            continue
        uuids.append(_text(nv.nvmlDeviceGetUUID(mig)))
    return tuple(uuids)


def run_nvidia_smi(args: Sequence[str]) -> tuple[int, str] | None:
    """Run nvidia-smi; (exit code, stdout + stderr), or None when it is not installed."""
    import subprocess

    from cudaresolve.core.processes import run_capped

    try:  # its output bounded (an nvidia-smi that floods costs no memory) and read whatever its encoding
        code, out, err = run_capped(["nvidia-smi", *args], timeout=_SMI_TIMEOUT_S, cap=_SMI_OUTPUT)
    except FileNotFoundError:
        return None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DetectionError(Text.of("target.detect.smi-not-run", error=str(exc)), hint=DETECT_HINT) from exc
    return code, (out + err).decode("utf-8", "replace")


@dataclass(frozen=True, slots=True, kw_only=True)
class Sources:
    """Where detection reads: an NVML query, an nvidia-smi runner and the /proc directory.

    ``nvml`` returns an ``NvmlReading`` or raises ``NvmlUnavailable`` (no driver) or
    ``DetectionError``; ``nvidia_smi(args)`` returns (exit code, output), or None when there is
    no nvidia-smi; ``proc_dir`` holds ``version`` and ``gpus/<pci>/information``.
    """

    nvml: Callable[[], NvmlReading] = query_nvml
    nvidia_smi: Callable[[Sequence[str]], tuple[int, str] | None] = run_nvidia_smi
    proc_dir: Path = PROC_DIR


#: This machine's sources: what ``detect_host`` reads when given none.
SYSTEM: Final = Sources()


def _read_nvml(query: Callable[[], NvmlReading]) -> Host | None:
    try:
        return host_from_nvml(query())
    except NvmlUnavailable:
        return None


def _read_nvidia_smi(run: Callable[[Sequence[str]], tuple[int, str] | None]) -> Host | None:
    for columns in (SMI_COLUMNS, SMI_COLUMNS_OLD):
        result = run([f"--query-gpu={','.join(columns)}", "--format=csv,noheader"])
        if result is None:
            return None
        code, output = result
        if '"compute_cap" is not a valid field' in output:  # older nvidia-smi: ask without it
            continue
        if code == 0:
            return parse_nvidia_smi_csv(output, columns)
        if code in _SMI_NOTHING_HERE or "couldn't communicate with the NVIDIA driver" in output:
            return None
        break
    first = output.strip().splitlines()[0] if output.strip() else Text("target.detect.no-output")
    raise DetectionError(Text.of("target.detect.smi-failed", code=code, output=first), hint=DETECT_HINT)


def _read_proc(proc_dir: Path) -> Host | None:
    try:
        version = (proc_dir / "version").read_text(encoding="utf-8", errors="replace")
    except OSError:  # no file: no NVIDIA kernel module (or not Linux)
        return None
    driver = parse_proc_version(version)
    gpus: list[DetectedGpu] = []
    gpu_dir = proc_dir / "gpus"
    try:
        bus_ids = sorted(p.name for p in gpu_dir.iterdir()) if gpu_dir.is_dir() else []
        for bus_id in bus_ids:  # directory names are PCI bus ids: sorted, they give the bus order
            info = (gpu_dir / bus_id / "information").read_text(encoding="utf-8", errors="replace")
            gpus.append(parse_proc_gpu_information(info, index=len(gpus)))
    except OSError as exc:
        raise DetectionError(
            Text.of("target.detect.proc-unreadable", path=str(gpu_dir), error=str(exc.strerror or exc)),
            hint=DETECT_HINT,
        ) from exc
    return Host(source="proc", driver=driver, gpus=tuple(gpus))


def detect_host(environ: Mapping[str, str] | None = None, *, sources: Sources | None = None) -> Host | None:
    """This machine's driver and CUDA-visible GPUs, or None when it has no NVIDIA driver.

    Reads ``sources`` (default ``SYSTEM``) in order, NVML, nvidia-smi, then /proc (module
    docstring); raises the first ``DetectionError`` only when a source failed and no other
    answered. ``environ`` (default ``os.environ``) supplies ``CUDA_VISIBLE_DEVICES`` and
    ``CUDA_DEVICE_ORDER``.
    """
    env = os.environ if environ is None else environ
    src = SYSTEM if sources is None else sources
    failures: list[DetectionError] = []
    host: Host | None = None
    readers: tuple[Callable[[], Host | None], ...] = (
        lambda: _read_nvml(src.nvml),
        lambda: _read_nvidia_smi(src.nvidia_smi),
        lambda: _read_proc(src.proc_dir),
    )
    for read in readers:
        try:
            host = read()
        except DetectionError as err:
            failures.append(err)
            continue
        if host is not None:
            break
    if host is None:
        if failures:
            raise failures[0]
        return None
    selectors = parse_cuda_visible_devices(env.get("CUDA_VISIBLE_DEVICES"), len(host.gpus))
    pci_order = env.get("CUDA_DEVICE_ORDER", "").strip().upper() == "PCI_BUS_ID"
    return replace(host, gpus=select_visible(host.gpus, selectors, pci_bus_order=pci_order))
