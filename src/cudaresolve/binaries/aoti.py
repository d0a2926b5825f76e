"""Read AOTInductor ``.pt2`` packages: the device they were compiled for and their kernels' SMs.
Does I/O: reads one zip archive, member by member, without extracting it.

A package is a zip written by ``torch.export.pt2_archive`` (PyTorch's
``torch/export/pt2_archive/_package.py`` and ``_constants.py``); every member sits under one
root folder named after the archive:

    <root>/archive_format                              "pt2"
    <root>/data/aotinductor/<model>/<hash>.so          the compiled model
    <root>/data/aotinductor/<model>/<hash>_metadata.json
    <root>/data/aotinductor/<model>/*.cubin, *.fatbin  Triton kernels, unless embedded in the .so

The metadata file is written by ``torch/_inductor/codecache.py``: ``AOTI_DEVICE_KEY`` is the
device type ("cuda", "cpu", "xpu"), which is what the C++ loader
(``aoti_package/model_package_loader.cpp``) uses to pick a runner, and
``get_device_information`` adds ``AOTI_PLATFORM``, ``AOTI_MACHINE``, ``AOTI_CPU_ISA`` and
``AOTI_COMPUTE_CAPABILITY`` (``major * 10 + minor`` of the compiling GPU, so "90"; "" on CPU).
Running a CUDA package on another GPU, or through a CPU runner, fails late with
``CUDA error: invalid argument``; this module lets ``inspect`` and ``doctor`` say so first.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.binaries.fatbin import DEFAULT_LIMITS, KIND_CUBIN, FatbinEntry, FatbinListing, Limits
from cudaresolve.binaries.scan import ARCHIVE_SEPARATOR, BinaryReport, FileError, open_zip_member, report_stream
from cudaresolve.core.archs import Arch, ComputeCapability, Coverage, coverage
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.findings import Finding
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["AotiModel", "AotiPackage", "check_package", "package_report", "read_package"]

_MODEL_MEMBER: Final = re.compile(r"^(?:[^/]+/)?data/aotinductor/(?P<model>[^/]+)/(?P<file>[^/]+)$")
_KERNEL_SUFFIXES: Final = (".so", ".cubin", ".fatbin")
_MAX_METADATA: Final = 1024 * 1024
_HINT: Final = "the package is damaged; export and package the model again"


@dataclass(frozen=True, slots=True, kw_only=True)
class AotiModel:
    """One model in a package: its metadata strings and the reports of its kernel files."""

    name: str
    metadata: tuple[tuple[str, str], ...] = ()
    kernels: tuple[BinaryReport, ...] = ()
    notes: tuple[str, ...] = ()

    def _get(self, key: str) -> str | None:
        return dict(self.metadata).get(key)

    @property
    def device(self) -> str | None:
        """``AOTI_DEVICE_KEY``: "cuda", "cpu", "xpu" (``None`` when the package has no metadata)."""
        return self._get("AOTI_DEVICE_KEY") or None

    @property
    def compute_capability(self) -> ComputeCapability | None:
        """The compiling GPU, from ``AOTI_COMPUTE_CAPABILITY`` ("90" -> 9.0, "120" -> 12.0)."""
        raw = self._get("AOTI_COMPUTE_CAPABILITY") or ""
        if not re.fullmatch(r"\d{2,3}", raw):
            return None  # "" on CPU, "gfx90a" on ROCm
        return ComputeCapability(int(raw[:-1]), int(raw[-1]))

    @property
    def sass(self) -> tuple[str, ...]:
        return _union(r.sass for r in self.kernels)

    @property
    def ptx(self) -> tuple[str, ...]:
        return _union(r.ptx for r in self.kernels)

    @property
    def archs(self) -> tuple[Arch, ...]:
        return tuple(sorted({a for r in self.kernels for a in r.archs}))

    def to_dict(self) -> dict[str, Any]:
        cc = self.compute_capability
        data: dict[str, Any] = {
            "name": self.name, "device": self.device, "compute_capability": str(cc) if cc else None,
            "platform": self._get("AOTI_PLATFORM"), "machine": self._get("AOTI_MACHINE"),
            "sass": list(self.sass), "ptx": list(self.ptx),
            "kernels": [{"path": k.path, "sass": list(k.sass), "ptx": list(k.ptx)}
                        | ({"error": k.error.to_dict()} if k.error else {}) for k in self.kernels],
        }
        if self.notes:
            data["notes"] = list(self.notes)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class AotiPackage:
    path: str
    models: tuple[AotiModel, ...] = ()

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(sorted({m.device for m in self.models if m.device}))

    def to_dict(self) -> dict[str, Any]:
        return {"devices": list(self.devices), "models": [m.to_dict() for m in self.models]}


def package_report(path: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> BinaryReport:
    """A ``.pt2`` as one report: the union of its kernels' targets, with the package attached."""
    label = str(path)
    try:
        with open(path, "rb") as raw, zipfile.ZipFile(raw) as archive:
            package = read_package(archive, label, limits=limits)
    except InvalidBinary as err:
        return BinaryReport(path=label, error=FileError.from_exception(err))
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        return BinaryReport(path=label, error=FileError(code=InvalidBinary.code, message=f"cannot read package: {exc}",
                                                       hint=_HINT))
    kernels = [k for m in package.models for k in m.kernels]
    listings = [k.listing for k in kernels if k.listing is not None]
    merged = FatbinListing(
        format="aoti", size=sum(x.size for x in listings), entries=tuple(e for x in listings for e in x.entries),
        containers=tuple(c for x in listings for c in x.containers), bytes_read=sum(x.bytes_read for x in listings),
        notes=tuple(n for m in package.models for n in m.notes),
    )
    failed = [k for k in kernels if k.error]
    error = None
    if failed:
        first = failed[0].error
        assert first is not None
        error = FileError(code=first.code, message=f"{len(failed)} kernel file(s) unreadable; first: "
                          f"{failed[0].path}: {first.message}", hint=first.hint)
    return BinaryReport(path=label, listing=merged, package=package, error=error)


