"""Read this machine's NVIDIA driver and GPUs: NVML, else nvidia-smi, else /proc. Does I/O: NVML, a subprocess, /proc.

Sources are tried in this order; the first that answers wins (uv's ``Accelerator::detect``
cascade, crates/uv-torch/src/accelerator.rs):

1. NVML through nvidia-ml-py. ``_query_nvml()`` is the only function that imports ``pynvml``;
   it returns a plain ``NvmlReading`` that ``host_from_nvml`` turns into a ``Host``.
2. ``nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader``
   (drivers older than the ``compute_cap`` field get the query without it).
3. ``/proc/driver/nvidia/version`` for the driver and ``/proc/driver/nvidia/gpus/*/information``
   for the GPU names (Linux only; compute capabilities then come from the database). The
   kernel lists every GPU of the machine there, even those a container was not given.

"No driver" (no NVML library, driver not loaded, no nvidia-smi, no /proc entry) is ``None``:
a CPU machine, not an error. A source that is present but fails raises ``DetectionError``
only when no later source answers.

``CUDA_VISIBLE_DEVICES`` is applied to what was read, with CUDA's rules
(https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html):
indices or (abbreviated) ``GPU-``/``MIG-`` UUIDs; the list stops at the first invalid entry;
an empty value or ``-1`` hides every GPU. CUDA numbers devices fastest-first unless
``CUDA_DEVICE_ORDER=PCI_BUS_ID``, whereas NVML and nvidia-smi number them by PCI bus, so on a
host with different GPU models an index (or a UUID the source cannot see) does not say which
GPU is meant; then every GPU is kept, since covering an extra GPU is safe and missing one is not.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.archs import ComputeCapability, parse_cc
from cudaresolve.core.versions import CudaVersion, DriverVersion, parse_driver
from cudaresolve.errors import DetectionError, InvalidInput

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "PROC_DIR",
    "SMI_COLUMNS",
    "SMI_COLUMNS_OLD",
    "DetectedGpu",
    "Host",
    "NvmlDevice",
    "NvmlReading",
    "NvmlUnavailable",
    "detect_host",
    "host_from_nvml",
    "parse_cuda_visible_devices",
    "parse_nvidia_smi_csv",
    "parse_proc_gpu_information",
    "parse_proc_version",
    "select_visible",
]

#: The columns asked of nvidia-smi (design section 3), in this order.
SMI_COLUMNS: Final = ("name", "compute_cap", "driver_version", "memory.total")
#: The same without ``compute_cap``, which older nvidia-smi refuses: 'Field "compute_cap" is not a
#: valid field to query.' on 470.182.03 (huggingface/candle#733; NVIDIA/TensorRT-LLM#735 on 470.82.01).
SMI_COLUMNS_OLD: Final = ("name", "driver_version", "memory.total")
PROC_DIR: Final = Path("/proc/driver/nvidia")
_SMI_TIMEOUT_S: Final = 15
_NVML_HINT: Final = "check 'nvidia-smi', or declare the target: --gpu NAME|CC --driver VERSION"
# nvidia-smi exit codes that mean "no driver or no GPU here" (nvidia-smi(1), RETURN VALUE):
# 6 no device found, 9 driver not loaded, 12 NVML library not found.
_SMI_NOTHING_HERE: Final = frozenset({6, 9, 12})
_NA: Final = frozenset({"", "[n/a]", "n/a", "[not supported]"})


class NvmlUnavailable(Exception):
    """No NVML library or no loaded driver: this machine has no usable NVIDIA GPU. Not an error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NvmlDevice:
    """One device as NVML reports it, values untouched."""

    name: str
    cc: tuple[int, int]
    memory_total: int | None = None  # bytes
    uuid: str | None = None
    mig_uuids: tuple[str, ...] = ()  # MIG devices carved from this GPU, when MIG mode is on


