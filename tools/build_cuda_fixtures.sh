#!/usr/bin/env bash
# Build the CUDA binary fixtures in tests/fixtures/cuda from kernel.cu, and write manifest.toml:
# for each file, the exact command that built it and the SASS / PTX / LTO lists that command
# asks for.  tests/test_fatbin.py reads the manifest; a test that reruns this script into a
# temporary directory skips when nvcc is absent.
#
#   tools/build_cuda_fixtures.sh [OUT_DIR]        (default: tests/fixtures/cuda)
#
# Needs nvcc (the committed files came from CUDA 13.0, /usr/local/bin/nvcc), gcc, ld, objcopy.
# Every object is built with `-cudart none` (or shared) so that no static CUDA runtime is
# linked in and each file stays a few KB.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$here/tests/fixtures/cuda/kernel.cu"
out="$(mkdir -p "${1:-$here/tests/fixtures/cuda}" && cd "${1:-$here/tests/fixtures/cuda}" && pwd)"
nvcc="${NVCC:-nvcc}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$src" "$work/kernel.cu"
cd "$work"

manifest="$work/manifest.toml"
{
    echo "# Written by tools/build_cuda_fixtures.sh; do not edit by hand."
    echo "# Expected lists follow from each command's -gencode / -arch flags."
    echo "nvcc = \"$("$nvcc" --version | tail -n 1)\""
} >"$manifest"

toml_list() {  # words -> ["a", "b"]
    local items=() word
    for word in "$@"; do items+=("\"$word\""); done
    local IFS=,
    echo "[${items[*]}]"
}

# record FILE "SASS..." "PTX..." "LTO..." NOTE -- COMMAND... [&& COMMAND...]
# COMPRESSION="name=codec ..." in the environment adds an expected codec per entry name.
record() {
    local file=$1 sass=$2 ptx=$3 lto=$4 note=$5
    shift 6
    local command="$*"
    bash -c "$command"
    cp "$file" "$out/$file"
    {
        echo ""
        echo "[[fixture]]"
        echo "file = \"$file\""
        echo "command = \"$command\""
        echo "note = \"$note\""
        # shellcheck disable=SC2086
        echo "sass = $(toml_list $sass)"
        # shellcheck disable=SC2086
        echo "ptx = $(toml_list $ptx)"
        # shellcheck disable=SC2086
        echo "lto = $(toml_list $lto)"
        if [[ -n "${COMPRESSION:-}" ]]; then
            echo "[fixture.compression]"
            local pair
            for pair in $COMPRESSION; do echo "\"${pair%%=*}\" = \"${pair#*=}\""; done
        fi
    } >>"$manifest"
}

so="$nvcc -shared -Xcompiler -fPIC -cudart none"

record multi.so "sm_75 sm_86 sm_90a sm_100a" "compute_90" "" \
    "four SASS targets, two arch-specific, plus PTX; CUDA 13 default compression (PTX zstd)" -- \
    "$so -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86" \
    "-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100a,code=sm_100a" \
    "-gencode arch=compute_90,code=compute_90 -o multi.so kernel.cu"

record family.so "sm_100f" "compute_120f" "" "family-specific SASS and PTX (the f suffix, CUDA 12.9+)" -- \
    "$so -gencode arch=compute_100f,code=sm_100f -gencode arch=compute_120f,code=compute_120f -o family.so kernel.cu"

COMPRESSION="sm_80=zstd compute_80=zstd" \
record compress-size.so "sm_80" "compute_80" "" "every entry zstd-compressed" -- \
    "$so --compress-mode=size -gencode arch=compute_80,code=[sm_80,compute_80] -o compress-size.so kernel.cu"

COMPRESSION="compute_80=lz4" \
record compress-speed.so "sm_80" "compute_80" "" "LZ4 (raw block) compressed PTX" -- \
    "$so --compress-mode=speed -gencode arch=compute_80,code=[sm_80,compute_80] -o compress-speed.so kernel.cu"

COMPRESSION="sm_80=none compute_80=none" \
record uncompressed.so "sm_80" "compute_80" "" "nothing compressed" -- \
    "$so --compress-mode=none -gencode arch=compute_80,code=[sm_80,compute_80] -o uncompressed.so kernel.cu"

