#!/usr/bin/env bash
# gpu_conv16_ab.sh - A/B of the FP16 convolution configurations on a GPU machine: builds ResNet-50 bs1 --fp16 plans
# with TAILCUT_CONV16_PATHS = none / igemm / graph / both (docs/reference/commands.md), prints which configurations the
# tuner chose, then runs bench/gpu_compare.py on each (PyTorch's FP16 CUDA graph interleaved in each run).
#   bench/gpu_conv16_ab.sh BUILD_DIR SHARED_MODELS_DIR OUT_DIR [ITERATIONS (3000)] [ROUNDS (1)]
set -u
B=$1 MODELS=$2 OUT=$3 N=${4:-3000} ROUNDS=${5:-1}
mkdir -p "$OUT/work"
W=$(cd "$OUT/work" && pwd)
LIB=$(cd "$B" && pwd)/libtailcut.so
[ -f "$W/resnet50.onnx" ] || xz -dkc "$MODELS/resnet50.onnx.xz" > "$W/resnet50.onnx"
for v in none igemm graph both; do
    case $v in none) e="" ;; igemm) e=igemm ;; graph) e=graph ;; both) e="igemm,graph" ;; esac
    TAILCUT_CONV16_PATHS=$e "$B/tailcut" build "$W/resnet50.onnx" --backend cuda --fp16 --shapes input:1x3x224x224 \
        -o "$W/r_$v.plan" >"$OUT/build_$v.txt" 2>&1 || { echo "$v: build failed"; tail -3 "$OUT/build_$v.txt"; continue; }
    echo "$v: $("$B/tailcut" inspect "$W/r_$v.plan" --verbose | awk '$1 == "*" {print $2}' | sort | uniq -c | tr '\n' ' ')"
done
for r in $(seq 1 "$ROUNDS"); do
    for v in none igemm graph both; do
        [ -f "$W/r_$v.plan" ] || continue
        (cd "$(dirname "$0")" && python3 gpu_compare.py "$W/r_$v.plan" --model resnet50 --tailcut-lib "$LIB" \
            --iterations "$N" --no-torch-fp32) >"$OUT/cmp_${v}_$r.txt" 2>&1
        echo "$v round $r: $(grep -E '^tailcut ' "$OUT/cmp_${v}_$r.txt")  $(grep -E 'P50 .*x' "$OUT/cmp_${v}_$r.txt" | head -1)"
    done
done
