# ocr_cls_eval.py - the task metric of the PP-OCR direction classifier on a data set made by
# ocr_cls_data.py: for each model, accuracy of argmax vs label (%), top-1 agreement with the first model
# listed (%) and the largest probability difference from it; prints a table, optionally writes JSON.
#
#   python bench/accuracy/ocr_cls_eval.py --data DIR --model M [--model M2 ...] [--tailcut BIN] [--json OUT]
#
# A model is PATH or RUNNER:PATH. RUNNER is ort (onnxruntime) or tailcut (`BIN run`); without it an
# .onnx runs on onnxruntime and a .plan on tailcut. A plan runs in chunks of the largest batch its
# profiles allow (one `tailcut run` per sample for a batch-1 plan); an .onnx on tailcut is built in
# memory by every `tailcut run`, in chunks of 100 (--chunk): slow (the tuner times every batch), so
# prefer a plan.
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

import ocr_cls_common as common


def parse_spec(spec):
    m = re.match(r"^(ort|tailcut):(.+)$", spec)
    if m:
        return m.group(1), m.group(2)
    return ("tailcut" if spec.endswith(".plan") else "ort"), spec


def run_ort(path, x, chunk):
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {name: x[i:i + chunk]})[0] for i in range(0, len(x), chunk)])


def plan_max_batch(tailcut, plan, name):
    """Largest batch any profile of the plan allows for input NAME at [3,48,192] (1 if none is found)."""
    text = subprocess.run([tailcut, "inspect", plan], check=True, capture_output=True, text=True).stdout
    best = 0
    for m in re.finditer(rf"^\s+{re.escape(name)}: min (\S+) opt \S+ max (\S+)", text, re.M):
        lo, hi = ([int(d) for d in s.split("x")] for s in m.groups())
        if tuple(hi[1:]) == common.CLS_SHAPE and lo[0] <= 1:
            best = max(best, hi[0])
    return best or 1


def run_tailcut(tailcut, path, x, name, chunk):
    if chunk is None:
        chunk = plan_max_batch(tailcut, path, name) if path.endswith(".plan") else 100
    outs = []
    with tempfile.TemporaryDirectory(prefix="ocr_cls_eval.") as tmp:
        inp, out_dir = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out")
        for i in range(0, len(x), chunk):
            np.save(inp, x[i:i + chunk])
            for f in glob.glob(os.path.join(out_dir, "*.npy")):
                os.remove(f)
            r = subprocess.run([tailcut, "run", path, "--input", f"{name}={inp}", "--output-dir", out_dir],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"tailcut run {path} failed (rc {r.returncode}) on samples {i}..:\n"
                                 f"{r.stdout}{r.stderr}")
            files = glob.glob(os.path.join(out_dir, "*.npy"))
            if len(files) != 1:
                raise SystemExit(f"tailcut run {path}: expected one output .npy, got {files}")
            outs.append(np.load(files[0]))
    return np.concatenate(outs)


def main():
    ap = argparse.ArgumentParser(description="accuracy of the OCR direction classifier, per model")
    ap.add_argument("--data", required=True, help="folder made by ocr_cls_data.py")
    ap.add_argument("--model", action="append", required=True, help="[ort:|tailcut:]PATH, repeatable")
    ap.add_argument("--tailcut", default="build/tailcut", help="tailcut binary")
    ap.add_argument("--chunk", type=int, default=None, help="samples per run (default: see above)")
    ap.add_argument("--input-name", default=None,
                    help="a plan's input (default: the .onnx's, for a plan rapidocr's cls model's)")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()

    x = np.load(os.path.join(args.data, "eval", "x.npy"))
    labels = np.load(os.path.join(args.data, "eval", "labels.npy"))

    results, first = [], None
    for spec in args.model:
        runner, path = parse_spec(spec)
        t0 = time.perf_counter()
        if runner == "ort":
            probs = run_ort(path, x, args.chunk or 100)
        else:
            name = args.input_name or common.input_name(path if path.endswith(".onnx") else common.model_path())
            probs = run_tailcut(args.tailcut, path, x, name, args.chunk)
        seconds = time.perf_counter() - t0
        if probs.shape != (len(x), len(common.LABELS)):
            raise SystemExit(f"{spec}: output shape {probs.shape}, expected {(len(x), len(common.LABELS))}")
        pred = probs.argmax(axis=1)
        if first is None:
            first = probs
        results.append({
            "model": path, "runner": runner, "n": int(len(x)),
            "accuracy_pct": round(100.0 * float((pred == labels).mean()), 2),
            "agreement_pct": round(100.0 * float((pred == first.argmax(axis=1)).mean()), 2),
            "max_abs_prob_diff": float(np.abs(probs - first).max()),
            "seconds": round(seconds, 2),
        })

    print(f"{'model':<48} {'runner':<8} {'N':>6} {'acc %':>7} {'agree %':>8} {'max|dp|':>9} {'s':>6}")
    for r in results:
        print(f"{os.path.basename(r['model'])[-48:]:<48} {r['runner']:<8} {r['n']:>6} {r['accuracy_pct']:>7.2f} "
              f"{r['agreement_pct']:>8.2f} {r['max_abs_prob_diff']:>9.2e} {r['seconds']:>6.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"data": args.data, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
