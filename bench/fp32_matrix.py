#!/usr/bin/env python3
"""fp32_matrix.py - issue 28's FP32 table for the machine it runs on: ResNet-50, MobileNetV2, EfficientNet-B0 and
BERT-base (sequence 128) against onnxruntime, and OpenVINO where installed, interleaved (bench/compare.py's
machinery), N threads, batch 1; then each step family's GFLOP/s as a fraction of the machine's FP32 peak.

OpenVINO: when the `openvino` module is installed, each model runs on its CPU plugin too, in the same interleaved
rotation (FP32 precision hint, latency mode, one stream, the same threads: bench/ov_peer.py), and each cell gains its
ratio.
It is not in tools/requirements.txt; install it into a virtual environment of your own:
    python3 -m venv /tmp/ov-venv
    /tmp/ov-venv/bin/pip install numpy==2.3.5 onnx==1.19.1 onnxruntime==1.23.2 openvino==2026.4.1
    /tmp/ov-venv/bin/python bench/fp32_matrix.py MODELS_DIR

usage: fp32_matrix.py MODELS_DIR [--threads 2] [--iterations 200] [--warmup 10] [--ghz F] [--models a,b]
                      [--tailcut build/tailcut] [--tailcut-lib build/libtailcut.so] [--json OUT]

MODELS_DIR holds resnet50, mobilenet_v2, efficientnet_b0 and bert_base as NAME.onnx or NAME.onnx.xz (decompressed
into a temporary folder); a model that is absent is reported as such and left out.

Peak: threads x 2 FMA units x lanes x 2 FLOP x GHz, lanes 16 with AVX-512 (/proc/cpuinfo's avx512f) and 8 with AVX2
only or under TAILCUT_MAX_ISA=avx2 (tailcut's cap, which the tailcut runs obey). GHz: --ghz, else /proc/cpuinfo's
"cpu MHz" of the first core (the current clock: give --ghz for the all-core clock when you know it). A step family is
the tactic that runs the step (conv_nchw8c_f32_avx2, dwconv_..., gemm_...); FLOPs count the Conv, MatMul and Gemm
steps (2 per multiply-add, bench/conv_gflops.py), times are `tailcut bench --profile` step means.

onnxruntime (and OpenVINO) are never capped: under TAILCUT_MAX_ISA=avx2 on an AVX-512 machine their figures use
AVX-512, so the ratios are labelled "tailcut capped to AVX2" and are not those of an AVX2-only machine.
"""
import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import types

import onnx

import compare  # this folder's interleaved tailcut-vs-onnxruntime runner
import conv_gflops  # FLOPs per Conv/MatMul/Gemm node
import ov_peer  # OpenVINO, where installed

MODELS = (("resnet50", "ResNet-50"), ("mobilenet_v2", "MobileNetV2"), ("efficientnet_b0", "EfficientNet-B0"),
          ("bert_base", "BERT-base s128"))
BERT_SEQ = 128


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_ghz():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":", 1)[1]) / 1000.0
    except (OSError, ValueError):
        pass
    return None


def peak_gflops(threads, ghz):
    """(lanes, ISA label, FP32 peak GFLOP/s of `threads` cores) for the ISA tailcut uses here."""
    flags = cpu_flags()
    cap = os.environ.get("TAILCUT_MAX_ISA", "").lower()
    if "avx512f" in flags and cap not in ("avx2", "sse42", "ref", "scalar"):
        lanes, isa = 16, "AVX-512"
    elif "avx2" in flags and "fma" in flags and cap not in ("sse42", "ref", "scalar"):
        lanes, isa = 8, "AVX2" + (" (TAILCUT_MAX_ISA=avx2)" if "avx512f" in flags else "")
    else:
        lanes, isa = 4, "SSE"
    return lanes, isa, threads * 2 * lanes * 2 * ghz


def find_model(folder, name, tmp):
    plain = os.path.join(folder, name + ".onnx")
    if os.path.isfile(plain):
        return plain
    packed = plain + ".xz"
    if os.path.isfile(packed):
        out = os.path.join(tmp, name + ".onnx")
        with lzma.open(packed) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        return out
    return None


