#!/usr/bin/env python3
"""graph_replay.py - a CUDA plan's outputs are the same bits whether its steps ran as plain launches (the first run
after shapes are set), were captured (the second) or replayed from the captured graph (the rest), and stay so after
the shapes change and come back, and after the input changes.

usage: graph_replay.py PLAN --tailcut-lib build/libtailcut.so       (run from the repository root)
       graph_replay.py PLAN --tailcut-lib build/libtailcut.so --batches 1,3,1,4 --reference-plan CPU.plan

With --batches (a plan with a dynamic first dim): one context runs each batch in turn (so that shapes change and come
back: each change drops the captured graph and captures again), five runs each with the same bits, and, with
--reference-plan, outputs within 1e-4 of the largest value of the reference plan's (the CPU's) at the same shapes.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compare  # noqa: E402
import plan_ab  # noqa: E402


def batch_inputs(lib, tc, seed, batch):
    """The engine's inputs with their first dim set to batch."""
    c = compare.ctypes
    shapes = {}
    for k in range(lib.tc_engine_num_inputs(tc.engine)):
        info = compare.TcIoInfo()
        tc._check(lib.tc_engine_input_info(tc.engine, k, c.byref(info)), "input info")
        dims = [info.dims[d] for d in range(info.rank)]
        dims[0] = batch
        shapes[info.name.decode()] = dims
    return plan_ab.engine_inputs(lib, tc, seed, shapes)


def dynamic(lib, args):
    tc, ref = compare.Tailcut(lib), compare.Tailcut(lib)
    tc.load(args.plan)
    if args.reference_plan:
        ref.load(args.reference_plan)
    bad = 0
    try:
        for b in [int(v) for v in args.batches.split(",")]:
            arrays = batch_inputs(lib, tc, b, b)  # kept alive through the runs
            tc.bind(arrays)
            outs = []
            for _ in range(5):
                tc.run()
                outs.append(tc.outputs())
            for name, a in outs[0].items():
                if a.shape[0] != b:
                    print(f"batch {b}: output '{name}' has shape {a.shape}")
                    bad += 1
                if any(o[name].tobytes() != a.tobytes() for o in outs[1:]):
                    print(f"batch {b}: output '{name}' differs between plain, captured and replayed runs")
                    bad += 1
            if args.reference_plan:
                ref.bind(arrays)
                ref.run()
                for name, want in ref.outputs().items():
                    got = outs[0][name].astype(np.float64)
                    w = want.astype(np.float64)
                    err = float(np.max(np.abs(got - w))) if w.size else 0.0
                    peak = float(np.max(np.abs(w))) if w.size else 0.0
                    ok = np.isfinite(got).all() and err <= 1e-4 * max(peak, 1e-30)
                    print(f"batch {b}: output '{name}' max |CUDA - CPU| {err:.3g} (largest {peak:.3g}): "
                          + ("ok" if ok else "TOO FAR"))
                    bad += not ok
    finally:
        tc.close()
        ref.close()
    print("dynamic shapes: " + ("every batch right, same bits in every run" if bad == 0 else f"{bad} problems"))
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("--tailcut-lib", required=True)
    ap.add_argument("--batches", help="first-dim sizes to run in turn in one context (a dynamic plan)")
    ap.add_argument("--reference-plan", help="a plan of the same model (the CPU's) to compare outputs with")
    args = ap.parse_args(argv)
    if args.batches:
        return dynamic(compare.load_library(args.tailcut_lib), args)
    lib = compare.load_library(args.tailcut_lib)
    tc = compare.Tailcut(lib)
    tc.load(args.plan)
    bad = 0
    try:
        for seed in (0, 1):
            arrays = plan_ab.engine_inputs(lib, tc, seed)
            tc.bind(arrays)
            runs = []
            for _ in range(5):
                tc.run()
                runs.append(tc.outputs())
            for i, out in enumerate(runs[1:], start=2):
                for name, a in runs[0].items():
                    if a.dtype.kind == "f" and not np.isfinite(a).all():
                        print(f"seed {seed}: output '{name}' has non-finite values")
                        bad += 1
                    if out[name].tobytes() != a.tobytes():
                        print(f"seed {seed}: run {i} output '{name}' differs from run 1 (plain launches)")
                        bad += 1
        other = plan_ab.engine_inputs(lib, tc, 1)
        tc.bind(other)
        tc.run()
        o1 = tc.outputs()
        first = plan_ab.engine_inputs(lib, tc, 0)  # kept alive: the context reads the bound buffers at run
        tc.bind(first)
        tc.run()
        tc.bind(other)  # the same shapes: the graph stays, the staged input is new
        tc.run()
        o2 = tc.outputs()
        for name, a in o1.items():
            if o2[name].tobytes() != a.tobytes():
                print(f"output '{name}' after switching inputs differs")
                bad += 1
    finally:
        tc.close()
    print("graph replay: " + ("same bits in every run" if bad == 0 else f"{bad} differences"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
