#!/usr/bin/env bash
# test_bench_cli.sh - smoke test of `tailcut bench`, bench/compare.py (and its binding of numpy arrays
# that are not packed row-major: compare_bind.py) and bench/fp32_matrix.py (that they run and write
# well-formed output; not a timing test: no figure is checked against a bound).
#
# usage: tests/cli/test_bench_cli.sh [BUILD_DIR] [PYTHON]
#   BUILD_DIR holds the tailcut binary and libtailcut.so (default: build)
#   PYTHON has onnx, onnxruntime and numpy (default: $PYTHON, else .venv/bin/python, else python3)
# Exits non-zero on the first failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-${PYTHON:-}}
if [ -z "$py" ]; then
  if [ -x "$repo/.venv/bin/python" ]; then py="$repo/.venv/bin/python"; else py=python3; fi
fi
tailcut="$build/tailcut"
lib="$build/libtailcut.so"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_bench_cli.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "test_bench_cli: FAIL: $*" >&2; exit 1; }
step() { echo "test_bench_cli: $*"; }

[ -x "$tailcut" ] || fail "no tailcut binary in $build"
[ -f "$lib" ] || fail "no libtailcut.so in $build"

step "generating tiny models"
"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 16 --blocks 1,1,1,1 --image 32 \
  --classes 10 >/dev/null || fail "modelgen resnet50"
"$py" "$repo/tools/modelgen/modelgen.py" bert_base -o "$work/b.onnx" --layers 1 --hidden 32 --heads 2 --ffn 64 \
  --vocab 200 --max-positions 32 >/dev/null || fail "modelgen bert_base"

# Checks a bench --json file: every key, sample count, ordered percentiles; $3 = 1 when steps must be listed.
check_json() {
  "$py" - "$1" "$2" "$3" <<'EOF' || fail "bench JSON $1"
import json, sys
path, samples, want_steps = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
j = json.load(open(path))
keys = ["samples", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "mean_ms", "min_ms", "max_ms", "throughput_per_s",
        "load_ms", "cv", "steps"]
missing = [k for k in keys if k not in j]
assert not missing, f"missing keys {missing}"
assert j["samples"] == samples, f"samples {j['samples']} != {samples}"
assert 0 < j["min_ms"] <= j["p50_ms"] <= j["p90_ms"] <= j["p99_ms"] <= j["p999_ms"] <= j["max_ms"], "percentile order"
assert j["min_ms"] <= j["mean_ms"] <= j["max_ms"], "mean outside [min, max]"
assert j["throughput_per_s"] > 0 and j["load_ms"] >= 0 and j["cv"] >= 0
assert isinstance(j["steps"], list) and (len(j["steps"]) > 0) == want_steps, "steps"
for s in j["steps"]:
    assert {"name", "ops", "tactic", "mean_ms", "percent"} <= set(s), f"step keys {sorted(s)}"
EOF
}

step "bench .onnx with --profile --json --trace"
out=$("$tailcut" bench "$work/r.onnx" --batch 1 --iterations 20 --warmup 2 --profile --json "$work/r.json" \
  --trace "$work/r.trace") || fail "tailcut bench r.onnx"
for want in "samples: 20" "P50" "P99.9" "throughput" "not meaningful" "per-step profile" "total of"; do
  grep -q -- "$want" <<<"$out" || fail "bench output lacks '$want'"
done
check_json "$work/r.json" 20 1
"$py" - "$work/r.trace" <<'EOF' || fail "trace $work/r.trace"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"]
runs = [e for e in x if e.get("cat") == "run"]
steps = [e for e in x if e.get("cat") == "step"]
assert len(runs) == 20, f"{len(runs)} run events"
assert steps, "no step events"
for e in x:
    assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
    assert isinstance(e["name"], str) and "pid" in e and "tid" in e
last = runs[-1]
inside = [s for s in steps if last["ts"] <= s["ts"] <= last["ts"] + last["dur"]]
assert inside, "no step inside the last run"
EOF

step "bench .plan and int64 inputs"
"$tailcut" build "$work/b.onnx" -o "$work/b.plan" --shapes input_ids:2x8,attention_mask:2x8 >/dev/null \
  || fail "tailcut build b.onnx"
out=$("$tailcut" bench "$work/b.plan" --iterations 20 --warmup 1 --json "$work/b.json") || fail "tailcut bench b.plan"
grep -q "ids in \[1,100)" <<<"$out" || fail "bench output does not describe the int64 ids"
check_json "$work/b.json" 20 0
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["build_ms"] is None and j["batch"] == 2' \
  "$work/b.json" || fail "plan JSON: build_ms should be null and batch 2"

step "bench --duration"
"$tailcut" bench "$work/r.onnx" --duration 0.2 --warmup 1 --idle-ms 1 >/dev/null || fail "bench --duration"

