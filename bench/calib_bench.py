#!/usr/bin/env python3
"""calib_bench.py - where `tailcut calibrate` spends its time, and how long it takes: runs it REPEAT times on a folder of
samples (made here when --make-samples: random non-zero inputs of the model's shapes) and prints, per run and as the
median over runs, the wall time of the whole command, the time to its first progress line, and the parts that
`calibrate --verbose` reports: reading the sample files, building the FP32 engine of the observed graph, running it,
the histograms, the range search with the cache write (the rest is start-up: loading the model, creating the
calibrator). With --baseline OTHER_TAILCUT each repeat also runs that binary (e.g. one built from main) on the same
samples right after, interleaved so that the host's drifts hit both, and compares the caches' scales (a benchmark,
not a test: it prints figures and fails only when a command fails).

usage: calib_bench.py --tailcut build/tailcut MODEL.onnx --data DIR [--make-samples N] [--seq 128]
                      [--samples N] [--repeat 3] [--baseline OTHER/tailcut] [--work DIR]

--make-samples N writes N samples to DIR (float inputs: standard normal; integer inputs: token ids in 1..999 with an
attention mask of ones then zeros); dynamic dims take 1 (batch) or --seq.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PARTS = ["read", "engine build", "engine run", "histograms", "ranges and write"]


def model_inputs(tailcut, model):
    """[(name, dtype, dims)] from `tailcut inspect` (dims as given: ints or symbols)."""
    out = subprocess.run([tailcut, "inspect", model], check=True, capture_output=True, text=True).stdout
    ins = []
    for line in out.splitlines():
        m = re.match(r"\s+input\s+(\S+)\s+(\S+)\s+\[(.*)\]", line)
        if m:
            ins.append((m.group(1), m.group(2), [d.strip() for d in m.group(3).split(",") if d.strip()]))
    if not ins:
        sys.exit(f"calib_bench: no inputs in `tailcut inspect {model}`")
    return ins


def make_samples(ins, folder, n, seq):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    for k in range(n):
        for name, dtype, dims in ins:
            shape = [int(d) if d.isdigit() else (1 if i == 0 else seq) for i, d in enumerate(dims)]
            if dtype.startswith("float"):
                x = rng.standard_normal(shape).astype(np.float32)
                x[x == 0] = 1e-3  # non-zero samples
            elif "mask" in name:
                x = np.ones(shape, np.int64)
                x[..., shape[-1] // 2 + k % max(1, shape[-1] // 2):] = 0
            else:
                x = rng.integers(1, 1000, shape).astype(np.int64)
            fname = f"{name}.{k}.npy" if len(ins) > 1 else f"x_{k}.npy"
            np.save(os.path.join(folder, fname), x)


def run_calibrate(tailcut, model, data, cache, samples, verbose):
    """(wall s, first progress line s or None, {part: s}) of one calibration."""
    cmd = [tailcut, "calibrate", model, "--data", data, "-o", cache]
    if samples:
        cmd += ["--samples", str(samples)]
    if verbose:
        cmd += ["--verbose"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = None
    err_lines = []
    for line in p.stderr:  # plain progress lines: stderr is a pipe
        if first is None and line.startswith("tailcut calibrate:"):
            first = time.monotonic() - t0
        err_lines.append(line)
    out = p.stdout.read()
    p.wait()
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"calib_bench: {' '.join(cmd)} failed:\n{''.join(err_lines)}")
    parts = {}
    m = re.search(r"^time: (.*)$", out, re.M)
    if m:
        for part in PARTS:
            pm = re.search(re.escape(part) + r" ([0-9.]+) s", m.group(1))
            if pm:
                parts[part] = float(pm.group(1))
    return wall, first, parts


def scales(path):
    s = {}
    for line in open(path).read().splitlines()[1:]:
        if ": " in line:
            name, hexv = line.rsplit(": ", 1)
            s[name] = np.frombuffer(bytes.fromhex(hexv)[::-1], np.float32)[0]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--tailcut", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--make-samples", type=int, default=0)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--samples", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    if a.make_samples:
        make_samples(model_inputs(a.tailcut, a.model), a.data, a.make_samples, a.seq)
    work = a.work or tempfile.mkdtemp(prefix="calib_bench.")
    runs = {"new": [], "baseline": []}
    for r in range(a.repeat):
        sides = [("new", a.tailcut, True)] + ([("baseline", a.baseline, False)] if a.baseline else [])
        for side, binary, verbose in sides:
            cache = os.path.join(work, f"{side}.cache")
            wall, first, parts = run_calibrate(binary, a.model, a.data, cache, a.samples, verbose)
            runs[side].append((wall, first, parts))
            rest = wall - sum(parts.values()) if parts else None
            print(f"run {r} {side:8s}: {wall:7.2f} s wall, first progress line "
                  f"{'-' if first is None else f'{first:.2f} s'}"
                  + "".join(f", {k} {v:.2f} s" for k, v in parts.items())
                  + (f", start-up and rest {rest:.2f} s" if rest is not None else ""), flush=True)
    for side, rs in runs.items():
        if not rs:
            continue
        line = f"median {side:8s}: {statistics.median(w for w, _, _ in rs):7.2f} s wall"
        firsts = [f for _, f, _ in rs if f is not None]
        if firsts:
            line += f", first progress line {statistics.median(firsts):.2f} s"
        for part in PARTS:
            v = [p[part] for _, _, p in rs if part in p]
            if v:
                line += f", {part} {statistics.median(v):.2f} s"
        print(line)
    if a.baseline:
        n, b = scales(os.path.join(work, "new.cache")), scales(os.path.join(work, "baseline.cache"))
        common = sorted(set(n) & set(b))
        rel = [abs(n[k] - b[k]) / b[k] for k in common if b[k] > 0]
        same = sum(1 for k in common if n[k] == b[k])
        print(f"caches: {len(common)} tensors in both ({len(n)} new, {len(b)} baseline), {same} equal scales, "
              f"largest relative difference {max(rel) if rel else 0:.2e}")
        print(f"ratio new/baseline (median wall): "
              f"{statistics.median(w for w, _, _ in runs['new']) / statistics.median(w for w, _, _ in runs['baseline']):.3f}")


if __name__ == "__main__":
    main()
