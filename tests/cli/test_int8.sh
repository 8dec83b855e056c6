#!/usr/bin/env bash
# test_int8.sh - INT8 from the command line: `tailcut calibrate` with the three methods (cache files,
# --verbose ranges), `build --int8 --calib-cache` and the one-step `--calib-data`, `--layer-precision
# NAME:fp32` (and NAME:int8 with reduce range), `--accuracy-threshold` (cosine and top-1; with reduce range, 8-bit
# weights first), the INT8 plans' outputs against the FP32 plan's (cosine, top-1), a BERT-like model with
# two inputs (samples named <input>.<k>.npy), a VNNI plan refused on a CPU without VNNI
# (TAILCUT_MAX_ISA=avx512) and built there with the AVX2 INT8 variant, --export-qdq (symmetric int8 activations, uint8 with
# the engine's zero point after SiLU and HardSwish), an AVX2 INT8 plan refused without
# AVX2 (TAILCUT_MAX_ISA=ref) and built there in FP32, and the errors: --int8 without scales, an
# unknown method, another model's cache, a corrupt cache, a bad --layer-precision.
#
# usage: tests/cli/test_int8.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_int8.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_int8: FAIL: $*" >&2; exit 1; }
. "$repo/tests/cli/int8_cpu.sh" # vnni, int8

"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 >/dev/null
"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r2.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 \
  --seed 7 >/dev/null
"$py" "$repo/tools/modelgen/modelgen.py" bert_base -o "$work/b.onnx" --layers 1 --hidden 64 --heads 2 --ffn 128 \
  --vocab 100 >/dev/null
