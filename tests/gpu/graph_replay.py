#!/usr/bin/env python3
"""graph_replay.py - a CUDA plan's outputs are the same bits whether its steps ran as plain launches (the first run
after shapes are set), were captured (the second) or replayed from the captured graph (the rest), and stay so after
the shapes change and come back, and after the input changes.

usage: graph_replay.py PLAN --tailcut-lib build/libtailcut.so       (run from the repository root)
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compare  # noqa: E402
import plan_ab  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("--tailcut-lib", required=True)
    args = ap.parse_args(argv)
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
