#!/usr/bin/env python3
"""plan_ab.py - two tailcut plans of one model, interleaved in one process (A, B, A, B, ...) on the same random
inputs, so that the host's slow drifts hit both alike: P50, P90 and minimum of each, their ratios B/A, and the median
of the per-pair ratios. For judging one change (a pass, a kernel) on a noisy machine: build the plan with and without
it and compare them here rather than in two separate runs. A kernel change lives in the library, not the plan: with
--tailcut-lib-b B runs in that second library (e.g. one built from the previous commit), A in --tailcut-lib.

usage: plan_ab.py A.plan B.plan --tailcut-lib build/libtailcut.so [--tailcut-lib-b OLD/libtailcut.so]
                  [--iterations 300] [--warmup 10] [--seed 0] [--shapes NAME:DxD,...]
                  [--env-a KEY=VALUE ...] [--env-b KEY=VALUE ...]

--env-a / --env-b set environment variables while A's (B's) plan is loaded and its context created, for settings the
library reads there (TAILCUT_PIN_THREADS=0/1: worker pinning); the same plan may then be given as A and B.

--shapes gives run-time shapes (for a dynamic plan: inside its first profile; bench/dynamic_cost.py uses it to run a
dynamic plan and a static one at the same shapes).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import compare  # this folder's ctypes binding of libtailcut and its seeded inputs


def engine_inputs(lib, tc, seed, shapes=None):
    """The engine's inputs (static shapes, or the run-time `shapes` given by name), as compare.py's seeded arrays."""
    c = compare.ctypes
    lib.tc_engine_num_inputs.restype, lib.tc_engine_num_inputs.argtypes = c.c_int, [c.c_void_p]
    lib.tc_engine_input_info.restype = c.c_int
    lib.tc_engine_input_info.argtypes = [c.c_void_p, c.c_int, c.POINTER(compare.TcIoInfo)]
    arrays = {}
    for k in range(lib.tc_engine_num_inputs(tc.engine)):
        info = compare.TcIoInfo()
        tc._check(lib.tc_engine_input_info(tc.engine, k, c.byref(info)), "input info")
        name, shape = info.name.decode(), [info.dims[d] for d in range(info.rank)]
        if shapes and name in shapes:
            shape = shapes[name]
        if any(d < 0 for d in shape):
            raise compare.CompareError(f"input '{name}' has a dynamic shape: build the plans with static shapes")
        arrays[name] = compare.make_input(name, shape, compare.TC_DTYPE_TO_NUMPY[info.dtype], seed + k)[0]
    return arrays


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tailcut-lib", required=True)
    ap.add_argument("--tailcut-lib-b", help="the library B runs in (default: --tailcut-lib)")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shapes", help="run-time input shapes NAME:DxD,... (dynamic plans)")
    ap.add_argument("--env-a", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--env-b", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    envs = []
    for items in (args.env_a, args.env_b):
        kv = {}
        for item in items:
            key, eq, value = item.partition("=")
            if not eq or not key:
                ap.error(f"--env-a/--env-b take KEY=VALUE, got '{item}'")
            kv[key] = value
        envs.append(kv)
    if args.iterations < 1 or args.warmup < 0:
        ap.error("--iterations must be >= 1 and --warmup >= 0")
    lib = compare.load_library(args.tailcut_lib)
    lib_b = compare.load_library(args.tailcut_lib_b) if args.tailcut_lib_b else lib
    plans = [compare.Tailcut(lib), compare.Tailcut(lib_b)]
    try:
        for tc, path, env in zip(plans, (args.a, args.b), envs):
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                tc.load(path)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        arrays = engine_inputs(lib, plans[0], args.seed, compare.parse_shapes(args.shapes) if args.shapes else None)
        for tc in plans:
            tc.bind(arrays)
        for _ in range(args.warmup):
            for tc in plans:
                tc.run()
        ms = ([], [])
        for i in range(args.iterations):
            order = (0, 1) if i % 2 == 0 else (1, 0)  # alternate who goes first
            for k in order:
                t0 = time.perf_counter_ns()
                plans[k].run()
                ms[k].append((time.perf_counter_ns() - t0) / 1e6)
        outs = [tc.outputs() for tc in plans]  # of the last run, on the same inputs
    except compare.CompareError as e:
        print(f"plan_ab: {e}", file=sys.stderr)
        return 1
    finally:
        for tc in plans:
            tc.close()
    q = lambda v, p: sorted(v)[min(len(v) - 1, int(p * len(v)))]
    print(f"{args.iterations} interleaved runs of each after {args.warmup} warm-up runs")
    print("          P50        P90        P99        min")
    for label, v in zip(("A", "B"), ms):
        print(f"  {label}  {q(v, 0.5):9.3f}  {q(v, 0.9):9.3f}  {q(v, 0.99):9.3f}  {min(v):9.3f}")
    for name, a in outs[0].items():
        b = outs[1].get(name)
        if b is None or b.shape != a.shape:
            print(f"output '{name}': not in B with its shape")
            continue
        diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
        same = "identical bits" if a.tobytes() == b.tobytes() else f"max |A - B| {diff:.3g}"
        print(f"output '{name}': {same}")
    pairs = statistics.median(b / a for a, b in zip(*ms))
    print(f"B/A: P50 {q(ms[1], 0.5) / q(ms[0], 0.5):.3f}x  P99 {q(ms[1], 0.99) / q(ms[0], 0.99):.3f}x  "
          f"min {min(ms[1]) / min(ms[0]):.3f}x  "
          f"median of pair ratios {pairs:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
