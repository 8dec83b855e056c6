#!/usr/bin/env bash
# test_lrn_einsum.sh - LRN and Einsum through the whole pipeline: a model LRN -> Einsum (a constant weight,
# "bchw,cd->bdhw") -> Einsum (attention-like "bdhw,bdgw->bdhg") -> Einsum (implicit, ellipsis: the trace "...ii") is built with
# a dynamic batch and run at batches 1 and 3, and through the reference executor, against onnxruntime; models with
# a malformed equation or a disagreeing subscript size are refused, naming the node and the problem.
#
# usage: tests/cli/test_lrn_einsum.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_lrn_einsum.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_lrn_einsum: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the models, inputs and onnxruntime's outputs"
import sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(5)
def save(nodes, inits, path, out_shape, in_shape=("N", 6, 5, 5)):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, out_shape)], inits)
    m = helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid("", 13)])
    if out_shape is not None:  # (the refused models are left unchecked)
        onnx.checker.check_model(m)
    onnx.save(m, path)
w = numpy_helper.from_array(rng.standard_normal((6, 4)).astype(np.float32), "w")
nodes = [helper.make_node("LRN", ["x"], ["l"], name="lrn", size=3, alpha=0.05, beta=0.6, bias=1.5),
         helper.make_node("Einsum", ["l", "w"], ["y"], name="proj", equation="bchw,cd->bdhw"),
         helper.make_node("Einsum", ["y", "y"], ["s"], name="scores", equation="bdhw, bdgw -> bdhg"),
         helper.make_node("Einsum", ["s"], ["z"], name="diag", equation="...ii")]
save(nodes, [w], f"{work}/m.onnx", ["N", 4])
sess = ort.InferenceSession(f"{work}/m.onnx")
for b in (1, 3):
    x = rng.standard_normal((b, 6, 5, 5)).astype(np.float32)
    np.save(f"{work}/x{b}.npy", x)
    np.save(f"{work}/want{b}.npy", sess.run(None, {"x": x})[0])
save([helper.make_node("Einsum", ["x"], ["z"], name="bad_eq", equation="bc%w->bw")], [], f"{work}/bad_eq.onnx", None)
save([helper.make_node("Einsum", ["x", "w"], ["z"], name="bad_size", equation="bchw,hd->bcdw")], [w],
     f"{work}/bad_size.onnx", None)
PY

"$tailcut" build "$work/m.onnx" -o "$work/m.plan" --min-shapes x:1x6x5x5 --opt-shapes x:2x6x5x5 \
  --max-shapes x:4x6x5x5 >/dev/null 2>"$work/err" || fail "build: $(cat "$work/err")"
for b in 1 3; do
  "$tailcut" run "$work/m.plan" --input "x=$work/x$b.npy" --output-dir "$work/out$b" >/dev/null 2>"$work/err" ||
    fail "run batch $b: $(cat "$work/err")"
  "$tailcut" run "$work/m.onnx" --reference --input "x=$work/x$b.npy" --output-dir "$work/ref$b" >/dev/null \
    2>"$work/err" || fail "run --reference batch $b: $(cat "$work/err")"
  "$py" - "$work/want$b.npy" "$work/out$b/z.npy" "$work/ref$b/z.npy" <<'PY' || fail "batch $b differs from onnxruntime"
import sys
import numpy as np
want = np.load(sys.argv[1])
for f in sys.argv[2:]:
    got = np.load(f)
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    print(f"{f.split('/')[-2]}: shape {got.shape}, max error relative to max |want| {err:.2e}")
    if got.shape != want.shape or not err < 1e-5:
        sys.exit(1)
PY
done
if "$tailcut" build "$work/bad_eq.onnx" -o "$work/b.plan" --shapes x:1x6x5x5 2>"$work/err"; then fail "bad equation accepted"; fi
grep -q "node 'bad_eq' (Einsum).*equation: '%' at position 2" "$work/err" || fail "bad equation: $(cat "$work/err")"
echo "ok refused: $(cat "$work/err")"
if "$tailcut" build "$work/bad_size.onnx" -o "$work/b.plan" --shapes x:1x6x5x5 2>"$work/err"; then fail "bad sizes accepted"; fi
grep -q "node 'bad_size' (Einsum).*subscript 'h' has size 6" "$work/err" || fail "bad sizes: $(cat "$work/err")"
echo "ok refused: $(cat "$work/err")"
echo "test_lrn_einsum: all passed"
