"""conv_gflops.py - achieved GFLOP/s of a model's convolutions (and MatMul/Gemm) in a tailcut plan.

FLOPs come from the ONNX model (onnx shape inference at the given batch); times come from
`tailcut bench PLAN --profile --json`. Steps are matched by name (a fused step keeps the name of
its Conv/MatMul/Gemm node). Example:

    python bench/conv_gflops.py model.onnx model.plan --tailcut build/tailcut --batch 1 --iterations 50

Prints per-op-type totals and the overall GFLOP/s; compare with bench/gemm_peak's peak.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import shape_inference


def dims_of(vi):
    return [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]


def node_flops(model, batch, input_shapes=None):
    """FLOPs (2 per multiply-add) of every Conv, MatMul and Gemm node, by node name. An input named in input_shapes
    ({name: [dims]}) takes those dims (BERT's sequence length too); any other input's first symbolic dim is batch."""
    g = model.graph
    for inp in g.input:
        dims = inp.type.tensor_type.shape.dim
        if input_shapes and inp.name in input_shapes and len(input_shapes[inp.name]) == len(dims):
            for d, v in zip(dims, input_shapes[inp.name]):
                d.dim_value = v
            continue
        for d in dims:
            if d.HasField("dim_param"):
                d.dim_value = batch
                break
    inferred = shape_inference.infer_shapes(model)
    shapes = {vi.name: dims_of(vi) for vi in list(inferred.graph.value_info) + list(inferred.graph.input) +
              list(inferred.graph.output)}
    for init in g.initializer:
        shapes[init.name] = list(init.dims)
    flops = {}
    for n in g.node:
        try:
            if n.op_type == "Conv":
                y, w = shapes[n.output[0]], shapes[n.input[1]]
                k = 1
                for d in w[2:]:
                    k *= d
                out = 1
                for d in y:
                    out *= d
                flops[n.name] = ("Conv", 2 * out * w[1] * k)  # w[1] is Cin per group
            elif n.op_type in ("MatMul", "Gemm"):
                a, y = shapes[n.input[0]], shapes[n.output[0]]
                trans_a = next((a_.i for a_ in n.attribute if a_.name == "transA"), 0)
                kdim = a[-2] if (n.op_type == "Gemm" and trans_a) else a[-1]
                out = 1
                for i, d in enumerate(y):  # a leading dim shape inference lost (BERT's, through Expand) is the batch
                    out *= batch if (d is None and i == 0) else d
                flops[n.name] = (n.op_type, 2 * out * kdim)
        except (KeyError, TypeError, IndexError):
            continue
    return flops


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("plan")
    p.add_argument("--tailcut", default="build/tailcut")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--iterations", type=int, default=50)
    a = p.parse_args()
    flops = node_flops(onnx.load(a.model), a.batch)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b.json")
        subprocess.run([a.tailcut, "bench", a.plan, "--profile", "--iterations", str(a.iterations), "--warmup", "5",
                        "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            bench = json.load(f)
    totals = {}
    for s in bench["steps"]:
        if s["name"] in flops:
            op, fl = flops[s["name"]]
            t = totals.setdefault(op, [0.0, 0.0, 0])
            t[0] += fl
            t[1] += s["mean_ms"]
            t[2] += 1
    all_fl = sum(t[0] for t in totals.values())
    all_ms = sum(t[1] for t in totals.values())
    for op, (fl, ms, n) in sorted(totals.items()):
        print("%-8s %3d steps  %8.3f GFLOP  %9.3f ms  %7.1f GFLOP/s" % (op, n, fl / 1e9, ms, fl / ms / 1e6 if ms else 0))
    if all_ms:
        print("total             %8.3f GFLOP  %9.3f ms  %7.1f GFLOP/s (run mean %.3f ms)" %
              (all_fl / 1e9, all_ms, all_fl / all_ms / 1e6, bench["mean_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