step "bench usage errors"
set +e
"$tailcut" bench >/dev/null 2>&1; rc1=$?
"$tailcut" bench "$work/r.onnx" --iterations 0 >/dev/null 2>&1; rc2=$?
"$tailcut" bench "$work/b.onnx" >/dev/null 2>&1; rc3=$?
set -e
[ "$rc1" = 2 ] || fail "bench without a model: exit $rc1, want 2"
[ "$rc2" = 2 ] || fail "bench --iterations 0: exit $rc2, want 2"
[ "$rc3" != 0 ] || fail "bench of a model with a dynamic sequence and no --shapes succeeded"

step "bench/compare.py"
"$py" "$repo/bench/compare.py" "$work/r.onnx" --threads 1 --batch 1 --iterations 10 --warmup 2 \
  --tailcut-lib "$lib" --json "$work/cmp.json" >"$work/cmp.txt" || { cat "$work/cmp.txt"; fail "compare.py r.onnx"; }
grep -q "ratio tailcut/onnxruntime" "$work/cmp.txt" || fail "compare.py output lacks the ratio line"
"$py" - "$work/cmp.json" <<'EOF' || fail "compare JSON"
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("onnxruntime", "tailcut", "ratio_p50", "ratio_p99", "load_ms", "outputs"):
    assert k in j, k
for side in ("onnxruntime", "tailcut"):
    assert j[side]["samples"] == 10
    assert all(k in j[side] for k in ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "mean_ms"))
assert j["load_ms"]["tailcut_build"] > 0 and j["load_ms"]["tailcut_plan_load"] > 0
e = j["outputs"]["logits"]
assert e["max_abs_error"] <= 1e-3 * max(1.0, e["max_abs_ref"]), f"outputs differ: {e}"
EOF
"$py" "$repo/bench/compare.py" "$work/b.onnx" --threads 1 --shapes input_ids:1x8,attention_mask:1x8 --iterations 10 \
  --warmup 1 --tailcut-lib "$lib" >/dev/null || fail "compare.py b.onnx (int64 inputs)"

"$py" "$repo/tests/cli/compare_bind.py" "$lib" "$work" || fail "compare.py binds arrays that are not packed row-major"

step "bench/fp32_matrix.py"
mkdir -p "$work/matrix" && cp "$work/r.onnx" "$work/matrix/resnet50.onnx"
"$py" "$repo/bench/fp32_matrix.py" "$work/matrix" --models resnet50,mobilenet_v2 --threads 1 --iterations 6 \
  --warmup 1 --profile-iterations 3 --ghz 2.0 --tailcut "$tailcut" --tailcut-lib "$lib" --json "$work/matrix.json" \
  >"$work/matrix.txt" 2>&1 || { cat "$work/matrix.txt"; fail "fp32_matrix.py"; }
grep -q "^| CPU | ResNet-50 | MobileNetV2 |" "$work/matrix.txt" && grep -q "no mobilenet_v2.onnx" "$work/matrix.txt" ||
  { cat "$work/matrix.txt"; fail "fp32_matrix.py: table or the absent model"; }
"$py" - "$work/matrix.json" <<'EOF' || fail "fp32_matrix JSON"
import json, sys
j = json.load(open(sys.argv[1]))
r = j["models"]["resnet50"]
assert r["ratio_p50"] > 0 and r["ratio_p99"] > 0
assert j["peak_gflops"] == 1 * 2 * j["lanes"] * 2 * 2.0, j["peak_gflops"]
conv = [f for t, f in r["families"].items() if "conv" in t]
assert conv and all(f["gflop"] > 0 and f["ms"] > 0 and 0 < f["of_peak"] for f in conv), r["families"]
EOF
"$py" "$repo/bench/fp32_matrix.py" "$work/nowhere" >/dev/null 2>&1 && fail "fp32_matrix.py on a missing folder succeeded"
"$py" "$repo/bench/fp32_matrix.py" "$work/matrix" --models vgg >/dev/null 2>&1 && fail "fp32_matrix.py --models vgg succeeded"

step "bench/plan_ab.py"
"$tailcut" build "$work/r.onnx" -o "$work/r_a.plan" --batch 1 --tactics-fixed >/dev/null || fail "build r_a.plan"
"$tailcut" build "$work/r.onnx" -o "$work/r_b.plan" --batch 1 --tactics-fixed --disable-pass fuse_activation \
  >/dev/null || fail "build r_b.plan"
"$py" "$repo/bench/plan_ab.py" "$work/r_a.plan" "$work/r_b.plan" --tailcut-lib "$lib" --iterations 6 --warmup 1 \
  >"$work/ab.txt" || { cat "$work/ab.txt"; fail "plan_ab.py"; }
grep -q "6 interleaved runs" "$work/ab.txt" && grep -q "median of pair ratios" "$work/ab.txt" || fail "plan_ab.py output"
"$py" "$repo/bench/plan_ab.py" "$work/r_a.plan" "$work/b.plan" --tailcut-lib "$lib" --iterations 2 >/dev/null 2>&1 &&
  fail "plan_ab.py on plans of different models (inputs) succeeded"
"$py" "$repo/bench/plan_ab.py" "$work/r_a.plan" "$work/r_b.plan" --tailcut-lib "$lib" --iterations 0 >/dev/null 2>&1 &&
  fail "plan_ab.py --iterations 0 succeeded"

echo "test_bench_cli: all passed"
