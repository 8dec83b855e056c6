#!/usr/bin/env python3
"""run_model_tests.py - end-to-end model tests: `tailcut run` against ONNX Runtime on whole models.

    python tests/models/run_model_tests.py --tailcut build/tailcut [--shared DIR] [--work DIR] [--quick]
        [--build-args '--backend cuda']

Cases:
  - generated (always): reduced ResNet-50, MobileNetV2 and two 2-layer BERTs, written by
    tools/modelgen/modelgen.py into the work dir at test time; unless --quick also the full
    generated ResNet-50 and BERT-base.
  - shared (when the shared models dir exists, default ../shared/models next to the repo root): the
    real exporter outputs, decompressed from .xz into the work dir once (cached): resnet50 on its probe
    input against the probe logits, mobilenet_v2 and efficientnet_b0 (batch 1, random input) and
    bert_base (batch 1, sequence 128, random ids and mask) against ONNX Runtime.
  - package (when the PyPI package that ships the model is installed, as `make deps` does): PP-OCRv4's
    text detector (DBNet: ConvTranspose, Resize) from rapidocr_onnxruntime, on a 1x3x320x480 input,
    against ONNX Runtime.

Each case writes its inputs as .npy, runs `tailcut run MODEL --input NAME=FILE ... --output-dir DIR`
(which writes DIR/<output name>.npy for every graph output) and compares every output with the
reference: max abs error <= 1e-3 * max(1, max |reference|) (the probe: 1e-3 * max |logit|). The
table's "max rel err" is max abs error / max |reference|; it must also stay <= 1e-2, so that an output
whose reference is tiny everywhere (the shared MobileNetV2 and EfficientNet-B0 give logits of 1e-9 and
1e-14 on random inputs) cannot pass by being all zeros; "seconds" is the whole case (model
generation, reference and tailcut), "tailcut s" the `tailcut run` call alone. Inputs are seeded:
floats standard normal, token ids in the vocabulary, attention masks with zeros at the end of some
rows. The last line is "N passed, N failed, N skipped" (cases); the exit status is 1 if any failed.
"""

import argparse
import lzma
import os
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELGEN = os.path.join(REPO, "tools", "modelgen", "modelgen.py")
DEFAULT_SHARED = os.path.join(os.path.dirname(REPO), "shared", "models")
ORT_THREADS = 2
REL_GUARD = 1e-2  # max abs err / max |ref| above this fails even within the absolute tolerance

# Reduced generated models keep the graph patterns of the full ones (residual blocks with and without
# downsampling, inverted residuals with and without expansion, attention with masking).
GEN_RESNET_SMALL = ["resnet50", "--width-div", "8", "--blocks", "2,2,2,2", "--image", "64"]
GEN_MOBILENET_SMALL = ["mobilenet_v2", "--width-mult", "0.25", "--max-repeats", "2", "--image", "64"]
GEN_BERT_SMALL = ["bert_base", "--layers", "2", "--hidden", "128", "--heads", "4", "--ffn", "512",
                  "--vocab", "1000", "--max-positions", "64"]
GEN_BERT_SMALL_TT = ["bert_base", "--layers", "2", "--hidden", "64", "--heads", "2", "--ffn", "256",
                     "--vocab", "500", "--max-positions", "32", "--token-type-ids"]


class Case:
    """One model run: where the model comes from, which inputs it gets, what it is compared with."""

    def __init__(self, name, kind, model, batch=1, sequence=None, gen_args=None, probe=False):
        self.name = name
        self.kind = kind  # "generated" or "shared"
        self.model = model  # generated: file name in work dir; shared: base name of the .xz; package: (pkg, path)
        self.batch = batch
        self.sequence = sequence  # every symbolic dim after the first: an int, or a list in dim order
        self.gen_args = gen_args
        self.probe = probe


def all_cases(quick):
    cases = [
        Case("gen_resnet50_small", "generated", "gen_resnet50_small.onnx", batch=2, gen_args=GEN_RESNET_SMALL),
        Case("gen_mobilenet_v2_small", "generated", "gen_mobilenet_v2_small.onnx", batch=2,
             gen_args=GEN_MOBILENET_SMALL),
        Case("gen_bert_small", "generated", "gen_bert_small.onnx", batch=2, sequence=16, gen_args=GEN_BERT_SMALL),
        Case("gen_bert_small_tt", "generated", "gen_bert_small_tt.onnx", batch=2, sequence=16,
             gen_args=GEN_BERT_SMALL_TT),
    ]
    if not quick:
        cases += [
            Case("gen_resnet50", "generated", "gen_resnet50.onnx", batch=2, gen_args=["resnet50"]),
            Case("gen_bert_base", "generated", "gen_bert_base.onnx", batch=2, sequence=32, gen_args=["bert_base"]),
        ]
    cases += [
        Case("shared_resnet50_probe", "shared", "resnet50", probe=True),
        Case("shared_mobilenet_v2", "shared", "mobilenet_v2", batch=1),
        Case("shared_efficientnet_b0", "shared", "efficientnet_b0", batch=1),
        Case("shared_bert_base", "shared", "bert_base", batch=1, sequence=128),
        Case("pkg_ppocr_det", "package", ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx"), batch=1,
             sequence=[320, 480]),
    ]
    return cases


