#!/usr/bin/env bash
# test_plan_shapes.sh - a plan with two profiles runs the shapes either holds (issue 26 defect 3, issue 33 item 1):
# `tailcut run` picks the first profile whose ranges hold the inputs (batch 8: profile 1, not "outside the profile's
# range" of profile 0) and gives numpy's answer; --profile-index N forces one and refuses shapes it does not hold;
# shapes outside every profile are refused naming the profiles' ranges; `tailcut bench PLAN --shapes` runs those
# run-time shapes in the profile that holds them and records "profile" and "shapes" in --json. A dynamic plan whose
# compute steps read shape arithmetic (Slice of a constant by Shape(x), as BERT's position ids) runs again and again at
# one shape: those values outlive each run (they were overwritten by later steps, failing the second run).
#
# usage: tests/cli/test_plan_shapes.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_plan_shapes.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_plan_shapes: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the model and inputs"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(1)
w = rng.standard_normal((64, 32)).astype(np.float32)
g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "shapes",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 32])], [numpy_helper.from_array(w, "W")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f"{work}/m.onnx")
np.save(f"{work}/W.npy", w)
for n in (3, 8, 20):
    np.save(f"{work}/x{n}.npy", rng.standard_normal((n, 64)).astype(np.float32))
PY

"$tailcut" build "$work/m.onnx" -o "$work/m.plan" --tactics-fixed \
  --min-shapes x:1x64 --opt-shapes x:2x64 --max-shapes x:4x64 \
  --min-shapes x:5x64 --opt-shapes x:8x64 --max-shapes x:16x64 >/dev/null || fail "build with two profiles"

# run: batch 8 fits profile 1 only; batch 3 profile 0; both give x @ W.
for n in 3 8; do
  mkdir -p "$work/out$n"
  "$tailcut" run "$work/m.plan" --input "x=$work/x$n.npy" --output-dir "$work/out$n" >/dev/null ||
    fail "run batch $n on the two-profile plan"
  "$py" -c "
import numpy as np, sys
x = np.load('$work/x$n.npy'); w = np.load('$work/W.npy'); y = np.load('$work/out$n/y.npy')
assert y.shape == ($n, 32), y.shape
err = np.abs(y - x @ w).max()
sys.exit(0 if err < 1e-3 else f'batch $n: max error {err}')" || fail "batch $n output"
done

refused() { # WANT COMMAND...: the command exits non-zero with WANT in its error output
  local want=$1; shift
  if "$@" >"$work/out.txt" 2>&1; then fail "accepted: $*"; fi
  grep -qF -- "$want" "$work/out.txt" || { cat "$work/out.txt" >&2; fail "no '$want' for: $*"; }
}
refused "profile 1 does not take these shapes: input 'x' dim 0 is 3, outside [5, 16]" \
  "$tailcut" run "$work/m.plan" --input "x=$work/x3.npy" --profile-index 1 --output-dir "$work"
refused "no profile of the engine takes these shapes" \
  "$tailcut" run "$work/m.plan" --input "x=$work/x20.npy" --output-dir "$work"
refused "profile 1: x: 5x64..16x64" "$tailcut" run "$work/m.plan" --input "x=$work/x20.npy" --output-dir "$work"
refused "the engine has 2 profile(s)" \
  "$tailcut" run "$work/m.plan" --input "x=$work/x8.npy" --profile-index 2 --output-dir "$work"

# bench: run-time shapes on the plan, the profile recorded.
field() { "$py" -c "import json,sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print(json.dumps(v))" "$1" "$2"; }
"$tailcut" bench "$work/m.plan" --shapes x:8x64 --iterations 20 --warmup 2 --json "$work/b8.json" >/dev/null ||
  fail "bench --shapes x:8x64"
[ "$(field "$work/b8.json" profile)" = 1 ] || fail "bench x:8x64 ran in profile $(field "$work/b8.json" profile)"
[ "$(field "$work/b8.json" shapes)" = '{"x": [8, 64]}' ] || fail "bench shapes: $(field "$work/b8.json" shapes)"
"$tailcut" bench "$work/m.plan" --shapes x:3x64 --iterations 20 --warmup 2 --json "$work/b3.json" >/dev/null ||
  fail "bench --shapes x:3x64"
[ "$(field "$work/b3.json" profile)" = 0 ] || fail "bench x:3x64 ran in profile $(field "$work/b3.json" profile)"
[ "$(field "$work/b3.json" shapes)" = '{"x": [3, 64]}' ] || fail "bench shapes: $(field "$work/b3.json" shapes)"
"$tailcut" bench "$work/m.plan" --profile-index 1 --iterations 20 --warmup 2 --json "$work/bp.json" >/dev/null ||
  fail "bench --profile-index 1"
[ "$(field "$work/bp.json" shapes)" = '{"x": [8, 64]}' ] || fail "bench --profile-index 1 ran $(field "$work/bp.json" shapes)"
refused "no profile of the engine takes these shapes" "$tailcut" bench "$work/m.plan" --shapes x:20x64 --iterations 5
refused "--shapes wants NAME:DxD" "$tailcut" bench "$work/m.plan" --shapes 8x64 --iterations 5

# Shape values read by a compute step, on every run (bench: warm-up and timed runs at one shape, three shapes).
"$py" - "$work" <<'PY' || fail "writing pos.onnx"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
pos = np.random.default_rng(2).standard_normal((1, 64)).astype(np.float32)
nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "one"], ["n"], name="gather", axis=0),
         helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"], name="unsq"),
         helper.make_node("Slice", ["pos", "zero1", "n1", "one1"], ["p"], name="slice"),
         helper.make_node("Add", ["x", "p"], ["a"], name="add"), helper.make_node("Relu", ["a"], ["r"], name="relu"),
         helper.make_node("Mul", ["r", "a"], ["m"], name="mul"), helper.make_node("Sigmoid", ["m"], ["y"], name="sig")]
inits = [numpy_helper.from_array(pos, "pos"), numpy_helper.from_array(np.array(1, np.int64), "one"),
         numpy_helper.from_array(np.array([0], np.int64), "zero1"), numpy_helper.from_array(np.array([1], np.int64), "one1")]
g = helper.make_graph(nodes, "pos", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "n"])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f"{work}/pos.onnx")
PY
"$tailcut" build "$work/pos.onnx" -o "$work/pos.plan" --tactics-fixed --min-shapes x:1x4 --opt-shapes x:1x16 \
  --max-shapes x:1x64 >/dev/null || fail "build pos.onnx"
for n in 4 16 40; do
  "$tailcut" bench "$work/pos.plan" --shapes "x:1x$n" --warmup 2 --iterations 5 >"$work/pos.txt" 2>&1 ||
    { cat "$work/pos.txt" >&2; fail "runs at 1x$n after the first (shape values overwritten?)"; }
done

echo "test_plan_shapes: all passed"
