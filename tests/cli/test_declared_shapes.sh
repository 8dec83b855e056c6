#!/usr/bin/env bash
# test_declared_shapes.sh - what a model declares about shapes is not trusted over what it computes (issue 26 defect 5):
# a graph output declared with another shape than its node computes (another dim; another rank, as ddddocr's CRNN
# declares [1, seqlen] for [W/8, 1, C]) is accepted by inspect, run (engine and --reference), build and a plan's run,
# with one warning per command naming the output, the declared and the computed shapes, and onnxruntime's answers; an
# output declared with another dtype is still refused. Dims declared "?" (as some exporters write an unknown dim) are
# unknown, not one shared size: --reference runs two inputs whose "?" dims differ with onnxruntime's answers.
#
# usage: tests/cli/test_declared_shapes.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_declared.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_declared_shapes: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the models and inputs"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(55)
F = TensorProto.FLOAT
def save(nodes, inputs, outputs, inits, path):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    onnx.save(helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]), path)
w = rng.standard_normal((8, 6)).astype(np.float32)
# wrong.onnx: y = x @ W is [n, 6] but declared [n, 7]; z = Unsqueeze(Relu(y), 1) is [n, 1, 6] but declared [1, seqlen]
save([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"), helper.make_node("Relu", ["y"], ["r"], name="relu"),
      helper.make_node("Unsqueeze", ["r", "ax"], ["z"], name="unsq")],
     [helper.make_tensor_value_info("x", F, ["n", 8])],
     [helper.make_tensor_value_info("y", F, ["n", 7]), helper.make_tensor_value_info("z", F, [1, "seqlen"])],
     [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array([1], np.int64), "ax")], f"{work}/wrong.onnx")
# wrong_dtype.onnx: y declared int64, computes float32
save([helper.make_node("Relu", ["x"], ["y"], name="relu")], [helper.make_tensor_value_info("x", F, [2, 3])],
     [helper.make_tensor_value_info("y", TensorProto.INT64, [2, 3])], [], f"{work}/wrong_dtype.onnx")
# unknown.onnx: a ["?", 4] and b ["?", 4] concatenated: c ["?", 4]
save([helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=0)],
     [helper.make_tensor_value_info("a", F, ["?", 4]), helper.make_tensor_value_info("b", F, ["?", 4])],
     [helper.make_tensor_value_info("c", F, ["?", 4])], [], f"{work}/unknown.onnx")
np.save(f"{work}/x.npy", rng.standard_normal((3, 8)).astype(np.float32))
np.save(f"{work}/a.npy", rng.standard_normal((2, 4)).astype(np.float32))
np.save(f"{work}/b.npy", rng.standard_normal((5, 4)).astype(np.float32))
PY

compare() { "$py" "$repo/tests/cli/ort_compare.py" "$@"; } # MODEL OUTDIR INPUT=FILE...: as onnxruntime
warned() { # CMD LOG: LOG holds each output's warning exactly once
  local want n
  for want in "graph output 'y' is declared with shape nx7 but node 'mm' (MatMul) computes nx6: using nx6" \
    "graph output 'z' is declared with shape 1xseqlen but node 'unsq' (Unsqueeze) computes nx1x6: using nx1x6"; do
    n=$(grep -cF "tailcut $1: warning: $want" "$2" || true)
    [ "$n" = 1 ] || { cat "$2" >&2; fail "$1: $n warnings '$want'"; }
  done
}

"$tailcut" inspect "$work/wrong.onnx" >"$work/inspect.txt" 2>"$work/inspect.err" ||
  { cat "$work/inspect.err" >&2; fail "inspect"; }
warned inspect "$work/inspect.err"
grep -qE "^  output +z +float32 +\[n,1,6\]" "$work/inspect.txt" ||
  { cat "$work/inspect.txt" >&2; fail "inspect's shape of z"; }
mkdir -p "$work/o1" "$work/o2" "$work/o3"
"$tailcut" run "$work/wrong.onnx" --input "x=$work/x.npy" --output-dir "$work/o1" >/dev/null 2>"$work/run.err" ||
  { cat "$work/run.err" >&2; fail "run wrong.onnx"; }
warned run "$work/run.err"
compare "$work/wrong.onnx" "$work/o1" "x=$work/x.npy" || fail "run's outputs differ from onnxruntime's"
"$tailcut" run "$work/wrong.onnx" --reference --input "x=$work/x.npy" --output-dir "$work/o2" \
  >/dev/null 2>"$work/ref.err" ||
  { cat "$work/ref.err" >&2; fail "run --reference wrong.onnx"; }
warned run "$work/ref.err"
compare "$work/wrong.onnx" "$work/o2" "x=$work/x.npy" || fail "the reference's outputs differ from onnxruntime's"
"$tailcut" build "$work/wrong.onnx" -o "$work/w.plan" --tactics-fixed --min-shapes x:1x8 --opt-shapes x:2x8 \
  --max-shapes x:4x8 >/dev/null 2>"$work/build.err" || { cat "$work/build.err" >&2; fail "build wrong.onnx"; }
warned build "$work/build.err"
"$tailcut" run "$work/w.plan" --input "x=$work/x.npy" --output-dir "$work/o3" >/dev/null || fail "run w.plan"
compare "$work/wrong.onnx" "$work/o3" "x=$work/x.npy" || fail "the plan's outputs differ from onnxruntime's"

if "$tailcut" inspect "$work/wrong_dtype.onnx" >"$work/out.txt" 2>&1; then
  fail "accepted an output of another dtype"
fi
grep -qF "output 'y' is declared int64 but computes float32" "$work/out.txt" ||
  { cat "$work/out.txt" >&2; fail "dtype"; }

mkdir -p "$work/o4"
"$tailcut" run "$work/unknown.onnx" --reference --input "a=$work/a.npy" --input "b=$work/b.npy" \
  --output-dir "$work/o4" >/dev/null || fail "run --reference with two '?' dims of other sizes"
compare "$work/unknown.onnx" "$work/o4" "a=$work/a.npy" "b=$work/b.npy" || fail "'?' dims: output differs"

echo "test_declared_shapes: all passed"