"$py" - "$work" <<'PY'
import os, sys, numpy as np
w = sys.argv[1]; rng = np.random.default_rng(5)
os.makedirs(f"{w}/cal"); os.makedirs(f"{w}/bcal"); os.makedirs(f"{w}/bvar"); os.makedirs(f"{w}/eval")
for k in range(24):
    np.save(f"{w}/cal/img_{k}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    np.save(f"{w}/bcal/input_ids.{k}.npy", rng.integers(1, 100, (1, 16)).astype(np.int64))
    m = np.ones((1, 16), np.int64); m[0, 10 + k % 6:] = 0
    np.save(f"{w}/bcal/attention_mask.{k}.npy", m)
    n = 8 + 4 * (k % 3)  # sequence lengths 8, 12, 16: one calibration engine per length
    np.save(f"{w}/bvar/input_ids.{k}.npy", rng.integers(1, 100, (1, n)).astype(np.int64))
    np.save(f"{w}/bvar/attention_mask.{k}.npy", np.ones((1, n), np.int64))
for k in range(8):
    np.save(f"{w}/eval/x{k}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
PY

# Calibration: three methods, one cache each.
for m in entropy minmax percentile; do
  "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --method $m -o "$work/$m.cache" >"$work/cal_$m.out" 2>&1 ||
    fail "calibrate --method $m: $(cat "$work/cal_$m.out")"
  head -1 "$work/$m.cache" | grep -q "^tailcut-calibration-cache 1 $m " || fail "$m cache header: $(head -1 "$work/$m.cache")"
  [ "$(wc -l <"$work/$m.cache")" -ge 10 ] || fail "$m cache has too few tensors"
done
"$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples 4 --verbose -o "$work/v.cache" >"$work/v.out" 2>&1 ||
  fail "calibrate --verbose"
grep -q "amax" "$work/v.out" && grep -q "on 4 samples" "$work/v.out" || fail "calibrate --verbose: $(cat "$work/v.out")"

# Build: FP32, INT8 from a cache (heuristic tactics: every conv INT8 where VNNI or AVX2 exists), INT8 in one step.
"$tailcut" build "$work/r.onnx" -o "$work/fp32.plan" --batch 1 >/dev/null || fail "fp32 build"
"$tailcut" build "$work/r.onnx" -o "$work/int8.plan" --batch 1 --int8 --calib-cache "$work/entropy.cache" \
  --tactics-fixed >/dev/null || fail "int8 build"
"$tailcut" build "$work/r.onnx" -o "$work/int8_tuned.plan" --batch 1 --int8 --calib-data "$work/cal" \
  --calib-method percentile --percentile 99.9 --calib-cache "$work/written.cache" >/dev/null 2>&1 ||
  fail "int8 build --calib-data"
head -1 "$work/written.cache" | grep -q " percentile " || fail "--calib-data did not write --calib-cache"
"$tailcut" build "$work/r.onnx" -o "$work/int8_fb.plan" --batch 1 --int8 --calib-cache "$work/minmax.cache" \
  --tactics-fixed --layer-precision /conv1/Conv:fp32 >/dev/null || fail "int8 build --layer-precision"
count_tactic() { "$tailcut" inspect "$1" --json | "$py" -c '
import json, sys; print(sum(x["precision"] == "int8" and x["tactic"].endswith(sys.argv[1])
                            for x in json.load(sys.stdin)["steps"]))' "$2"; }
count_int8() { "$tailcut" inspect "$1" --json | "$py" -c '
import json, sys; j = json.load(sys.stdin); s = {x["name"]: x["precision"] for x in j["steps"]}
print(sum(p == "int8" for p in s.values()), s.get(sys.argv[1], "-"))' "${2:-/conv1/Conv}"; }
read -r n8 stem < <(count_int8 "$work/int8.plan")
read -r n8fb stemfb < <(count_int8 "$work/int8_fb.plan")
if [ $int8 = 1 ]; then
  [ "$n8" -ge 6 ] && [ "$stem" = int8 ] || fail "int8 plan: $n8 INT8 steps, stem $stem"
  [ "$stemfb" = fp32 ] && [ "$n8fb" = $((n8 - 1)) ] || fail "--layer-precision: stem $stemfb, $n8fb INT8 steps"
  grep -q "int8" <("$tailcut" inspect "$work/int8.plan") || fail "inspect does not show int8"
fi
for p in fp32 int8 int8_tuned int8_fb; do
  for k in 0 1 2 3 4 5 6 7; do
    "$tailcut" run "$work/$p.plan" --input "$work/eval/x$k.npy" -o "$work/out_$p/$k" >/dev/null || fail "run $p"
  done
done
"$py" - "$work" <<'PY' || fail "INT8 outputs differ from FP32"
import sys, numpy as np
w = sys.argv[1]
for p in ("int8", "int8_tuned", "int8_fb"):
    a = np.concatenate([np.load(f"{w}/out_fp32/{k}/logits.npy").ravel() for k in range(8)])
    b = np.concatenate([np.load(f"{w}/out_{p}/{k}/logits.npy").ravel() for k in range(8)])
    cos = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    top1 = np.mean([np.load(f"{w}/out_fp32/{k}/logits.npy").argmax() == np.load(f"{w}/out_{p}/{k}/logits.npy").argmax()
                    for k in range(8)])
    print(f"{p}: cosine {cos:.5f}, top-1 agreement {top1:.2f}")
    # int8_tuned: percentile calibration, and an INT8/FP32 mix that follows this machine's timings (its tiny layers
    # time alike in both precisions; 0.9915-0.9923 here, 0.9896 with 2 more layers INT8); a broken INT8 step gives
    # far less
    assert cos > (0.985 if p == "int8_tuned" else 0.99), (p, cos)
PY

# --export-qdq: a standard QDQ model (onnx checker, onnxruntime) that tailcut runs in INT8 as its own plan.
"$tailcut" calibrate "$work/r.onnx" --data "$work/cal" -o "$work/e.cache" --export-qdq "$work/exported.onnx" \
  >/dev/null 2>&1 || fail "calibrate --export-qdq"
"$tailcut" build "$work/exported.onnx" -o "$work/exported.plan" --batch 1 >/dev/null || fail "build the exported QDQ model"
"$tailcut" build "$work/r.onnx" -o "$work/e8.plan" --batch 1 --int8 --calib-cache "$work/e.cache" --tactics-fixed \
  >/dev/null || fail "build with the same cache"
for p in exported e8; do
  "$tailcut" run "$work/$p.plan" --input "$work/eval/x0.npy" -o "$work/out_$p" >/dev/null || fail "run $p"
done
"$py" - "$work" <<'PY' || fail "the exported QDQ model"
import sys, collections, numpy as np, onnx, onnxruntime as ort
w = sys.argv[1]
m = onnx.load(f"{w}/exported.onnx"); onnx.checker.check_model(m)
ops = collections.Counter(n.op_type for n in m.graph.node)
assert ops["QuantizeLinear"] >= 10 and ops["DequantizeLinear"] >= 2 * ops["QuantizeLinear"], ops
assert all(i.data_type != onnx.TensorProto.FLOAT for i in m.graph.initializer if i.name.endswith("_quantized")), "weights"
x = np.load(f"{w}/eval/x0.npy")
q = ort.InferenceSession(f"{w}/exported.onnx", providers=["CPUExecutionProvider"]).run(None, {"input": x})[0].ravel()
f = ort.InferenceSession(f"{w}/r.onnx", providers=["CPUExecutionProvider"]).run(None, {"input": x})[0].ravel()
cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
assert cos(q, f) > 0.97, ("onnxruntime on the export vs FP32", cos(q, f))
a, b = np.load(f"{w}/out_exported/logits.npy").ravel(), np.load(f"{w}/out_e8/logits.npy").ravel()
print(f"export: onnxruntime vs fp32 cosine {cos(q, f):.5f}; tailcut on the export vs --int8 plan cosine {cos(a, b):.6f}")
assert cos(a, b) > 0.999, cos(a, b)
assert cos(a, q) > 0.97, cos(a, q)
PY
if [ $int8 = 1 ]; then
  read -r nex _ < <(count_int8 "$work/exported.plan")
  [ "$nex" -ge 6 ] || fail "the exported QDQ model's plan has $nex INT8 steps"
fi
# --export-qdq --int8-reduce-range: weights on the |q| <= 64 grid; tailcut builds the export with the 7-bit-weight
# kernels, the same values as its --int8 --int8-reduce-range plan
"$tailcut" calibrate "$work/r.onnx" --data "$work/cal" -o "$work/e7.cache" --export-qdq "$work/exported7.onnx" \
  --int8-reduce-range >/dev/null 2>&1 || fail "calibrate --export-qdq --int8-reduce-range"
"$tailcut" build "$work/exported7.onnx" -o "$work/exported7.plan" --batch 1 --tactics-fixed >/dev/null ||
  fail "build the reduce-range export"
"$tailcut" build "$work/r.onnx" -o "$work/e7.plan" --batch 1 --int8 --int8-reduce-range --calib-cache "$work/e7.cache" \
  --tactics-fixed >/dev/null || fail "build with --int8-reduce-range and the same cache"
for p in exported7 e7; do
  "$tailcut" run "$work/$p.plan" --input "$work/eval/x0.npy" -o "$work/out_$p" >/dev/null || fail "run $p"
done
"$py" - "$work" <<'PY' || fail "the reduce-range export"
import sys, numpy as np, onnx
from onnx import numpy_helper
w = sys.argv[1]
m = onnx.load(f"{w}/exported7.onnx"); onnx.checker.check_model(m)
codes = [numpy_helper.to_array(i) for i in m.graph.initializer if i.name.endswith("_quantized")]
assert codes and max(int(np.abs(c.astype(np.int32)).max()) for c in codes) == 64, "weights not on the 64 grid"
a, b = np.load(f"{w}/out_exported7/logits.npy").ravel(), np.load(f"{w}/out_e7/logits.npy").ravel()
c = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
print(f"reduce-range export: tailcut on the export vs --int8 --int8-reduce-range plan cosine {c:.6f}")
assert c > 0.999, c
PY
if [ $int8 = 1 ] && [ $vnni = 0 ]; then
  nw=$(count_tactic "$work/exported7.plan" w7_avx2)
  [ "$nw" -ge 6 ] || fail "the reduce-range export's plan has $nw 7-bit-weight steps"
fi

# A MobileNetV2 (depthwise layers): the calibration covers the depthwise inputs, the export quantizes the depthwise
# weights too (per channel, axis 0), and on AVX2 the --int8 plan runs them in INT8, close to FP32.
"$py" "$repo/tools/modelgen/modelgen.py" mobilenet_v2 -o "$work/m.onnx" --width-mult 0.5 --max-repeats 1 --image 32 \
  >/dev/null
"$tailcut" calibrate "$work/m.onnx" --data "$work/cal" -o "$work/m.cache" --export-qdq "$work/m_qdq.onnx" \
  >/dev/null 2>&1 || fail "calibrate the MobileNetV2"
"$tailcut" build "$work/m.onnx" -o "$work/m8.plan" --batch 1 --int8 --calib-cache "$work/m.cache" --tactics-fixed \
  >/dev/null || fail "build the MobileNetV2 --int8"
"$tailcut" build "$work/m_qdq.onnx" -o "$work/mq.plan" --batch 1 --tactics-fixed >/dev/null ||
  fail "build the exported MobileNetV2"
"$tailcut" build "$work/m.onnx" -o "$work/m32.plan" --batch 1 >/dev/null || fail "build the MobileNetV2"
for p in m8 m32 mq; do
  "$tailcut" run "$work/$p.plan" --input "$work/eval/x0.npy" -o "$work/out_$p" >/dev/null || fail "run $p"
done
"$py" - "$work" <<'PY' || fail "the MobileNetV2 export or INT8 plan"
import sys, numpy as np, onnx, onnxruntime as ort
w = sys.argv[1]
m = onnx.load(f"{w}/m_qdq.onnx"); onnx.checker.check_model(m)
prod = {o: n for n in m.graph.node for o in n.output}
dw = [n for n in m.graph.node if n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute)]
assert dw and all(prod.get(n.input[1]) is not None and prod[n.input[1]].op_type == "DequantizeLinear" and
                  prod.get(n.input[0]) is not None and prod[n.input[0]].op_type == "DequantizeLinear" for n in dw), "dw"
x = np.load(f"{w}/eval/x0.npy")
q = ort.InferenceSession(f"{w}/m_qdq.onnx", providers=["CPUExecutionProvider"]).run(None, {"input": x})[0].ravel()
f = np.load(f"{w}/out_m32/logits.npy").ravel()
a, e = np.load(f"{w}/out_m8/logits.npy").ravel(), np.load(f"{w}/out_mq/logits.npy").ravel()
cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
print(f"mobilenet_v2: {len(dw)} depthwise layers quantized in the export; vs fp32 cosine: onnxruntime on the export "
      f"{cos(q, f):.5f}, tailcut --int8 {cos(a, f):.5f}; tailcut on the export vs --int8 {cos(a, e):.6f}")
# (random weights and inputs: INT8 moves this small model's logits by a few percent, in both runtimes alike; the
# export's int8 QuantizeLinear saturates at -128 where the calibrated codes stop at -127, which the linear bottleneck
# outputs reach: hence 0.995 between the export and the --int8 plan, not the ResNet's 0.999)
assert cos(q, f) > 0.95 and cos(a, f) > 0.95 and cos(a, q) > 0.95 and cos(a, e) > 0.995, (cos(q, f), cos(a, f), cos(a, e))
PY
if [ $int8 = 1 ] && [ $vnni = 0 ]; then
  n_dw=$("$tailcut" inspect "$work/m8.plan" --json | "$py" -c '
import json, sys; print(sum(s["tactic"].startswith("dwconv_int8") for s in json.load(sys.stdin)["steps"]))')
  [ "$n_dw" -ge 1 ] || fail "the MobileNetV2 --int8 plan has no INT8 depthwise step"
fi

# Asymmetric activations in the export: the outputs of SiLU (Sigmoid * x) and HardSwish, which the engine quantizes with a
# zero point over [the activation's minimum, amax], are exported as uint8 with that zero point and scale, so tailcut on
# the export computes what its --int8 plan computes (and onnxruntime on the export agrees).
"$py" - "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
w = sys.argv[1]; rng = np.random.default_rng(3)
def wt(name, *shape, s=0.3): return nh.from_array((rng.standard_normal(shape) * s).astype(np.float32), name)
inits = [wt("w1", 16, 3, 3, 3), wt("b1", 16, s=0.1), wt("w2", 32, 16, 1, 1), wt("b2", 32, s=0.1), wt("w3", 16, 32, 1, 1),
         wt("b3", 16, s=0.1)]
nodes = [h.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), h.make_node("Sigmoid", ["c1"], ["g1"]),
         h.make_node("Mul", ["c1", "g1"], ["s1"]), h.make_node("Conv", ["s1", "w2", "b2"], ["c2"]),
         h.make_node("HardSwish", ["c2"], ["s2"]), h.make_node("Conv", ["s2", "w3", "b3"], ["logits"])]
g = h.make_graph(nodes, "silu_hardswish", [h.make_tensor_value_info("input", T.FLOAT, [1, 3, 32, 32])],
                 [h.make_tensor_value_info("logits", T.FLOAT, [1, 16, 32, 32])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)]); m.ir_version = 8
onnx.checker.check_model(m); onnx.save(m, f"{w}/s.onnx")
PY
"$tailcut" calibrate "$work/s.onnx" --data "$work/cal" -o "$work/s.cache" --export-qdq "$work/s_qdq.onnx" >/dev/null 2>&1 ||
  fail "calibrate --export-qdq (SiLU, HardSwish)"
"$tailcut" build "$work/s.onnx" -o "$work/s8.plan" --batch 1 --int8 --calib-cache "$work/s.cache" --tactics-fixed \
  >/dev/null || fail "build the SiLU model --int8"
"$tailcut" build "$work/s_qdq.onnx" -o "$work/sq.plan" --batch 1 --tactics-fixed >/dev/null || fail "build the SiLU export"
for p in s8 sq; do
  "$tailcut" run "$work/$p.plan" --input "$work/eval/x0.npy" -o "$work/out_$p" >/dev/null || fail "run $p"
done
"$py" - "$work" <<'PY' || fail "the asymmetric export"
import sys, numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper as nh
w = sys.argv[1]
m = onnx.load(f"{w}/s_qdq.onnx"); onnx.checker.check_model(m)
init = {i.name: nh.to_array(i) for i in m.graph.initializer}
zp = {n.input[0]: (float(init[n.input[1]]), init[n.input[2]]) for n in m.graph.node if n.op_type == "QuantizeLinear"}
assert zp["input"][1].dtype == np.int8 and int(zp["input"][1]) == 0, zp["input"]
for t, floor in (("s1", 0.2785), ("s2", 0.3751)):  # the activations' minima, as the engine rounds them
    s, z = zp[t]
    assert z.dtype == np.uint8 and int(z) == round(floor / s), (t, s, z)
x = np.load(f"{w}/eval/x0.npy")
q = ort.InferenceSession(f"{w}/s_qdq.onnx", providers=["CPUExecutionProvider"]).run(None, {"input": x})[0].ravel()
a, e = np.load(f"{w}/out_s8/logits.npy").ravel(), np.load(f"{w}/out_sq/logits.npy").ravel()
cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
print(f"asymmetric export: tailcut on the export vs --int8 cosine {cos(a, e):.8f} (max |diff| {np.abs(a - e).max():.3g}); "
      f"onnxruntime on the export vs --int8 {cos(a, q):.6f}")
# (symmetric export of these activations: 0.99969, max |diff| 0.10)
assert cos(a, e) > 0.99999 and cos(a, q) > 0.9999, (cos(a, e), cos(a, q))
PY

# Residual images on AVX2: the downsample outputs (calibrated as operands of an Add) and the values several layers read
# become INT8 images; --disable-pass int8_residual_image keeps them FP32 (fewer chained steps).
if [ $int8 = 1 ] && [ $vnni = 0 ]; then
  for p in res nores; do
    "$tailcut" build "$work/r.onnx" -o "$work/ri_$p.plan" --batch 1 --int8 --calib-cache "$work/e.cache" --tactics-fixed \
      $([ $p = nores ] && echo --disable-pass int8_residual_image) >/dev/null || fail "build ($p)"
  done
  n_res=$("$tailcut" inspect "$work/ri_res.plan" | grep -c -- "-chain" || true)
  n_nores=$("$tailcut" inspect "$work/ri_nores.plan" | grep -c -- "-chain" || true)
  [ "$n_res" -gt "$n_nores" ] || fail "residual images: $n_res chained steps with, $n_nores without"
fi

# --accuracy-threshold: layers move to FP32 (noisiest input first) until the outputs agree on the samples.
if [ $int8 = 1 ]; then
  "$tailcut" build "$work/r.onnx" -o "$work/acc.plan" --batch 1 --int8 --calib-data "$work/cal" --tactics-fixed \
    --accuracy-threshold 0.9995 >/dev/null 2>"$work/acc.err" || fail "--accuracy-threshold: $(cat "$work/acc.err")"
  last=$(grep "^accuracy:" "$work/acc.err" | tail -1)
  "$py" -c 'import re, sys; m = re.search(r"(\d+) layer.*cosine ([0-9.]+)", sys.argv[1]);
assert m and int(m.group(1)) >= 1 and float(m.group(2)) >= 0.9995, sys.argv[1]' "$last" ||
    fail "--accuracy-threshold did not reach 0.9995 by moving layers: $last"
  read -r nacc _ < <(count_int8 "$work/acc.plan")
  [ "$nacc" -lt "$n8" ] || fail "--accuracy-threshold kept all $nacc INT8 steps"
  "$tailcut" build "$work/r.onnx" -o "$work/acc1.plan" --batch 1 --int8 --calib-data "$work/cal" --tactics-fixed \
    --accuracy-threshold 0.5 --accuracy-metric top1 >/dev/null 2>"$work/acc1.err" || fail "--accuracy-metric top1"
  grep -q "^accuracy: 0 layer(s) kept out of INT8 (fp32) by the threshold: top-1 agreement" "$work/acc1.err" ||
    fail "top1 metric: $(cat "$work/acc1.err")"
fi

# Two inputs: <input>.<k>.npy samples; the MatMuls with constant weights run INT8.
"$tailcut" build "$work/b.onnx" -o "$work/b8.plan" --shapes input_ids:1x16,attention_mask:1x16 --int8 \
  --calib-data "$work/bcal" --tactics-fixed >/dev/null 2>&1 || fail "bert int8 build"
read -r nb8 q < <(count_int8 "$work/b8.plan" /encoder/layer.0/attention/self/query/MatMul)
if [ $int8 = 1 ]; then [ "$nb8" -ge 4 ] && [ "$q" = int8 ] || fail "bert: $nb8 INT8 steps, query $q"; fi
# Samples of several sequence lengths calibrate one dynamic-shape model (a profile for the plan).
"$tailcut" calibrate "$work/b.onnx" --data "$work/bvar" -o "$work/bvar.cache" --samples 9 >"$work/bvar.out" 2>&1 ||
  fail "calibrate on varying sequence lengths: $(cat "$work/bvar.out")"
grep -q "on 9 samples" "$work/bvar.out" || fail "calibrate on varying lengths: $(cat "$work/bvar.out")"
"$tailcut" build "$work/b.onnx" -o "$work/bdyn.plan" --min-shapes input_ids:1x8,attention_mask:1x8 \
  --opt-shapes input_ids:1x12,attention_mask:1x12 --max-shapes input_ids:1x16,attention_mask:1x16 --int8 \
  --calib-cache "$work/bvar.cache" >/dev/null || fail "dynamic-shape int8 build"
"$tailcut" run "$work/b8.plan" --input input_ids="$work/bcal/input_ids.0.npy" \
  --input attention_mask="$work/bcal/attention_mask.0.npy" -o "$work/b8out" >/dev/null || fail "bert int8 run"

# A CPU without VNNI: the VNNI plan is refused clearly; a build there takes the AVX2 INT8 variants (u7 where the
# input is a Relu's output). Without AVX2
# (TAILCUT_MAX_ISA=ref) that plan is refused in turn, and a build keeps FP32.
if [ $vnni = 1 ]; then
  if TAILCUT_MAX_ISA=avx512 "$tailcut" run "$work/int8.plan" --input "$work/eval/x0.npy" -o "$work/no" 2>"$work/err"; then
    fail "an INT8 plan ran under TAILCUT_MAX_ISA=avx512"
  fi
  grep -q "avx512vnni" "$work/err" || fail "refusal does not name the missing ISA: $(cat "$work/err")"
fi
if [ $int8 = 1 ]; then
  TAILCUT_MAX_ISA=avx512 "$tailcut" build "$work/r.onnx" -o "$work/avx2.plan" --batch 1 --int8 \
    --calib-cache "$work/entropy.cache" --tactics-fixed >/dev/null || fail "int8 build without VNNI"
  read -r na2 _ < <(TAILCUT_MAX_ISA=avx512 count_int8 "$work/avx2.plan")
  nt2=$(TAILCUT_MAX_ISA=avx512 count_tactic "$work/avx2.plan" _avx2)
  nu7=$(TAILCUT_MAX_ISA=avx512 count_tactic "$work/avx2.plan" _int8_u7_avx2)
  [ "$na2" -ge 6 ] && [ "$nt2" = "$na2" ] && [ "$nu7" -ge 4 ] ||
    fail "a build without VNNI: $na2 INT8 steps, $nt2 AVX2 steps, $nu7 of the u7 variant"
  TAILCUT_MAX_ISA=avx512 "$tailcut" run "$work/avx2.plan" --input "$work/eval/x0.npy" -o "$work/out_avx2" >/dev/null ||
    fail "run the AVX2 INT8 plan"
  "$py" -c 'import sys, numpy as np; a, b = (np.load(f"{d}/logits.npy").ravel() for d in sys.argv[1:]);
c = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)); assert c > 0.99, c' "$work/out_avx2" "$work/out_fp32/0" ||
    fail "the AVX2 INT8 plan's output differs from FP32"
  # its chain (codes between consecutive INT8 convolutions, 3x3 padding included; u7 bytes after a Relu) changes
  # no bit
  nchain=$(TAILCUT_MAX_ISA=avx512 "$tailcut" inspect "$work/avx2.plan" | grep -cE "(s16|u7)-chain" || true)
  [ "$nchain" -ge 4 ] || fail "the AVX2 INT8 plan has $nchain chained steps"
  TAILCUT_MAX_ISA=avx512 "$tailcut" build "$work/r.onnx" -o "$work/avx2_nochain.plan" --batch 1 --int8 \
    --calib-cache "$work/entropy.cache" --tactics-fixed --disable-pass lowp_chain >/dev/null || fail "build without chain"
  for k in 0 1 2; do
    for p in avx2 avx2_nochain; do
      TAILCUT_MAX_ISA=avx512 "$tailcut" run "$work/$p.plan" --input "$work/eval/x$k.npy" -o "$work/c_$p" >/dev/null ||
        fail "run $p"
    done
    cmp -s "$work/c_avx2/logits.npy" "$work/c_avx2_nochain/logits.npy" || fail "the s16 chain changed the output ($k)"
  done
  # --int8-reduce-range: 7-bit weights; the layers with non-negative inputs take the u7w7 variant, chained as u7, and
  # the output stays close to FP32
  TAILCUT_MAX_ISA=avx512 "$tailcut" build "$work/r.onnx" -o "$work/w7.plan" --batch 1 --int8 --int8-reduce-range \
    --calib-cache "$work/entropy.cache" --tactics-fixed >/dev/null || fail "int8 build with --int8-reduce-range"
  nw7=$(TAILCUT_MAX_ISA=avx512 count_tactic "$work/w7.plan" _int8_u7w7_avx2)
  [ "$nw7" = "$nu7" ] || fail "--int8-reduce-range: $nw7 steps of the u7w7 variant, $nu7 of u7 without it"
  nchain7=$(TAILCUT_MAX_ISA=avx512 "$tailcut" inspect "$work/w7.plan" | grep -cE "(s16|u7)-chain" || true)
  [ "$nchain7" = "$nchain" ] || fail "--int8-reduce-range: $nchain7 chained steps, $nchain without it"
  TAILCUT_MAX_ISA=avx512 "$tailcut" run "$work/w7.plan" --input "$work/eval/x0.npy" -o "$work/out_w7" >/dev/null ||
    fail "run the reduce-range plan"
  "$py" -c 'import sys, numpy as np; a, b = (np.load(f"{d}/logits.npy").ravel() for d in sys.argv[1:]);
c = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)); assert c > 0.99, c' "$work/out_w7" "$work/out_fp32/0" ||
    fail "the reduce-range plan's output differs from FP32"
  cmp -s "$work/out_w7/logits.npy" "$work/out_avx2/logits.npy" && fail "--int8-reduce-range changed no output bit"
  # --layer-precision NAME:int8 with reduce range: that layer keeps 8-bit weights (the u7 variant), the others take 7
  TAILCUT_MAX_ISA=avx512 "$tailcut" build "$work/r.onnx" -o "$work/w7_w8.plan" --batch 1 --int8 --int8-reduce-range \
    --calib-cache "$work/entropy.cache" --tactics-fixed --layer-precision /layer1/layer1.0/conv2/Conv:int8 >/dev/null ||
    fail "int8 build with --layer-precision NAME:int8"
  nw7w8=$(TAILCUT_MAX_ISA=avx512 count_tactic "$work/w7_w8.plan" _int8_u7w7_avx2)
  [ "$nw7w8" = $((nw7 - 1)) ] || fail "NAME:int8: $nw7w8 u7w7 steps, $nw7 without it"
  TAILCUT_MAX_ISA=avx512 "$tailcut" inspect "$work/w7_w8.plan" | grep "^[0-9]* */layer1/layer1.0/conv2/Conv " |
    grep -q "conv_int8_u7_avx2" || fail "NAME:int8: the layer did not keep 8-bit weights"
  if TAILCUT_MAX_ISA=ref "$tailcut" run "$work/avx2.plan" --input "$work/eval/x0.npy" -o "$work/no" 2>"$work/err"; then
    fail "an AVX2 INT8 plan ran under TAILCUT_MAX_ISA=ref"
  fi
  grep -q "avx2" "$work/err" || fail "refusal does not name the missing ISA: $(cat "$work/err")"
