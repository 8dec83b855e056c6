"""quantized_dynamic.py - run_realmodels.py's cases on models quantized by onnxruntime's quantize_dynamic.

The FP32 models come from tools/modelgen at test time (seeded, nothing downloaded, nothing read from ../shared) and
are quantized by onnxruntime.quantization.quantize_dynamic as a user would: DynamicQuantizeLinear on the activations
(uint8 with a zero point, range measured per run), MatMulInteger / ConvInteger with int32 results, then Cast and Mul
by the product of the scales. tailcut and onnxruntime then run the same quantized file.

  qdyn_bert: a BERT encoder (modelgen bert_base, 2 layers, hidden 128) quantized with int8 weights per column
    (weight_type QInt8, per_channel): its 12 MatMuls become MatMulInteger, its word embeddings a uint8 Gather with
    DequantizeLinear. Dynamic batch and sequence 1x4..4x32 (opt 2x16), run at 1x4, 2x16, 4x32 with padded masks;
    4x33 refused.
  qdyn_mobilenet_v2: MobileNetV2 (width 0.5, 2 blocks per stage) quantized with uint8 weights per output channel
    (weight_type QUInt8, per_channel: onnxruntime's CPU ConvInteger takes uint8 weights only): 36 ConvInteger, the
    classifier a MatMulInteger. Dynamic batch and resolution 1x3x64x64..4x3x128x128, run at three sizes; 5 images
    refused.

Tolerance (int8): the integer products are exact in both, but each DynamicQuantizeLinear rounds x / scale to an
integer, so an FP32 difference of one ulp upstream (LayerNorm, Softmax, GELU, BatchNormalization or the scale Mul
computed in another order) can move one code by one step: 1/255 of that tensor's range, which the next layers carry.
Measured: the outputs are bit-identical to onnxruntime's at the smaller sizes; at the largest, MobileNetV2's first
Clip output differs by 1-2 ulp in ~20% of its elements, which flips a few codes of the next DynamicQuantizeLinear and
moves the logits by up to 2.4% of their peak (cosine 0.99989), BERT's last hidden state by 1.0%. The bound is therefore
a max error of 5% of the output's peak, cosine >= 0.9995 and, for the classifier, argmax agreement >= 0.99: an
element-wise FP32 bound would fail on correct code, and a wrong kernel (a zero point dropped, a scale misapplied, a
per-channel index off by one) misses the cosine bound by far.
"""

import os
import subprocess
import sys

import numpy as np

MAX_REL, MIN_COS, MIN_ARGMAX = 5e-2, 0.9995, 0.99


def _modelgen(rm, work, name, args):
    """Writes tools/modelgen's model `name` with args into work; returns its path."""
    out = os.path.join(work, f"{name}_fp32.onnx")
    cmd = [sys.executable, os.path.join(rm.REPO, "tools", "modelgen", "modelgen.py"), *args, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise rm.Failure(f"modelgen failed: {r.stderr.strip()[-400:]}")
    return out


def _quantize(rm, fp32, weight_type, per_channel):
    """quantize_dynamic(fp32) next to it; the ops of the result, counted."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = fp32.replace("_fp32.onnx", "_qdyn.onnx")
    quantize_dynamic(fp32, out, weight_type=getattr(QuantType, weight_type), per_channel=per_channel)
    ops = {}
    for n in onnx.load(out).graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    if "DynamicQuantizeLinear" not in ops or not ({"MatMulInteger", "ConvInteger"} & set(ops)):
        raise rm.Failure(f"quantize_dynamic wrote no dynamic quantization: {ops}")
    quant = [f"{k} {v}" for k, v in sorted(ops.items()) if "Integer" in k or "uantize" in k]
    print("    quantized ops: " + ", ".join(quant))
    return out


def _compare(rm, lib, threads, work, path, ranges, feeds, outside, outside_words, argmax):
    """Builds path with the dynamic profile ranges, compares every output with onnxruntime's on each feed, and checks
    that outside is refused naming outside_words."""
    sess = rm.ort_session(path, threads)
    eng = rm.Engine(lib)
    try:
        eng.build_profile(path, ranges, threads, os.path.join(work, os.path.basename(path) + ".plan"))
        for feed in feeds:
            ref = sess.run(None, feed)
            got = eng.infer(feed)
            size = "x".join(map(str, next(iter(feed.values())).shape))
            for o, r in zip(sess.get_outputs(), ref):
                rm.check(f"{size}: {o.name[:24]}", r, got[o.name], max_rel=MAX_REL, argmax=argmax,
                         min_cos=MIN_COS, min_argmax=MIN_ARGMAX)
        rm.expect_refusal(eng, outside, outside_words)
    finally:
        eng.close()


def case_bert(rm, lib, threads, work):
    fp32 = _modelgen(rm, work, "bert", ["bert_base", "--layers", "2", "--hidden", "128", "--heads", "4", "--ffn", "512",
                                        "--vocab", "1000", "--seed", "3"])
    path = _quantize(rm, fp32, "QInt8", True)
    rng = np.random.default_rng(61)

    def feed(b, s):
        ids = rng.integers(1, 1000, size=(b, s), dtype=np.int64)
        mask = np.ones((b, s), np.int64)
        for i in range(1, b):  # later rows padded at the end, as a tokenizer pads a batch
            mask[i, s - i * s // (2 * b):] = 0
        return {"input_ids": ids, "attention_mask": mask}

    ranges = {n: ([1, 4], [2, 16], [4, 32]) for n in ("input_ids", "attention_mask")}
    outside = {"input_ids": np.ones((4, 33), np.int64), "attention_mask": np.ones((4, 33), np.int64)}
    _compare(rm, lib, threads, work, path, ranges, [feed(1, 4), feed(2, 16), feed(4, 32)], outside,
             ["'input_ids'", "outside the profile"], argmax=False)


def _dynamic_resolution(path):
    """modelgen fixes the image size; its GlobalAveragePool takes any: H and W of the input become symbolic (and the
    intermediate shapes it recorded are dropped)."""
    import onnx

    m = onnx.load(path)
    dims = m.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_param, dims[3].dim_param = "height", "width"
    del m.graph.value_info[:]
    onnx.save(m, path)


def case_mobilenet(rm, lib, threads, work):
    fp32 = _modelgen(rm, work, "mobilenet_v2", ["mobilenet_v2", "--width-mult", "0.5", "--max-repeats", "2",
                                                "--image", "96", "--classes", "100", "--seed", "4"])
    _dynamic_resolution(fp32)
    path = _quantize(rm, fp32, "QUInt8", True)
    rng = np.random.default_rng(62)
    feeds = [{"input": rng.standard_normal(s).astype(np.float32)}
             for s in ((1, 3, 64, 64), (2, 3, 96, 96), (4, 3, 128, 128))]
    _compare(rm, lib, threads, work, path, {"input": ([1, 3, 64, 64], [2, 3, 96, 96], [4, 3, 128, 128])}, feeds,
             {"input": np.ones((5, 3, 96, 96), np.float32)}, ["'input'", "outside the profile"], argmax=True)


def cases(rm):
    """The (name, fn(lib, threads, work)) pairs for run_realmodels.py; rm is that module (its helpers)."""
    return [("qdyn_bert", lambda lib, t, w: case_bert(rm, lib, t, w)),
            ("qdyn_mobilenet_v2", lambda lib, t, w: case_mobilenet(rm, lib, t, w))]
