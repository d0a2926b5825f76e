"""The ABI check's pieces: dynamic sections and symbols, the demangler, and the rules of ``binaries.abi``.

The ELF files are ``tests/fixtures/abi``, built by ``tools/build_abi_fixtures.sh`` with g++: two
"releases" of a fake torch (``torch-old`` still exports ``at::native::legacy_add(int, int)``,
``torch-new`` does not) and an extension linked against the old one.
"""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from cudaresolve.binaries.abi import (
    TorchLibraries,
    built_for_torch,
    cuda_libraries,
    is_torch_library,
    missing_symbols,
    top_scope,
)
from cudaresolve.binaries.demangle import MAX_INPUT, demangle
from cudaresolve.binaries.dynamic import NeededSymbol, read_linkage, read_symbols
from cudaresolve.binaries.elf import DEFAULT_LIMITS, BoundedReader, Limits
from cudaresolve.errors import InvalidBinary

ABI = Path(__file__).parent / "fixtures" / "abi"
LEGACY = b"_ZN2at6native10legacy_addEii"


def reader_of(path: Path, limits: Limits = DEFAULT_LIMITS) -> BoundedReader:
    return BoundedReader(io.BytesIO(path.read_bytes()), None, limits)


def torch_of(release: str, version: str = "2.11.0") -> TorchLibraries:
    libs = {n: read_symbols(reader_of(ABI / f"torch-{release}" / n)) for n in ("libc10.so", "libtorch_cpu.so")}
    return TorchLibraries.of(version, (e for d in libs.values() for e in d.exported),
                             (n for d in libs.values() for n in d.linkage.needed), list(libs))


# -- dynamic sections ------------------------------------------------------------------------


def test_linkage_names_the_libraries_in_link_order() -> None:
    linkage = read_linkage(reader_of(ABI / "extension.so"))
    assert linkage.needed[:2] == ("libtorch_cpu.so", "libc10.so")
    assert "libstdc++.so.6" in linkage.needed
    assert linkage.dynamic
    assert read_linkage(reader_of(ABI / "torch-new" / "libc10.so")).soname == "libc10.so"
    assert read_linkage(reader_of(ABI / "cuda_user.so")).needed[:2] == ("libc10.so", "libcudart.so.13")


def test_needed_symbols_carry_their_version_and_library_and_leave_weak_ones_out() -> None:
    data = read_symbols(reader_of(ABI / "extension.so"))
    needed = {s.name: s for s in data.needed}
    assert needed[LEGACY] == NeededSymbol(name=LEGACY, version=None, library=None)
    assert needed[b"_ZN3c104cuda9SetDeviceEi"].version is None
    assert needed[b"PyTuple_New"].version is None
    delete = needed[b"_ZdlPvm"]
    assert (delete.version, delete.library) == ("CXXABI_1.3.9", "libstdc++.so.6")
    assert b"_ZN3c1013optional_hookEv" not in needed  # weak: the extension runs without it
    assert b"extension_entry" in data.exported


def test_exports_of_the_two_torch_releases_differ_by_one_symbol() -> None:
    old, new = torch_of("old"), torch_of("new")
    assert old.exported - new.exported == {LEGACY}
    assert {"c10", "at", ""} <= new.scopes  # "" is the global scope of THPVariable_Check(void*)
    assert "std" not in new.scopes


def test_a_file_without_dynamic_section_needs_nothing() -> None:
    assert not read_linkage(reader_of(Path(__file__).parent / "fixtures" / "cuda" / "embedded.so")).needed


