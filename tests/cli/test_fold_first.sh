#!/usr/bin/env bash
# test_fold_first.sh - constants are folded before the op check (issue 26 defect 2): Mod on constants as shape
# arithmetic (torchvision's ViT export) feeds a Reshape's shape, an If whose condition is known once constants are
# evaluated (a Constant, or static shape arithmetic) is replaced by the branch it takes (its nodes reading outer-scope
# values, another such If nested inside), and both build and run with onnxruntime's answers; Mod on run-time data
# (integers with fmod 0 and 1, floats, broadcasting) runs with onnxruntime's answers; an If decided at run time runs
# (predicated) with onnxruntime's answers for both conditions; an op without a kernel (even on constants) is still
# refused, naming it, and so is a branch redefining an outer name.
#
# usage: tests/cli/test_fold_first.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_fold_first.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_fold_first: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the models and inputs"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(3)
I64 = TensorProto.INT64
def const(name, arr):
    return helper.make_node("Constant", [], [name], name=name + "_c", value=numpy_helper.from_array(np.asarray(arr)))
def save(graph, path):
    m = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, path)

# fold.onnx: x [2, 12] -> Reshape to [4, Mod(26, 10) = 6]; If(Mod(7, 2) == 1) takes then: Relu(r) * w (w outer),
# whose nested If(Shape(r)[1] == 6) takes then: Add(., 1); else branches would be refused (Hardmax has no kernel here).
# (then_inner names its result after the inner If's output "t3", as the ONNX checker allows)
then_inner = helper.make_graph([helper.make_node("Add", ["t1", "one"], ["t3"], name="inner_add")], "then_inner", [],
                               [helper.make_tensor_value_info("t3", TensorProto.FLOAT, [4, 6])])
else_inner = helper.make_graph([helper.make_node("Hardmax", ["t1"], ["e2"], name="inner_hardmax")], "else_inner", [],
                               [helper.make_tensor_value_info("e2", TensorProto.FLOAT, [4, 6])])
then_outer = helper.make_graph([
    helper.make_node("Relu", ["r"], ["t0"], name="then_relu"),
    helper.make_node("Mul", ["t0", "w"], ["t1"], name="then_mul"),
    helper.make_node("Shape", ["r"], ["rs"], name="then_shape"),
    const("idx1", np.array(1, np.int64)), helper.make_node("Gather", ["rs", "idx1"], ["d1"], name="then_gather"),
    const("six", np.array(6, np.int64)), helper.make_node("Equal", ["d1", "six"], ["c2"], name="then_eq"),
    helper.make_node("If", ["c2"], ["t3"], name="inner_if", then_branch=then_inner, else_branch=else_inner)],
    "then_outer", [], [helper.make_tensor_value_info("t3", TensorProto.FLOAT, [4, 6])])
else_outer = helper.make_graph([helper.make_node("Hardmax", ["r"], ["e0"], name="else_hardmax")], "else_outer", [],
                               [helper.make_tensor_value_info("e0", TensorProto.FLOAT, [4, 6])])
w = rng.standard_normal((4, 6)).astype(np.float32)
nodes = [const("four", np.array([4], np.int64)), const("a26", np.array([26], np.int64)),
         const("b10", np.array([10], np.int64)), helper.make_node("Mod", ["a26", "b10"], ["m"], name="shape_mod"),
         helper.make_node("Concat", ["four", "m"], ["shape"], name="cat", axis=0),
         helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
         const("seven", np.array(7, np.int64)), const("two", np.array(2, np.int64)),
         helper.make_node("Mod", ["seven", "two"], ["odd"], name="cond_mod"),
         const("onei", np.array(1, np.int64)), helper.make_node("Equal", ["odd", "onei"], ["cond"], name="cond_eq"),
         helper.make_node("If", ["cond"], ["y"], name="outer_if", then_branch=then_outer, else_branch=else_outer)]
