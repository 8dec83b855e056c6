#!/usr/bin/env python3
"""qdq_check.py - explicit quantization against onnxruntime: quantizes an FP32 model with onnxruntime's
quantize_static (QDQ format, after quant_pre_process) on seeded random calibration data, builds it with
tailcut (heuristic and tuned tactics, with TAILCUT_MAX_ISA as the environment gives it), runs both on other
random inputs and checks that tailcut's outputs match onnxruntime's on the same QDQ model (cosine, top-1).
The reference is onnxruntime with graph optimizations off, which runs QuantizeLinear, DequantizeLinear and
Conv as the ONNX spec defines them; its default session is also reported. (On a CPU without VNNI, onnxruntime's
fused u8 x s8 kernels use vpmaddubsw, whose 16-bit pair sums saturate: measured here on an AVX2-only AMD EPYC,
its optimized outputs differ from its own unoptimized ones at cosine 0.998, while tailcut's INT8 plan matches
the unoptimized ones at 0.9999999.)
With --expect-int8 the heuristic plan must run every convolution in INT8; with --expect-fp32 no plan may
have an INT8 step (a CPU without AVX2 computes the fake-quantized model in FP32).

usage: qdq_check.py --tailcut BIN --model FP32.onnx --work DIR [--per-channel] [--activation u8|s8]
                    [--expect-int8 | --expect-fp32] [--min-cosine 0.999] [--min-top1 0.9]
"""
import argparse, json, os, subprocess, sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process


def input_shape(model_path):
    m = onnx.load(model_path, load_external_data=False)
    i = m.graph.input[0]
    return i.name, [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]


class Reader(CalibrationDataReader):
    def __init__(self, name, shape, n, seed):
        rng = np.random.default_rng(seed)
        self.it = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.it, None)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tailcut", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--per-channel", action="store_true")
    p.add_argument("--activation", choices=("u8", "s8"), default="u8")
    p.add_argument("--expect-int8", action="store_true")
    p.add_argument("--expect-fp32", action="store_true")
    p.add_argument("--reduce-range", action="store_true", help="quantize_static(reduce_range=True): 7-bit weights")
    p.add_argument("--expect-w7", action="store_true", help="the heuristic plan runs every INT8 step in a 7-bit-weight "
                   "AVX2 variant (u7w7, u8w7)")
    p.add_argument("--min-cosine", type=float, default=0.999)
    p.add_argument("--min-top1", type=float, default=0.9)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    name, shape = input_shape(a.model)
    pre = os.path.join(a.work, "pre.onnx")
    qdq = os.path.join(a.work, "qdq.onnx")
    quant_pre_process(a.model, pre)
    act = QuantType.QUInt8 if a.activation == "u8" else QuantType.QInt8
    quantize_static(pre, qdq, Reader(name, shape, 16, 1), quant_format=QuantFormat.QDQ, per_channel=a.per_channel,
                    activation_type=act, weight_type=QuantType.QInt8, reduce_range=a.reduce_range)
    dims = "x".join(str(d) for d in shape)
    exact = ort.SessionOptions()
    exact.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(qdq, exact, providers=["CPUExecutionProvider"])
    fused = ort.InferenceSession(qdq, providers=["CPUExecutionProvider"])
    # Heuristic tactics put every quantized layer in INT8 (where VNNI exists); tuned ones keep the faster of
    # INT8 and FP32 per layer. Both must compute the QDQ model.
    for mode in ("fixed", "tuned"):
        plan = os.path.join(a.work, f"qdq_{mode}.plan")
        subprocess.run([a.tailcut, "build", qdq, "-o", plan, "--shapes", f"{name}:{dims}"] +
                       (["--tactics-fixed"] if mode == "fixed" else []), check=True, stdout=subprocess.DEVNULL)
        steps = json.loads(subprocess.run([a.tailcut, "inspect", plan, "--json"], check=True, capture_output=True,
                                          text=True).stdout)["steps"]
        n_int8 = sum(s["precision"] == "int8" for s in steps)
        n_conv = sum(s["ops"].startswith("Conv") for s in steps)
        n_qdq = sum(s["ops"] in ("QuantizeLinear", "DequantizeLinear") for s in steps)
        if mode == "fixed" and a.expect_int8 and n_int8 < n_conv:
            sys.exit(f"qdq_check: only {n_int8} INT8 steps for {n_conv} convolutions")
        n_w7 = sum(s["precision"] == "int8" and "w7_" in s["tactic"] for s in steps)
        if mode == "fixed" and a.expect_w7 and (n_w7 != n_int8 or n_w7 == 0):
            sys.exit(f"qdq_check: {n_w7} of {n_int8} INT8 steps in a 7-bit-weight variant")
        if a.expect_fp32 and n_int8 != 0:
            sys.exit(f"qdq_check: {n_int8} INT8 steps where none can run")
        rng = np.random.default_rng(2)
        cos, cos_fused, top1, k_n = [], [], 0, 12
        for k in range(k_n):
            x = rng.standard_normal(shape).astype(np.float32)
            xf = os.path.join(a.work, f"x{k}.npy")
            np.save(xf, x)
            od = os.path.join(a.work, f"o_{mode}{k}")
            subprocess.run([a.tailcut, "run", plan, "--input", xf, "-o", od], check=True, stdout=subprocess.DEVNULL)
            ref = sess.run(None, {name: x})[0]
            got = np.load(os.path.join(od, sess.get_outputs()[0].name + ".npy"))
            r, g = ref.ravel().astype(np.float64), got.ravel().astype(np.float64)
            cos.append(float(r @ g / (np.linalg.norm(r) * np.linalg.norm(g))))
            f = fused.run(None, {name: x})[0].ravel().astype(np.float64)
            cos_fused.append(float(f @ g / (np.linalg.norm(f) * np.linalg.norm(g))))
            top1 += int(r.argmax() == g.argmax())
        print(f"qdq_check: {os.path.basename(a.model)} per_channel={a.per_channel} activation={a.activation} "
              f"reduce_range={a.reduce_range} {mode}: "
              f"{n_int8} INT8 steps of {len(steps)}, {n_qdq} Q/DQ steps left; vs onnxruntime on the QDQ model: "
              f"cosine min {min(cos):.6f} mean {np.mean(cos):.6f}, top-1 {top1}/{k_n} (its default optimized session: "
              f"cosine min {min(cos_fused):.6f})")
        if min(cos) < a.min_cosine or top1 < a.min_top1 * k_n:
            sys.exit("qdq_check: FAIL: tailcut differs from onnxruntime on the QDQ model")


if __name__ == "__main__":
    main()
