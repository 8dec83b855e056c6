#!/usr/bin/env bash
# test_compare.sh - `tailcut compare` end to end: an .onnx against its own plan and against the reference
# executor agrees (cosine, top-1), two different models do not and --min-cosine fails them, exact
# comparison of non-float outputs, the sample folder rules (<name>.<k>.npy with gaps, any *.npy for one
# input in natural order, --samples) and the errors (missing --data, empty folder, a missing input file,
# a file of the wrong shape or dtype, mismatched models) with messages naming the folder or file.
#
# usage: tests/cli/test_compare.sh [BUILD_DIR] [PYTHON]
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
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "test_compare: FAIL: $*" >&2; exit 1; }
step() { echo "test_compare: $*"; }

[ -x "$tailcut" ] || fail "no tailcut binary in $build"

step "generating models and samples"
for seed in 0 1; do
  "$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r$seed.onnx" --seed $seed --width-div 16 \
    --blocks 1,1,1,1 --image 32 --classes 12 >/dev/null || fail "modelgen resnet50 --seed $seed"
done
"$tailcut" build "$work/r0.onnx" -o "$work/r0.plan" --batch 2 >/dev/null || fail "tailcut build r0.onnx"
# Two profiles: batch 1..2 and 3..4.
"$tailcut" build "$work/r0.onnx" -o "$work/r0_dyn.plan" --tactics-fixed --min-shapes input:1x3x32x32 \
  --opt-shapes input:2x3x32x32 --max-shapes input:2x3x32x32 --min-shapes input:3x3x32x32 \
  --opt-shapes input:3x3x32x32 --max-shapes input:4x3x32x32 >/dev/null || fail "tailcut build r0_dyn.plan"
"$tailcut" build "$work/r0.onnx" -o "$work/r0_b12.plan" --tactics-fixed --min-shapes input:1x3x32x32 \
  --opt-shapes input:2x3x32x32 --max-shapes input:2x3x32x32 >/dev/null || fail "tailcut build r0_b12.plan"
"$py" "$repo/tools/modelgen/modelgen.py" bert_base -o "$work/b.onnx" --layers 1 --hidden 32 --heads 2 --ffn 64 \
  --vocab 200 --max-positions 32 >/dev/null || fail "modelgen bert_base"