def package_model(case):
    """The path of a model shipped in an installed package, or None (the package is not imported: no deps)."""
    import importlib.util

    pkg, rel = case.model
    spec = importlib.util.find_spec(pkg)
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), rel)
    return path if os.path.isfile(path) else None


class CaseFailure(Exception):
    """A case could not be run to the comparison (tailcut error, missing output...)."""


# ----- models -----------------------------------------------------------------------------------------


def generate(case, work):
    path = os.path.join(work, case.model)
    cmd = [sys.executable, MODELGEN] + case.gen_args + ["-o", path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CaseFailure("modelgen failed (%s):\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    return path


def decompress(shared, work, base):
    """shared/<base>.onnx.xz -> work/shared/<base>.onnx, once (an existing file is reused)."""
    src = os.path.join(shared, base + ".onnx.xz")
    dst_dir = os.path.join(work, "shared")
    dst = os.path.join(dst_dir, base + ".onnx")
    if os.path.isfile(dst) and os.path.getsize(dst) > 0:
        return dst
    if not os.path.isfile(src):
        raise CaseFailure("missing " + src)
    os.makedirs(dst_dir, exist_ok=True)
    tmp = dst + ".part"
    with lzma.open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout, 16 << 20)
    os.replace(tmp, dst)
    return dst


# ----- inputs and reference -----------------------------------------------------------------------------


def _vocab_size(model, input_name):
    """Rows of the embedding table that a Gather indexes with `input_name` (1000 if none found)."""
    inits = {t.name: t for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Gather" and len(n.input) == 2 and n.input[1] == input_name and n.input[0] in inits:
            return int(inits[n.input[0]].dims[0])
    return 1000


def make_inputs(case, model, rng):
    """Seeded inputs for every graph input that is not an initializer, shaped for the case."""
    import onnx  # noqa: F401 (imported lazily so --help works without it)
    from onnx import helper

    init_names = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in init_names:
            continue
        tt = vi.type.tensor_type
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        shape = []
        seqs = list(case.sequence) if isinstance(case.sequence, (list, tuple)) else None
        for i, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                shape.append(d.dim_value)
            elif i == 0:
                shape.append(case.batch)
            elif seqs:
                shape.append(seqs.pop(0))
            elif case.sequence is not None and seqs is None:
                shape.append(case.sequence)
            else:
                raise CaseFailure("input %s: symbolic dim %d (%s) has no value" % (vi.name, i, d.dim_param))
        if np.issubdtype(dtype, np.floating):
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif "mask" in vi.name:
            feeds[vi.name] = attention_mask(shape).astype(dtype)
        elif "token_type" in vi.name:
            b, s = shape
            split = rng.integers(s // 4, 3 * s // 4 + 1, size=b)
            feeds[vi.name] = (np.arange(s)[None, :] >= split[:, None]).astype(dtype)
        else:
            feeds[vi.name] = rng.integers(0, _vocab_size(model, vi.name), size=shape).astype(dtype)
    return feeds


def attention_mask(shape):
    """Ones, with zeros at the end of rows 0, 2, 4... (seq/8, seq/4, ... of them, below seq/2)."""
    b, s = shape
    m = np.ones((b, s), np.int64)
    for r in range(0, b, 2):
        pad = max(1, (s // 8) * (r // 2 + 1)) % max(2, s // 2)
        if pad:
            m[r, s - pad:] = 0
    return m


def reference(model_path, feeds):
    """Outputs of ONNX Runtime (CPU, 2 threads, basic graph optimizations only) on the feeds."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = ORT_THREADS
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = sess.run(names, feeds)
    del sess
    return dict(zip(names, outs))


# ----- running tailcut ----------------------------------------------------------------------------------


# How `tailcut` runs each case (--path): "plan" builds a plan file for the inputs' shapes with
# `tailcut build`, then runs the plan (build -> save -> mmap load -> context run); "reference"
# runs the .onnx with the reference executor (`tailcut run --reference`).
PATH_MODE = "plan"
# extra `tailcut build` options (--build-args): "--backend cuda" runs every case on the GPU
BUILD_ARGS = []
# --tol-scale: both bounds above are multiplied by it (FP16 plans: 20, i.e. 2e-2 of max |reference|)
TOL_SCALE = 1.0


def run_tailcut(tailcut, model_path, feeds, case_dir, timeout):
    in_dir = os.path.join(case_dir, "inputs")
    os.makedirs(in_dir, exist_ok=True)
    inputs = {}
    for name, arr in feeds.items():
        path = os.path.join(in_dir, _safe(name) + ".npy")
        np.save(path, arr)
        inputs[name] = path
    return run_tailcut_files(tailcut, model_path, inputs, case_dir, timeout)


def run_tailcut_files(tailcut, model_path, inputs, case_dir, timeout):
    """Runs tailcut on inputs that are .npy files ({name: path}) in the chosen PATH_MODE."""
    out_dir = os.path.join(case_dir, "outputs")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    seconds = 0.0
    if PATH_MODE == "reference":
        cmd = [tailcut, "run", "--reference", model_path]
    else:
        plan = os.path.join(case_dir, "model.plan")
        shapes = ",".join("%s:%s" % (name, "x".join(str(d) for d in np.load(path, mmap_mode="r").shape))
                          for name, path in inputs.items())
        seconds += _run([tailcut, "build", model_path, "-o", plan, "--shapes", shapes] + BUILD_ARGS, timeout)
        cmd = [tailcut, "run", plan]
    for name, path in inputs.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    return seconds + _run(cmd + ["--output-dir", out_dir], timeout), out_dir


def _run(cmd, timeout):
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CaseFailure("tailcut run timed out after %ds: %s" % (timeout, " ".join(cmd)))
    dt = time.monotonic() - t0
    if r.returncode != 0:
        tail = (r.stderr or r.stdout or "").strip()[-2000:]
        raise CaseFailure("tailcut run exited with %d: %s\n%s" % (r.returncode, " ".join(cmd), tail))
    return dt


def _safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


# ----- comparison ---------------------------------------------------------------------------------------


def compare(name, got, ref, tol_scale_floor=1.0):
    """Returns (max abs err, max rel err, tolerance, ok, note) for one output."""
    if got.shape != ref.shape:
        return (float("nan"), float("nan"), 0.0, False, "shape %s, expected %s" % (got.shape, ref.shape))
    if not np.issubdtype(ref.dtype, np.floating):
        bad = int(np.count_nonzero(got != ref))
        return (float(bad), float(bad), 0.0, bad == 0, "" if bad == 0 else "%d elements differ" % bad)
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    ref_max = float(np.max(np.abs(r))) if r.size else 0.0
    tol = 1e-3 * TOL_SCALE * max(tol_scale_floor, ref_max)
    finite = np.isfinite(r)
    if not np.array_equal(np.isfinite(g), finite) or not np.array_equal(g[~finite], r[~finite]):
        return (float("nan"), float("nan"), tol, False, "non-finite values differ from the reference")
    err = float(np.max(np.abs(g[finite] - r[finite]))) if finite.any() else 0.0
    rel = err / ref_max if ref_max > 0 else err
    if err <= tol and rel > REL_GUARD * TOL_SCALE:
        return (err, rel, tol, False, "within the absolute tolerance but %.1e of max |reference| %.3e"
                % (rel, ref_max))
    return (err, rel, tol, err <= tol, "")


def load_output(out_dir, name):
    path = os.path.join(out_dir, _safe(name) + ".npy")
    if not os.path.isfile(path):
        path = os.path.join(out_dir, name + ".npy")
    if not os.path.isfile(path):
        raise CaseFailure("tailcut wrote no %s.npy in %s" % (name, out_dir))
    return np.load(path)


# ----- cases --------------------------------------------------------------------------------------------


def run_case(case, args, rows):
    """Runs one case; appends table rows; returns 'PASS', 'FAIL' or 'SKIP'."""
    t0 = time.monotonic()
    case_dir = os.path.join(args.work, case.name)
    os.makedirs(case_dir, exist_ok=True)
    if case.kind == "shared" and not os.path.isdir(args.shared):
        print("SKIP %s: %s not found" % (case.name, args.shared_label), flush=True)
        rows.append((case.name, "-", None, None, None, "SKIP", 0.0, None))
        return "SKIP"
    if case.kind == "package" and package_model(case) is None:
        print("SKIP %s: package %s (with %s) is not installed" % (case.name, case.model[0], case.model[1]), flush=True)
        rows.append((case.name, "-", None, None, None, "SKIP", 0.0, None))
        return "SKIP"
    try:
        import onnx

        if case.kind == "generated":
            model_path = generate(case, args.work)
        elif case.kind == "package":
            model_path = package_model(case)
        else:
            model_path = decompress(args.shared, args.work, case.model)
        model = onnx.load(model_path, load_external_data=False)
        out_names = [o.name for o in model.graph.output]
        if case.probe:
            probe_in = os.path.join(args.shared, "resnet50_probe_input.npy")
            probe_out = os.path.join(args.shared, "resnet50_probe_logits.npy")
            in_name = [i.name for i in model.graph.input][0]
            del model
            refs = {out_names[0]: np.load(probe_out)}
            t_tc, out_dir = run_tailcut_files(args.tailcut, model_path, {in_name: probe_in}, case_dir,
                                              args.timeout)
            floor = 0.0  # 1e-3 of max |logit|, as the probe was recorded for
        else:
            rng = np.random.default_rng(zlib.crc32(case.name.encode()))
            feeds = make_inputs(case, model, rng)
            del model
            refs = reference(model_path, feeds)
            t_tc, out_dir = run_tailcut(args.tailcut, model_path, feeds, case_dir, args.timeout)
            floor = 1.0
        status = "PASS"
        for name in out_names:
            err, rel, tol, ok, note = compare(name, load_output(out_dir, name), refs[name], floor)
            if not ok:
                status = "FAIL"
            rows.append((case.name, name, err, rel, tol, "PASS" if ok else "FAIL", time.monotonic() - t0, t_tc))
            if note:
                print("FAIL %s: output %s: %s" % (case.name, name, note), flush=True)
        if status == "PASS" and not args.keep:
            shutil.rmtree(case_dir, ignore_errors=True)
            if case.kind == "generated":
                os.remove(model_path)
        return status
    except CaseFailure as e:
        print("FAIL %s: %s" % (case.name, e), flush=True)
        rows.append((case.name, "-", None, None, None, "FAIL", time.monotonic() - t0, None))
        return "FAIL"


def _fmt(v, spec):
    return "-" if v is None else spec % v


def print_table(rows):
    head = ("case", "output", "max abs err", "max rel err", "tolerance", "result", "seconds", "tailcut s")
    body = [(c, o, _fmt(e, "%.3e"), _fmt(r, "%.3e"), _fmt(t, "%.3e"), s, "%.1f" % sec, _fmt(tc, "%.1f"))
            for c, o, e, r, t, s, sec, tc in rows]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    line = lambda cols: "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()  # noqa: E731
    print()
    print(line(head))
    print(line(["-" * w for w in widths]))
    for b in body:
        print(line(b))
    print()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tailcut", required=True, help="path of the tailcut binary")
    p.add_argument("--shared", default=None, help="shared models dir (default ../shared/models from the repo root)")
    p.add_argument("--work", default=os.path.join(REPO, "out", "model_tests"),
                   help="scratch dir for models, inputs and outputs (default out/model_tests)")
    p.add_argument("--quick", action="store_true", help="skip the full-size generated ResNet-50 and BERT-base")
    p.add_argument("-k", dest="filter", default=None, help="run only the cases whose name contains this")
    p.add_argument("--exclude", default="", help="comma-separated case names to leave out (say why where you do)")
    p.add_argument("--timeout", type=int, default=1800, help="seconds allowed to one tailcut run (default 1800)")
    p.add_argument("--path", choices=("plan", "reference"), default="plan",
                   help="plan: tailcut build + run of the plan (default); reference: the reference executor")
    p.add_argument("--tol-scale", type=float, default=1.0,
                   help="multiply the tolerances (e.g. 20 for --fp16 plans: FP16 operands, FP32 accumulation)")
    p.add_argument("--build-args", default="", help="extra options of `tailcut build`, e.g. '--backend cuda'")
    p.add_argument("--keep", action="store_true", help="keep inputs, outputs and generated models of passing cases")
    args = p.parse_args(argv)
    args.shared_label = args.shared if args.shared else "../shared/models"
    args.shared = os.path.abspath(args.shared or DEFAULT_SHARED)
    args.work = os.path.abspath(args.work)
    global PATH_MODE, BUILD_ARGS, TOL_SCALE
    PATH_MODE = args.path
    BUILD_ARGS = args.build_args.split()
    TOL_SCALE = args.tol_scale
    args.tailcut = os.path.abspath(args.tailcut)
    if not (os.path.isfile(args.tailcut) and os.access(args.tailcut, os.X_OK)):
        print("run_model_tests: %s is not an executable file" % args.tailcut, file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)

    excluded = set(x for x in args.exclude.split(",") if x)
    cases = [c for c in all_cases(args.quick) if (args.filter is None or args.filter in c.name) and c.name not in excluded]
    rows = []
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for case in cases:
        print("... %s" % case.name, flush=True)
        counts[run_case(case, args, rows)] += 1
    print_table(rows)
    print("%d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"], counts["SKIP"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
