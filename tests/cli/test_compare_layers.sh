#!/usr/bin/env bash
# test_compare_layers.sh - `tailcut compare --per-layer` end to end on a small generated ResNet: an FP32 .onnx
# against its INT8 plan lists exactly the plan's INT8 steps (names, output tensors and count as `tailcut
# inspect` gives them), each with a finite SQNR between 10 and 80 dB; the .onnx against its own FP32 plan
# (built the same way) lists every step, identical (SQNR inf); a tensor A lacks (a layout reorder of B that
# A, built without the layout pass, does not have) is listed with '-' and a note, not an error; the table
# form; --per-layer with the reference executor is refused with a reason.
#
# usage: tests/cli/test_compare_layers.sh [BUILD_DIR] [PYTHON]
#   BUILD_DIR holds the tailcut binary (default: build)
#   PYTHON has onnx and numpy (default: $PYTHON, else .venv/bin/python, else python3)
# Exits non-zero on the first failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-${PYTHON:-}}
if [ -z "$py" ]; then
  if [ -x "$repo/.venv/bin/python" ]; then py="$repo/.venv/bin/python"; else py=python3; fi
fi
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_compare_layers.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "test_compare_layers: FAIL: $*" >&2; exit 1; }
step() { echo "test_compare_layers: $*"; }

[ -x "$tailcut" ] || fail "no tailcut binary in $build"
. "$repo/tests/cli/int8_cpu.sh" # vnni, int8

step "generating a model, calibration and evaluation samples"
"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 \
  >/dev/null || fail "modelgen resnet50"