# Two-input models of static shapes (names awkward in files and shape options, which cannot carry ':'):
# z = x:0 + y.v (float) and w = Cast(x:0) (int32); in m_other.onnx w = Cast(y.v).
"$py" - "$work" <<'EOF' || fail "writing the two-input models"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
work = sys.argv[1]
def model(cast_from, path):
    x = helper.make_tensor_value_info("x:0", TensorProto.FLOAT, [4, 7])
    y = helper.make_tensor_value_info("y.v", TensorProto.FLOAT, [4, 7])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 7])
    w = helper.make_tensor_value_info("w", TensorProto.INT32, [4, 7])
    nodes = [helper.make_node("Add", ["x:0", "y.v"], ["z"], name="add"),
             helper.make_node("Cast", [cast_from], ["w"], name="cast", to=TensorProto.INT32)]
    m = helper.make_model(helper.make_graph(nodes, "two_inputs", [x, y], [z, w]),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
model("x:0", f"{work}/m.onnx")
model("y.v", f"{work}/m_other.onnx")
rng = np.random.default_rng(7)
import os
for d in ("d", "any", "m", "bad_shape", "bad_dtype", "empty", "no_match", "bert"):
    os.makedirs(f"{work}/{d}")
img = lambda n=2: (rng.standard_normal((n, 3, 32, 32)) * 2).astype(np.float32)
for k in range(5):
    np.save(f"{work}/d/input.{k}.npy", img())
# any *.npy for a single input, natural order: img_1, img_2 good, img_10 of another shape.
np.save(f"{work}/any/img_2.npy", img())
np.save(f"{work}/any/img_1.npy", img())
np.save(f"{work}/any/img_10.npy", img(3))
# two inputs, sample indices 0, 1, 3 (a gap), values of magnitude ~10 so that Cast gives varied ints
for k in (0, 1, 3):
    np.save(f"{work}/m/x:0.{k}.npy", (rng.standard_normal((4, 7)) * 10).astype(np.float32))
    np.save(f"{work}/m/y.v.{k}.npy", (rng.standard_normal((4, 7)) * 10).astype(np.float32))
for k in range(3):
    np.save(f"{work}/bert/input_ids.{k}.npy", rng.integers(1, 200, (2, 16), dtype=np.int64))
    mask = np.ones((2, 16), np.int64)
    mask[1, 12:] = 0
    np.save(f"{work}/bert/attention_mask.{k}.npy", mask)
np.save(f"{work}/bad_shape/input.0.npy", img(3))
np.save(f"{work}/bad_dtype/input.0.npy", img().astype(np.float64))
with open(f"{work}/no_match/input.npy.txt", "wb") as f:
    np.save(f, img())
for d in ("d", "any", "m"):
    for f in os.listdir(f"{work}/{d}"):
        assert np.abs(np.load(f"{work}/{d}/{f}")).max() > 0
EOF

# Checks a compare --json file with a Python expression over j (the object) and o (its first output).
check() { # $1 = JSON file, $2 = what, $3 = expression
  "$py" - "$1" "$3" <<'EOF' || fail "$2: $(cat "$1")"
import json, sys
j = json.load(open(sys.argv[1]))
o = next(iter(j["outputs"].values()))
assert eval("(" + sys.argv[2] + ")"), sys.argv[2]
EOF
}
# Runs tailcut compare, expecting exit status $1 and (when $2 is not empty) the text $2 in stderr.
expect() { # $1 = status, $2 = text in stderr, rest = arguments
  local want=$1 text=$2; shift 2
  local rc=0
  "$tailcut" compare "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = "$want" ] || fail "compare $*: exit $rc, want $want: $(cat "$work/err")"
  if [ -n "$text" ]; then grep -qF -- "$text" "$work/err" || fail "compare $*: stderr lacks '$text': $(cat "$work/err")"; fi
  echo "  ok: exit $rc: compare $*${text:+ -> $(head -c 200 "$work/err" | tr '\n' ' ')}"
}

step "onnx (engine) vs its plan"
"$tailcut" compare "$work/r0.onnx" "$work/r0.plan" --data "$work/d" --json >"$work/j1" || fail "compare r0.onnx r0.plan"
check "$work/j1" "onnx vs plan" \
  'j["samples"] == 5 and list(j["outputs"]) == ["logits"] and o["cosine"] >= 0.99999 and o["top1"] == 1.0 and
   o["top5"] == 1.0 and o["rows"] == 10 and o["elements"] == 120 and o["nan_mismatches"] == 0 and o["max_abs_error"] < 1e-3
   and j["passed"] and j["a"]["mode"] == "onnx" and j["b"]["mode"] == "plan"'
"$tailcut" compare "$work/r0.onnx" "$work/r0.plan" --data "$work/d" --min-cosine 0.9999 --min-top1 1 >"$work/t1" \
  || fail "compare r0.onnx r0.plan with thresholds"
for want in "logits" "cosine" "top1" "summary:" "thresholds:" "passed"; do
  grep -qF -- "$want" "$work/t1" || fail "compare table lacks '$want': $(cat "$work/t1")"
done

step "onnx (reference executor) vs plan"
"$tailcut" compare "$work/r0.onnx" "$work/r0.plan" --reference-a --data "$work/d" --json >"$work/j2" \
  || fail "compare --reference-a"
check "$work/j2" "reference vs plan" \
  'j["samples"] == 5 and o["cosine"] >= 0.99999 and o["top1"] == 1.0 and j["a"]["mode"] == "reference"'

step "different models disagree"
expect 1 "cosine" "$work/r0.onnx" "$work/r1.onnx" --reference-a --reference-b --data "$work/d" --json \
  --min-cosine 0.999
cp "$work/out" "$work/j3"
check "$work/j3" "r0 vs r1" \
  'o["cosine"] < 0.9 and o["max_abs_error"] > 0.01 and not j["passed"] and len(j["failures"]) == 1 and
   "logits" in j["failures"][0] and j["min_cosine"] == 0.999'
grep -qF "logits" "$work/err" || fail "threshold failure does not name the output"
expect 1 "top-1" "$work/r0.onnx" "$work/r1.onnx" --reference-a --data "$work/d" --min-top1 0.99 --tactics-fixed
expect 0 "" "$work/r0.onnx" "$work/r1.onnx" --reference-a --reference-b --data "$work/d"

step "two inputs, sample gaps, exact comparison of an int output, int64 inputs"
"$tailcut" compare "$work/m.onnx" "$work/m.onnx" --reference-b --data "$work/m" --json >"$work/j4" \
  || fail "compare m.onnx"
check "$work/j4" "two inputs" \
  'j["samples"] == 3 and j["outputs"]["z"]["cosine"] >= 0.999999 and j["outputs"]["w"]["exact"] and
   j["outputs"]["w"]["mismatches"] == 0 and j["outputs"]["w"]["elements"] == 84 and j["outputs"]["w"]["dtype"] == "int32"'
expect 1 "'w'" "$work/m.onnx" "$work/m_other.onnx" --data "$work/m" --json --min-cosine 0.9
cp "$work/out" "$work/j5"
check "$work/j5" "int mismatches" 'j["outputs"]["w"]["mismatches"] > 40 and j["outputs"]["z"]["cosine"] >= 0.999999'
"$tailcut" compare "$work/m.onnx" "$work/m.onnx" --data "$work/m" --samples 2 --json >"$work/j6" || fail "--samples 2"
check "$work/j6" "--samples 2 (two inputs)" 'j["samples"] == 2'

"$tailcut" compare "$work/b.onnx" "$work/b.onnx" --reference-a --data "$work/bert" --json >"$work/jb" \
  || fail "compare b.onnx (int64 inputs)"
check "$work/jb" "bert" 'j["samples"] == 3 and o["cosine"] >= 0.99999 and o["elements"] == 3 * 2 * 16 * 32'

step "any *.npy for a single input, natural order, --samples"
"$tailcut" compare "$work/r0.onnx" "$work/r0.plan" --data "$work/any" --samples 2 --json >"$work/j7" \
  || fail "--samples 2 should take img_1 and img_2 only"
check "$work/j7" "any *.npy" 'j["samples"] == 2 and o["top1"] == 1.0'
"$tailcut" compare "$work/r0.onnx" "$work/r0.plan" --data "$work/d" --samples 3 --json >"$work/j8" || fail "--samples 3"
check "$work/j8" "--samples 3" 'j["samples"] == 3 and o["rows"] == 6'
expect 1 "img_10.npy" "$work/r0.onnx" "$work/r0.plan" --data "$work/any"
"$tailcut" compare "$work/r0.onnx" "$work/r0.onnx" --reference-b --data "$work/any" --json >"$work/j9" \
  || fail "an .onnx takes every sample shape"
check "$work/j9" "varying shapes" 'j["samples"] == 3 and o["shape_varies"] and o["elements"] == 12 * 7'
"$tailcut" compare "$work/r0.onnx" "$work/r0_dyn.plan" --reference-a --data "$work/any" --json >"$work/j10" \
  || fail "a plan of two profiles takes batch 2 and 3"
check "$work/j10" "two profiles" 'j["samples"] == 3 and o["cosine"] >= 0.99999 and o["top1"] == 1.0'
expect 1 "any/img_10.npy" "$work/r0.onnx" "$work/r0_b12.plan" --reference-a --data "$work/any"

step "errors"
expect 2 "--data" "$work/r0.onnx" "$work/r0.plan"
expect 2 "" "$work/r0.onnx" --data "$work/d"
expect 2 "--reference-b" "$work/r0.onnx" "$work/r0.plan" --reference-b --data "$work/d"
expect 2 "--min-cosine" "$work/r0.onnx" "$work/r0.plan" --data "$work/d" --min-cosine abc
expect 2 "--samples" "$work/r0.onnx" "$work/r0.plan" --data "$work/d" --samples 0
expect 2 "unknown option" "$work/r0.onnx" "$work/r0.plan" --data "$work/d" --bogus
expect 1 "$work/empty" "$work/r0.onnx" "$work/r0.plan" --data "$work/empty"
expect 1 "$work/no_match" "$work/r0.onnx" "$work/r0.plan" --data "$work/no_match"
expect 1 "$work/nope" "$work/r0.onnx" "$work/r0.plan" --data "$work/nope"
expect 1 "bad_shape/input.0.npy" "$work/r0.onnx" "$work/r0.plan" --data "$work/bad_shape"
expect 1 "bad_dtype/input.0.npy" "$work/r0.onnx" "$work/r0.plan" --data "$work/bad_dtype"
expect 1 "$work/missing.onnx" "$work/missing.onnx" "$work/r0.plan" --data "$work/d"
expect 1 "is not an input of B" "$work/r0.onnx" "$work/m.onnx" --data "$work/d"
printf 'not a tensor' >"$work/corrupt.npy"
cp "$work/m/x:0.1.npy" "$work/x1.npy"
cp "$work/corrupt.npy" "$work/m/x:0.1.npy"
expect 1 "$work/m/x:0.1.npy" "$work/m.onnx" "$work/m.onnx" --reference-a --data "$work/m"
cp "$work/x1.npy" "$work/m/x:0.1.npy"
rm "$work/m/y.v.3.npy"
expect 1 "$work/m/y.v.3.npy" "$work/m.onnx" "$work/m.onnx" --data "$work/m"
rm "$work/m/x:0.0.npy"
expect 1 "$work/m/x:0.0.npy" "$work/m.onnx" "$work/m.onnx" --data "$work/m"

echo "test_compare: all passed"
