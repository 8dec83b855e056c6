#!/usr/bin/env python3
"""step_profile_ort.py - tailcut's per-step profile next to onnxruntime's per-op profile, one model, interleaved in
rounds (onnxruntime N runs with SessionOptions.enable_profiling, then `tailcut bench PLAN --profile` N runs, R times),
summed by step family, in ms per inference. For finding which op families tailcut loses on (issue 28).

usage: step_profile_ort.py MODEL.onnx PLAN [--tailcut build/tailcut] [--rounds 5] [--n 4] [--threads 1] [--bert]

Families: with --bert, BERT-base's (Q/K/V projections, attention output, FFN1 + GELU, FFN2, the two attention
MatMuls, softmax + mask, LayerNorm) from the node names; otherwise each Conv by kernel, stride and channels ("conv 1x1
s1 256->64", depthwise ones "dwconv 3x3 s2 96"), the nodes that onnxruntime fuses into it (BatchNormalization, Relu, Clip, Add) counted with it, and other
nodes by op type. onnxruntime names a fused node after its output (+ "_nchwc"), tailcut after the ONNX node; both are
mapped. onnxruntime's BiasGelu has no layer name and shows as "other (BiasGelu)". Its totals include its 3 warm-up
runs' share (divided by all runs). Inputs: floats N(0, 1), int64 ids in [1, 100), names with "mask" all ones; a
symbolic first dim is 1, other symbolic dims 128.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

BERT_FAMILIES = (("query", "QKV projections"), ("key/", "QKV projections"), ("value", "QKV projections"),
                 ("attention/output/dense", "attention out proj (+res)"), ("intermediate", "FFN1 + GELU"),
                 ("layer.N/output/dense", "FFN2 (+res)"), ("self/MatMul_1", "attention probs x V"),
                 ("self/MatMul", "attention Q x K^T (+scale)"), ("Softmax", "softmax + mask"),
                 ("self/Where", "softmax + mask"), ("self/Add", "softmax + mask"), ("IsNaN", "softmax + mask"),
                 ("self/Div", "softmax + mask"), ("LayerNorm", "LayerNorm"), ("Transpose", "transpose/reshape"))


def conv_families(path):
    """{tensor or node name: conv family} for every Conv and the BatchNormalization/Relu/Add chain after it."""
    m = onnx.load(path, load_external_data=False)
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    fam = {}
    for nd in m.graph.node:
        w = inits.get(nd.input[1]) if nd.op_type == "Conv" and len(nd.input) > 1 else None
        if w:
            st = next((list(a.ints) for a in nd.attribute if a.name == "strides"), [1])
            grp = next((a.i for a in nd.attribute if a.name == "group"), 1)
            fam[nd.name] = fam[nd.output[0]] = (f"dwconv {w[2]}x{w[3]} s{st[0]} {w[0]}" if grp > 1 and w[1] == 1
                                                else f"conv {w[2]}x{w[3]} s{st[0]} {w[1]}->{w[0]}")
        elif nd.op_type in ("BatchNormalization", "Relu", "Clip", "Add") and any(i in fam for i in nd.input):
            fam[nd.output[0]] = next(fam[i] for i in nd.input if i in fam)
    return fam


def family(name, op, bert, convs):
    n = re.sub(r"layer\.\d+", "layer.N", name)
    if bert:
        return next((f for key, f in BERT_FAMILIES if key in n), "other (" + op + ")")
    base = name[:-len("_nchwc")] if name.endswith("_nchwc") else name
    return convs.get(name) or convs.get(base) or op


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("onnx")
    ap.add_argument("plan")
    ap.add_argument("--tailcut", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                      "tailcut"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=4, help="runs of each engine per round")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bert", action="store_true", help="BERT-base's families (else Conv shapes and op types)")
    a = ap.parse_args()
    if a.rounds < 1 or a.n < 1 or a.threads < 1:
        ap.error("--rounds, --n and --threads must be >= 1")
    convs = {} if a.bert else conv_families(a.onnx)
    with tempfile.TemporaryDirectory(prefix="step_profile_") as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = a.threads, 1
        so.enable_profiling, so.profile_file_prefix = True, os.path.join(tmp, "ort")
        s = ort.InferenceSession(a.onnx, so, providers=["CPUExecutionProvider"])
        rng, feeds = np.random.default_rng(0), {}
        for i in s.get_inputs():
            shp = [1 if k == 0 else (d if isinstance(d, int) else 128) for k, d in enumerate(i.shape)]
            if "int64" in i.type:
                feeds[i.name] = (np.ones(shp, np.int64) if "mask" in i.name else
                                 rng.integers(1, 100, shp).astype(np.int64))
            else:
                feeds[i.name] = rng.standard_normal(shp).astype(np.float32)
        for _ in range(3):
            s.run(None, feeds)
        tc, tc_p50 = collections.defaultdict(float), []
        out = os.path.join(tmp, "tc.json")
        for _ in range(a.rounds):
            for _ in range(a.n):
                s.run(None, feeds)
            subprocess.run([a.tailcut, "bench", a.plan, "--iterations", str(a.n), "--warmup", "1", "--profile",
                            "--json", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(out) as f:
                d = json.load(f)
            tc_p50.append(d["p50_ms"])
            for st in d["steps"]:
                tc[family(st["name"], st["ops"].split("+")[0], a.bert, convs)] += st["mean_ms"] / a.rounds
        with open(s.end_profiling()) as f:
            ev = json.load(f)
    runs = [e["dur"] / 1000 for e in ev if e.get("name") == "model_run"]
    ortf = collections.defaultdict(float)
    for e in ev:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            ortf[family(e["name"][:-len("_kernel_time")], e["args"].get("op_name", "?"), a.bert, convs)] += \
                e["dur"] / 1000 / len(runs)
    print(f"onnxruntime P50 {np.median(runs[3:]):.2f} ms ({len(runs) - 3} runs); tailcut P50 of round medians "
          f"{np.median(tc_p50):.2f} ms ({a.rounds} x {a.n} runs); {a.threads} thread(s)")
    print(f"{'family':34s} {'tailcut ms':>10s} {'ORT ms':>9s} {'ratio':>6s}")
    for k in sorted(set(tc) | set(ortf), key=lambda k: -(tc.get(k, 0) - ortf.get(k, 0))):
        t, o = tc.get(k, 0), ortf.get(k, 0)
        if t < 0.01 and o < 0.01:
            continue
        print(f"{k:34s} {t:10.3f} {o:9.3f} {t / o if o else float('nan'):6.2f}")
    print(f"{'sum':34s} {sum(tc.values()):10.3f} {sum(ortf.values()):9.3f}")


if __name__ == "__main__":
    main()