fi

# --accuracy-threshold with --int8-reduce-range: layers first get 8-bit weights, noisiest input first (stage 0); with
# all of them on 8 bits the plan is the 8-bit plan, and only then do layers leave INT8. A threshold that stage 0 meets
# keeps every layer INT8.
if [ $int8 = 1 ]; then
  "$tailcut" build "$work/r.onnx" -o "$work/acc7.plan" --batch 1 --int8 --int8-reduce-range --calib-data "$work/cal" \
    --tactics-fixed --accuracy-threshold 0.99999 >/dev/null 2>"$work/acc7.err" || fail "reduce range --accuracy-threshold"
  "$tailcut" build "$work/r.onnx" -o "$work/acc8.plan" --batch 1 --int8 --calib-data "$work/cal" --tactics-fixed \
    --accuracy-threshold 0.99999 >/dev/null 2>"$work/acc8.err" || fail "8-bit --accuracy-threshold"
  mid=$("$py" - "$work/acc7.err" "$work/acc8.err" <<'PY'
import re, sys
def rows(path, what):
    return [(int(n), float(c)) for n, c in re.findall(r"^accuracy: (\d+) layer\(s\) " + what + r".*cosine ([0-9.]+)",
                                                   open(path).read(), re.M)]
s0, s1 = rows(sys.argv[1], "given 8-bit weights"), rows(sys.argv[1], "kept out of INT8")
b0 = rows(sys.argv[2], "kept out of INT8")
assert len(s0) >= 3 and s0[0][0] == 0 and s1 and s1[0][0] >= 1, (s0, s1)
assert all(a[0] < b[0] for a, b in zip(s0, s0[1:])), s0
assert s0[-1][1] == b0[0][1], (s0[-1], b0[0])  # every layer on 8 bits: the 8-bit plan
assert s0[-1][1] - 2e-6 > s0[0][1], s0
print(f"{s0[-1][1] - 2e-6:.7f}")  # met in stage 0 at the latest with every layer on 8 bits (cosines print rounded)
PY
) || fail "reduce range --accuracy-threshold stages: $(cat "$work/acc7.err")"
  "$tailcut" build "$work/r.onnx" -o "$work/acc7m.plan" --batch 1 --int8 --int8-reduce-range --calib-data "$work/cal" \
    --tactics-fixed --accuracy-threshold "$mid" >/dev/null 2>"$work/acc7m.err" || fail "reduce range threshold $mid"
  grep "^accuracy:" "$work/acc7m.err" | tail -1 | grep -q "given 8-bit weights" ||
    fail "threshold $mid left stage 0: $(cat "$work/acc7m.err")"
  grep -q "kept out of INT8" "$work/acc7m.err" && fail "threshold $mid moved layers out of INT8"
  read -r nacc7 _ < <(count_int8 "$work/acc7m.plan")
  [ "$nacc7" = "$n8" ] || fail "threshold $mid: $nacc7 INT8 steps of $n8"