record rdc.so "sm_86" "" "" \
    "-rdc=true: device-linked sm_86 in .nv_fatbin; __nv_relfatbin keeps the pre-link sm_86 and compute_90" -- \
    "$nvcc -shared -Xcompiler -fPIC -cudart shared -rdc=true -gencode arch=compute_86,code=sm_86" \
    "-gencode arch=compute_90,code=compute_90 -o rdc.so kernel.cu"

record rdc.o "sm_86" "compute_90" "" "relocatable object: only __nv_relfatbin" -- \
    "$nvcc -c -Xcompiler -fPIC -rdc=true -gencode arch=compute_86,code=sm_86" \
    "-gencode arch=compute_90,code=compute_90 -o rdc.o kernel.cu"

record lto.o "" "" "lto_90 lto_100a" "LTO-IR entries (kind 8)" -- \
    "$nvcc -c -Xcompiler -fPIC -rdc=true -gencode arch=compute_90,code=lto_90" \
    "-gencode arch=compute_100a,code=lto_100a -o lto.o kernel.cu"

# A static library of two CUDA objects: an -rdc one (its code only in __nv_relfatbin) and a plain one
# whose name is longer than 15 bytes (GNU ar keeps it in the "//" name table).  cuobjdump lists both
# members; the rdc member's copies count although the other member has loadable code.
record libkernels.a "sm_75 sm_86" "compute_90" "" "a static library: an -rdc member and a long-named plain member" -- \
    "$nvcc -c -Xcompiler -fPIC -gencode arch=compute_75,code=sm_75 -o plain_kernel_object.o kernel.cu" \
    "&& ar rcs libkernels.a rdc.o plain_kernel_object.o"

record kernel.fatbin "sm_75" "compute_120" "" "a bare fatbin file" -- \
    "$nvcc -fatbin -gencode arch=compute_75,code=sm_75 -gencode arch=compute_120,code=compute_120" \
    "-o kernel.fatbin kernel.cu"

record sm_90a.cubin "sm_90a" "" "" "a bare cubin: e_flags carry the SM but not the a suffix (ABI 8); its .note.nv.tkinfo names sm_90a" -- \
    "$nvcc -cubin -gencode arch=compute_90a,code=sm_90a -o sm_90a.cubin kernel.cu"
record sm_100f.cubin "sm_100f" "" "" "a bare family cubin: the note names sm_100f, which cuobjdump lists as sm_100" -- \
    "$nvcc -cubin -gencode arch=compute_100f,code=sm_100f -o sm_100f.cubin kernel.cu"
record sm_100.cubin "sm_100" "" "" "a bare plain cubin: the same e_flags as sm_100a and sm_100f; the note says which" -- \
    "$nvcc -cubin -gencode arch=compute_100,code=sm_100 -o sm_100.cubin kernel.cu"

# The way AOTInductor embeds kernels (torch/_inductor/cpp_builder.py convert_cubin_to_obj):
# ld -r -b binary, then .data renamed to .rodata.  No .nv_fatbin section at all.
record embedded.so "sm_75 sm_90a" "compute_120" "" "a fatbin and a cubin stored in .rodata as data (its note: sm_90a)" -- \
    "ld -r -b binary -z noexecstack -o blobs.o kernel.fatbin sm_90a.cubin" \
    "&& objcopy --rename-section .data=.rodata,alloc,load,readonly,data,contents blobs.o" \
    "&& gcc -shared -o embedded.so blobs.o"

# A Windows module (PE image, as a win_amd64 wheel's .pyd): multi.so's .nv_fatbin bytes linked by GNU ld's
# PE emulation, which cuts the section name to 8 bytes as Microsoft's linker does: ".nv_fatb".
record windows.pyd "sm_75 sm_86 sm_90a sm_100a" "compute_90" "" "a PE image whose .nv_fatb holds multi.so's fatbin" -- \
    "objcopy -O binary --only-section=.nv_fatbin multi.so fatbin.bin" \
    "&& objcopy -I binary -O pe-x86-64 -B i386:x86-64" \
    "--rename-section .data=.nv_fatbin,contents,alloc,load,readonly,data fatbin.bin fatbin.obj" \
    "&& ld -m i386pep --dll -e 0 -o windows.pyd fatbin.obj"

record nogpu.so "" "" "" "a host-only shared object" -- \
    "echo 'int answer(void) { return 42; }' > nogpu.c && gcc -shared -fPIC -o nogpu.so nogpu.c"

cp "$manifest" "$out/manifest.toml"
echo "wrote $(grep -c '^\[\[fixture\]\]' "$manifest") fixtures to $out"