g = helper.make_graph(nodes, "fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 12])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(1, np.float32), "one")])
save(g, f"{work}/fold.onnx")
np.save(f"{work}/x.npy", rng.standard_normal((2, 12)).astype(np.float32))

# mod.onnx: Mod on run-time data with broadcasting: int32 fmod 0 and 1 (mixed signs), float32 fmod 1.
g = helper.make_graph([helper.make_node("Mod", ["a", "b"], ["m0"], name="mod0"),
                       helper.make_node("Mod", ["a", "b"], ["m1"], name="mod1", fmod=1),
                       helper.make_node("Mod", ["f", "h"], ["mf"], name="modf", fmod=1)], "mod",
                      [helper.make_tensor_value_info("a", TensorProto.INT32, [3, 4]),
                       helper.make_tensor_value_info("f", TensorProto.FLOAT, [2, 3, 4])],
                      [helper.make_tensor_value_info(n, t, s) for n, t, s in
                       (("m0", TensorProto.INT32, [3, 4]), ("m1", TensorProto.INT32, [3, 4]),
                        ("mf", TensorProto.FLOAT, [2, 3, 4]))],
                      [numpy_helper.from_array(np.array([3, -3, 5, -7], np.int32), "b"),
                       numpy_helper.from_array(np.array([[1.5], [-2.25], [0.75]], np.float32), "h")])
save(g, f"{work}/mod.onnx")
np.save(f"{work}/a.npy", rng.integers(-20, 20, (3, 4)).astype(np.int32))
np.save(f"{work}/f.npy", (rng.standard_normal((2, 3, 4)) * 5).astype(np.float32))

# runtime_if.onnx: the condition is a graph input, known only at run time.
br = lambda op, out: helper.make_graph([helper.make_node(op, ["x"], [out], name=out)], out, [],
                                       [helper.make_tensor_value_info(out, TensorProto.FLOAT, [4])])
g = helper.make_graph([helper.make_node("If", ["c"], ["y"], name="rt_if", then_branch=br("Relu", "yt"),
                                        else_branch=br("Neg", "ye"))], "rt",
                      [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                       helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
save(g, f"{work}/runtime_if.onnx")
np.save(f"{work}/c1.npy", np.array(True))
np.save(f"{work}/c0.npy", np.array(False))
np.save(f"{work}/x4.npy", rng.standard_normal(4).astype(np.float32))

# nokernel.onnx: BitShift (no kernel in tailcut) on constants only cannot be folded: refused by name.
g = helper.make_graph([const("u", np.array([8], np.uint8)), const("s", np.array([1], np.uint8)),
                       helper.make_node("BitShift", ["u", "s"], ["v"], name="shift", direction="RIGHT"),
                       helper.make_node("Cast", ["v"], ["vf"], name="cast", to=TensorProto.FLOAT),
                       helper.make_node("Add", ["x", "vf"], ["y"], name="add")], "nk",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
save(g, f"{work}/nokernel.onnx")

# clash.onnx: a constant If whose branch redefines a name of the enclosing graph (ONNX forbids it; not inlined).
g = helper.make_graph([const("t", np.array(True)), helper.make_node("Relu", ["x"], ["r"], name="relu"),
                       helper.make_node("If", ["t"], ["y"], name="clash_if", then_branch=br("Relu", "r"),
                                        else_branch=br("Neg", "ye"))], "clash",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
                       helper.make_tensor_value_info("r", TensorProto.FLOAT, [4])])
onnx.save(helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]), f"{work}/clash.onnx")
PY

. "$repo/tests/cli/ort_check.sh" # compare, refused

"$tailcut" build "$work/fold.onnx" -o "$work/fold.plan" --tactics-fixed >"$work/log.txt" 2>&1 ||
  { cat "$work/log.txt" >&2; fail "build of Mod shape arithmetic and constant Ifs"; }
mkdir -p "$work/o1" "$work/o2" "$work/o3"
"$tailcut" run "$work/fold.plan" --input "x=$work/x.npy" --output-dir "$work/o1" >/dev/null || fail "run fold.plan"
compare "$work/fold.onnx" "$work/o1" "x=$work/x.npy" || fail "fold.plan's output differs from onnxruntime's"
"$tailcut" run "$work/fold.onnx" --reference --input "x=$work/x.npy" --output-dir "$work/o2" >/dev/null ||
  fail "run --reference fold.onnx"
compare "$work/fold.onnx" "$work/o2" "x=$work/x.npy" || fail "the reference's output of fold.onnx differs"
"$tailcut" inspect "$work/fold.onnx" >"$work/inspect.txt" 2>&1 || fail "inspect fold.onnx"
# Both Ifs became their branches' nodes (an Identity for the outer If's output; the inner branch computes "t3" itself);
# the Hardmax nodes of the branches not taken are gone.
grep -q "all 20 nodes are supported" "$work/inspect.txt" || { cat "$work/inspect.txt" >&2; fail "inspect fold.onnx"; }
if grep -qE "^ +(If|Hardmax) " "$work/inspect.txt"; then fail "inspect shows an If or a branch not taken"; fi

"$tailcut" run "$work/mod.onnx" --input "a=$work/a.npy" --input "f=$work/f.npy" --output-dir "$work/o3" >/dev/null ||
  fail "run mod.onnx"
compare "$work/mod.onnx" "$work/o3" "a=$work/a.npy" "f=$work/f.npy" || fail "Mod on run-time data differs"

# an If decided at run time is predicated (tests/cli/test_if_runtime.sh has the details): both values of c
"$tailcut" build "$work/runtime_if.onnx" -o "$work/rt.plan" --tactics-fixed >/dev/null || fail "build runtime_if.onnx"
for c in c1 c0; do
  "$tailcut" run "$work/rt.plan" --input "c=$work/$c.npy" --input "x=$work/x4.npy" --output-dir "$work/rt_$c" >/dev/null ||
    fail "run runtime_if.onnx with $c"
  compare "$work/runtime_if.onnx" "$work/rt_$c" "c=$work/$c.npy" "x=$work/x4.npy" || fail "runtime_if.onnx with $c differs"
done
refused "If 'clash_if': its branch defines 'r', a name the enclosing graph already has" \
  "$tailcut" build "$work/clash.onnx" -o "$work/cl.plan" --tactics-fixed
refused "BitShift x1 ('shift')" "$tailcut" build "$work/nokernel.onnx" -o "$work/nk.plan" --tactics-fixed

echo "test_fold_first: all passed"
