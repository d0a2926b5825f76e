"""What detection reads, as values, and the parsers that make them: NVML readings, nvidia-smi CSV,
/proc files, ``CUDA_VISIBLE_DEVICES``. Pure.

``target.detect`` does the reading (NVML, a subprocess, /proc) and hands the raw text or
``NvmlReading`` to these functions; tests feed them captured values.

``CUDA_VISIBLE_DEVICES`` is applied to what was read, with CUDA's rules
(https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html):
indices or (abbreviated) ``GPU-``/``MIG-`` UUIDs; the list stops at the first invalid entry;
an empty value or ``-1`` hides every GPU. CUDA numbers devices fastest-first unless
``CUDA_DEVICE_ORDER=PCI_BUS_ID``, whereas NVML and nvidia-smi number them by PCI bus, so on a
host with different GPU models an index (or a UUID the source cannot see) does not say which
GPU is meant; then every GPU is kept, since covering an extra GPU is safe and missing one is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.core.archs import ComputeCapability, parse_cc
from cudaresolve.core.versions import CudaVersion, DriverVersion, parse_driver
from cudaresolve.errors import DetectionError, InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DETECT_HINT",
    "SMI_COLUMNS",
    "SMI_COLUMNS_OLD",
    "DetectedGpu",
    "Host",
    "NvmlDevice",
    "NvmlReading",
    "host_from_nvml",
    "parse_cuda_visible_devices",
    "parse_nvidia_smi_csv",
    "parse_proc_gpu_information",
    "parse_proc_version",
    "select_visible",
]

#: The columns asked of nvidia-smi (the fallback after NVML, ``target.detect``), in this order.
SMI_COLUMNS: Final = ("name", "compute_cap", "driver_version", "memory.total")
#: The same without ``compute_cap``, which older nvidia-smi refuses: 'Field "compute_cap" is not a
#: valid field to query.' on 470.182.03 (huggingface/candle#733; NVIDIA/TensorRT-LLM#735 on 470.82.01).
SMI_COLUMNS_OLD: Final = ("name", "driver_version", "memory.total")
#: The hint of every detection error: check the driver, or declare the target instead.
DETECT_HINT: Final = Text("target.detect.hint")
_NA: Final = frozenset({"", "[n/a]", "n/a", "[not supported]"})


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
    """Everything ``detect.query_nvml`` reads, as plain values: what a fake NVML source returns."""

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

def _driver_from(text: str, source: str) -> DriverVersion:
    try:
        return parse_driver(text)
    except InvalidInput as exc:
        raise DetectionError(
            Text.of("target.detect.bad-driver", source=source, text=repr(text)), hint=DETECT_HINT
        ) from exc


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
    match = re.fullmatch(r"([0-9]{1,12})(?:\s*MiB)?", raw)  # ASCII digits, int() stays small
    if not match:
        raise DetectionError(Text.of("target.detect.bad-memory", text=repr(raw)), hint=DETECT_HINT)
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
                Text.of("target.detect.smi-fields", found=len(fields), asked=len(columns), line=repr(line.strip())),
                hint=DETECT_HINT,
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
                raise DetectionError(Text.of("target.detect.bad-cc", text=repr(cc_text)), hint=DETECT_HINT) from exc
        memory = _memory_mib(row["memory.total"]) if "memory.total" in row else None
        gpus.append(DetectedGpu(index=len(gpus), name=row["name"], cc=cc, memory_mib=memory))
    if driver is None:
        return None
    return Host(source="nvidia-smi", driver=driver, gpus=tuple(gpus))


# Both banner shapes: the proprietary module ("NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 …")
# and the open one ("NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build …").
# Samples: astral-sh/uv crates/uv-torch/src/accelerator.rs tests; nix-community/nixGL#186.
_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)\s")


def parse_proc_version(text: str) -> DriverVersion:
    """The driver version in ``/proc/driver/nvidia/version`` (its ``NVRM version:`` line)."""
    for line in text.splitlines():
        if line.startswith("NVRM version:"):
            match = _PROC_VERSION.search(line + " ")
            if match:
                return _driver_from(match.group(1), "/proc/driver/nvidia/version")
    raise DetectionError(Text("target.detect.proc-no-version"), hint=DETECT_HINT)


def parse_proc_gpu_information(text: str, index: int = 0) -> DetectedGpu:
    """One ``/proc/driver/nvidia/gpus/<pci>/information`` file (``Model:``, ``GPU UUID:`` lines)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    name = fields.get("Model", "")
    if not name:
        raise DetectionError(Text("target.detect.proc-no-model"), hint=DETECT_HINT)
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
        if re.fullmatch(r"[0-9]{1,9}", item):  # ASCII only; CUDA stops at anything else
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
