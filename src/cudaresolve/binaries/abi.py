"""Whether an extension module's needs are met by the torch beside it: symbols and CUDA libraries. Pure.

An extension built against one torch release needs C++ symbols (``c10::cuda::SetDevice(int)``)
that another release may not export; the import then dies with ``undefined symbol``. Which of
an extension's undefined symbols torch must provide cannot be read from the ELF file itself
(an unversioned reference names no library), so the rule here is:

* a versioned reference counts when its version belongs to a torch library (``libtorch*``/``libc10*``);
* an unversioned C++ reference counts when its outermost scope (``c10`` in ``c10::cuda::SetDevice``,
  the global scope in ``THPVariable_Wrap``) is one that torch's libraries export C++ symbols in,
  leaving out the C++ runtime's own (``std``, ``__gnu_cxx``, ``__cxxabiv1``);
* weak references never count, nor C names (``PyTuple_New`` comes from the interpreter).

A counted reference is met when torch's libraries, or the extension's other libraries found
beside it, export the name. ``cuda_libraries`` names the ``libcudart.so.N`` style libraries an
extension needs that nothing available provides. Sentences are ``Text`` values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from cudaresolve.binaries.demangle import demangle
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Container, Iterable, Sequence

    from cudaresolve.binaries.dynamic import NeededSymbol

__all__ = [
    "SHOWN_SYMBOLS",
    "AbiFinding",
    "MissingSymbol",
    "TorchLibraries",
    "abi_finding",
    "built_for_torch",
    "cuda_libraries",
    "cuda_library_finding",
    "is_torch_library",
    "missing_symbols",
    "top_scope",
]

#: Missing symbols named in a finding (all are counted).
SHOWN_SYMBOLS: Final = 5
_TORCH_LIBRARY: Final = re.compile(r"^lib(?:torch|c10)\w*\.so(?:\.\d+)*$")
# What NVIDIA's pip wheels ship (nvidia/*/lib): the CUDA runtime and math libraries, cuDNN, NVRTC,
# nvJitLink, NCCL. libcuda.so.1 is the driver's own library, never in a package.
_CUDA_LIBRARY: Final = re.compile(r"^lib(?:cu(?!da\.so)\w*|nvrtc\w*|nvJitLink\w*|nccl\w*)\.so\.\d+$")
_RUNTIME_SCOPES: Final = frozenset({"std", "__gnu_cxx", "__cxxabiv1"})
_STD_SUBSTITUTIONS: Final = (b"St", b"Sa", b"Sb", b"Ss", b"Si", b"So", b"Sd")
# ``0.2.0+cu124torch2.4``, ``2.8.3+cu12torch2.8cxx11abiTRUE``, ``2.1.2+pt24cu121``
_LOCAL_TORCH: Final = re.compile(r"(?:torch(\d+)\.(\d+)|pt(\d)(\d+))")


def is_torch_library(soname: str) -> bool:
    """``libtorch_cpu.so``, ``libc10_cuda.so``, ``libtorch_python.so``: one of torch's own libraries."""
    return bool(_TORCH_LIBRARY.match(soname))


def top_scope(name: bytes) -> str | None:
    """The outermost scope of an Itanium-mangled name: ``c10`` for ``_ZN3c104cuda9SetDeviceEi``, ``""`` for
    a global function (``_Z16THPVariable_WrapN2at10TensorBaseE``), ``std``; ``None`` when it is not read."""
    if not name.startswith(b"_Z"):
        return None
    rest = name[2:]
    if rest[:1] == b"T" and rest[1:2] in (b"V", b"I", b"S", b"T"):
        rest = rest[2:]  # a vtable or typeinfo: the type follows
    nested = rest.startswith(b"N")
    if nested:
        rest = rest[1:].lstrip(b"rVK")
        rest = rest[1:] if rest[:1] in (b"R", b"O") else rest
    rest = rest[1:] if rest.startswith(b"L") else rest
    if rest[:2] in _STD_SUBSTITUTIONS:
        return "std"
    digits = re.match(rb"\d{1,4}", rest)
    if digits is None:
        return None
    if not nested:
        return ""
    length = int(digits.group())
    return rest[len(digits.group()) : len(digits.group()) + length].decode("latin-1")


@dataclass(frozen=True, slots=True, kw_only=True)
class TorchLibraries:
    """What torch's libraries (``torch/lib/*.so``) offer an extension: names, scopes, and the libraries they load."""

    version: str | None  # the torch release: "2.7.1+cu126"
    exported: frozenset[bytes] = frozenset()
    scopes: frozenset[str] = frozenset()  # outermost scopes of the exported C++ names
    needed: frozenset[str] = frozenset()  # sonames torch's libraries load (so available to an extension)
    files: tuple[str, ...] = ()

    @classmethod
    def of(cls, version: str | None, exported: Iterable[bytes], needed: Iterable[str],
           files: Sequence[str]) -> TorchLibraries:
        names = frozenset(exported)
        scopes = {scope for name in names if (scope := top_scope(name)) is not None}
        return cls(version=version, exported=names, scopes=frozenset(scopes - _RUNTIME_SCOPES),
                   needed=frozenset(needed), files=tuple(files))


