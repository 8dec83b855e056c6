#!/usr/bin/env python3
"""dynamic_cost.py - what a dynamic plan costs against static plans, shape by shape (issue 33): one plan built with a
profile (min, opt, max), and for each of a few shapes inside it (min, opt, max and two between) a plan built for
exactly that shape; each pair runs interleaved in one process on the same inputs (bench/plan_ab.py), and the ratio
dynamic/static per shape is printed (median of the pair ratios; P50 ratio). TensorRT users expect 5-10%.

usage: dynamic_cost.py MODEL.onnx --input NAME --min DxD.. --opt DxD.. --max DxD.. --tailcut build/tailcut
                       --tailcut-lib build/libtailcut.so [--between DxD.. ...] [--fixed NAME:DxD,...]
                       [--iterations 100] [--work DIR] [--json FILE] [--build-args "..."]

--input names the dynamic input (the one the profile ranges over); --fixed gives the other inputs' shapes (for BERT:
attention_mask follows input_ids, so give both through --pair NAME). Builds share one timing cache in --work.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def dims(s):
    return [int(x) for x in s.lower().split("x")]


def spec(name, d, pairs):
    """NAME:DxD plus the paired inputs at the same shape."""
    txt = "x".join(str(v) for v in d)
    return ",".join(f"{n}:{txt}" for n in [name] + pairs)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"dynamic_cost: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return p.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", required=True)
    ap.add_argument("--pair", action="append", default=[], help="another input that takes the same shape")
    ap.add_argument("--min", required=True)
    ap.add_argument("--opt", required=True)
    ap.add_argument("--max", required=True)
    ap.add_argument("--between", action="append", default=[], help="more shapes inside the profile")
    ap.add_argument("--tailcut", required=True)
    ap.add_argument("--tailcut-lib", required=True)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--work", default="out/dynamic_cost")
    ap.add_argument("--json")
    ap.add_argument("--build-args", default="", help="more tailcut build options, e.g. \"--bf16\"")
    a = ap.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    cache = os.path.join(a.work, "timing.cache")
    extra = a.build_args.split()
    base = os.path.splitext(os.path.basename(a.model))[0]
    dyn = os.path.join(a.work, f"{base}.dynamic.plan")
    run([a.tailcut, "build", a.model, "-o", dyn, "--timing-cache", cache,
         "--min-shapes", spec(a.input, dims(a.min), a.pair), "--opt-shapes", spec(a.input, dims(a.opt), a.pair),
         "--max-shapes", spec(a.input, dims(a.max), a.pair)] + extra)
    shapes = [("min", a.min), ("opt", a.opt)] + [(f"between", b) for b in a.between] + [("max", a.max)]
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    print(f"{base}: dynamic plan {a.min}..{a.max} (opt {a.opt}) against static plans, {a.iterations} pairs each")
    print(f"  {'shape':<18} {'which':<8} {'P50 static ms':>14} {'P50 dynamic ms':>15} {'P50 ratio':>10} {'pair ratio':>11}")
    for which, s in shapes:
        st = os.path.join(a.work, f"{base}.{s}.plan")
        sp = spec(a.input, dims(s), a.pair)
        run([a.tailcut, "build", a.model, "-o", st, "--timing-cache", cache, "--shapes", sp] + extra)
        out = run([sys.executable, os.path.join(here, "plan_ab.py"), st, dyn, "--tailcut-lib", a.tailcut_lib,
                   "--iterations", str(a.iterations), "--shapes", sp])
        p50 = re.findall(r"^\s+[AB]\s+([0-9.]+)", out, re.M)
        m = re.search(r"B/A: P50 ([0-9.]+)x .* median of pair ratios ([0-9.]+)x", out)
        same = "identical bits" in out
        diffs = [float(d) for d in re.findall(r"max \|A - B\| ([0-9.eE+-]+|nan|inf)", out)]
        row = {"shape": s, "which": which, "p50_static_ms": float(p50[0]), "p50_dynamic_ms": float(p50[1]),
               "p50_ratio": float(m.group(1)), "pair_ratio": float(m.group(2)), "identical_bits": same,
               "max_abs_diff": max(diffs) if diffs else 0.0}
        rows.append(row)
        note = "" if same else f"  (outputs differ: max |diff| {row['max_abs_diff']:.3g})"
        print(f"  {s:<18} {which:<8} {row['p50_static_ms']:>14.3f} {row['p50_dynamic_ms']:>15.3f} "
              f"{row['p50_ratio']:>9.3f}x {row['pair_ratio']:>10.3f}x{note}")
    worst = max(rows, key=lambda r: r["pair_ratio"])
    print(f"worst: {worst['shape']} at {worst['pair_ratio']:.3f}x (median pair ratio, dynamic/static)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "profile": [a.min, a.opt, a.max], "build_args": a.build_args, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
