#!/usr/bin/env bash
# Build the ELF fixtures of the ABI check in tests/fixtures/abi from the sources there:
#
#   torch-old/libc10.so, torch-old/libtorch_cpu.so   torch_api.cpp with -DOLD_RELEASE
#   torch-new/libc10.so, torch-new/libtorch_cpu.so   torch_api.cpp (no at::native::legacy_add)
#   extension.so       extension.cpp linked against torch-old (DT_NEEDED libtorch_cpu.so, libc10.so)
#   libcudart.so.13    cudart_stub.c with that soname
#   cuda_user.so       cuda_user.cpp linked against libcudart.so.13 and torch-new's libc10.so
#
#   tools/build_abi_fixtures.sh [OUT_DIR]        (default: tests/fixtures/abi)
#
# Needs g++ and gcc (the committed files came from Debian's GCC 12.2, x86_64). Both libraries of a
# torch carry the whole API so that either soname resolves it; -s keeps them small.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$here/tests/fixtures/abi"
out="$(mkdir -p "${1:-$src}" && cd "${1:-$src}" && pwd)"
cxx="${CXX:-g++}"
cc="${CC:-gcc}"
flags=(-shared -fPIC -O1 -s)

for release in old new; do
    mkdir -p "$out/torch-$release"
    define=()
    [ "$release" = old ] && define=(-DOLD_RELEASE)
    "$cxx" "${flags[@]}" "${define[@]}" -Wl,-soname,libc10.so -o "$out/torch-$release/libc10.so" "$src/torch_api.cpp"
    "$cxx" "${flags[@]}" "${define[@]}" -Wl,-soname,libtorch_cpu.so -o "$out/torch-$release/libtorch_cpu.so" \
        "$src/torch_api.cpp"
done
"$cxx" "${flags[@]}" -Wl,--no-as-needed -o "$out/extension.so" "$src/extension.cpp" \
    -L"$out/torch-old" -ltorch_cpu -lc10
"$cc" "${flags[@]}" -Wl,-soname,libcudart.so.13 -o "$out/libcudart.so.13" "$src/cudart_stub.c"
"$cxx" "${flags[@]}" -Wl,--no-as-needed -o "$out/cuda_user.so" "$src/cuda_user.cpp" \
    -L"$out/torch-new" -lc10 "$out/libcudart.so.13"
