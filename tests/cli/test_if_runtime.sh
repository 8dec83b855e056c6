#!/usr/bin/env bash
# test_if_runtime.sh - an If whose condition is computed at run time (issue 26): both branches are built into the
# plan as guarded steps and the one the condition picks runs. On generated models, against onnxruntime: conditions
# computed from the input data taking each branch (branches reading outer-scope values and initializers, a Conv and
# a MatMul inside); an If nested in a branch with its own run-time condition (all four paths); a branch that cannot
# run at some input shapes of a dynamic profile (taken: refused naming it; not taken: runs); the plan round trip
# (build to a file, run from it); inspect of the model and of the plan shows each branch's nodes or steps, nested
# branches indented. Refused clearly: branches whose outputs have different shapes or dtypes.
#
# usage: tests/cli/test_if_runtime.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_if_runtime.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_if_runtime: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the models and inputs"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(11)
F, B = TensorProto.FLOAT, TensorProto.BOOL
def save(graph, path):
    m = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, path)
def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)

# data_if.onnx: x [1, 2, 6, 6]; cond = ReduceSum(x) > 0. then: Relu(Conv(x, wc) + b) (wc, b outer initializers);
# else: MatMul(Reshape(x, [12, 6]), wm) reshaped back plus Sigmoid(x) (wm an initializer of the branch).
wc = rng.standard_normal((2, 2, 3, 3)).astype(np.float32) * 0.3
b = rng.standard_normal((1, 2, 1, 1)).astype(np.float32)
wm = rng.standard_normal((6, 6)).astype(np.float32) * 0.5
then_g = helper.make_graph([
    helper.make_node("Conv", ["x", "wc"], ["tc"], name="then_conv", pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["tc", "b"], ["tb"], name="then_add"),
    helper.make_node("Relu", ["tb"], ["ty"], name="then_relu")], "then", [],
    [helper.make_tensor_value_info("ty", F, [1, 2, 6, 6])])
else_g = helper.make_graph([
    helper.make_node("Reshape", ["x", "s12x6"], ["er"], name="else_reshape"),
    helper.make_node("MatMul", ["er", "wm"], ["em"], name="else_matmul"),
    helper.make_node("Reshape", ["em", "s_x"], ["eb"], name="else_back"),
    helper.make_node("Sigmoid", ["x"], ["es"], name="else_sigmoid"),
    helper.make_node("Add", ["eb", "es"], ["ey"], name="else_add")], "else", [],
    [helper.make_tensor_value_info("ey", F, [1, 2, 6, 6])],
    initializer=[init("wm", wm), init("s12x6", np.array([12, 6], np.int64)), init("s_x", np.array([1, 2, 6, 6], np.int64))])
g = helper.make_graph([
    helper.make_node("ReduceSum", ["x"], ["sum"], name="sum", keepdims=0),
    helper.make_node("Greater", ["sum", "zero"], ["cond"], name="positive"),
    helper.make_node("If", ["cond"], ["y"], name="data_if", then_branch=then_g, else_branch=else_g),
    helper.make_node("Mul", ["y", "two"], ["z"], name="after")], "data_if",
    [helper.make_tensor_value_info("x", F, [1, 2, 6, 6])], [helper.make_tensor_value_info("z", F, [1, 2, 6, 6])],
    initializer=[init("wc", wc), init("b", b), init("zero", np.array(0, np.float32)), init("two", np.array(2, np.float32))])
save(g, f"{work}/data_if.onnx")
x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
np.save(f"{work}/xpos.npy", np.abs(x))   # takes then
np.save(f"{work}/xneg.npy", -np.abs(x))  # takes else

# nested.onnx: v [4], c1 = v[0] > 0, c2 = v[1] > 0 (inner, computed inside the then branch); outputs y (and the inner
# If's value through the outer one): then: If(c2, Relu(v) * 3, Neg(v)) + 1; else: Abs(v) - 5.
inner_then = helper.make_graph([helper.make_node("Relu", ["v"], ["it0"], name="it_relu"),
                                helper.make_node("Mul", ["it0", "three"], ["it"], name="it_mul")], "it", [],
                               [helper.make_tensor_value_info("it", F, [4])])
