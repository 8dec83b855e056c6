#!/usr/bin/env bash
# test_dynamic_anchors.sh - shape values derived from input dims stay symbolic through Range and friends (issue 26
# defect 4): a generated dynamic-resolution detector (three stride-2 Conv+SiLU layers, a 1x1 box head, and YOLOv8's
# anchor generation as ultralytics exports it: Range(0, Shape(x)[2] / 8) on int64, Range(0.0, Cast(Shape(f)[3],
# float), 1.0) on floats, + 0.5, * stride, meshgrid by Unsqueeze, Concat(Shape(sy), Shape(sx)) and Expand, Reshape
# [-1, 2], ConstantOfShape [h*w, 1] of the stride, Tile by [1, h - 1 + 1], dist2bbox) builds with a dynamic H/W
# profile, runs at three sizes (one with 72 anchor rows, longer than a shape value) with onnxruntime's answers, and
# refuses a size outside it.
#
# usage: tests/cli/test_dynamic_anchors.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_dyn_anchors.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_dynamic_anchors: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

"$py" - "$work" <<'PY' || fail "writing the model and inputs"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(26)
F = TensorProto.FLOAT
inits = []
def init(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name
def N(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, name=outs[0] + "_n", **kw)
nodes = []
c_in = 3
for i, c in enumerate((8, 16, 16)):  # backbone: stride 8 overall, SiLU written as x * Sigmoid(x)
    init(f"w{i}", (rng.standard_normal((c, c_in, 3, 3)) / np.sqrt(9 * c_in)).astype(np.float32))
    init(f"b{i}", (rng.standard_normal(c) * 0.1).astype(np.float32))
    nodes += [N("Conv", ["x" if i == 0 else f"a{i - 1}", f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[3, 3],
                strides=[2, 2], pads=[1, 1, 1, 1]),
              N("Sigmoid", [f"c{i}"], [f"s{i}"]), N("Mul", [f"c{i}", f"s{i}"], [f"a{i}"])]
    c_in = c
init("wh", (rng.standard_normal((4, 16, 1, 1)) * 0.25).astype(np.float32))
for name, v in (("shape_b4", [1, 4, -1]), ("ax0", [0]), ("ax1", [1]), ("axm1", [-1]), ("shape_p2", [-1, 2])):
    init(name, np.array(v, np.int64))
for name, v in (("i2", 2), ("i3", 3), ("stride_i", 8), ("zero", 0), ("one", 1)):
    init(name, np.array(v, np.int64))
for name, v in (("zero_f", 0.0), ("one_f", 1.0), ("half", 0.5), ("stride_f", 8.0)):
    init(name, np.array(v, np.float32))
init("stride_row", np.array([[8.0]], np.float32))
nodes += [N("Conv", ["a2", "wh"], ["dist"], kernel_shape=[1, 1]), N("Relu", ["dist"], ["distr"]),
          N("Reshape", ["distr", "shape_b4"], ["dflat"]), N("Transpose", ["dflat"], ["dt"], perm=[0, 2, 1]),
          # h = Shape(x)[2] / 8 (int64 Div), w = Shape(a2)[3]; Range on int64 and on float
          N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "i2"], ["xh"]), N("Div", ["xh", "stride_i"], ["h"]),
          N("Shape", ["a2"], ["fs"]), N("Gather", ["fs", "i3"], ["w"]),
          N("Range", ["zero", "h", "one"], ["ry"]), N("Cast", ["ry"], ["ryf"], to=F),
          N("Cast", ["w"], ["wf"], to=F), N("Range", ["zero_f", "wf", "one_f"], ["rxf"]),
          N("Add", ["ryf", "half"], ["sy0"]), N("Add", ["rxf", "half"], ["sx0"]),
          N("Mul", ["sy0", "stride_f"], ["sy"]), N("Mul", ["sx0", "stride_f"], ["sx"]),
          # meshgrid(sy, sx, indexing="ij") -> stack((sx, sy), -1).view(-1, 2)
          N("Unsqueeze", ["sy", "ax1"], ["sy2"]), N("Unsqueeze", ["sx", "ax0"], ["sx2"]),
          N("Shape", ["sy"], ["h1"]), N("Shape", ["sx"], ["wd1"]),  # torch's meshgrid: Shape of the Range outputs
          N("Concat", ["h1", "wd1"], ["hw"], axis=0),
          N("Expand", ["sy2", "hw"], ["gy"]), N("Expand", ["sx2", "hw"], ["gx"]),
          N("Unsqueeze", ["gx", "axm1"], ["gx3"]), N("Unsqueeze", ["gy", "axm1"], ["gy3"]),
          N("Concat", ["gx3", "gy3"], ["grid"], axis=-1), N("Reshape", ["grid", "shape_p2"], ["anchors"]),
          # torch.full((h * w, 1), stride) as ConstantOfShape; a Tile whose repeats are h - 1 + 1
          N("Mul", ["h", "w"], ["hw_n"]), N("Unsqueeze", ["hw_n", "ax0"], ["hw_n1"]),
          N("Concat", ["hw_n1", "ax1"], ["st_shape"], axis=0),
          N("ConstantOfShape", ["st_shape"], ["strides"], value=numpy_helper.from_array(np.array([8.0], np.float32))),
          N("Sub", ["h", "one"], ["hm1"]), N("Add", ["hm1", "one"], ["h_again"]),
          N("Unsqueeze", ["h_again", "ax0"], ["h_again1"]), N("Concat", ["ax1", "h_again1"], ["tile_rep"], axis=0),
          N("Tile", ["stride_row", "tile_rep"], ["tiled"]),
          # dist2bbox: (anchors - lt, anchors + rb) * strides
          N("Split", ["dt"], ["lt", "rb"], axis=2, num_outputs=2),
          N("Sub", ["anchors", "lt"], ["x1y1"]), N("Add", ["anchors", "rb"], ["x2y2"]),
          N("Concat", ["x1y1", "x2y2"], ["box"], axis=2), N("Mul", ["box", "strides"], ["boxes"])]
