#!/usr/bin/env bash
# test_fp16.sh - FP16 from the command line: `build --fp16` with heuristic tactics (every layer that fits
# FP16) and tuned (the faster of FP16 and FP32 per layer), the plans' outputs against the FP32 plan's
# (cosine, top-1) on a ResNet-like and a BERT-like model, `--layer-precision NAME:fp32` with --fp16,
# --fp16 together with --int8 (INT8 first where calibrated), a plan with FP16 steps refused on a CPU
# without AVX512-FP16 (TAILCUT_MAX_ISA=avx512_bf16) and built there without them, and the server config's
# "precision": "fp16" is covered by the server tests.
#
# usage: tests/cli/test_fp16.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_fp16.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_fp16: FAIL: $*" >&2; exit 1; }
fp16=0
grep -qw avx512_fp16 /proc/cpuinfo && fp16=1

"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 >/dev/null
"$py" "$repo/tools/modelgen/modelgen.py" bert_base -o "$work/b.onnx" --layers 1 --hidden 64 --heads 2 --ffn 128 \
  --vocab 100 >/dev/null
"$py" - "$work" <<'PY'
import os, sys, numpy as np
w = sys.argv[1]; rng = np.random.default_rng(3)
os.makedirs(f"{w}/eval"); os.makedirs(f"{w}/beval"); os.makedirs(f"{w}/cal")
for k in range(8):
    np.save(f"{w}/eval/input.{k}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    np.save(f"{w}/beval/input_ids.{k}.npy", rng.integers(1, 100, (1, 16)).astype(np.int64))
    np.save(f"{w}/beval/attention_mask.{k}.npy", np.ones((1, 16), np.int64))
for k in range(16):
    np.save(f"{w}/cal/input.{k}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
PY

# precision_counts PLAN [STEP]: the numbers of fp16 and int8 steps, and STEP's precision.
precision_counts() { "$tailcut" inspect "$1" --json | "$py" -c '
import json, sys; j = json.load(sys.stdin); s = {x["name"]: x["precision"] for x in j["steps"]}
print(sum(p == "fp16" for p in s.values()), sum(p == "int8" for p in s.values()), s.get(sys.argv[1], "-"))' \
  "${2:-/conv1/Conv}"; }
# agree A B DATA [SHAPE OPTIONS]: cosine >= 0.9999 and top-1 agreement 1 on every output.
agree() {
  local a=$1 b=$2 data=$3; shift 3
  "$tailcut" compare "$a" "$b" --data "$data" --min-cosine 0.9999 --min-top1 1 "$@" >"$work/cmp.out" 2>&1 ||
    fail "compare $(basename "$a") $(basename "$b"): $(cat "$work/cmp.out")"
}

"$tailcut" build "$work/r.onnx" -o "$work/fp32.plan" --batch 1 --tactics-fixed >/dev/null || fail "fp32 build"
"$tailcut" build "$work/r.onnx" -o "$work/fp16.plan" --batch 1 --fp16 --tactics-fixed >/dev/null || fail "fp16 build"
"$tailcut" build "$work/r.onnx" -o "$work/fp16_tuned.plan" --batch 1 --fp16 >/dev/null || fail "fp16 tuned build"
"$tailcut" build "$work/r.onnx" -o "$work/fp16_fb.plan" --batch 1 --fp16 --tactics-fixed \
  --layer-precision /conv1/Conv:fp32 >/dev/null || fail "fp16 build with --layer-precision"
read -r n16 _ stem < <(precision_counts "$work/fp16.plan")
read -r n16fb _ stemfb < <(precision_counts "$work/fp16_fb.plan")
read -r n32 _ _ < <(precision_counts "$work/fp32.plan")
[ "$n32" = 0 ] || fail "an FP32 build has $n32 FP16 steps"
if [ $fp16 = 1 ]; then
  [ "$n16" -ge 8 ] && [ "$stem" = fp16 ] || fail "fp16 plan: $n16 FP16 steps, stem $stem"
  [ "$stemfb" = fp32 ] && [ "$n16fb" = $((n16 - 1)) ] || fail "--layer-precision: stem $stemfb, $n16fb FP16 steps"
  grep -q "fp16" <("$tailcut" inspect "$work/fp16.plan") || fail "inspect does not show fp16"
fi
agree "$work/fp32.plan" "$work/fp16.plan" "$work/eval"
agree "$work/fp32.plan" "$work/fp16_tuned.plan" "$work/eval"
agree "$work/r.onnx" "$work/fp16.plan" "$work/eval" --reference-a

# BERT-like: MatMul/Gemm layers in FP16 (attention score products stay FP32: no constant weight).
"$tailcut" build "$work/b.onnx" -o "$work/b32.plan" --shapes input_ids:1x16,attention_mask:1x16 --tactics-fixed \
  >/dev/null || fail "bert fp32 build"
"$tailcut" build "$work/b.onnx" -o "$work/b16.plan" --shapes input_ids:1x16,attention_mask:1x16 --fp16 \
  --tactics-fixed >/dev/null || fail "bert fp16 build"
read -r nb16 _ q < <(precision_counts "$work/b16.plan" /encoder/layer.0/attention/self/query/MatMul)
if [ $fp16 = 1 ]; then [ "$nb16" -ge 4 ] && [ "$q" = fp16 ] || fail "bert: $nb16 FP16 steps, query $q"; fi
agree "$work/b32.plan" "$work/b16.plan" "$work/beval"

# --int8 with --fp16: calibrated layers take INT8 first (heuristic order), the others FP16.
"$tailcut" build "$work/r.onnx" -o "$work/mixed.plan" --batch 1 --fp16 --int8 --calib-data "$work/cal" \
  --tactics-fixed --layer-precision /conv1/Conv:fp32 >/dev/null 2>&1 || fail "--fp16 --int8 build"
read -r m16 m8 mstem < <(precision_counts "$work/mixed.plan")
[ "$mstem" = fp32 ] || fail "--fp16 --int8 --layer-precision: stem $mstem"
if grep -qw avx512_vnni /proc/cpuinfo; then [ "$m8" -ge 6 ] || fail "--fp16 --int8: $m8 INT8 steps ($m16 FP16)"; fi

# A CPU without AVX512-FP16: the plan is refused naming the ISA; a build there has no FP16 step.
if [ $fp16 = 1 ]; then
  if TAILCUT_MAX_ISA=avx512_bf16 "$tailcut" run "$work/fp16.plan" --input "$work/eval/input.0.npy" -o "$work/no" \
    2>"$work/err"; then
    fail "an FP16 plan ran under TAILCUT_MAX_ISA=avx512_bf16"
  fi
  grep -q "avx512fp16" "$work/err" || fail "refusal does not name the missing ISA: $(cat "$work/err")"
fi
TAILCUT_MAX_ISA=avx512_bf16 "$tailcut" build "$work/r.onnx" -o "$work/capped.plan" --batch 1 --fp16 --tactics-fixed \
  >/dev/null || fail "fp16 build without AVX512-FP16"
read -r ncap _ _ < <(TAILCUT_MAX_ISA=avx512_bf16 precision_counts "$work/capped.plan")
[ "$ncap" = 0 ] || fail "a build without AVX512-FP16 has $ncap FP16 steps"
TAILCUT_MAX_ISA=avx512_bf16 "$tailcut" compare "$work/fp32.plan" "$work/capped.plan" --data "$work/eval" \
  --min-cosine 0.99999 >/dev/null 2>&1 || fail "the capped FP16 build differs from FP32"

# Errors.
if "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --layer-precision /conv1/Conv:fp32 >"$work/e.out" 2>&1; then
  fail "--layer-precision without --int8/--fp16 succeeded"
fi
grep -q "needs --int8 or --fp16" "$work/e.out" || fail "--layer-precision alone said: $(cat "$work/e.out")"
if "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --fp16 --layer-precision nosuch:fp32 >"$work/e.out" 2>&1; then
  fail "--layer-precision of an unknown node succeeded"
fi
grep -q "nosuch" "$work/e.out" || fail "unknown FP32 layer said: $(cat "$work/e.out")"
echo "test_fp16: OK ($n16 FP16 steps in the ResNet-like plan, $nb16 in the BERT-like plan)"