inner_else = helper.make_graph([helper.make_node("Neg", ["v"], ["ie"], name="ie_neg")], "ie", [],
                               [helper.make_tensor_value_info("ie", F, [4])])
outer_then = helper.make_graph([
    helper.make_node("Gather", ["v", "i1"], ["v1"], name="ot_gather", axis=0),
    helper.make_node("Greater", ["v1", "zero"], ["c2"], name="ot_greater"),
    helper.make_node("If", ["c2"], ["iy"], name="inner_if", then_branch=inner_then, else_branch=inner_else),
    helper.make_node("Add", ["iy", "one"], ["ot"], name="ot_add")], "ot", [],
    [helper.make_tensor_value_info("ot", F, [4])], initializer=[init("i1", np.array(1, np.int64))])
outer_else = helper.make_graph([helper.make_node("Abs", ["v"], ["oe0"], name="oe_abs"),
                                helper.make_node("Sub", ["oe0", "five"], ["oe"], name="oe_sub")], "oe", [],
                               [helper.make_tensor_value_info("oe", F, [4])])
g = helper.make_graph([
    helper.make_node("Gather", ["v", "i0"], ["v0"], name="gather0", axis=0),
    helper.make_node("Greater", ["v0", "zero"], ["c1"], name="greater0"),
    helper.make_node("If", ["c1"], ["y"], name="outer_if", then_branch=outer_then, else_branch=outer_else)], "nested",
    [helper.make_tensor_value_info("v", F, [4])], [helper.make_tensor_value_info("y", F, [4])],
    initializer=[init("i0", np.array(0, np.int64)), init("zero", np.array(0, np.float32)),
                 init("one", np.array(1, np.float32)), init("three", np.array(3, np.float32)),
                 init("five", np.array(5, np.float32))])
save(g, f"{work}/nested.onnx")
for name, s0, s1 in (("pp", 1, 1), ("pn", 1, -1), ("np", -1, 1), ("nn", -1, -1)):
    v = (rng.uniform(0.5, 2, 4) * np.array([s0, s1, 1, -1])).astype(np.float32)
    np.save(f"{work}/v_{name}.npy", v)

# shapes.onnx: x [N] (dynamic), c a bool input; then: Reshape(x, [2, 4]) flattened back (runs only when N = 8);
# else: Relu(x).
then_g = helper.make_graph([helper.make_node("Reshape", ["x", "s24"], ["t0"], name="then_reshape"),
                            helper.make_node("Flatten", ["t0"], ["t1"], name="then_flatten", axis=0),
                            helper.make_node("Reshape", ["t1", "s8"], ["ty"], name="then_back")], "then", [],
                           [helper.make_tensor_value_info("ty", F, ["N"])],
                           initializer=[init("s24", np.array([2, 4], np.int64)), init("s8", np.array([-1], np.int64))])
else_g = helper.make_graph([helper.make_node("Relu", ["x"], ["ey"], name="else_relu")], "else", [],
                           [helper.make_tensor_value_info("ey", F, ["N"])])
g = helper.make_graph([helper.make_node("If", ["c"], ["y"], name="shape_if", then_branch=then_g, else_branch=else_g)],
                      "shapes", [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, ["N"])],
                      [helper.make_tensor_value_info("y", F, ["N"])])