g = helper.make_graph(nodes, "anchors", [helper.make_tensor_value_info("x", F, [1, 3, "H", "W"])],
                      [helper.make_tensor_value_info("boxes", F, [1, "N", 4]),
                       helper.make_tensor_value_info("anchors", F, ["N", 2]),
                       helper.make_tensor_value_info("tiled", F, [1, "h"])], inits)
m = helper.make_model(g, ir_version=9, opset_imports=[helper.make_opsetid("", 18)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, f"{work}/anchors.onnx")
for hh, ww in ((64, 64), (96, 160), (576, 320), (704, 64)):
    np.save(f"{work}/x_{hh}x{ww}.npy", rng.standard_normal((1, 3, hh, ww)).astype(np.float32))
PY

compare() { "$py" "$repo/tests/cli/ort_compare.py" "$@"; } # MODEL OUTDIR INPUT=FILE...: as onnxruntime

"$tailcut" build "$work/anchors.onnx" -o "$work/a.plan" --tactics-fixed --min-shapes x:1x3x32x32 \
  --opt-shapes x:1x3x96x128 --max-shapes x:1x3x640x640 >"$work/log.txt" 2>&1 ||
  { cat "$work/log.txt" >&2; fail "build with a dynamic H/W profile"; }
for s in 64x64 96x160 576x320; do
  mkdir -p "$work/o$s"
  "$tailcut" run "$work/a.plan" --input "x=$work/x_$s.npy" --output-dir "$work/o$s" >/dev/null || fail "run at $s"
  compare "$work/anchors.onnx" "$work/o$s" "x=$work/x_$s.npy" || fail "outputs at $s differ from onnxruntime's"
done
# The float Range is shape arithmetic, evaluated when the input shape is set.
"$tailcut" inspect "$work/a.plan" >"$work/inspect.txt" 2>&1 || fail "inspect a.plan"
grep -qE "^[0-9]+ +wf_n +Cast .*\(at reshape\)" "$work/inspect.txt" ||
  { cat "$work/inspect.txt" >&2; fail "Cast of w"; }

if "$tailcut" run "$work/a.plan" --input "x=$work/x_704x64.npy" --output-dir "$work" >"$work/out.txt" 2>&1; then
  fail "accepted an input outside the profile"
fi
grep -qF "no profile of the engine takes these shapes" "$work/out.txt" || { cat "$work/out.txt" >&2; fail "refusal"; }

echo "test_dynamic_anchors: all passed"
