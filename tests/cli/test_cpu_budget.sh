#!/usr/bin/env bash
# test_cpu_budget.sh - default thread counts follow the CPUs the process may use (issue 30): under `taskset -c 0`
# `tailcut bench` runs 1 thread and reports "cpu_budget": 1 from "affinity" in --json (and inspect --json says so);
# an explicit --threads 2 still wins; a cgroup quota of half a CPU (a fixture under TAILCUT_CGROUP_ROOT) gives a
# budget of 1 from "cgroup", and a "max" quota leaves the CPUs the process has.
#
# usage: tests/cli/test_cpu_budget.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_cpu_budget.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_cpu_budget: FAIL: $*" >&2; exit 1; }
[ -x "$tailcut" ] || fail "no tailcut binary in $build"
command -v taskset >/dev/null || fail "taskset (util-linux) is missing"
online=$(getconf _NPROCESSORS_ONLN) # the machine's
avail=$(nproc)                      # the CPUs this process may use (its affinity)

"$py" - "$work" <<'PY' || fail "writing the model"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
w = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "budget",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 64])], [numpy_helper.from_array(w, "W")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), f"{sys.argv[1]}/m.onnx")
PY

# field FILE KEY: a top-level field of a JSON file
field() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
want() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }

taskset -c 0 "$tailcut" bench "$work/m.onnx" --iterations 20 --warmup 2 --json "$work/a.json" >"$work/a.out" ||
  fail "bench under taskset -c 0"
want "threads under taskset -c 0" "$(field "$work/a.json" threads)" 1
want "cpu_budget under taskset -c 0" "$(field "$work/a.json" cpu_budget)" 1
want "budget source" "$(field "$work/a.json" cpu_budget_source)" "$([ "$online" -gt 1 ] && echo affinity || echo online)"
grep -q "threads: 1 (CPU budget 1 from" "$work/a.out" || fail "bench's text report lacks the budget"

taskset -c 0 "$tailcut" bench "$work/m.onnx" --threads 2 --iterations 20 --warmup 2 --json "$work/b.json" >/dev/null ||
  fail "bench --threads 2"
want "explicit --threads" "$(field "$work/b.json" threads)" 2
want "budget with --threads" "$(field "$work/b.json" cpu_budget)" 1

# A plan built without --threads runs on the budget of the process that loads it.
"$tailcut" build "$work/m.onnx" -o "$work/m.plan" --tactics-fixed >/dev/null || fail "build"
taskset -c 0 "$tailcut" inspect "$work/m.plan" --json >"$work/i.json" || fail "inspect --json"
want "inspect cpu_budget" "$(field "$work/i.json" cpu_budget)" 1
want "inspect threads (the plan's: the budget)" "$(field "$work/i.json" threads)" 0

# A cgroup v2 quota of half a CPU (fixture): a budget of 1 from the cgroup, wherever it runs.
mkdir -p "$work/cg/proc/self" "$work/cg/sys/fs/cgroup/pod"
echo "0::/pod" >"$work/cg/proc/self/cgroup"
echo "50000 100000" >"$work/cg/sys/fs/cgroup/pod/cpu.max"
TAILCUT_CGROUP_ROOT="$work/cg" "$tailcut" bench "$work/m.plan" --iterations 20 --warmup 2 --json "$work/c.json" \
  >/dev/null || fail "bench with a cgroup quota"
want "threads under a 0.5-CPU quota" "$(field "$work/c.json" threads)" 1
if [ "$avail" -gt 1 ]; then want "quota source" "$(field "$work/c.json" cpu_budget_source)" cgroup; fi
# "max": no quota.
echo "max 100000" >"$work/cg/sys/fs/cgroup/pod/cpu.max"
TAILCUT_CGROUP_ROOT="$work/cg" "$tailcut" bench "$work/m.plan" --iterations 20 --warmup 2 --json "$work/d.json" \
  >/dev/null || fail "bench with cpu.max 'max'"
want "threads without a quota" "$(field "$work/d.json" threads)" "$avail"

echo "test_cpu_budget: all passed"