save(g, f"{work}/shapes.onnx")
# shapecond.onnx: the same branches, the condition Shape(x)[0] != 8 (known when shapes are set): N = 8 takes else;
# another N takes then, which cannot run: refused when the shapes are set (a profile holding such an N is refused at
# build), naming the branch.
g = helper.make_graph([helper.make_node("Shape", ["x"], ["xs"], name="shape"),
                       helper.make_node("Gather", ["xs", "i0"], ["n"], name="gather", axis=0),
                       helper.make_node("Equal", ["n", "eight"], ["is8"], name="eq"),
                       helper.make_node("Not", ["is8"], ["c"], name="not8"),
                       helper.make_node("If", ["c"], ["y"], name="shape_if", then_branch=then_g, else_branch=else_g)],
                      "shapecond", [helper.make_tensor_value_info("x", F, ["N"])],
                      [helper.make_tensor_value_info("y", F, ["N"])],
                      initializer=[init("i0", np.array(0, np.int64)), init("eight", np.array(8, np.int64))])
save(g, f"{work}/shapecond.onnx")
np.save(f"{work}/c1.npy", np.array(True))
np.save(f"{work}/c0.npy", np.array(False))
np.save(f"{work}/x8.npy", rng.standard_normal(8).astype(np.float32))
np.save(f"{work}/x6.npy", rng.standard_normal(6).astype(np.float32))

# diffshape.onnx: then gives x [4], else Concat(x, x) [8]: the output's shape depends on the condition.
# diffdtype.onnx: then float, else Cast to int64.
def two(then_nodes, then_out, else_nodes, else_out, out_type, name):
    tg = helper.make_graph(then_nodes, "t", [], [then_out])
    eg = helper.make_graph(else_nodes, "e", [], [else_out])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], name=name, then_branch=tg, else_branch=eg)], name,
                          [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, [4])],
                          [out_type])
    m = helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, f"{work}/{name}.onnx")  # not checked: onnx's checker may refuse what tailcut must refuse too
two([helper.make_node("Relu", ["x"], ["t"], name="t_relu")], helper.make_tensor_value_info("t", F, [4]),
    [helper.make_node("Concat", ["x", "x"], ["e"], name="e_cat", axis=0)], helper.make_tensor_value_info("e", F, [8]),
    helper.make_tensor_value_info("y", F, None), "diffshape")
two([helper.make_node("Relu", ["x"], ["t"], name="t_relu")], helper.make_tensor_value_info("t", F, [4]),
    [helper.make_node("Cast", ["x"], ["e"], name="e_cast", to=TensorProto.INT64)],
    helper.make_tensor_value_info("e", TensorProto.INT64, [4]), helper.make_tensor_value_info("y", F, [4]), "diffdtype")
x4 = rng.standard_normal(4).astype(np.float32)
np.save(f"{work}/x4.npy", x4)
PY

. "$repo/tests/cli/ort_check.sh" # compare, refused
run_cmp() { # MODEL PLAN TAG INPUT=FILE...: runs PLAN with the inputs and compares with onnxruntime on MODEL
  local model=$1 plan=$2 tag=$3; shift 3
  local args=()
  for kv in "$@"; do args+=(--input "$kv"); done
  "$tailcut" run "$plan" "${args[@]}" --output-dir "$work/o_$tag" >/dev/null || fail "run $plan ($tag)"
  compare "$model" "$work/o_$tag" "$@" || fail "$model ($tag) differs from onnxruntime"
}

# conditions from data, each branch taken; the plan is a file read back by run
"$tailcut" build "$work/data_if.onnx" -o "$work/data_if.plan" >/dev/null || fail "build data_if.onnx"
run_cmp "$work/data_if.onnx" "$work/data_if.plan" pos "x=$work/xpos.npy"
run_cmp "$work/data_if.onnx" "$work/data_if.plan" neg "x=$work/xneg.npy"
"$tailcut" inspect "$work/data_if.plan" >"$work/inspect.txt" 2>&1 || fail "inspect data_if.plan"
for want in "[If branch data_if:then]" "[If branch data_if:else]"; do
  grep -qF "$want" "$work/inspect.txt" || { cat "$work/inspect.txt" >&2; fail "inspect data_if.plan shows no '$want'"; }
