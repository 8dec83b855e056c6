#!/usr/bin/env bash
# test_isa_cap.sh - the ISA paths end to end: a plan built with AVX-512 tactics is refused with a
# clear error when TAILCUT_MAX_ISA caps the machine below it, and plans built under the caps
# avx2 and ref (portable kernels) run and agree with the uncapped plan. The layout pass: an AVX-512
# plan built with --tactics-fixed keeps blocked NCHW16c steps and `inspect` counts its reorders; one
# capped to avx2 keeps NCHW8c steps instead, one capped to ref and --disable-pass layout have none;
# all agree with the uncapped plan.
#
# usage: tests/cli/test_isa_cap.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_isa_cap.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_isa_cap: FAIL: $*" >&2; exit 1; }

"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 16 --blocks 1,1,1,1 --image 32 >/dev/null
"$py" "$repo/tools/modelgen/modelgen.py" bert_base -o "$work/b.onnx" --layers 1 --hidden 64 --heads 2 --ffn 128 \
  --vocab 100 >/dev/null
"$py" - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]; rng = np.random.default_rng(3)
np.save(f"{w}/x.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
np.save(f"{w}/ids.npy", rng.integers(1, 100, (1, 16)).astype(np.int64))
m = np.ones((1, 16), np.int64); m[0, 12:] = 0; np.save(f"{w}/mask.npy", m)
PY
run_both() { # $1 = cap ("" = none), $2 = output dir
  local cap=$1 out=$2
  TAILCUT_MAX_ISA=$cap "$tailcut" build "$work/r.onnx" -o "$work/r_$out.plan" --batch 1 >/dev/null
  TAILCUT_MAX_ISA=$cap "$tailcut" run "$work/r_$out.plan" --input "$work/x.npy" -o "$work/$out/r" >/dev/null
  TAILCUT_MAX_ISA=$cap "$tailcut" build "$work/b.onnx" -o "$work/b_$out.plan" \
    --shapes input_ids:1x16,attention_mask:1x16 >/dev/null
  TAILCUT_MAX_ISA=$cap "$tailcut" run "$work/b_$out.plan" --input input_ids="$work/ids.npy" \
    --input attention_mask="$work/mask.npy" -o "$work/$out/b" >/dev/null
}
run_both "" full || fail "uncapped build/run"
run_both avx2 avx2 || fail "build/run under TAILCUT_MAX_ISA=avx2"
run_both ref ref || fail "build/run under TAILCUT_MAX_ISA=ref"
if grep -q avx512 <("$tailcut" inspect "$work/r_full.plan"); then
  if TAILCUT_MAX_ISA=avx2 "$tailcut" run "$work/r_full.plan" --input "$work/x.npy" -o "$work/refused" 2>"$work/err"; then
    fail "an AVX-512 plan ran under TAILCUT_MAX_ISA=avx2"
  fi
  grep -q "rebuild the plan" "$work/err" || fail "no clear error: $(cat "$work/err")"
fi
grep -q avx512 <("$tailcut" inspect "$work/r_avx2.plan") && fail "the avx2-capped plan uses AVX-512 tactics"
"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r16.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 >/dev/null
layout_case() { # $1 = name, $2 = cap, then build options; prints the plan's reorder and blocked-step counts
  local name=$1 cap=$2; shift 2
  TAILCUT_MAX_ISA=$cap "$tailcut" build "$work/r16.onnx" -o "$work/l_$name.plan" --batch 1 "$@" >/dev/null
  TAILCUT_MAX_ISA=$cap "$tailcut" run "$work/l_$name.plan" --input "$work/x.npy" -o "$work/l_$name" >/dev/null
  TAILCUT_MAX_ISA=$cap "$tailcut" inspect "$work/l_$name.plan" --json |
    "$py" -c 'import json,sys; j=json.load(sys.stdin); print(j["reorders"], sum(s["layout"] in ("nchw16c", "nchw8c") for s in j["steps"]))'
}
read -r reorders blocked < <(layout_case fixed "" --tactics-fixed) || fail "layout: fixed build"
if grep -q avx512 <("$tailcut" inspect "$work/r_full.plan"); then
  [ "$reorders" -ge 1 ] && [ "$blocked" -ge 8 ] || fail "layout: $reorders reorders, $blocked NCHW16c steps"
  grep -q "layout reorders" <("$tailcut" inspect "$work/l_fixed.plan") || fail "inspect does not count reorders"
fi
read -r reorders blocked < <(layout_case off "" --tactics-fixed --disable-pass layout) || fail "layout: off"
[ "$reorders$blocked" = "00" ] || fail "--disable-pass layout left $reorders reorders, $blocked blocked steps"
read -r reorders blocked < <(layout_case capped avx2 --tactics-fixed) || fail "layout: capped"
if grep -q "ISA.*avx2" <("$tailcut" inspect "$work/r_avx2.plan"); then
  [ "$reorders" -ge 1 ] && [ "$blocked" -ge 8 ] || fail "layout capped to avx2: $reorders reorders, $blocked NCHW8c steps"
  if grep -q nchw16c <(TAILCUT_MAX_ISA=avx2 "$tailcut" inspect "$work/l_capped.plan"); then
    fail "the avx2-capped plan has NCHW16c steps"
  fi
fi
read -r reorders blocked < <(layout_case ref ref --tactics-fixed) || fail "layout: ref"
[ "$reorders$blocked" = "00" ] || fail "the ref-capped plan has $reorders reorders, $blocked blocked steps"
"$py" - "$work" <<'PY' || fail "layout: outputs differ"
import sys, numpy as np
w = sys.argv[1]
ref = np.load(f"{w}/l_off/logits.npy")
for name in ("fixed", "capped", "ref"):
    got = np.load(f"{w}/l_{name}/logits.npy")
    err = float(np.max(np.abs(got - ref))); tol = 1e-3 * max(1.0, float(np.max(np.abs(ref))))
    print(f"test_isa_cap: layout {name} vs NCHW: max abs err {err:.3g} (tol {tol:.3g})")
    if not err <= tol: sys.exit(1)
PY
"$py" - "$work" <<'PY' || fail "outputs differ between ISA paths"
import sys, numpy as np
w = sys.argv[1]
for out in ("r/logits", "b/last_hidden_state"):
    ref = np.load(f"{w}/full/{out}.npy")
    for cap in ("avx2", "ref"):
        got = np.load(f"{w}/{cap}/{out}.npy")
        err = float(np.max(np.abs(got - ref))); tol = 1e-3 * max(1.0, float(np.max(np.abs(ref))))
        print(f"test_isa_cap: {out} {cap} vs avx512: max abs err {err:.3g} (tol {tol:.3g})")
        if not err <= tol: sys.exit(1)
PY
echo "test_isa_cap: all passed"