def read_package(archive: zipfile.ZipFile, label: str, *, limits: Limits = DEFAULT_LIMITS) -> AotiPackage:
    """Models, metadata and kernel listings of an open ``.pt2`` archive."""
    members: dict[str, list[zipfile.ZipInfo]] = {}
    for info in archive.infolist():
        match = _MODEL_MEMBER.match(info.filename)
        if match and not info.is_dir():
            members.setdefault(match["model"], []).append(info)
    models = []
    for name in sorted(members):
        infos = sorted(members[name], key=lambda i: i.filename)
        notes: list[str] = []
        metadata: tuple[tuple[str, str], ...] = ()
        meta = [i for i in infos if i.filename.endswith("_metadata.json")]
        if meta:
            try:
                metadata = _read_metadata(archive, meta[0])
            except InvalidBinary as err:
                notes.append(f"model {name}: {err.message}")
            except (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                notes.append(f"model {name}: cannot read {meta[0].filename}: {exc}")
        else:
            notes.append(f"model {name} has no *_metadata.json: the device it was compiled for is unknown")
        kernels = []
        for info in infos:
            if not info.filename.endswith(_KERNEL_SUFFIXES):
                continue
            kernel_label = f"{label}{ARCHIVE_SEPARATOR}{info.filename}"
            try:
                with open_zip_member(archive, info) as stream:
                    # scan .rodata even next to a .nv_fatbin: Triton kernels are embedded there
                    report = report_stream(kernel_label, stream, size=info.file_size, limits=limits,
                                           scan_rodata=True)
            except InvalidBinary as err:
                report = BinaryReport(path=kernel_label, error=FileError.from_exception(err))
            except (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                report = BinaryReport(path=kernel_label, error=FileError(code=InvalidBinary.code, message=str(exc)))
            report, inferred = _triton_suffixes(report)
            if inferred:
                notes.append(f"{info.filename}: 'a' suffix inferred for {', '.join(inferred)} (Triton's naming)")
            kernels.append(report)
        models.append(AotiModel(name=name, metadata=metadata, kernels=tuple(kernels), notes=tuple(notes)))
    return AotiPackage(path=label, models=tuple(models))


def check_package(
    package: AotiPackage, gpus: Sequence[ComputeCapability], *, runner_device: str | None = None
) -> tuple[Finding, ...]:
    """Problems running ``package`` on these GPUs (none: a CPU host), or through ``runner_device``.

    Codes: ``aoti-device-mismatch`` (compiled for one device type, run on another) and
    ``sm-not-covered`` (no kernel, nor the compiling GPU, matches a GPU of the target).
    """
    findings: list[Finding] = []
    for model in package.models:
        device = model.device
        if device is None:
            continue
        run_on = runner_device or ("cuda" if gpus else "cpu")
        if device != run_on:
            findings.append(Finding(
                code="aoti-device-mismatch", package=package.path, required=device, found=run_on,
                text=Text.of("binaries.aoti-device-mismatch", model=repr(model.name), device=device, run_on=run_on),
            ))
            continue
        if device != "cuda":
            continue
        archs = model.archs or _archs_from_metadata(model)
        for cc in sorted(set(gpus)):
            if archs and coverage(archs, cc) is Coverage.NONE:
                built = ", ".join(a.name for a in archs)
                findings.append(Finding(
                    code="sm-not-covered", package=package.path, required=str(cc), found=built,
                    text=Text.of("binaries.aoti-sm-not-covered", model=repr(model.name), built=built, cc=str(cc)),
                ))
    return tuple(findings)


def _read_metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[str, str], ...]:
    if info.file_size > _MAX_METADATA:
        raise InvalidBinary(f"{info.filename} is implausibly large ({info.file_size} bytes)", hint=_HINT)
    with open_zip_member(archive, info) as stream:
        raw = stream.read(_MAX_METADATA + 1)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidBinary(f"{info.filename} is not JSON: {exc}", hint=_HINT) from exc
    if not isinstance(data, dict):
        raise InvalidBinary(f"{info.filename} is not a JSON object", hint=_HINT)
    # codecache.py asserts every key and value is a string; anything else is left out.
    return tuple(sorted((k, v) for k, v in data.items() if isinstance(k, str) and isinstance(v, str)))


def _triton_suffixes(report: BinaryReport) -> tuple[BinaryReport, list[str]]:
    """Name bare Triton cubins as Triton compiled them.

    A CUDA 13 cubin's ``e_flags`` give the SM but not the suffix.  Triton compiles capability
    9.0 and up as ``sm_XYa`` (``sm_arch_from_capability`` in
    triton/python/triton/backends/nvidia/compiler.py), and AOTInductor's bare cubins come from Triton.
    """
    if report.listing is None:
        return report, []
    changed: list[str] = []
    entries: list[FatbinEntry] = []
    for entry in report.listing.entries:
        if entry.kind == KIND_CUBIN and not entry.suffix_known and not entry.suffix and entry.sm >= 90:
            entry = replace(entry, suffix="a")
            changed.append(entry.name or "")
        entries.append(entry)
    if not changed:
        return report, []
    return replace(report, listing=replace(report.listing, entries=tuple(entries))), changed


def _archs_from_metadata(model: AotiModel) -> tuple[Arch, ...]:
    cc = model.compute_capability
    if cc is None:
        return ()
    return (Arch(cc, "a" if cc.major >= 9 else ""),)


def _union(groups: Any) -> tuple[str, ...]:
    names = {name for group in groups for name in group}
    return tuple(sorted(names, key=_arch_key))


def _arch_key(name: str) -> tuple[int, str, str]:
    prefix, _, rest = name.partition("_")
    digits = rest.rstrip("af")
    return (int(digits) if digits.isdigit() else 0, rest[len(digits):], prefix)
