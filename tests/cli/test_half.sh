#!/usr/bin/env bash
# test_half.sh - FP16 and BF16 from the command line, for each: `build --fp16` / `--bf16` with heuristic
# tactics (every layer that fits in that type) and tuned (the fastest precision per layer), the plans'
# outputs against the FP32 plan's (cosine, top-1) on a ResNet-like and a BERT-like model,
# `--layer-precision NAME:fp32`, a plan with such steps refused on a CPU without the ISA
# (TAILCUT_MAX_ISA=avx512_bf16 for FP16, avx512_vnni for BF16) and built there without them; then --fp16
# with --int8 (INT8 first where calibrated), and with --accuracy-threshold (layers leave INT8 for FP16). The server config's "precision": "fp16" is covered by the
# server tests.
#
# usage: tests/cli/test_half.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_half.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_half: FAIL: $*" >&2; exit 1; }

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

# precision_counts PLAN [STEP]: the numbers of $prec and int8 steps, and STEP's precision.
precision_counts() { "$tailcut" inspect "$1" --json | "$py" -c '
import json, sys; j = json.load(sys.stdin); s = {x["name"]: x["precision"] for x in j["steps"]}
print(sum(p == sys.argv[2] for p in s.values()), sum(p == "int8" for p in s.values()), s.get(sys.argv[1], "-"))' \
  "${2:-/conv1/Conv}" "$prec"; }
# agree A B DATA [SHAPE OPTIONS]: cosine >= $min_cos (FP16 0.9999; BF16, 8 bits of mantissa, 0.999) and top-1
# agreement $min_top1 (default 1) on every output.
agree() {
  local a=$1 b=$2 data=$3; shift 3
  "$tailcut" compare "$a" "$b" --data "$data" --min-cosine "$min_cos" --min-top1 "${min_top1:-1}" "$@" >"$work/cmp.out" 2>&1 ||
    fail "compare $(basename "$a") $(basename "$b"): $(cat "$work/cmp.out")"
}

"$tailcut" build "$work/r.onnx" -o "$work/fp32.plan" --batch 1 --tactics-fixed >/dev/null || fail "fp32 build"
"$tailcut" build "$work/b.onnx" -o "$work/b32.plan" --shapes input_ids:1x16,attention_mask:1x16 --tactics-fixed \
  >/dev/null || fail "bert fp32 build"
# prec, the /proc/cpuinfo flag, the ISA a refusal names, a TAILCUT_MAX_ISA cap without it
for spec in fp16:avx512_fp16:avx512fp16:avx512_bf16 bf16:avx512_bf16:avx512bf16:avx512_vnni; do
IFS=: read -r prec flag isa cap <<<"$spec"
min_cos=0.9999
[ $prec = bf16 ] && min_cos=0.999
has=0
grep -qw "$flag" /proc/cpuinfo && has=1
"$tailcut" build "$work/r.onnx" -o "$work/$prec.plan" --batch 1 --$prec --tactics-fixed >/dev/null || fail "$prec build"
"$tailcut" build "$work/r.onnx" -o "$work/${prec}_tuned.plan" --batch 1 --$prec >/dev/null || fail "$prec tuned build"
"$tailcut" build "$work/r.onnx" -o "$work/${prec}_fb.plan" --batch 1 --$prec --tactics-fixed \
  --layer-precision /conv1/Conv:fp32 >/dev/null || fail "$prec build with --layer-precision"
read -r n16 _ stem < <(precision_counts "$work/$prec.plan")
read -r n16fb _ stemfb < <(precision_counts "$work/${prec}_fb.plan")
read -r n32 _ _ < <(precision_counts "$work/fp32.plan")
[ "$n32" = 0 ] || fail "an FP32 build has $n32 $prec steps"
if [ $has = 1 ]; then
  [ "$n16" -ge 8 ] && [ "$stem" = $prec ] || fail "$prec plan: $n16 $prec steps, stem $stem"
  [ "$stemfb" = fp32 ] && [ "$n16fb" = $((n16 - 1)) ] || fail "--layer-precision: stem $stemfb, $n16fb $prec steps"
  grep -q "$prec" <("$tailcut" inspect "$work/$prec.plan") || fail "inspect does not show $prec"
fi
agree "$work/fp32.plan" "$work/$prec.plan" "$work/eval"
agree "$work/fp32.plan" "$work/${prec}_tuned.plan" "$work/eval"
agree "$work/r.onnx" "$work/$prec.plan" "$work/eval" --reference-a

# BERT-like: MatMul/Gemm layers in $prec (attention score products stay FP32: no constant weight).
"$tailcut" build "$work/b.onnx" -o "$work/b_$prec.plan" --shapes input_ids:1x16,attention_mask:1x16 --$prec \
  --tactics-fixed >/dev/null || fail "bert $prec build"
read -r nb16 _ q < <(precision_counts "$work/b_$prec.plan" /encoder/layer.0/attention/self/query/MatMul)
if [ $has = 1 ]; then [ "$nb16" -ge 4 ] && [ "$q" = $prec ] || fail "bert: $nb16 $prec steps, query $q"; fi
# (top-1 over a hidden state's last dim flips between near-equal values: cosine is the measure here)
min_top1=0.95 agree "$work/b32.plan" "$work/b_$prec.plan" "$work/beval"

# A CPU without the ISA: the plan is refused naming it; a build there has no such step and equals FP32.
if [ $has = 1 ]; then
  if TAILCUT_MAX_ISA=$cap "$tailcut" run "$work/$prec.plan" --input "$work/eval/input.0.npy" -o "$work/no" \
    2>"$work/err"; then
    fail "a $prec plan ran under TAILCUT_MAX_ISA=$cap"
  fi
  grep -q "$isa" "$work/err" || fail "refusal does not name the missing ISA: $(cat "$work/err")"
fi
TAILCUT_MAX_ISA=$cap "$tailcut" build "$work/r.onnx" -o "$work/capped_$prec.plan" --batch 1 --$prec --tactics-fixed \
  >/dev/null || fail "$prec build without $isa"
read -r ncap _ _ < <(TAILCUT_MAX_ISA=$cap precision_counts "$work/capped_$prec.plan")
[ "$ncap" = 0 ] || fail "a build without $isa has $ncap $prec steps"
TAILCUT_MAX_ISA=$cap "$tailcut" compare "$work/fp32.plan" "$work/capped_$prec.plan" --data "$work/eval" \
  --min-cosine 0.99999 >/dev/null 2>&1 || fail "the capped $prec build differs from FP32"
echo "test_half: $prec: $n16 steps in the ResNet-like plan, $nb16 in the BERT-like plan"
done

# --int8 with --fp16: calibrated layers take INT8 first (heuristic order), the others FP16.
prec=fp16
"$tailcut" build "$work/r.onnx" -o "$work/mixed.plan" --batch 1 --fp16 --int8 --calib-data "$work/cal" \
  --tactics-fixed --layer-precision /conv1/Conv:fp32 >/dev/null 2>&1 || fail "--fp16 --int8 build"
read -r m16 m8 mstem < <(precision_counts "$work/mixed.plan")
[ "$mstem" = fp32 ] || fail "--fp16 --int8 --layer-precision: stem $mstem"
if grep -qw avx512_vnni /proc/cpuinfo; then [ "$m8" -ge 6 ] || fail "--fp16 --int8: $m8 INT8 steps ($m16 FP16)"; fi
# --accuracy-threshold with --fp16: the layers moved out of INT8 take FP16, not FP32.
if grep -qw avx512_vnni /proc/cpuinfo && grep -qw avx512_fp16 /proc/cpuinfo; then
  "$tailcut" build "$work/r.onnx" -o "$work/acc16.plan" --batch 1 --int8 --fp16 --calib-data "$work/cal" \
    --tactics-fixed --accuracy-threshold 0.9995 >/dev/null 2>"$work/acc16.err" ||
    fail "--int8 --fp16 --accuracy-threshold: $(cat "$work/acc16.err")"
  grep -q "kept out of INT8 (fp16/fp32)" "$work/acc16.err" || fail "fallback with --fp16: $(cat "$work/acc16.err")"
  moved=$(grep "^accuracy:" "$work/acc16.err" | tail -1 | awk '{print $2}')
  read -r a16 a8 _ < <(precision_counts "$work/acc16.plan")
  [ "$moved" -ge 1 ] && [ "$a16" -ge 1 ] && [ "$a16" -le "$moved" ] ||
    fail "fallback with --fp16: $moved layers moved, $a16 FP16 and $a8 INT8 steps"
fi

# Errors.
if "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --layer-precision /conv1/Conv:fp32 >"$work/e.out" 2>&1; then
  fail "--layer-precision without a reduced precision succeeded"
fi
grep -q "needs --int8, --fp16 or --bf16" "$work/e.out" || fail "--layer-precision alone said: $(cat "$work/e.out")"
if "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --fp16 --layer-precision nosuch:fp32 >"$work/e.out" 2>&1; then
  fail "--layer-precision of an unknown node succeeded"
fi
grep -q "nosuch" "$work/e.out" || fail "unknown FP32 layer said: $(cat "$work/e.out")"
echo "test_half: OK"
