#!/usr/bin/env bash
# test_rnn_ort.sh - LSTM, GRU and RNN against onnxruntime on what the ONNX node tests leave out: each direction
# with sequence_lens of mixed lengths (the full length, 0 (not for RNN: see below), and between), initial states,
# biases, clip, GRU's linear_before_reset 0 and 1; every output (Y, Y_h, Y_c) compared, through a plan (the CPU
# tactics for LSTM and GRU: W and R are initializers) and through the reference executor; max abs error <= 1e-5.
#
# usage: tests/cli/test_rnn_ort.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_rnn_ort.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -x "$build/tailcut" ] || { echo "test_rnn_ort: FAIL: no tailcut binary in $build" >&2; exit 1; }

"$py" - "$build/tailcut" "$work" <<'PY'
import os, subprocess, sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh
tailcut, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(9)
cases = 0
for op in ("LSTM", "GRU", "RNN"):
    for direction in ("forward", "reverse", "bidirectional"):
        for variant in range(2):  # clip / GRU linear_before_reset
            G, S, B, I, H = {"LSTM": 4, "GRU": 3, "RNN": 1}[op], 5, 4, 3, 6
            D = 2 if direction == "bidirectional" else 1
            attrs = {"hidden_size": H, "direction": direction}
            if variant:
                attrs["clip"] = 0.7
            if op == "GRU":
                attrs["linear_before_reset"] = variant
            W = (rng.standard_normal((D, G * H, I)) * 0.5).astype(np.float32)
            R = (rng.standard_normal((D, G * H, H)) * 0.5).astype(np.float32)
            Bb = (rng.standard_normal((D, 2 * G * H)) * 0.5).astype(np.float32)
            # (onnxruntime's RNN gives, for a row of length 0, zeros forward but the initial state in reverse; its
            # LSTM and GRU zeros both ways, which tailcut follows for all three: RNN rows here are 1 or longer)
            sl = np.array([5, 0 if op != "RNN" else 2, 3, 1], np.int32)
            ins = ["X", "W", "R", "B", "sl", "h0"] + (["c0"] if op == "LSTM" else [])
            outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
            graph_in = [h.make_tensor_value_info(n, T.FLOAT, [S, B, I] if n == "X" else [D, B, H]) for n in ins
                        if n in ("X", "h0", "c0")]
            g = h.make_graph([h.make_node(op, ins, outs, **attrs)], "g", graph_in,
                             [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs],
                             [nh.from_array(W, "W"), nh.from_array(R, "R"), nh.from_array(Bb, "B"),
                              nh.from_array(sl, "sl")])
            path = os.path.join(work, "m.onnx")
            onnx.save(h.make_model(g, ir_version=8, opset_imports=[h.make_opsetid("", 14)]), path)
            feeds = {v.name: rng.standard_normal([d.dim_value for d in v.type.tensor_type.shape.dim]).astype(np.float32)
                     for v in graph_in}
            ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
            args = []
            for k, v in feeds.items():
                np.save(os.path.join(work, k + ".npy"), v)
                args += ["--input", f"{k}={os.path.join(work, k + '.npy')}"]
            for mode in ([], ["--reference"]):
                out = os.path.join(work, "out")
                r = subprocess.run([tailcut, "run", path, *args, "--output-dir", out, *mode], capture_output=True,
                                   text=True)
                if r.returncode:
                    sys.exit(f"test_rnn_ort: FAIL: {op} {attrs}: tailcut run {mode}: {r.stderr.strip()}")
                for o, rv in zip(outs, ref):
                    err = float(np.max(np.abs(np.load(os.path.join(out, o + ".npy")) - rv)))
                    if err > 1e-5:
                        sys.exit(f"test_rnn_ort: FAIL: {op} {attrs} {'reference' if mode else 'plan'}: {o} differs "
                                 f"from onnxruntime by {err:.3e}")
            cases += 1
print(f"test_rnn_ort: OK ({cases} models, plan and reference, every output within 1e-5 of onnxruntime)")
PY
