#!/usr/bin/env bash
# test_qdq.sh - explicit quantization (QDQ models from onnxruntime's quantize_static) end to end: per-tensor
# and per-channel weights, uint8 and int8 activations, reduce_range (7-bit weights), a ResNet and a MobileNetV2
# (depthwise layers); tailcut's
# outputs must match onnxruntime's on the same
# QDQ model, with the convolutions in INT8 where the CPU has VNNI or AVX2 (the AVX2 variant also under
# TAILCUT_MAX_ISA=avx512), and with the Q/DQ ops run as they are (no INT8 step) under TAILCUT_MAX_ISA=ref (the
# fused fake quantization in FP32 kernels). See qdq_check.py.
#
# usage: tests/cli/test_qdq.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_qdq.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 >/dev/null
. "$repo/tests/cli/int8_cpu.sh" # vnni, int8
expect=--expect-fp32
[ $int8 = 1 ] && expect=--expect-int8
check() { "$py" "$repo/tests/cli/qdq_check.py" --tailcut "$build/tailcut" --model "$work/r.onnx" "$@" 2>&1 |
  grep -v "pre-processing\|WARNING" ; }
check --work "$work/pc" --per-channel $expect
check --work "$work/pt" $expect --min-cosine 0.998
check --work "$work/s8" --per-channel --activation s8 $expect
if [ $int8 = 1 ]; then TAILCUT_MAX_ISA=avx512 check --work "$work/novnni" --per-channel --expect-int8; fi
# onnxruntime's reduce_range (weights on a grid of |q| <= 64, as it advises for CPUs without VNNI): without VNNI every
# INT8 step takes a 7-bit-weight variant, which computes the model's codes exactly
if [ $int8 = 1 ]; then
  TAILCUT_MAX_ISA=avx512 check --work "$work/rr" --per-channel --reduce-range --expect-int8 --expect-w7
  TAILCUT_MAX_ISA=avx512 check --work "$work/rrt" --reduce-range --expect-int8 --expect-w7 --min-cosine 0.998
  TAILCUT_MAX_ISA=avx512 check --work "$work/rrs8" --per-channel --activation s8 --reduce-range --expect-w7
fi
TAILCUT_MAX_ISA=ref check --work "$work/ref" --per-channel --expect-fp32
# A MobileNetV2 (depthwise layers; ReLU6 ranges with zero points): per-channel and per-tensor weights
"$py" "$repo/tools/modelgen/modelgen.py" mobilenet_v2 -o "$work/m.onnx" --width-mult 0.5 --max-repeats 1 \
  --image 32 >/dev/null
checkm() { "$py" "$repo/tests/cli/qdq_check.py" --tailcut "$build/tailcut" --model "$work/m.onnx" "$@" 2>&1 |
  grep -v "pre-processing\|WARNING" ; }
# (the exact integer sums of a depthwise layer may round 1 ulp away from onnxruntime's float sums; where that lands on
# a quantization tie, one code flips and the logits move: seen once in 12 inputs, cosine 0.9982, hence 0.995)
checkm --work "$work/mpc" --per-channel $expect --min-cosine 0.995
checkm --work "$work/mpt" $expect --min-cosine 0.995
echo "test_qdq: ok"
