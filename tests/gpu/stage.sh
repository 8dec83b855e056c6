#!/usr/bin/env bash
# tests/gpu/stage.sh - copies what tests/gpu/run.sh needs from a build into a small folder that travels to the GPU
# machine (the build folder itself is hundreds of MB): the CLI, the library, the test programs it runs, and the
# shared libraries they link that a bare GPU image may lack; then packs that folder as STAGE_DIR.tar.xz (what a GPU
# call carries: a call takes at most 64 MiB), which the GPU machine unpacks with `tar xJf`.
#   tests/gpu/stage.sh [BUILD_DIR] [STAGE_DIR]     (default build, .gpubuild)
set -eu
B=${1:-build}
S=${2:-.gpubuild}
rm -rf "$S"
mkdir -p "$S/tests" "$S/libs"
cp "$B/tailcut" "$B/libtailcut.so" "$S/"
cp "$B/tests/test_all_tactics" "$B/tests/test_engine_noalloc" "$B/tests/test_tuner_device" \
    "$B/tests/test_cuda_data_errors" "$B/tests/test_cuda_nhwc16_chain" "$B/tests/test_cuda_row16_chain" "$B/tests/test_cuda_pinned_io" "$B/tests/test_cpu_amx" \
    "$B/tests/test_cuda_igemm_conv" "$B/tests/test_cuda_dnn_graph" "$B/tests/test_backend" \
    "$S/tests/"
for f in "$S/tailcut" "$S/tests/"*; do ldd "$f"; done | awk '/=> \// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | grep -v libtailcut | while read -r l; do
    cp -L "$l" "$S/libs/"
done
mkdir -p .gpupack
tar -cJf .gpupack/build.tar.xz -C "$S" .
du -sh "$S" .gpupack/build.tar.xz
