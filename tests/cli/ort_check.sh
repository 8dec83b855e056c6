# ort_check.sh - helpers sourced by CLI tests that compare tailcut with onnxruntime (they need $py, $work and fail()):
#   compare MODEL OUTDIR INPUT=FILE...  the .npy outputs in OUTDIR equal onnxruntime's on MODEL with those inputs
#                                        (same dtype and shape; floats within 1e-5 x (1 + max |expected|), ints exactly)
#   refused WANT COMMAND...             the command exits non-zero with WANT in its output
compare() {
  "$py" - "$@" <<'PY'
import sys
import numpy as np
import onnxruntime as ort
model, out = sys.argv[1], sys.argv[2]
feeds = {kv.split("=")[0]: np.load(kv.split("=", 1)[1]) for kv in sys.argv[3:]}
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
for o, want in zip(sess.get_outputs(), sess.run(None, feeds)):
    got = np.load(f"{out}/{o.name}.npy")
    assert got.dtype == want.dtype and got.shape == want.shape, (o.name, got.dtype, got.shape, want.dtype, want.shape)
    if np.issubdtype(want.dtype, np.floating):
        err = np.abs(got - want).max() if want.size else 0.0
        assert err <= 1e-5 * (1 + np.abs(want).max()), f"{o.name}: max error {err}"
    else:
        assert np.array_equal(got, want), f"{o.name}: {got} != {want}"
PY
}

refused() {
  local want=$1; shift
  if "$@" >"$work/out.txt" 2>&1; then fail "accepted: $*"; fi
  grep -qF -- "$want" "$work/out.txt" || { cat "$work/out.txt" >&2; fail "no '$want' for: $*"; }
}
