#!/usr/bin/env bash
# tests/gpu/run.sh - every test of the CUDA backend, in one command, for a machine with an NVIDIA GPU (the H200 of
# tools `device`): the CUDA tactics against the reference kernels on random cases (test_all_tactics), the backend
# and engine unit tests (the tuner on the device: test_tuner_device), whole models built with --backend cuda against
# ONNX Runtime FP32 (run_model_tests.py), and compute-sanitizer memcheck on a small model. Build on the CPU machine
# first (make build), then:
#
#   tests/gpu/run.sh [BUILD_DIR] [SHARED_MODELS_DIR] [OUT_DIR]
#
# TC_GPU_LIBS: a folder of the shared libraries the build links (protobuf-c, cmocka, ...) when the GPU machine
# lacks them. Prints one PASS/FAIL line per part; exits 1 when any failed.
set -u
B=${1:-build}
SHARED=${2:-}
OUT=${3:-out/gpu}
mkdir -p "$OUT"
[ -z "${TC_GPU_LIBS:-}" ] && [ -d "$B/libs" ] && TC_GPU_LIBS=$(cd "$B/libs" && pwd)
export LD_LIBRARY_PATH="$(cd "$B" && pwd)${TC_GPU_LIBS:+:$TC_GPU_LIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
failed=0
part() { # part NAME COMMAND...: runs one part, its output into $OUT/NAME.log
    local name=$1; shift
    local t0=$SECONDS
    if "$@" >"$OUT/$name.log" 2>&1; then echo "PASS $name ($((SECONDS - t0)) s)"
    else echo "FAIL $name ($((SECONDS - t0)) s): tail of $OUT/$name.log:"; tail -n 25 "$OUT/$name.log"; failed=1; fi
}
nvidia-smi -L || { echo "FAIL no GPU (nvidia-smi)"; exit 1; }
part tactics "$B/tests/test_all_tactics"
grep -E "CUDA tactics|ran against" "$OUT/tactics.log"
[ -x "$B/tests/test_backend" ] && part backend "$B/tests/test_backend"
part noalloc "$B/tests/test_engine_noalloc"
grep -E "OK|SKIP|CUDA" "$OUT/noalloc.log"
# Gather with indices out of range must fail the run (on a GPU machine the CUDA case must not be skipped).
part data-errors bash -c '"$0" && ! grep -q "SKIPPED" <("$0" 2>&1)' "$B/tests/test_cuda_data_errors"
part pinned-io bash -c '"$0" 2>&1 | tee /dev/stderr | grep -q "PASSED  \] 2 test"' "$B/tests/test_cuda_pinned_io"
part nhwc16-chain bash -c '"$0" 2>&1 | tee /dev/stderr | grep -q "PASSED  \] 1 test"' "$B/tests/test_cuda_nhwc16_chain"
part row16-chain bash -c '"$0" 2>&1 | tee /dev/stderr | grep -q "PASSED  \] 1 test"' "$B/tests/test_cuda_row16_chain"
# The implicit-GEMM FP16 convolution: every configuration against the host reference (must not be skipped here), then
# its timings on the ResNet-50 3x3 shapes (printed, never asserted).
part igemm-conv bash -c '"$0" 2>&1 | tee /dev/stderr | grep -q "PASSED  \] 4 test"' "$B/tests/test_cuda_igemm_conv"
grep -E "timing|FAILED" "$OUT/igemm-conv.log"
part dnn-graph bash -c '"$0" 2>&1 | tee /dev/stderr | grep -q "PASSED  \] 4 test"' "$B/tests/test_cuda_dnn_graph"
grep -E "configs|refused|timing|FAIL|not tested|cuDNN [0-9]" "$OUT/dnn-graph.log"
[ -x "$B/tests/test_tuner_device" ] && part tuner "$B/tests/test_tuner_device"
[ -f "$OUT/tuner.log" ] && grep -E "SKIP|ns, median" "$OUT/tuner.log"

shared_args=()
[ -n "$SHARED" ] && shared_args=(--shared "$SHARED")
part models "$PY" tests/models/run_model_tests.py --tailcut "$B/tailcut" "${shared_args[@]}" --quick --keep \
    --work "$OUT/models_work" --build-args "--backend cuda"
