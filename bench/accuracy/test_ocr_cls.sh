#!/usr/bin/env bash
# test_ocr_cls.sh BUILD_DIR PYTHON - accuracy check of tailcut on a real pretrained model: renders
# a PP-OCR direction-classifier set (1000 eval, 32 calib), builds a batch-1 plan and a dynamic-batch
# plan of ch_ppocr_mobile_v2.0_cls, and fails unless each plan's accuracy is >= 90% and its top-1
# agreement with onnxruntime >= 99.5%. Then INT8: calibrated on the (separate) calibration set, every
# layer that has an INT8 tactic in INT8 (--tactics-fixed), it must stay within 1 point of onnxruntime's
# FP32 accuracy with >= 99% top-1 agreement (where the CPU has VNNI or AVX2). Then FP16 and BF16 (--fp16 / --bf16,
# every layer that fits in that type): within 0.2 points of onnxruntime's FP32 accuracy (the issue's BF16
# target) with >= 99.5% agreement. 1000 images: one is 0.1 point (with 200, one image decided the INT8 gate on the VNNI
# kernels: 98.5% vs 99.5%, 99.0% agreement). About 35 s on 2 cores.
set -euo pipefail
BUILD=${1:?usage: test_ocr_cls.sh BUILD_DIR PYTHON}
PY=${2:?usage: test_ocr_cls.sh BUILD_DIR PYTHON}
HERE=$(cd "$(dirname "$0")" && pwd)
TAILCUT=$BUILD/tailcut
WORK=$(mktemp -d /tmp/test_ocr_cls.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

MODEL=$("$PY" -c "import sys; sys.path.insert(0, '$HERE'); import ocr_cls_common as c; print(c.model_path())")
"$PY" "$HERE/ocr_cls_data.py" --out "$WORK/data" --n-eval 1000 --n-calib 32 --seed 7
# the batch-1 plan runs once per sample: one thread, as the pool's spin-waits stall a 2-thread
# context for up to ~0.8 s when the shared 2-core machine is busy
"$TAILCUT" build "$MODEL" -o "$WORK/cls_b1.plan" --shapes x:1x3x48x192 --threads 1 >/dev/null
"$TAILCUT" build "$MODEL" -o "$WORK/cls_dyn.plan" \
    --min-shapes x:1x3x48x192 --opt-shapes x:16x3x48x192 --max-shapes x:64x3x48x192 >/dev/null
"$TAILCUT" build "$MODEL" -o "$WORK/cls_int8.plan" --tactics-fixed --int8 --calib-data "$WORK/data/calib" \
    --min-shapes x:1x3x48x192 --opt-shapes x:16x3x48x192 --max-shapes x:64x3x48x192 >/dev/null 2>&1
"$TAILCUT" build "$MODEL" -o "$WORK/cls_fp16.plan" --tactics-fixed --fp16 \
    --min-shapes x:1x3x48x192 --opt-shapes x:16x3x48x192 --max-shapes x:64x3x48x192 >/dev/null
"$TAILCUT" build "$MODEL" -o "$WORK/cls_bf16.plan" --tactics-fixed --bf16 \
    --min-shapes x:1x3x48x192 --opt-shapes x:16x3x48x192 --max-shapes x:64x3x48x192 >/dev/null
"$PY" "$HERE/ocr_cls_eval.py" --data "$WORK/data" --tailcut "$TAILCUT" --json "$WORK/result.json" \
    --model "ort:$MODEL" --model "$WORK/cls_b1.plan" --model "$WORK/cls_dyn.plan" --model "$WORK/cls_int8.plan" \
    --model "$WORK/cls_fp16.plan" --model "$WORK/cls_bf16.plan"
n_int8=$("$TAILCUT" inspect "$WORK/cls_int8.plan" | grep -c " int8 " || true)
. "$HERE/../../tests/cli/int8_cpu.sh" # vnni, int8
if [ "$int8" = 1 ] && [ "$n_int8" -lt 30 ]; then
    echo "ocr_cls: the INT8 plan has only $n_int8 INT8 steps" >&2
    exit 1
fi
for p in fp16:avx512_fp16 bf16:avx512_bf16; do
    n=$("$TAILCUT" inspect "$WORK/cls_${p%%:*}.plan" | grep -c " ${p%%:*} " || true)
    if grep -qw "${p##*:}" /proc/cpuinfo && [ "$n" -lt 10 ]; then
        echo "ocr_cls: the ${p%%:*} plan has only $n ${p%%:*} steps" >&2
        exit 1
    fi
done

"$PY" - "$WORK/result.json" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ok = results[0]["accuracy_pct"] >= 90.0
for r in results[1:3]:
    ok &= r["accuracy_pct"] >= 90.0 and r["agreement_pct"] >= 99.5
int8 = results[3]
ok_int8 = int8["accuracy_pct"] >= results[0]["accuracy_pct"] - 1.0 and int8["agreement_pct"] >= 99.0
print(f"ocr_cls int8: accuracy {int8['accuracy_pct']:.2f}% (onnxruntime fp32 {results[0]['accuracy_pct']:.2f}%), "
      f"agreement {int8['agreement_pct']:.2f}%: {'ok' if ok_int8 else 'FAIL'}")
ok &= ok_int8
for name, r in (("fp16", results[4]), ("bf16", results[5])):
    ok_half = r["accuracy_pct"] >= results[0]["accuracy_pct"] - 0.2 and r["agreement_pct"] >= 99.5
    print(f"ocr_cls {name}: accuracy {r['accuracy_pct']:.2f}% (onnxruntime fp32 {results[0]['accuracy_pct']:.2f}%), "
          f"agreement {r['agreement_pct']:.2f}%: {'ok' if ok_half else 'FAIL'}")
    ok &= ok_half
passed = sum(1 for r in results[:3] if r["accuracy_pct"] >= 90.0 and r["agreement_pct"] >= 99.5)
print(f"ocr_cls fp32: {passed} passed, {3 - passed} failed")
sys.exit(0 if ok else 1)
EOF