"$py" - "$work" <<'EOF' || fail "writing the samples"
import os, sys
import numpy as np
w = sys.argv[1]
rng = np.random.default_rng(11)
os.makedirs(f"{w}/cal")
os.makedirs(f"{w}/d")
for k in range(12):
    np.save(f"{w}/cal/img_{k}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
for k in range(3):
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    assert np.abs(x).max() > 0
    np.save(f"{w}/d/input.{k}.npy", x)
EOF
# (the INT8 chain is off here: a chained layer's output holds the next layer's codes, not floats; see below)
"$tailcut" build "$work/r.onnx" -o "$work/int8.plan" --batch 1 --int8 --calib-data "$work/cal" --tactics-fixed \
  --disable-pass lowp_chain >/dev/null 2>&1 || fail "build --int8"
"$tailcut" build "$work/r.onnx" -o "$work/int8_chain.plan" --batch 1 --int8 --calib-data "$work/cal" --tactics-fixed \
  >/dev/null 2>&1 || fail "build --int8 (chained)"
"$tailcut" build "$work/r.onnx" -o "$work/fp32.plan" --batch 1 --tactics-fixed >/dev/null || fail "build fp32"
"$tailcut" build "$work/r.onnx" -o "$work/nchw.plan" --batch 1 --tactics-fixed --disable-pass layout >/dev/null ||
  fail "build --disable-pass layout"
for p in int8 fp32 nchw; do "$tailcut" inspect "$work/$p.plan" --json >"$work/$p.inspect" || fail "inspect $p.plan"; done

# Checks a compare --json file ($1) against the inspect --json of B's plan ($2) with Python code ($3) over
# j (the report), layers (j["layers"]) and steps (the plan's steps).
check() {
  "$py" - "$1" "$2" "$3" <<'EOF' || fail "$(basename "$1"): $(head -c 3000 "$1")"
import json, math, sys
j = json.load(open(sys.argv[1]))
steps = json.load(open(sys.argv[2]))["steps"]
layers = j["layers"]
assert [l["index"] for l in layers] == sorted(l["index"] for l in layers), "not in step order"
for l in layers:
    s = steps[l["index"]]
    assert (l["step"], l["ops"], l["precision"], l["tensor"]) == (s["name"], s["ops"], s["precision"], s["output"]), l
exec(sys.argv[3])
EOF
}

if [ $int8 = 1 ]; then
  step "FP32 .onnx against its INT8 plan: exactly the INT8 steps, 10 dB < SQNR < 80 dB"
  "$tailcut" compare "$work/r.onnx" "$work/int8.plan" --data "$work/d" --per-layer --json >"$work/int8.json" ||
    fail "compare r.onnx int8.plan --per-layer --json"
  check "$work/int8.json" "$work/int8.inspect" '
int8 = [k for k, s in enumerate(steps) if s["precision"] == "int8"]
assert len(int8) >= 6, f"only {len(int8)} INT8 steps"
assert j["layers_selection"] == "reduced_precision"
assert [l["index"] for l in layers] == int8, ([l["index"] for l in layers], int8)
for l in layers:
    assert l["note"] is None and l["samples"] == 3 and l["elements"] > 0 and not l["exact"], l
    assert l["sqnr_db"] is not None and math.isfinite(l["sqnr_db"]) and 10 < l["sqnr_db"] < 80, l
    assert 0.9 < l["cosine"] < 1 and 0 < l["max_abs_error"] < 10 and not l["identical"], l
assert j["passed"] and list(j["outputs"]) == ["logits"]'
  # With the INT8 chain (VNNI), a layer whose output is the next INT8 layer's u8 image is listed with a note.
  if [ $vnni = 1 ]; then
    "$tailcut" compare "$work/r.onnx" "$work/int8_chain.plan" --data "$work/d" --per-layer --json >"$work/chain.json" ||
      fail "compare r.onnx int8_chain.plan --per-layer --json"
    "$py" - "$work/chain.json" <<'PY' || fail "chained plan per layer: $(head -c 2000 "$work/chain.json")"
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
noted = [l for l in layers if l["note"] and "INT8 codes" in l["note"]]
assert noted and len(noted) < len(layers), ([l["note"] for l in layers])
assert all(l["sqnr_db"] is not None for l in layers if l not in noted)
PY
  fi
  # The last INT8 step writes the graph output: its SQNR must be what numpy computes from `tailcut run`'s
  # outputs of A and B on the same samples (an independent computation of 10*log10(sum a^2 / sum (a-b)^2)).
  for k in 0 1 2; do
    "$tailcut" run "$work/r.onnx" --input "input=$work/d/input.$k.npy" --output-dir "$work/run_a/$k" >/dev/null ||
      fail "run r.onnx"
    "$tailcut" run "$work/int8.plan" --input "input=$work/d/input.$k.npy" --output-dir "$work/run_b/$k" >/dev/null ||
      fail "run int8.plan"
  done
  check "$work/int8.json" "$work/int8.inspect" '
import os
import numpy as np
a = np.concatenate([np.load(f"{os.path.dirname(sys.argv[1])}/run_a/{k}/logits.npy").astype(np.float64).ravel() for k in range(3)])
b = np.concatenate([np.load(f"{os.path.dirname(sys.argv[1])}/run_b/{k}/logits.npy").astype(np.float64).ravel() for k in range(3)])
want = 10 * np.log10(np.sum(a * a) / np.sum((a - b) ** 2))
got = [l["sqnr_db"] for l in layers if l["tensor"] == "logits"]
assert len(got) == 1 and abs(got[0] - want) < 0.05, (got, want)
print(f"  ok: SQNR of logits {got[0]:.3f} dB, numpy says {want:.3f} dB")'
  n8=$("$py" -c 'import json, sys; print(sum(s["precision"] == "int8" for s in json.load(open(sys.argv[1]))["steps"]))' \
    "$work/int8.inspect")
  "$tailcut" compare "$work/r.onnx" "$work/int8.plan" --data "$work/d" --per-layer >"$work/int8.txt" ||
    fail "compare r.onnx int8.plan --per-layer"
  grep -q "^per layer: $n8 of [0-9]* steps of B (those not in fp32)" "$work/int8.txt" || fail "table header: $(cat "$work/int8.txt")"
  rows=$(grep -cE '^[0-9]+ +/.* int8 ' "$work/int8.txt" || true)
  [ "$rows" = "$n8" ] || fail "table has $rows INT8 rows, the plan $n8 INT8 steps: $(cat "$work/int8.txt")"
  grep -q "^lowest SQNR [0-9.]* dB: step " "$work/int8.txt" || fail "no lowest-SQNR line: $(cat "$work/int8.txt")"
  echo "  ok: $n8 INT8 layers, SQNR $(grep -oE '^lowest SQNR [0-9.]+ dB' "$work/int8.txt" | cut -d' ' -f3) dB at worst"
else
  step "no INT8 tactic on this CPU (neither AVX512-VNNI nor AVX2): the INT8 plan has no INT8 step; skipping"
fi

step "FP32 .onnx against its own FP32 plan (both --tactics-fixed): every step, identical"
"$tailcut" compare "$work/r.onnx" "$work/fp32.plan" --data "$work/d" --per-layer --tactics-fixed --json \
  >"$work/fp32.json" || fail "compare r.onnx fp32.plan --per-layer --json"
check "$work/fp32.json" "$work/fp32.inspect" '
assert j["layers_selection"] == "all"
assert [l["index"] for l in layers] == list(range(len(steps))), "not every step"
for l in layers:
    assert l["note"] is None and l["samples"] == 3, l
    assert l["identical"] or (l["sqnr_db"] is not None and l["sqnr_db"] > 100), l'
"$tailcut" compare "$work/r.onnx" "$work/fp32.plan" --data "$work/d" --per-layer --tactics-fixed >"$work/fp32.txt" ||
  fail "compare r.onnx fp32.plan --per-layer"
grep -q "every step: none is in reduced precision" "$work/fp32.txt" && grep -qE ' inf +1\.00000000 ' "$work/fp32.txt" ||
  fail "FP32 table: $(cat "$work/fp32.txt")"
echo "  ok: every step listed, identical"

step "a tensor A does not have is listed with '-' and a note"
"$tailcut" compare "$work/nchw.plan" "$work/fp32.plan" --data "$work/d" --per-layer --json >"$work/miss.json" ||
  fail "compare nchw.plan fp32.plan --per-layer --json"
check "$work/miss.json" "$work/fp32.inspect" '
reorders = [k for k, s in enumerate(steps) if s["layout"] == "nchw16c->nchw"]
blocked = [k for k, s in enumerate(steps) if s["layout"] == "nchw16c"]
assert len(layers) == len(steps)
for l in layers:
    if l["index"] in reorders:  # its output exists only in the blocked plan
        assert l["sqnr_db"] is None and l["samples"] == 0 and "A has no tensor" in l["note"], l
    else:  # NCHW16c tensors of B are compared in NCHW with A, which keeps NCHW
        assert l["note"] is None and (l["identical"] or l["sqnr_db"] > 100), l
if "avx512f" in open("/proc/cpuinfo").read():
    assert reorders and blocked, "expected a blocked plan on this AVX-512 CPU"'
"$tailcut" compare "$work/nchw.plan" "$work/fp32.plan" --data "$work/d" --per-layer >"$work/miss.txt" ||
  fail "compare nchw.plan fp32.plan --per-layer"
if grep -q "nchw16c->nchw" "$work/fp32.inspect"; then
  grep -qE ' - +- +- +A has no tensor ' "$work/miss.txt" || fail "no '-' row: $(cat "$work/miss.txt")"
fi
echo "  ok"

step "errors"
rc=0
"$tailcut" compare "$work/r.onnx" "$work/fp32.plan" --data "$work/d" --per-layer --reference-a >/dev/null \
  2>"$work/err" || rc=$?
[ $rc = 2 ] && grep -q -- "--per-layer reads each step's output from engines" "$work/err" ||
  fail "--per-layer --reference-a: exit $rc: $(cat "$work/err")"
"$tailcut" compare --help >"$work/usage" || fail "compare --help"
grep -q -- "--per-layer" "$work/usage" || fail "usage does not mention --per-layer"
echo "  ok"
echo "test_compare_layers: all passed"