fi
TAILCUT_MAX_ISA=ref "$tailcut" build "$work/r.onnx" -o "$work/capped.plan" --batch 1 --int8 \
  --calib-cache "$work/entropy.cache" --tactics-fixed >/dev/null || fail "int8 build without AVX2"
read -r ncap _ < <(TAILCUT_MAX_ISA=ref count_int8 "$work/capped.plan")
[ "$ncap" = 0 ] || fail "a build without AVX2 has $ncap INT8 steps"

# Errors.
expect_fail() { # $1 = expected text, then the command
  local want=$1; shift
  if "$@" >"$work/e.out" 2>&1; then fail "succeeded: $*"; fi
  grep -q -- "$want" "$work/e.out" || fail "'$*' said: $(cat "$work/e.out") (wanted '$want')"
}
expect_fail "needs --calib-cache" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8
expect_fail "need --int8" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --calib-cache "$work/minmax.cache"
expect_fail "need --int8" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8-reduce-range
expect_fail "give --export-qdq" "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" -o "$work/x.cache" --int8-reduce-range
expect_fail "unknown calibration method" "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --method kl -o "$work/x"
expect_fail "fingerprint" "$tailcut" build "$work/r2.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-cache "$work/minmax.cache"
sed '2s/: .*/: zzzz/' "$work/minmax.cache" >"$work/corrupt.cache"
expect_fail "corrupt.cache" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-cache "$work/corrupt.cache"
expect_fail "NAME:fp32 or NAME:int8" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-cache "$work/minmax.cache" --layer-precision /conv1/Conv:int4
expect_fail "not a node" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-cache "$work/minmax.cache" --layer-precision nope:fp32
expect_fail "is for --int8-reduce-range" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-cache "$work/minmax.cache" --layer-precision /conv1/Conv:int8
expect_fail "not a node" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 --int8-reduce-range \
  --calib-cache "$work/minmax.cache" --layer-precision nope:int8
expect_fail "percentile" "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --method percentile --percentile 101 \
  -o "$work/x"
expect_fail "--calib-samples: bad value" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-data "$work/cal" --calib-samples 0
expect_fail "--samples must be" "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples -3 -o "$work/x"
expect_fail "give --calib-data" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-cache "$work/minmax.cache" --accuracy-threshold 0.99
expect_fail "cosine or top1" "$tailcut" build "$work/r.onnx" -o "$work/x.plan" --batch 1 --int8 \
  --calib-data "$work/cal" --accuracy-threshold 0.99 --accuracy-metric l2
expect_fail "cannot write" "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" -o "$work/x.cache" \
  --export-qdq "$work/no/such/dir/x.onnx" --samples 2
[ ! -e "$work/x.plan" ] || fail "a failed build left a plan"
echo "test_int8: ok"
