#!/usr/bin/env bash
# test_input_dtype.sh - an input file whose dtype is not the model input's is refused, never reinterpreted (issue 26):
# float64 and int64 .npy files (and a float64 .pb) for a float32 input make `tailcut run` (built .onnx, plan,
# --reference), `tailcut compare` (engine and reference sides), `tailcut calibrate` and `tailcut bench` / `build`
# with --int8 --calib-data exit non-zero with a message naming the input, both dtypes and the cast; the same commands
# on float32 files still work, and `run` gives y = relu(x) @ W as numpy computes it.
#
# usage: tests/cli/test_input_dtype.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_input_dtype.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_input_dtype: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"

# m.onnx: y = MatMul(Relu(x), W), x float32 [2, 8], W a constant: calibration observes Relu's output, not the file's
# bytes, so only the dtype check stands between a float64 file and a garbage histogram. Samples in f32/, f64/, i64/.
"$py" - "$work" <<'EOF' || fail "writing the model and inputs"
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
rng = np.random.default_rng(0)
w = rng.standard_normal((8, 4)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["h"], name="relu"), helper.make_node("MatMul", ["h", "W"], ["y"], name="mm")],
    "dtype_check", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [numpy_helper.from_array(w, "W")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, f"{work}/m.onnx")
x = (rng.standard_normal((2, 8)) * 4).astype(np.float32)
np.save(f"{work}/x32.npy", x)
np.save(f"{work}/x64.npy", x.astype(np.float64))
np.save(f"{work}/xi64.npy", np.round(x).astype(np.int64))
with open(f"{work}/x64.pb", "wb") as f:
    f.write(numpy_helper.from_array(x.astype(np.float64), "x").SerializeToString())
np.save(f"{work}/want.npy", np.maximum(x, 0) @ w)
for d, t in (("f32", np.float32), ("f64", np.float64), ("i64", np.int64)):
    os.makedirs(f"{work}/{d}")
    for k in range(3):
        np.save(f"{work}/{d}/x.{k}.npy", (rng.standard_normal((2, 8)) * 4).astype(t))
EOF
"$tailcut" build "$work/m.onnx" -o "$work/m.plan" --tactics-fixed >/dev/null || fail "tailcut build m.onnx"

# No sanitizer report in stderr (a refusal must be clean too: an ASan build exits non-zero on one as well).
clean() {
  if grep -qE "AddressSanitizer|LeakSanitizer|runtime error" "$work/err"; then fail "tailcut $*: $(cat "$work/err")"; fi
}
# refused GOT CMD...: exit non-zero, and stderr names the input, both dtypes and the cast.
refused() {
  local got=$1; shift
  local rc=0
  "$tailcut" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" != 0 ] || fail "accepted (exit 0): tailcut $*: $(cat "$work/out")"
  clean "$@"
  for want in "input 'x'" "$got" "float32" "cast it (numpy: a.astype(np.float32))"; do
    grep -qF -- "$want" "$work/err" || fail "tailcut $*: exit $rc but stderr lacks '$want': $(cat "$work/err")"
  done
  echo "ok refused (exit $rc): tailcut $* -> $(head -c 240 "$work/err" | tr '\n' ' ')"
}
works() {
  "$tailcut" "$@" >"$work/out" 2>"$work/err" || fail "tailcut $*: $(cat "$work/err")"
  clean "$@"
  echo "ok: tailcut $*"
}

for f in x64.npy:float64 xi64.npy:int64 x64.pb:float64; do
  file=${f%%:*} dt=${f##*:}
  refused "$dt" run "$work/m.onnx" --input "x=$work/$file" --output-dir "$work/o"
  refused "$dt" run "$work/m.plan" --input "$work/$file" --output-dir "$work/o"
  refused "$dt" run "$work/m.onnx" --reference --input "x=$work/$file" --output-dir "$work/o"
done
for d in f64:float64 i64:int64; do
  dir=$work/${d%%:*} dt=${d##*:}
  refused "$dt" compare "$work/m.onnx" "$work/m.plan" --data "$dir" --tactics-fixed
  refused "$dt" compare "$work/m.onnx" "$work/m.plan" --reference-a --data "$dir"
  refused "$dt" calibrate "$work/m.onnx" --data "$dir" -o "$work/c.cache"
  refused "$dt" bench "$work/m.onnx" --int8 --calib-data "$dir" --iterations 5 --warmup 1 --tactics-fixed
  refused "$dt" build "$work/m.onnx" --int8 --calib-data "$dir" -o "$work/q.plan" --tactics-fixed
done

# float32 files still work, and run computes what numpy does.
for model in m.onnx m.plan; do
  rm -rf "$work/o"
  works run "$work/$model" --input "x=$work/x32.npy" --output-dir "$work/o"
  "$py" -c 'import sys, numpy as np; y, w = np.load(sys.argv[1]), np.load(sys.argv[2]); sys.exit(0 if y.dtype == np.float32 and np.allclose(y, w, rtol=1e-5, atol=1e-5) else 1)' \
    "$work/o/y.npy" "$work/want.npy" || fail "run $model: y differs from numpy"
done
works run "$work/m.onnx" --reference --input "x=$work/x32.npy" --output-dir "$work/o"
works compare "$work/m.onnx" "$work/m.plan" --data "$work/f32" --tactics-fixed
works compare "$work/m.onnx" "$work/m.plan" --reference-a --data "$work/f32"
works calibrate "$work/m.onnx" --data "$work/f32" -o "$work/c.cache"
works bench "$work/m.onnx" --int8 --calib-data "$work/f32" --iterations 5 --warmup 1 --tactics-fixed
echo "test_input_dtype: all passed"