@dataclass(frozen=True, slots=True, kw_only=True)
class NvmlReading:
    """Everything ``_query_nvml`` reads, as plain values: the seam tests fake."""

    driver: str  # nvmlSystemGetDriverVersion, e.g. "535.104.05"
    cuda_driver_version: int | None  # nvmlSystemGetCudaDriverVersion_v2, e.g. 12020 for 12.2
    devices: tuple[NvmlDevice, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DetectedGpu:
    """One GPU as a source saw it; ``cc`` is None where the source does not say (old nvidia-smi, /proc)."""

    index: int  # the source's own numbering (PCI bus order)
    name: str
    cc: ComputeCapability | None = None
    memory_mib: int | None = None
    uuid: str | None = None
    mig_uuids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Host:
    """What detection read: the driver, the GPUs visible to CUDA, and which source answered."""

    source: str  # "nvml", "nvidia-smi" or "proc"
    driver: DriverVersion
    cuda_driver: CudaVersion | None = None  # the CUDA version libcuda reports (NVML only)
    gpus: tuple[DetectedGpu, ...] = ()


# -- pure parsers ---------------------------------------------------------------------------


def _driver_from(text: str, source: str) -> DriverVersion:
    try:
        return parse_driver(text)
    except InvalidInput as exc:
        raise DetectionError(f"{source} reported an unreadable driver version {text!r}", hint=_NVML_HINT) from exc


def host_from_nvml(reading: NvmlReading) -> Host:
    """An ``NvmlReading`` as a ``Host``; the CUDA version int 12020 becomes 12.2."""
    cuda = None
    if reading.cuda_driver_version:  # 0 or None: NVML could not say
        value = reading.cuda_driver_version
        cuda = CudaVersion(value // 1000, (value % 1000) // 10)
    gpus = tuple(
        DetectedGpu(
            index=i,
            name=d.name.strip(),
            cc=ComputeCapability(*d.cc),
            memory_mib=d.memory_total // (1024 * 1024) if d.memory_total is not None else None,
            uuid=d.uuid,
            mig_uuids=d.mig_uuids,
        )
        for i, d in enumerate(reading.devices)
    )
    return Host(source="nvml", driver=_driver_from(reading.driver, "NVML"), cuda_driver=cuda, gpus=gpus)


def _memory_mib(text: str) -> int | None:
    """``"81920 MiB"`` or ``"81920"`` (``nounits``) -> 81920; ``[N/A]`` -> None."""
    raw = text.strip()
    if raw.lower() in _NA:
        return None
    match = re.fullmatch(r"(\d+)(?:\s*MiB)?", raw)
    if not match:
        raise DetectionError(f"nvidia-smi printed an unreadable memory size {raw!r}", hint=_NVML_HINT)
    return int(match.group(1))


def parse_nvidia_smi_csv(text: str, columns: Sequence[str] = SMI_COLUMNS) -> Host | None:
    """Rows of ``nvidia-smi --query-gpu=<columns> --format=csv,noheader`` -> a Host, or None for no rows.

    ``columns`` must include ``name`` and ``driver_version``; ``compute_cap`` and
    ``memory.total`` (with or without ``MiB``) are read where present, ``[N/A]`` giving None.
    A header line (``--format=csv`` without ``noheader``) is skipped.
    """
    gpus: list[DetectedGpu] = []
    driver: DriverVersion | None = None
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if not line.strip() or (not gpus and fields[0] == columns[0]):  # blank, or the csv header
            continue
        if len(fields) != len(columns):
            raise DetectionError(
                f"nvidia-smi printed {len(fields)} fields where {len(columns)} were asked: {line.strip()!r}",
                hint=_NVML_HINT,
            )
        row = dict(zip(columns, fields, strict=True))
        if driver is None:
            driver = _driver_from(row["driver_version"], "nvidia-smi")
        cc_text = row.get("compute_cap", "")
        cc = None
        if cc_text.lower() not in _NA:
            try:
                cc = parse_cc(cc_text)
            except InvalidInput as exc:
                raise DetectionError(f"nvidia-smi printed an unreadable compute_cap {cc_text!r}") from exc
        memory = _memory_mib(row["memory.total"]) if "memory.total" in row else None
        gpus.append(DetectedGpu(index=len(gpus), name=row["name"], cc=cc, memory_mib=memory))
    if driver is None:
        return None
    return Host(source="nvidia-smi", driver=driver, gpus=tuple(gpus))


# Both banner shapes: the proprietary module ("NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 …")
# and the open one ("NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build …").
# Samples: astral-sh/uv crates/uv-torch/src/accelerator.rs tests; nix-community/nixGL#186.
_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)\s")


def parse_proc_version(text: str) -> DriverVersion:
    """The driver version in ``/proc/driver/nvidia/version`` (its ``NVRM version:`` line)."""
    for line in text.splitlines():
        if line.startswith("NVRM version:"):
            match = _PROC_VERSION.search(line + " ")
            if match:
                return _driver_from(match.group(1), "/proc/driver/nvidia/version")
    raise DetectionError("/proc/driver/nvidia/version has no driver version line", hint=_NVML_HINT)


def parse_proc_gpu_information(text: str, index: int = 0) -> DetectedGpu:
    """One ``/proc/driver/nvidia/gpus/<pci>/information`` file (``Model:``, ``GPU UUID:`` lines)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    name = fields.get("Model", "")
    if not name:
        raise DetectionError("a /proc/driver/nvidia/gpus/*/information file has no Model line", hint=_NVML_HINT)
    uuid = fields.get("GPU UUID") or None
    return DetectedGpu(index=index, name=name, uuid=uuid if uuid and uuid.lower() not in _NA else None)


def parse_cuda_visible_devices(value: str | None, count: int) -> tuple[int | str, ...] | None:
    """``CUDA_VISIBLE_DEVICES`` -> the visible devices in CUDA's order, or None when unset (all visible).

    Indices (below ``count``) come back as ints, ``GPU-``/``MIG-`` UUID prefixes as strings.
    As CUDA does, the list ends at the first invalid entry, so ``""`` and ``"-1"`` give ``()``
    and ``"0,2,-1,1"`` gives ``(0, 2)``.
    """
    if value is None:
        return None
    out: list[int | str] = []
    for item in (part.strip() for part in value.split(",")):
        if re.fullmatch(r"\d+", item):
            index = int(item)
            if index >= count or index in out:
                break
            out.append(index)
        elif item[:4].upper() in ("GPU-", "MIG-") and len(item) > 4:
            out.append(item)
        else:
            break
    return tuple(out)


def _match_uuid(selector: str, gpus: Sequence[DetectedGpu]) -> list[DetectedGpu]:
    """GPUs a UUID selector names: a GPU by UUID prefix, or the parent GPU of a MIG device."""
    wanted = selector.lower()
    if wanted.startswith("mig-gpu-"):  # the pre-R470 form MIG-GPU-<uuid>/<gi>/<ci>
        parent = wanted[len("mig-") :].split("/")[0]
        return [g for g in gpus if g.uuid and g.uuid.lower() == parent]
    if wanted.startswith("mig-"):
        return [g for g in gpus if any(m.lower().startswith(wanted) for m in g.mig_uuids)]
    return [g for g in gpus if g.uuid and g.uuid.lower().startswith(wanted)]


def select_visible(
    gpus: Sequence[DetectedGpu], selectors: tuple[int | str, ...] | None, *, pci_bus_order: bool
) -> tuple[DetectedGpu, ...]:
    """The GPUs that ``selectors`` (from ``parse_cuda_visible_devices``) leave visible.

    Where the choice cannot be known (indices under fastest-first order on a mixed host, a
    UUID the source did not report), every GPU is kept; see the module docstring.
    """
    if selectors is None:
        return tuple(gpus)
    same_model = len({(g.name, g.cc) for g in gpus}) <= 1
    sees_uuids = all(g.uuid is not None for g in gpus)
    chosen: list[DetectedGpu] = []
    for selector in selectors:
        if isinstance(selector, int):
            if not (pci_bus_order or same_model):
                return tuple(gpus)
            found = [gpus[selector]]
        elif sees_uuids:
            found = _match_uuid(selector, gpus)
            if len(found) != 1:  # unknown or ambiguous prefix: CUDA stops here
                break
        elif same_model:  # which one does not matter; take the next
            found = [g for g in gpus if g not in chosen][:1]
            if not found:
                break
        else:
            return tuple(gpus)
        if found[0] not in chosen:
            chosen.append(found[0])
    return tuple(chosen)


# -- I/O ------------------------------------------------------------------------------------


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _query_nvml() -> NvmlReading:
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
        raise DetectionError(f"NVML failed to initialise: {exc}", hint=_NVML_HINT) from exc
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
        raise DetectionError(f"NVML query failed: {exc}", hint=_NVML_HINT) from exc
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


def _run_nvidia_smi(args: Sequence[str]) -> tuple[int, str] | None:
    """Run nvidia-smi; (exit code, stdout + stderr), or None when it is not installed."""
    import subprocess

    try:
        done = subprocess.run(
            ["nvidia-smi", *args], capture_output=True, text=True, timeout=_SMI_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        return None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DetectionError(f"nvidia-smi could not be run: {exc}", hint=_NVML_HINT) from exc
    return done.returncode, done.stdout + done.stderr


def _read_nvml() -> Host | None:
    try:
        return host_from_nvml(_query_nvml())
    except NvmlUnavailable:
        return None


def _read_nvidia_smi() -> Host | None:
    for columns in (SMI_COLUMNS, SMI_COLUMNS_OLD):
        result = _run_nvidia_smi([f"--query-gpu={','.join(columns)}", "--format=csv,noheader"])
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
    first = output.strip().splitlines()[0] if output.strip() else "no output"
    raise DetectionError(f"nvidia-smi failed (exit {code}): {first}", hint=_NVML_HINT)


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
        raise DetectionError(f"cannot read {gpu_dir}: {exc.strerror or exc}", hint=_NVML_HINT) from exc
    return Host(source="proc", driver=driver, gpus=tuple(gpus))


def detect_host(environ: Mapping[str, str] | None = None, *, proc_dir: Path | None = None) -> Host | None:
    """This machine's driver and CUDA-visible GPUs, or None when it has no NVIDIA driver.

    Tries NVML, nvidia-smi, then /proc (module docstring); raises the first ``DetectionError``
    only when a source failed and no other answered.
    """
    env = os.environ if environ is None else environ
    failures: list[DetectionError] = []
    host: Host | None = None
    proc = PROC_DIR if proc_dir is None else proc_dir
    for read in (_read_nvml, _read_nvidia_smi, lambda: _read_proc(proc)):
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
