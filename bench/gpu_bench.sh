#!/usr/bin/env bash
# gpu_bench.sh - the CUDA backend's benchmark rows, for a GPU machine (the H200 of tools `device`): builds ResNet-50
# and BERT-base plans (FP32 and --fp16) with `tailcut build --backend cuda`, then runs bench/gpu_compare.py on each
# row (tailcut against PyTorch CUDA graphs FP32 and FP16, interleaved, end to end per request), and `tailcut bench
# --profile` for the kernel-only time. Results: OUT_DIR/<row>.json and .txt.
#
#   bench/gpu_bench.sh BUILD_DIR SHARED_MODELS_DIR OUT_DIR [ITERATIONS]      (ITERATIONS per BS1 row, default 10000)
# COMPARE_ARGS: extra gpu_compare.py options (e.g. --no-torch-fp32). ROWS: a regex of the rows to run (default all).
set -u
B=$1 MODELS=$2 OUT=$3 N=${4:-10000}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$(cd "$B" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d "$B/libs" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(cd "$B/libs" && pwd)"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
W=$OUT/work
mkdir -p "$W"
W=$(cd "$W" && pwd)
LIB=$(cd "$B" && pwd)/libtailcut.so
for m in resnet50 bert_base; do [ -f "$W/$m.onnx" ] || xz -dkc "$MODELS/$m.onnx.xz" > "$W/$m.onnx"; done
row() { # row NAME MODEL SHAPES BUILD_FLAGS ITERATIONS
    local name=$1 model=$2 shapes=$3 flags=$4 n=$5
    [[ $name =~ ${ROWS:-.} ]] || return 0
    if ! "$B/tailcut" build "$W/$model.onnx" --backend cuda --shapes "$shapes" $flags -o "$W/$name.plan" \
        >"$OUT/$name.build.txt" 2>&1; then
        echo "$name: build failed:"; tail -3 "$OUT/$name.build.txt"; return
    fi
    "$B/tailcut" bench "$W/$name.plan" --iterations 200 --profile >"$OUT/$name.profile.txt" 2>&1
    grep -E "total of|latency" "$OUT/$name.profile.txt" | sed "s/^/$name profile: /"
    (cd "$(dirname "$0")" && "$PY" gpu_compare.py "$W/$name.plan" --model "$model" --tailcut-lib "$LIB" \
        --iterations "$n" --json "$W/$name.json" ${COMPARE_ARGS:-} ${INFLIGHT_ARGS:-}) >"$OUT/$name.txt" 2>&1
    grep -v -E "^(frame|  File|    )" "$OUT/$name.txt"
}
row resnet50_bs1_fp32 resnet50 input:1x3x224x224 "" "$N"
row resnet50_bs1_fp16 resnet50 input:1x3x224x224 --fp16 "$N"
row bert_s128_bs1_fp32 bert_base input_ids:1x128,attention_mask:1x128 "" "$N"
row bert_s128_bs1_fp16 bert_base input_ids:1x128,attention_mask:1x128 --fp16 "$N"
INFLIGHT_ARGS="--inflight 2" row resnet50_bs128_fp16 resnet50 input:128x3x224x224 --fp16 200