@pytest.mark.parametrize("cut", [16, 64, 2000, 9000])
def test_truncated_library_is_invalid_binary_never_another_error(cut: int, tmp_path: Path) -> None:
    data = (ABI / "extension.so").read_bytes()
    path = tmp_path / "cut.so"
    path.write_bytes(data[:cut] if cut < 9000 else data[:-cut // 3])
    with pytest.raises(InvalidBinary):
        read_symbols(reader_of(path))


def test_a_symbol_table_past_the_budget_is_invalid_binary() -> None:
    with pytest.raises(InvalidBinary):
        read_symbols(reader_of(ABI / "extension.so", Limits(max_read_bytes=4096)))


def test_string_offsets_outside_the_table_are_invalid_binary(tmp_path: Path) -> None:
    """Every st_name of .dynsym set past .dynstr: the reader refuses, it does not read elsewhere."""
    data = bytearray((ABI / "extension.so").read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    count, = struct.unpack_from("<H", data, 0x3C)
    for i in range(count):
        at = shoff + 64 * i
        if struct.unpack_from("<I", data, at + 4)[0] == 11:  # SHT_DYNSYM
            offset, size = struct.unpack_from("<QQ", data, at + 24)
            for entry in range(1, size // 24):
                struct.pack_into("<I", data, offset + 24 * entry, 0x7FFFFFF0)
    path = tmp_path / "bad.so"
    path.write_bytes(bytes(data))
    with pytest.raises(InvalidBinary):
        read_symbols(reader_of(path))


# -- the rules -------------------------------------------------------------------------------


def test_extension_against_the_release_it_was_built_for_misses_nothing() -> None:
    needed = read_symbols(reader_of(ABI / "extension.so")).needed
    assert missing_symbols(needed, torch_of("old")) == ((), 5)


def test_extension_against_another_release_misses_the_dropped_symbol() -> None:
    needed = read_symbols(reader_of(ABI / "extension.so")).needed
    assert missing_symbols(needed, torch_of("new")) == ((LEGACY,), 5)


def test_versioned_references_count_only_when_bound_to_a_torch_library() -> None:
    torch = torch_of("new")
    bound = [NeededSymbol(name=b"_ZN3c105ErrorC1Ev", version="V1", library="libc10.so"),
             NeededSymbol(name=b"_ZN3c105ErrorC2Ev", version="GLIBCXX_3.4", library="libstdc++.so.6"),
             NeededSymbol(name=b"_ZN6google8protobuf4InitEv"),  # a scope torch does not export in
             NeededSymbol(name=b"PyErr_Occurred")]
    assert missing_symbols(bound, torch) == ((b"_ZN3c105ErrorC1Ev",), 1)
    assert missing_symbols(bound, torch, frozenset({b"_ZN3c105ErrorC1Ev"})) == ((), 1)


@pytest.mark.parametrize(("name", "scope"), [
    (b"_ZN3c104cuda9SetDeviceEi", "c10"),
    (b"_ZNK5torch8autograd4Node4nameEv", "torch"),
    (b"_ZTVN2at6TensorE", "at"),
    (b"_ZNKSt6vectorIiSaIiEE4sizeEv", "std"),
    (b"_ZNSs4sizeEv", "std"),
    (b"_Z16THPVariable_WrapN2at10TensorBaseE", ""),
    (b"_ZN9__gnu_cxx3fooEv", "__gnu_cxx"),
    (b"PyTuple_New", None),
    (b"_ZZ3foovE1x", None),
    (b"_ZN", None),
])
def test_top_scope(name: bytes, scope: str | None) -> None:
    assert top_scope(name) == scope


@pytest.mark.parametrize(("version", "requires", "expected"), [
    ("0.2.0+cu124torch2.4", [], "2.4"),
    ("2.8.3+cu12torch2.8cxx11abiTRUE", [], "2.8"),
    ("2.1.2+pt24cu121", [], "2.4"),
    ("0.0.2.post2+pt210cu128", [], "2.10"),
    ("1.2.0", ["numpy", "torch==2.7.1"], "2.7.1"),
    ("1.2.0", ["torch==2.7.*"], "2.7.*"),
    ("1.2.0", ["torch>=2.6"], None),
    ("1.2.0", ["torch==2.7.1; sys_platform == 'linux'"], None),
    ("1.2.0", ["not a requirement ((("], None),
    ("not a version", [], None),
])
def test_built_for_torch(version: str, requires: list[str], expected: str | None) -> None:
    assert built_for_torch(version, requires) == expected


def test_cuda_libraries_leave_the_driver_and_other_libraries_out() -> None:
    needed = ["libcuda.so.1", "libcudart.so.13", "libcudnn.so.9", "libnvJitLink.so.13", "libc.so.6",
              "libtorch_cuda.so", "libcublasLt.so.12", "libnccl.so.2"]
    assert cuda_libraries(needed, {"libcublasLt.so.12"}) == (
        "libcudart.so.13", "libcudnn.so.9", "libnvJitLink.so.13", "libnccl.so.2")


@pytest.mark.parametrize(("name", "torch"), [
    ("libtorch_cpu.so", True), ("libc10_cuda.so", True), ("libtorch.so", True), ("libtorch_python.so", True),
    ("libtorchvision.so.1", True), ("libcudart.so.12", False), ("libc.so.6", False), ("torch.so", False),
])
def test_is_torch_library(name: str, torch: bool) -> None:
    assert is_torch_library(name) is torch


# -- the demangler ---------------------------------------------------------------------------

DEMANGLED = [
    ("_ZN3c104cuda9SetDeviceEi", "c10::cuda::SetDevice(int)"),
    ("_ZNK5torch8autograd4Node4nameEv", "torch::autograd::Node::name() const"),
    ("_ZN2at6native10legacy_addEii", "at::native::legacy_add(int, int)"),
    ("_ZNK3c104Type14isSubtypeOfExtERKSt10shared_ptrIS0_EPSo",
     "c10::Type::isSubtypeOfExt(std::shared_ptr<c10::Type> const&, "
     "std::basic_ostream<char, std::char_traits<char> >*) const"),
    ("_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEE",
     "at::_ops::zeros::call(c10::ArrayRef<c10::SymInt>, c10::optional<c10::ScalarType>)"),
    ("_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
     "c10::detail::torchInternalAssertFail(char const*, char const*, unsigned int, char const*, "
     "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"),
    ("_ZN3c1010TensorImplC2ENS_7StorageENS_14DispatchKeySetE",
     "c10::TensorImpl::TensorImpl(c10::Storage, c10::DispatchKeySet)"),
    ("_ZN3c1010TensorImplD1Ev", "c10::TensorImpl::~TensorImpl()"),
    ("_ZTVN3c1011StorageImplE", "vtable for c10::StorageImpl"),
    ("_ZN3c10lsERSoRKNS_6DeviceE",
     "c10::operator<<(std::basic_ostream<char, std::char_traits<char> >&, c10::Device const&)"),
    ("_ZN2at6TensoraSEOS0_", "at::Tensor::operator=(at::Tensor&&)"),
    ("_ZN3c1019UndefinedTensorImpl10_singletonE", "c10::UndefinedTensorImpl::_singleton"),
    ("_ZN3c106detail12_str_wrapperIJPKcEE4callB5cxx11ERKS3_",
     "c10::detail::_str_wrapper<char const*>::call[abi:cxx11](char const* const&)"),
    ("_Z16THPVariable_WrapN2at10TensorBaseE", "THPVariable_Wrap(at::TensorBase)"),
    ("_ZN3c1020intrusive_ptr_targetD2Ev.cold", "c10::intrusive_ptr_target::~intrusive_ptr_target() [clone .cold]"),
    ("_ZNK2at10TensorBase8data_ptrIfEEPT_v", "float* at::TensorBase::data_ptr<float>() const"),
    ("_ZN2at6detail10empty_cudaEN3c108ArrayRefIlEENS1_10ScalarTypeESt8optionalINS1_6DeviceEES5_INS1_12MemoryFormatEE",
     "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, "
     "std::optional<c10::MemoryFormat>)"),
    ("_Z3fooILi5ELb1EEvv", "void foo<5, true>()"),
    ("_Z3barPFviEPA3_Kc", "bar(void (*)(int), char const (*) [3])"),
]


@pytest.mark.parametrize(("mangled", "readable"), DEMANGLED, ids=[m for m, _ in DEMANGLED])
def test_demangle(mangled: str, readable: str) -> None:
    assert demangle(mangled) == readable


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="no c++filt on this machine")
def test_demangle_agrees_with_cxxfilt() -> None:
    names = [m for m, _ in DEMANGLED]
    names += [s.name.decode() for s in read_symbols(reader_of(ABI / "extension.so")).needed
              if s.name.startswith(b"_Z")]
    names += sorted(n.decode() for n in torch_of("old").exported if n.startswith(b"_Z"))
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    ours = [demangle(n) for n in names]
    theirs = [t.replace("std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string")
              for t in out.stdout.splitlines()]
    assert ours == theirs


@pytest.mark.parametrize("name", ["PyTuple_New", "_Z", "_ZN3fooE3", "_ZUlvE_", "_ZN3c10", "_Z3fooIXadL_Z3barvEEEvv",
                                  "_Z" + "N3foo" * 100 + "E", "_ZL"])
def test_names_it_cannot_read_give_none(name: str) -> None:
    assert demangle(name) is None


def test_demangling_is_bounded() -> None:
    assert demangle("_ZN" + "3abc" * MAX_INPUT + "Ev") is None  # too long to try
    # each parameter is B<X, X> of the parameter before: a string that doubles with each step
    steps, index = [], 0
    for step in range(40):
        ref = "S_" if index == 0 else f"S{_base36(index - 1)}_"
        steps.append(f"1BI{ref}{ref}E")
        index = 2 * step + 2
    nested = "_Z1f1A" + "".join(steps)
    start = time.perf_counter()
    assert demangle(nested) is None
    assert demangle("_Z1f" + "P" * 3000 + "i") is None  # deeper than the recursion bound
    assert time.perf_counter() - start < 1.0


def _base36(number: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    while True:
        number, rest = divmod(number, 36)
        text = digits[rest] + text
        if not number:
            return text


def test_names_beside_a_library_are_asked_of_each_folder_not_joined() -> None:
    """Found by this stop's hostile-input hunt: a wheel of 30,000 libraries in one folder copied that folder's
    names into one set per library (quadratic: inspect ran past 300 s; 17 s now)."""
    from cudaresolve.binaries.abi import cuda_libraries
    from cudaresolve.binaries.linkage import _AnyOf

    either = _AnyOf(({"libcudart.so.12"}, frozenset({"libcudnn.so.9"}), ()))
    assert "libcudnn.so.9" in either and "libcublas.so.12" not in either
    needed = ("libcudart.so.12", "libcublas.so.12", "libc.so.6")
    assert cuda_libraries(needed, either) == ("libcublas.so.12",)
