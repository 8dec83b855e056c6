#!/usr/bin/env bash
# demo.sh - the `make demo` job: generate a seeded ResNet-50, inspect it, build a plan for this
# machine, run the plan on a random image and check the logits against onnxruntime, then show
# the bench report and the interleaved comparison with onnxruntime.
set -euo pipefail
tailcut=$1 py=$2 out=$3
lib=$(dirname "$tailcut")/libtailcut.so
iters=${DEMO_ITERATIONS:-100}
mkdir -p "$out"
echo "== generating ResNet-50 (seeded weights) -> $out/resnet50.onnx"
"$py" tools/modelgen/modelgen.py resnet50 -o "$out/resnet50.onnx" --seed 0
echo "== tailcut inspect (model)"
"$tailcut" inspect "$out/resnet50.onnx"
echo "== tailcut build"
"$tailcut" build "$out/resnet50.onnx" -o "$out/resnet50.plan" --shapes input:1x3x224x224 --threads 2 \
  --timing-cache "$out/timing.cache"
echo "== tailcut inspect (plan)"
"$tailcut" inspect "$out/resnet50.plan"
echo "== random input image"
"$py" -c "import numpy as np; np.save('$out/input.npy', np.random.default_rng(1).standard_normal((1,3,224,224)).astype(np.float32))"
echo "== tailcut run (plan)"
"$tailcut" run "$out/resnet50.plan" --input input="$out/input.npy" --output-dir "$out/outputs"
echo "== compare with onnxruntime"
"$py" - "$out" <<'PY'
import sys, numpy as np, onnxruntime as ort
out = sys.argv[1]
x = np.load(f"{out}/input.npy")
opts = ort.SessionOptions(); opts.intra_op_num_threads = 2
ref = ort.InferenceSession(f"{out}/resnet50.onnx", opts, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
got = np.load(f"{out}/outputs/logits.npy")
err = float(np.max(np.abs(got - ref))); scale = float(np.max(np.abs(ref)))
print(f"logits {got.shape}: max abs error {err:.3g} (max |logit| {scale:.3g}), top-1 tailcut {got.argmax()} onnxruntime {ref.argmax()}")
ok = err <= 1e-3 * max(1.0, scale)
print("outputs match: PASS" if ok else "outputs match: FAIL")
sys.exit(0 if ok else 1)
PY
echo "== tailcut bench ($iters iterations, 2 threads)"
"$tailcut" bench "$out/resnet50.plan" --iterations "$iters" --warmup 5
echo "== bench/compare.py: onnxruntime and tailcut interleaved, 2 threads"
"$py" bench/compare.py "$out/resnet50.onnx" --threads 2 --batch 1 --iterations "$iters" --warmup 5 --tailcut-lib "$lib"
