#!/usr/bin/env bash
# test_loop_unroll.sh - a Loop whose trip count is known before the run (a constant, or shape arithmetic that folds)
# and whose condition is absent or stays true runs unrolled (issue 26), against onnxruntime: loop-carried values,
# the iteration number read in the body, outer-scope values and body initializers, scan outputs stacked along a new
# axis 0, and the plan round trip. Refused naming the Loop and why: a trip count given at run time, a condition the
# body computes.
#
# usage: tests/cli/test_loop_unroll.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_loop_unroll.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_loop_unroll: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the models and inputs"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(5)
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)
def save(graph, path, check=True):
    m = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, path)
def body(cond_out_node=None):
    # h' = tanh(h @ w + x * a) + i (iteration number as float); scan: h' * 2
    nodes = [helper.make_node("MatMul", ["h_in", "w"], ["hw"], name="b_matmul"),
             helper.make_node("Mul", ["x", "a"], ["xa"], name="b_mul"),
             helper.make_node("Add", ["hw", "xa"], ["s"], name="b_add"),
             helper.make_node("Tanh", ["s"], ["t"], name="b_tanh"),
             helper.make_node("Cast", ["i"], ["fi"], name="b_cast", to=F),
             helper.make_node("Add", ["t", "fi"], ["h_out"], name="b_addi"),
             helper.make_node("Mul", ["h_out", "two"], ["scan"], name="b_scan")]
    if cond_out_node is None:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"], name="b_cond"))
    else:
        nodes.append(cond_out_node)
    return helper.make_graph(nodes, "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, []),
         helper.make_tensor_value_info("h_in", F, [1, 4])],
        [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("h_out", F, [1, 4]),
         helper.make_tensor_value_info("scan", F, [1, 4])],
        initializer=[init("w", (rng.standard_normal((4, 4)) * 0.5).astype(np.float32)), init("two", np.float32(2))])
x = rng.standard_normal((1, 4)).astype(np.float32)
np.save(f"{work}/x.npy", x)
a = rng.standard_normal((1, 4)).astype(np.float32)
outs = [helper.make_tensor_value_info("h", F, [1, 4]), helper.make_tensor_value_info("scans", F, [5, 1, 4])]
# const.onnx: M = 5 (an initializer), no condition
g = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["h", "scans"], name="loop5", body=body())], "const",
                      [helper.make_tensor_value_info("x", F, [1, 4])], outs,
                      initializer=[init("M", np.array(5, np.int64)), init("a", a)])
save(g, f"{work}/const.onnx")
# shape.onnx: M = Shape(z)[0] (z [5, 2], static), condition a constant true
g = helper.make_graph([helper.make_node("Shape", ["z"], ["zs"], name="shape"),
                       helper.make_node("Gather", ["zs", "zero"], ["M"], name="gather", axis=0),
                       helper.make_node("Loop", ["M", "yes", "x"], ["h", "scans"], name="loop_shape", body=body())],
                      "shape", [helper.make_tensor_value_info("x", F, [1, 4]), helper.make_tensor_value_info("z", F, [5, 2])],
                      outs, initializer=[init("zero", np.array(0, np.int64)), init("yes", np.array(True)), init("a", a)])
save(g, f"{work}/shape.onnx")
np.save(f"{work}/z.npy", rng.standard_normal((5, 2)).astype(np.float32))
# runtime_m.onnx: M a graph input; computed_cond.onnx: the body computes its condition (i < 3)
g = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["h", "scans"], name="loop_rt", body=body())],
                      "rt", [helper.make_tensor_value_info("M", I64, []), helper.make_tensor_value_info("x", F, [1, 4])],
                      [outs[0], helper.make_tensor_value_info("scans", F, ["n", 1, 4])], initializer=[init("a", a)])
save(g, f"{work}/runtime_m.onnx")
cb = body(helper.make_node("Less", ["i", "three"], ["c_out"], name="b_less"))
cb.initializer.append(init("three", np.array(3, np.int64)))
g = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["h", "scans"], name="loop_cc", body=cb)], "cc",
                      [helper.make_tensor_value_info("x", F, [1, 4])],
                      [outs[0], helper.make_tensor_value_info("scans", F, ["n", 1, 4])],
                      initializer=[init("M", np.array(5, np.int64)), init("a", a)])
save(g, f"{work}/computed_cond.onnx")
PY

. "$repo/tests/cli/ort_check.sh" # compare, refused

"$tailcut" build "$work/const.onnx" -o "$work/const.plan" >/dev/null || fail "build const.onnx"
"$tailcut" run "$work/const.plan" --input "x=$work/x.npy" --output-dir "$work/o1" >/dev/null || fail "run const.plan"
compare "$work/const.onnx" "$work/o1" "x=$work/x.npy" || fail "const.onnx differs from onnxruntime"
"$tailcut" run "$work/const.onnx" --reference --input "x=$work/x.npy" --output-dir "$work/o1r" >/dev/null ||
  fail "run const.onnx --reference"
compare "$work/const.onnx" "$work/o1r" "x=$work/x.npy" || fail "const.onnx (reference executor) differs"

"$tailcut" build "$work/shape.onnx" -o "$work/shape.plan" >/dev/null || fail "build shape.onnx"
"$tailcut" run "$work/shape.plan" --input "x=$work/x.npy" --input "z=$work/z.npy" --output-dir "$work/o2" >/dev/null ||
  fail "run shape.plan"
compare "$work/shape.onnx" "$work/o2" "x=$work/x.npy" "z=$work/z.npy" || fail "shape.onnx differs from onnxruntime"

refused "Loop 'loop_rt': its trip count M is not known before the run" \
  "$tailcut" build "$work/runtime_m.onnx" -o "$work/rt.plan" --tactics-fixed
refused "Loop 'loop_cc': its body computes its condition" \
  "$tailcut" build "$work/computed_cond.onnx" -o "$work/cc.plan" --tactics-fixed
"$tailcut" inspect "$work/runtime_m.onnx" >/dev/null 2>&1 || fail "inspect runtime_m.onnx (a Loop left in place)"

echo "test_loop_unroll: all passed"
