#!/usr/bin/env bash
# test_cli_options.sh - the CLI's option errors: every malformed --shapes / --min/opt/max-shapes / --threads /
# --batch / --disable-pass value makes `tailcut build` exit non-zero with a message naming the problem, writes
# no plan, and a valid profile given the same way builds.
#
# usage: tests/cli/test_cli_options.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_cli_options.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_cli_options: FAIL: $*" >&2; exit 1; }
"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 16 --blocks 1,1,1,1 --image 32 >/dev/null

refused() { # $1 = words expected in stderr, rest = build options
  local want=$1; shift
  rm -f "$work/p.plan"
  if "$tailcut" build "$work/r.onnx" -o "$work/p.plan" --tactics-fixed "$@" 2>"$work/err"; then
    fail "accepted: $*"
  fi
  grep -q -- "$want" "$work/err" || fail "'$*': stderr lacks '$want': $(cat "$work/err")"
  [ ! -e "$work/p.plan" ] || fail "'$*' wrote a plan"
  echo "ok refused: $* -> $(head -c 160 "$work/err" | tr '\n' ' ')"
}
refused "bad shape spec" --shapes "input"
refused "rank" --shapes "input:"
refused "bad dims" --shapes "input:1x3x32xZ"
refused "bad dims" --shapes "input:1x3x-32x32"
refused "bad dims" --shapes "input:1x3x32x32x99999999999999999999"
refused "not a model input" --shapes "nope:1x3x32x32"
refused "together" --min-shapes "input:1x3x32x32"
refused "together" --min-shapes "input:1x3x32x32" --opt-shapes "input:2x3x32x32"
refused "min <= opt <= max" --min-shapes "input:4x3x32x32" --opt-shapes "input:2x3x32x32" --max-shapes "input:8x3x32x32"
refused "--threads" --threads -1
refused "--threads" --threads 99999
refused "--batch" --batch 0
refused "unknown pass" --disable-pass no_such_pass
refused "needs a value" --shapes
"$tailcut" build "$work/r.onnx" -o "$work/ok.plan" --tactics-fixed --min-shapes "input:1x3x32x32" \
  --opt-shapes "input:2x3x32x32" --max-shapes "input:4x3x32x32" >/dev/null || fail "valid profile refused"
# (into a file first: with pipefail, grep -q leaving early makes a longer inspect output die of SIGPIPE)
"$tailcut" inspect "$work/ok.plan" >"$work/inspect.txt"
grep -q "4x3x32x32" "$work/inspect.txt" || fail "inspect lacks the profile's max shape"
# run: an input given twice is refused (the second would silently win), named or not
"$py" -c "import numpy as np; np.save('$work/x.npy', np.ones((1, 3, 32, 32), np.float32))"
for args in "--input input=$work/x.npy --input input=$work/x.npy" "--input $work/x.npy --input $work/x.npy"; do
  # shellcheck disable=SC2086
  if "$tailcut" run "$work/r.onnx" $args --output-dir "$work/out" 2>"$work/err"; then fail "run accepted: $args"; fi
  grep -q "given twice" "$work/err" || fail "run $args: stderr lacks 'given twice': $(cat "$work/err")"
  echo "ok refused: run $args"
done
# run: a corrupt .npy is reported as a bad .npy, not as a bad ONNX TensorProto
printf 'not numpy at all' > "$work/bad.npy"
if "$tailcut" run "$work/r.onnx" --input "input=$work/bad.npy" --output-dir "$work/out" 2>"$work/err"; then fail "corrupt .npy accepted"; fi
grep -q "not a .npy file" "$work/err" || fail "corrupt .npy: $(cat "$work/err")"
echo "ok refused: a corrupt .npy -> $(head -c 120 "$work/err")"
# build names every unsupported node, grouped by op (not only the first)
"$py" - "$work/uns.onnx" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
nodes = [helper.make_node("Shrink", ["x"], ["a"], name="m1"), helper.make_node("Shrink", ["a"], ["b"], name="m2"),
         helper.make_node("Hardmax", ["b"], ["c"], name="h1")]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                      [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 3, 4, 4])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
if "$tailcut" build "$work/uns.onnx" -o "$work/u.plan" 2>"$work/err"; then fail "a model with unsupported ops built"; fi
grep -q "3 nodes of 2 ops are not supported (opset 17): Shrink x2 ('m1', 'm2'), Hardmax x1 ('h1')" "$work/err" ||
  fail "unsupported nodes not all named: $(cat "$work/err")"
echo "ok refused: $(cat "$work/err")"
echo "test_cli_options: all passed"
