#!/usr/bin/env python3
"""compare_openvino.py - tailcut against OpenVINO on one model, interleaved in one process.

The OpenVINO peer of compare.py (whose inputs, tailcut driver and statistics it reuses): both engines
run the same seeded inputs with the same thread count, alternating one run of each per iteration (the
order flips every iteration), and the script reports both latency distributions, the ratios
tailcut/OpenVINO of P50 and P99, and the largest output difference.

OpenVINO: CPU plugin, PERFORMANCE_HINT LATENCY, INFERENCE_NUM_THREADS N, the model reshaped to the static
input shapes, inputs set once as tensors sharing the numpy arrays, InferRequest.infer() timed. Its
inference precision is left at its default (printed): BF16 on CPUs with AVX512-BF16 or AMX, else FP32.
tailcut: a prebuilt plan (--tailcut-plan, e.g. `tailcut build --fp16`) or the model built in memory.

OpenVINO is not in tools/requirements.txt (no test needs it): `.venv/bin/pip install openvino`.

Example:
    python bench/compare_openvino.py resnet50.onnx --threads 2 --batch 1 --tailcut-plan r50_fp16.plan
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare as cmp  # noqa: E402


def run(args):
    import onnxruntime as ort
    import openvino as ov

    meta = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])  # input names and types only
    shapes = cmp.input_shapes(meta.get_inputs(), args.batch, cmp.parse_shapes(args.shapes) if args.shapes else {})
    arrays = {i.name: cmp.make_input(i.name, shapes[i.name], cmp.ORT_TYPE_TO_NUMPY[i.type], args.seed)[0]
              for i in meta.get_inputs()}
    del meta

    core = ov.Core()
    model = core.read_model(args.model)
    model.reshape({name: ov.PartialShape(dims) for name, dims in shapes.items()})
    t0 = time.perf_counter_ns()
    compiled = core.compile_model(model, "CPU", {"PERFORMANCE_HINT": "LATENCY",
                                                 "INFERENCE_NUM_THREADS": args.threads})
    ov_ms = cmp.ms_since(t0)
    precision = str(compiled.get_property("INFERENCE_PRECISION_HINT"))
    req = compiled.create_infer_request()
    for name, a in arrays.items():
        req.set_tensor(name, ov.Tensor(a, shared_memory=True))

    tc = cmp.Tailcut(cmp.load_library(args.tailcut_lib))
    try:
        if args.tailcut_plan:
            tc.load(args.tailcut_plan)
        else:
            tc.build(args.model, shapes, args.threads)
            with tempfile.TemporaryDirectory(prefix="tc_compare_ov_") as tmp:
                tc.save_and_load(os.path.join(tmp, "model.plan"))
        tc.bind(arrays)
        for _ in range(args.warmup):
            req.infer()
            tc.run()
        tc_out = tc.outputs()
        errors = {}
        for k, out in enumerate(compiled.outputs):
            name = out.get_any_name()
            ref = req.get_output_tensor(k).data
            got = tc_out.get(name)
            if got is not None and got.shape == ref.shape:
                a, b = ref.astype(np.float64).ravel(), got.astype(np.float64).ravel()
                cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-300))
                errors[name] = (float(np.max(np.abs(a - b))), float(np.max(np.abs(a))), cos)
        ov_t, tc_t = [], []
        clock = time.perf_counter_ns
        for k in range(args.iterations):
            for which in ((0, 1) if k % 2 == 0 else (1, 0)):
                t0 = clock()
                if which == 0:
                    req.infer()
                    ov_t.append(clock() - t0)
                else:
                    st = tc.lib.tc_context_run(tc.ctx)
                    tc_t.append(clock() - t0)
                    if st != 0:
                        tc.run()  # raises with the context's reason
    finally:
        tc.close()

    s_ov, s_tc = cmp.stats(np.asarray(ov_t) / 1e6), cmp.stats(np.asarray(tc_t) / 1e6)
    print(f"model: {args.model}  threads: {args.threads}  openvino {ov.__version__} (inference precision "
          f"{precision}, compile {ov_ms:.0f} ms)  tailcut plan: {args.tailcut_plan or '(built in memory)'}")
    for name, (err, mx, cos) in errors.items():
        print(f"accuracy: output '{name}': max abs error {err:.3g} (max |openvino| {mx:.3g}), cosine {cos:.6f}")
    print(f"{args.iterations} interleaved iterations after {args.warmup} warm-up runs each:")
    print(f"  {'':<12} {'P50 ms':>10} {'P90 ms':>10} {'P99 ms':>10} {'P99.9 ms':>10} {'mean ms':>10} {'CV':>7}")
    print(cmp.fmt_row("openvino", s_ov))
    print(cmp.fmt_row("tailcut", s_tc))
    print(f"ratio tailcut/openvino: P50 {s_tc['p50_ms'] / s_ov['p50_ms']:.3f}x  "
          f"P99 {s_tc['p99_ms'] / s_ov['p99_ms']:.3f}x  (below 1: tailcut faster)")


def main(argv=None):
    p = argparse.ArgumentParser(description="tailcut vs OpenVINO, interleaved in one process.")
    p.add_argument("model", help="the .onnx model")
    p.add_argument("--threads", type=int, required=True, help="threads of each engine")
    p.add_argument("--batch", type=int, default=0, help="size of every input's dynamic first dim")
    p.add_argument("--shapes", help="NAME:DxDx..,... input shapes (override --batch)")
    p.add_argument("--iterations", type=int, default=200, help="timed runs of each engine (default 200)")
    p.add_argument("--warmup", type=int, default=10, help="untimed runs of each engine first (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--tailcut-lib", default=os.path.join(os.path.dirname(here), "build", "libtailcut.so"),
                   help="path of libtailcut.so (default: build/libtailcut.so of this repository)")
    p.add_argument("--tailcut-plan", help="run this prebuilt plan instead of building MODEL")
    args = p.parse_args(argv)
    if args.threads < 1 or args.iterations < 1 or args.warmup < 0:
        p.error("--threads and --iterations must be >= 1, --warmup >= 0")
    try:
        run(args)
    except cmp.CompareError as e:
        print(f"compare_openvino: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