def shapes_spec(model_path, batch):
    """--shapes for compare.py and tailcut: the batch on dim 0, BERT_SEQ on a dynamic dim 1 (token inputs)."""
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    items = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = []
        for d, v in enumerate(i.type.tensor_type.shape.dim):
            if v.HasField("dim_value") and v.dim_value > 0:
                dims.append(v.dim_value)
            else:
                dims.append(batch if d == 0 else BERT_SEQ)
        items.append(f"{i.name}:{'x'.join(str(x) for x in dims)}")
    return ",".join(items)


def run_compare(path, shapes, a):
    """compare.py on one model; returns its result dict."""
    with tempfile.TemporaryDirectory(prefix="fp32_matrix_") as tmp:
        out = os.path.join(tmp, "cmp.json")
        args = types.SimpleNamespace(model=path, threads=a.threads, batch=a.batch, shapes=shapes,
                                     iterations=a.iterations, warmup=a.warmup, seed=0, tailcut_lib=a.tailcut_lib,
                                     ort_spin=False, json=out, tailcut_plan=None, ort_model=None,
                                     openvino=a.openvino)
        compare.compare(args)
        with open(out) as f:
            return json.load(f)


def families(path, shapes, a, peak):
    """Per tactic: FLOPs, ms, GFLOP/s and fraction of peak, from a plan built here and `tailcut bench --profile`."""
    named = {}
    for item in shapes.split(","):  # NAME:DxD,... as given to tailcut build
        name, _, dims = item.rpartition(":")
        named[name] = [int(v) for v in dims.split("x")]
    flops = conv_gflops.node_flops(onnx.load(path), a.batch, named)
    with tempfile.TemporaryDirectory(prefix="fp32_matrix_") as tmp:
        plan, out = os.path.join(tmp, "m.plan"), os.path.join(tmp, "b.json")
        subprocess.run([a.tailcut, "build", path, "-o", plan, "--shapes", shapes, "--threads", str(a.threads),
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([a.tailcut, "bench", plan, "--profile", "--iterations", str(a.profile_iterations),
                        "--warmup", "5", "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            bench = json.load(f)
    fam = {}
    for s in bench["steps"]:
        if s["name"] not in flops:
            continue
        f = fam.setdefault(s["tactic"], {"steps": 0, "gflop": 0.0, "ms": 0.0})
        f["steps"] += 1
        f["gflop"] += flops[s["name"]][1] / 1e9
        f["ms"] += s["mean_ms"]
    for f in fam.values():
        f["gflops"] = f["gflop"] / f["ms"] * 1e3 if f["ms"] > 0 else 0.0
        f["of_peak"] = f["gflops"] / peak if peak > 0 else 0.0
    return fam, bench["mean_ms"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("models_dir")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--iterations", type=int, default=200, help="interleaved runs per engine (default 200)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--profile-iterations", type=int, default=30, help="tailcut bench --profile runs (default 30)")
    p.add_argument("--ghz", type=float, help="core clock for the peak (default: /proc/cpuinfo's cpu MHz)")
    p.add_argument("--models", help="comma-separated subset of " + ",".join(m for m, _ in MODELS))
    p.add_argument("--tailcut", default=os.path.join(os.path.dirname(here), "build", "tailcut"))
    p.add_argument("--tailcut-lib", default=os.path.join(os.path.dirname(here), "build", "libtailcut.so"))
    p.add_argument("--json", help="write every figure to this file")
    a = p.parse_args(argv)
    if a.threads < 1 or a.iterations < 1 or a.batch < 1 or a.warmup < 0 or a.profile_iterations < 1:
        p.error("--threads, --iterations, --batch and --profile-iterations must be >= 1, --warmup >= 0")
    if not os.path.isdir(a.models_dir):
        p.error(f"{a.models_dir} is not a folder")
    wanted = [m for m, _ in MODELS]
    if a.models:
        wanted = [m.strip() for m in a.models.split(",")]
        unknown = [m for m in wanted if m not in dict(MODELS)]
        if unknown:
            p.error(f"unknown model(s) {', '.join(unknown)}: choose from {', '.join(m for m, _ in MODELS)}")
    ghz = a.ghz or cpu_ghz()
    if not ghz or ghz <= 0:
        p.error("could not read the clock from /proc/cpuinfo: give --ghz")
    lanes, isa, peak = peak_gflops(a.threads, ghz)
    capped = os.environ.get("TAILCUT_MAX_ISA", "").lower() == "avx2" and "avx512f" in cpu_flags()
    a.openvino = ov_peer.available()
    if not a.openvino:
        print("OpenVINO: the openvino module is not installed here: its column is left out (see ov_peer.py)")
    results = {"isa": isa, "lanes": lanes, "ghz": ghz, "threads": a.threads, "peak_gflops": peak, "models": {}}
    cells = []
    with tempfile.TemporaryDirectory(prefix="fp32_matrix_models_") as tmp:
        for name, label in MODELS:
            if name not in wanted:
                continue
            path = find_model(a.models_dir, name, tmp)
            if path is None:
                print(f"{label}: no {name}.onnx(.xz) in {a.models_dir}: left out")
                cells.append("-")
                continue
            shapes = shapes_spec(path, a.batch)
            print(f"==== {label} ({shapes})")
            try:
                r = run_compare(path, shapes, a)
                fam, run_ms = families(path, shapes, a, peak)
            except (compare.CompareError, subprocess.CalledProcessError, ValueError) as e:
                print(f"{label}: failed: {e}", file=sys.stderr)
                cells.append("failed")
                continue
            results["models"][name] = {"ratio_p50": r["ratio_p50"], "ratio_p99": r["ratio_p99"],
                                       "tailcut_p50_ms": r["tailcut"]["p50_ms"],
                                       "onnxruntime_p50_ms": r["onnxruntime"]["p50_ms"],
                                       "onnxruntime_version": r["onnxruntime_version"], "families": fam,
                                       "profiled_run_ms": run_ms}
            cell = f"{r['ratio_p50']:.2f}x (P99 {r['ratio_p99']:.2f}x)"
            if "openvino" in r:
                results["models"][name].update({"ratio_p50_openvino": r["ratio_p50_openvino"],
                                                "ratio_p99_openvino": r["ratio_p99_openvino"],
                                                "openvino_p50_ms": r["openvino"]["p50_ms"],
                                                "openvino_version": r["openvino_version"]})
                cell = (f"{r['ratio_p50']:.2f}x ORT (P99 {r['ratio_p99']:.2f}x), "
                        f"{r['ratio_p50_openvino']:.2f}x OpenVINO (P99 {r['ratio_p99_openvino']:.2f}x)")
            cells.append(cell)
            print(f"\n  step family (tactic)               steps    GFLOP       ms   GFLOP/s  of {isa} peak")
            for t, f in sorted(fam.items(), key=lambda kv: -kv[1]["ms"]):
                print(f"  {t:<34} {f['steps']:5d} {f['gflop']:8.3f} {f['ms']:8.3f} {f['gflops']:9.1f} "
                      f"{100 * f['of_peak']:7.1f}%")
            print()
    cpu = f"{open('/proc/cpuinfo').read().split('model name')[1].split(':', 1)[1].splitlines()[0].strip()}" \
        if os.path.exists("/proc/cpuinfo") and "model name" in open("/proc/cpuinfo").read() else "this CPU"
    label = f"{cpu}, {isa}" + (", tailcut capped to AVX2, onnxruntime uncapped (AVX-512): not an AVX2 machine's "
                               "figures" if capped else "")
    print(f"peak: {a.threads} threads x 2 FMA x {lanes} lanes x 2 FLOP x {ghz:.2f} GHz = {peak:.1f} GFLOP/s")
    print("| CPU | " + " | ".join(lbl for n, lbl in MODELS if n in wanted) + " |")
    print("|---|" + "---|" * len(cells))
    print(f"| {label} | " + " | ".join(cells) + " |")
    print("(tailcut / onnxruntime" + (" and tailcut / OpenVINO" if a.openvino else "") +
          " P50, interleaved; above 1: tailcut slower)")
    if a.json:
        results["row"] = {"cpu": label, "cells": cells}
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
        print(f"json: {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