done
"$tailcut" inspect "$work/data_if.onnx" >"$work/inspect.txt" 2>&1 || fail "inspect data_if.onnx"
for want in "If branches decided at run time" "data_if:then: " "data_if:else: " "Conv                 then_conv" \
            "MatMul               else_matmul"; do
  grep -qF "$want" "$work/inspect.txt" || { cat "$work/inspect.txt" >&2; fail "inspect data_if.onnx shows no '$want'"; }
done
# the same under --tactics-fixed and with every optional pass off
"$tailcut" build "$work/data_if.onnx" -o "$work/data_if2.plan" --tactics-fixed --disable-pass all >/dev/null ||
  fail "build data_if.onnx --disable-pass all"
run_cmp "$work/data_if.onnx" "$work/data_if2.plan" pos2 "x=$work/xpos.npy"
run_cmp "$work/data_if.onnx" "$work/data_if2.plan" neg2 "x=$work/xneg.npy"

# nested: all four paths
"$tailcut" build "$work/nested.onnx" -o "$work/nested.plan" >/dev/null || fail "build nested.onnx"
for p in pp pn np nn; do run_cmp "$work/nested.onnx" "$work/nested.plan" "n_$p" "v=$work/v_$p.npy"; done
"$tailcut" inspect "$work/nested.onnx" >"$work/inspect.txt" 2>&1 || fail "inspect nested.onnx"
grep -qE "^    outer_if:then > inner_if:else: 1 nodes" "$work/inspect.txt" ||
  { cat "$work/inspect.txt" >&2; fail "inspect nested.onnx does not show the inner If's branch, indented"; }
"$tailcut" inspect "$work/nested.plan" >"$work/inspect.txt" 2>&1 || fail "inspect nested.plan"
grep -qF "[If branch outer_if:then > inner_if:" "$work/inspect.txt" ||
  { cat "$work/inspect.txt" >&2; fail "inspect nested.plan does not show the inner If's branches"; }

# a branch that cannot run at some shapes of the profile
"$tailcut" build "$work/shapes.onnx" -o "$work/shapes.plan" --min-shapes x:4 --opt-shapes x:8 --max-shapes x:16 \
  >/dev/null || fail "build shapes.onnx"
run_cmp "$work/shapes.onnx" "$work/shapes.plan" s81 "c=$work/c1.npy" "x=$work/x8.npy"
run_cmp "$work/shapes.onnx" "$work/shapes.plan" s80 "c=$work/c0.npy" "x=$work/x8.npy"
run_cmp "$work/shapes.onnx" "$work/shapes.plan" s60 "c=$work/c0.npy" "x=$work/x6.npy"
refused "its If branch is taken, but its shapes do not infer at these input shapes" \
  "$tailcut" run "$work/shapes.plan" --input "c=$work/c1.npy" --input "x=$work/x6.npy" --output-dir "$work/o_s61"

# the condition known when shapes are set: the branch it takes must run at them
"$tailcut" build "$work/shapecond.onnx" -o "$work/shapecond.plan" --min-shapes x:8 --opt-shapes x:8 --max-shapes x:8 \
  >/dev/null || fail "build shapecond.onnx"
run_cmp "$work/shapecond.onnx" "$work/shapecond.plan" sc8 "x=$work/x8.npy"
refused "If 'shape_if': its then branch, which its condition takes, cannot run at these input shapes" \
  "$tailcut" build "$work/shapecond.onnx" -o "$work/sc.plan" --min-shapes x:4 --opt-shapes x:8 --max-shapes x:16

# refused: output shapes or dtypes that depend on the condition
refused "an If whose output shape depends on its condition is not supported" \
  "$tailcut" build "$work/diffshape.onnx" -o "$work/ds.plan" --tactics-fixed
refused "is float32 in the then branch but int64 in the else branch" \
  "$tailcut" build "$work/diffdtype.onnx" -o "$work/dd.plan" --tactics-fixed

echo "test_if_runtime: all passed"