def missing_symbols(
    needed: Sequence[NeededSymbol], torch: TorchLibraries, others: frozenset[bytes] = frozenset()
) -> tuple[tuple[bytes, ...], int]:
    """The references of the module docstring that neither torch nor ``others`` export, and how many were checked."""
    checked = 0
    missing: list[bytes] = []
    for symbol in needed:
        if symbol.version is not None:
            if symbol.library is None or not is_torch_library(symbol.library):
                continue
        elif (scope := top_scope(symbol.name)) is None or scope not in torch.scopes:
            continue
        checked += 1
        if symbol.name not in torch.exported and symbol.name not in others:
            missing.append(symbol.name)
    return tuple(dict.fromkeys(missing)), checked


def cuda_libraries(needed: Sequence[str], available: Container[str]) -> tuple[str, ...]:
    """The CUDA libraries (``libcudart.so.13``, ``libcudnn.so.9``) in ``needed`` that ``available`` lacks."""
    return tuple(name for name in needed if _CUDA_LIBRARY.match(name) and name not in available)


def built_for_torch(version: str | None, requires: Sequence[str] = ()) -> str | None:
    """The torch release a build says it was made for: its local tag (``+cu124torch2.4`` -> ``2.4``,
    ``+pt24cu121`` -> ``2.4``), else an exact ``torch==X`` pin among its ``Requires-Dist``."""
    try:
        local = Version(version).local if version else None
    except InvalidVersion:
        local = None
    if local and (match := _LOCAL_TORCH.search(local)):
        major, minor = (match[1], match[2]) if match[1] else (match[3], match[4])
        return f"{major}.{minor}"
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) != "torch" or req.marker is not None:
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator == "==":
            return specs[0].version
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingSymbol:
    mangled: str
    demangled: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"mangled": self.mangled, "demangled": self.demangled}


@dataclass(frozen=True, slots=True, kw_only=True)
class AbiFinding:
    """One extension module whose import would fail: ``abi-mismatch`` or ``missing-cuda-library``."""

    code: str
    path: str
    package: str  # the distribution ("fbgemm-gpu"), else the file's name
    version: str | None = None
    text: Text
    fixes: tuple[Text, ...] = ()
    built_for: str | None = None
    torch: str | None = None
    symbols: tuple[MissingSymbol, ...] = ()  # the first SHOWN_SYMBOLS missing ones
    missing: int = 0  # missing symbols in all
    checked: int = 0  # references checked against torch
    libraries: tuple[str, ...] = ()  # missing-cuda-library: the sonames nothing provides
    files: tuple[str, ...] = ()  # every library of the package with the problem (``path`` is the first)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.text, "severity": "error",
                                "package": self.package, "path": self.path, "files": list(self.files or (self.path,))}
        if self.version is not None:
            data["version"] = self.version
        if self.code == "abi-mismatch":
            data |= {"torch": self.torch, "built_for": self.built_for, "missing": self.missing,
                     "checked": self.checked, "symbols": [s.to_dict() for s in self.symbols]}
        else:
            data["libraries"] = list(self.libraries)
        data["fixes"] = list(self.fixes)
        return data


def _label(package: str, version: str | None) -> str:
    return f"{package} {version}" if version else package


def _where(path: str, shown: str | None, files: Sequence[str]) -> str | Text:
    """The library named in a sentence: "fbgemm_gpu/fbgemm_gpu_py.so", or it "and 16 other libraries"."""
    name = shown or path
    return Text.of("binaries.and-other-libraries", library=name, count=len(files) - 1) if len(files) > 1 else name


def abi_finding(
    *, path: str, package: str, version: str | None, missing: Sequence[bytes], checked: int,
    torch: TorchLibraries, built_for: str | None, shown: str | None = None, files: Sequence[str] = (),
) -> AbiFinding:
    """``abi-mismatch`` for an extension that needs ``missing`` from ``torch`` (named ``shown`` in its sentence)."""
    first = missing[0].decode("latin-1")
    symbols = tuple(MissingSymbol(mangled=m.decode("latin-1"), demangled=demangle(m.decode("latin-1")))
                    for m in missing[:SHOWN_SYMBOLS])
    fields = {"package": _label(package, version), "library": _where(path, shown, files), "count": len(missing),
              "torch": torch.version or "?", "symbol": symbols[0].demangled or first, "mangled": first}
    if built_for:
        text = Text.of("binaries.abi-missing-built-for", built_for=built_for, **fields)
    else:
        text = Text.of("binaries.abi-missing", **fields)
    fixes = (Text.of("fix.abi-matching-build", package=package, torch=torch.version or "?"),
             Text.of("fix.abi-rebuild", package=package))
    return AbiFinding(code="abi-mismatch", path=path, package=package, version=version, text=text, fixes=fixes,
                      built_for=built_for, torch=torch.version, symbols=symbols, missing=len(missing), checked=checked,
                      files=tuple(files) or (path,))


def cuda_library_finding(
    *, path: str, package: str, version: str | None, libraries: Sequence[str], shown: str | None = None,
    files: Sequence[str] = (),
) -> AbiFinding:
    """``missing-cuda-library`` for an extension whose ``libraries`` nothing available provides."""
    text = Text.of("reason.missing-cuda-library", package=_label(package, version), path=_where(path, shown, files),
                   library=tuple(libraries))
    fixes = (Text.of("fix.cuda-library-build", package=package), Text.of("fix.cuda-library-provider",
                                                                         library=libraries[0]))
    return AbiFinding(code="missing-cuda-library", path=path, package=package, version=version, text=text,
                      fixes=fixes, libraries=tuple(libraries), files=tuple(files) or (path,))
