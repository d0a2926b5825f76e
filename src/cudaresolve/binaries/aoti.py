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
``CUDA error: invalid argument``; ``aoti_check`` lets ``doctor`` say so first.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from cudaresolve.binaries.elf import DEFAULT_LIMITS
from cudaresolve.binaries.fatbin import KIND_CUBIN, FatbinEntry, FatbinListing
from cudaresolve.binaries.report import AotiModel, AotiPackage, BinaryReport, FileError
from cudaresolve.binaries.scan import open_regular, report_stream
from cudaresolve.core.archive import ARCHIVE_SEPARATOR, READ_ERRORS, open_archive, open_zip_member
from cudaresolve.core.decode import loads_json
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    import zipfile
    from pathlib import Path

    from cudaresolve.binaries.elf import Limits

__all__ = ["package_report", "read_package"]

_MODEL_MEMBER: Final = re.compile(r"^(?:[^/]+/)?data/aotinductor/(?P<model>[^/]+)/(?P<file>[^/]+)$")
_KERNEL_SUFFIXES: Final = (".so", ".cubin", ".fatbin")
_MAX_METADATA: Final = 1024 * 1024
# codecache.py writes one flat object of strings; anything near this deep is not its metadata.
_MAX_METADATA_DEPTH: Final = 64
_HINT: Final = Text("binaries.damaged-package.hint")


def package_report(path: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> BinaryReport:
    """A ``.pt2`` as one report: the union of its kernels' targets, with the package attached."""
    label = str(path)
    try:
        with open_regular(path) as raw, open_archive(raw) as archive:
            package = read_package(archive, label, limits=limits)
    except InvalidBinary as err:
        return BinaryReport(path=label, error=FileError.from_exception(err))
    except (*READ_ERRORS, ValueError) as exc:  # ValueError: a member name flagged UTF-8 that is not
        return BinaryReport(path=label, error=FileError(
            code=InvalidBinary.code, text=Text.of("binaries.package-unreadable", error=str(exc)), hint=_HINT))
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
        error = FileError(code=first.code, hint=first.hint, text=Text.of(
            "binaries.kernels-unreadable", count=len(failed), path=failed[0].path, error=first.text))
    return BinaryReport(path=label, listing=merged, package=package, error=error)


def read_package(archive: zipfile.ZipFile, label: str, *, limits: Limits = DEFAULT_LIMITS) -> AotiPackage:
    """Models, metadata and kernel listings of an open ``.pt2`` archive."""
    members: dict[str, list[zipfile.ZipInfo]] = {}
    for info in archive.infolist():
        match = _MODEL_MEMBER.match(info.filename)
        if match and not info.filename.endswith("/"):  # is_dir() fails on an empty name
            members.setdefault(match["model"], []).append(info)
    models = []
    for name in sorted(members):
        infos = sorted(members[name], key=lambda i: i.filename)
        notes: list[Text] = []
        metadata: tuple[tuple[str, str], ...] = ()
        meta = [i for i in infos if i.filename.endswith("_metadata.json")]
        if meta:
            try:
                metadata = _read_metadata(archive, meta[0])
            except InvalidBinary as err:
                notes.append(Text.of("binaries.model-note", model=name, note=err.text))
            except READ_ERRORS as exc:
                notes.append(Text.of("binaries.model-note", model=name, note=Text.of(
                    "binaries.member-unreadable", member=meta[0].filename, error=str(exc))))
        else:
            notes.append(Text.of("binaries.model-no-metadata", model=name))
        kernels = []
        for info in infos:
            if not info.filename.endswith(_KERNEL_SUFFIXES):
                continue
            report, inferred = _triton_suffixes(_kernel_report(archive, info, label, limits))
            if inferred:
                notes.append(Text.of("binaries.triton-suffix", member=info.filename, names=tuple(inferred)))
            kernels.append(report)
        models.append(AotiModel(name=name, metadata=metadata, kernels=tuple(kernels), notes=tuple(notes)))
    return AotiPackage(path=label, models=tuple(models))


def _kernel_report(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, limits: Limits) -> BinaryReport:
    kernel_label = f"{label}{ARCHIVE_SEPARATOR}{info.filename}"
    try:
        with open_zip_member(archive, info) as stream:
            # scan .rodata even next to a .nv_fatbin: Triton kernels are embedded there
            return report_stream(kernel_label, stream, size=info.file_size, limits=limits, scan_rodata=True)
    except InvalidBinary as err:
        return BinaryReport(path=kernel_label, error=FileError.from_exception(err))
    except READ_ERRORS as exc:
        return BinaryReport(path=kernel_label, error=FileError(code=InvalidBinary.code, text=literal(str(exc))))


def _read_metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[str, str], ...]:
    if info.file_size > _MAX_METADATA:
        raise InvalidBinary(Text.of("binaries.metadata-size", member=info.filename, size=info.file_size), hint=_HINT)
    with open_zip_member(archive, info) as stream:
        raw = stream.read(_MAX_METADATA + 1)
    if len(raw) > _MAX_METADATA:  # the size in the directory may lie
        raise InvalidBinary(Text.of("binaries.metadata-size", member=info.filename, size=len(raw)), hint=_HINT)
    if _nesting(raw) > _MAX_METADATA_DEPTH:  # json would recurse once per level: a RecursionError
        raise InvalidBinary(Text.of("binaries.metadata-too-deep", member=info.filename, limit=_MAX_METADATA_DEPTH),
                            hint=_HINT)
    try:
        data = loads_json(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and decode.TooDeep too
        raise InvalidBinary(Text.of("binaries.metadata-not-json", member=info.filename, error=str(exc)),
                            hint=_HINT) from exc
    if not isinstance(data, dict):
        raise InvalidBinary(Text.of("binaries.metadata-not-object", member=info.filename), hint=_HINT)
    # codecache.py asserts every key and value is a string; anything else is left out.
    return tuple(sorted((k, v) for k, v in data.items() if isinstance(k, str) and isinstance(v, str)))


def _nesting(raw: bytes) -> int:
    """The deepest ``[``/``{`` nesting in a JSON text, brackets inside strings not counted (linear)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


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