tail -n 20 "$OUT/models.log"
# The shared MobileNetV2 and EfficientNet-B0 (synthetic weights) give logits of 5e-9 and 6e-14 on random inputs, below
# FP16's smallest normal (6.1e-5): an FP16 plan cannot represent them (their values underflow to 0), so they are left
# out of the FP16 comparison; the generated MobileNetV2 and the other models are compared.
part models-fp16 "$PY" tests/models/run_model_tests.py --tailcut "$B/tailcut" "${shared_args[@]}" --quick --keep \
    --work "$OUT/models_fp16_work" --build-args "--backend cuda --fp16" --tol-scale 20 \
    --exclude shared_mobilenet_v2,shared_efficientnet_b0
tail -n 12 "$OUT/models-fp16.log"
for case in shared_resnet50_probe shared_bert_base; do
    [ -f "$OUT/models_fp16_work/$case/model.plan" ] || continue
    "$B/tailcut" inspect "$OUT/models_fp16_work/$case/model.plan" | awk '$1 ~ /^[0-9]+$/ {print $5, $4}' | sort | uniq -c |
        sort -rn | head -5 | sed "s/^/$case fp16 plan steps (precision, tactic): /"
done
# bench --profile on CUDA: the run is captured into a graph with an event record node after each step; every step
# must get a row, and the steps' sum is printed beside the end-to-end mean (never asserted: a benchmark's figure).
for case in shared_resnet50_probe shared_bert_base; do
    plan=$OUT/models_fp16_work/$case/model.plan
    [ -f "$plan" ] || continue
    part "profile-$case" bash -c '"$0" bench "$1" --iterations 100 --profile --json "$2" &&
        "$3" -c "import json,sys; j=json.load(open(sys.argv[1])); s=j[\"steps\"]; assert len(s)>0, \"no steps\"
print(len(s), \"steps, sum\", round(sum(x[\"mean_ms\"] for x in s),3), \"ms, end to end mean\", round(j[\"mean_ms\"],3), \"ms\")" "$2"' \
        "$B/tailcut" "$plan" "$OUT/profile-$case.json" "$PY"
    tail -n 1 "$OUT/profile-$case.log"
done
for case in gen_resnet50_small gen_bert_small shared_bert_base; do
    [ -f "$OUT/models_work/$case/model.plan" ] &&
        part "replay-$case" "$PY" tests/gpu/graph_replay.py "$OUT/models_work/$case/model.plan" --tailcut-lib "$B/libtailcut.so"
done
# A plan of batch 1..4 in one context at batches 1, 3, 1, 4, 2 (graphs dropped and captured again), against the CPU's.
g=$OUT/models_work/gen_resnet50_small.onnx
if [ -f "$g" ]; then
    dyn=(--min-shapes input:1x3x64x64 --opt-shapes input:2x3x64x64 --max-shapes input:4x3x64x64)
    "$B/tailcut" build "$g" "${dyn[@]}" --backend cuda -o "$OUT/dyn_cuda.plan" >/dev/null &&
        "$B/tailcut" build "$g" "${dyn[@]}" -o "$OUT/dyn_cpu.plan" >/dev/null &&
        part dynamic "$PY" tests/gpu/graph_replay.py "$OUT/dyn_cuda.plan" --tailcut-lib "$B/libtailcut.so" \
            --batches 1,3,1,4,2 --reference-plan "$OUT/dyn_cpu.plan"
    grep -E "batch|dynamic" "$OUT/dynamic.log"
fi
# The FP16 kernels of a transformer layer (Tensor Core attention, FP16 row images, merged Q/K/V) under the sanitizers.
if command -v compute-sanitizer >/dev/null 2>&1; then
    for tool in memcheck racecheck; do
        part "$tool-row16-chain" compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_cuda_row16_chain"
    done
fi
for small in gen_resnet50_small gen_bert_small; do
    d=$OUT/models_work/$small
    command -v compute-sanitizer >/dev/null 2>&1 && [ -f "$d/model.plan" ] || continue
    ins=()
    for f in "$d"/inputs/*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
    for tool in memcheck racecheck; do
        part "$tool-$small" compute-sanitizer --tool $tool --error-exitcode 9 "$B/tailcut" run "$d/model.plan" \
            "${ins[@]}" --output-dir "$OUT/sanitizer_out"
    done
done
exit $failed
