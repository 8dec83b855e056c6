#!/usr/bin/env python3
"""run_realmodels.py - pretrained models from PyPI packages through libtailcut (ctypes, bench/compare.py's binding)
against onnxruntime, in one process.

    python tests/realmodels/run_realmodels.py [--lib build/libtailcut.so] [--threads 2]

Packages (pinned, installed --no-deps by `make venv`: only their .onnx files are read, the packages are never
imported): silero-vad (voice activity detector: Conv encoder, LSTM decoder) and rapidocr_onnxruntime (PP-OCR text
detector, recognizer, direction classifier) and ddddocr (a CRNN text recognizer). A case whose package is absent is skipped with a reason.

Cases:
  silero_vad_stream: silero_vad_openvino_16k.onnx (16 kHz, 512-sample chunks after 64 samples of context, LSTM state
    carried between chunks) on a 40-chunk synthetic stream (silence, noise, voiced harmonic bursts): each engine
    carries its own state; the speech probability of every chunk must agree with onnxruntime's (max abs error
    <= 1e-4) and the speech decisions (probability > 0.5) must be identical; both classes must occur.
  silero_vad_main_16k: silero_vad.onnx as shipped (the package's default model: an If on its input sr, decided at
    run time) in one profile holding 8 and 16 kHz chunks: the 16 kHz stream and the 8 kHz one (decimated, 256-sample
    chunks) match onnxruntime's with the state carried; a 16 kHz-sized chunk with sr = 8000 is refused.
  silero_vad_sequence: silero_vad_16k_sequence.onnx (a sequence of chunks through the LSTM) built with a dynamic
    profile sequence_length 1..40 (opt 16), run at 1, 16 and 40 against onnxruntime; 41 must be refused naming
    the profile's range.
  ppocr_det / ppocr_rec / ppocr_cls: the PP-OCRv4 detector (dynamic H and W), recognizer (dynamic W) and the
    direction classifier (dynamic batch) of rapidocr_onnxruntime, each built with one dynamic profile and run at
    three sizes inside it against onnxruntime, and once outside it (refused).
  ddddocr_crnn: ddddocr's common.onnx (a CRNN: Conv, bidirectional LSTM, Gemm) with a dynamic width, three widths
    inside the profile against onnxruntime and one outside (refused).
  qdyn_bert / qdyn_mobilenet_v2 (quantized_dynamic.py): tools/modelgen's BERT encoder and MobileNetV2 quantized at
    test time by onnxruntime's quantize_dynamic (DynamicQuantizeLinear, MatMulInteger, ConvInteger), three sizes of a
    dynamic profile against onnxruntime on the same file (int8 bounds, explained there) and one outside refused.
  light_* (light_zoo.py): the onnx package's 9 light zoo CNNs (LRN, BatchNormalization, Sum, channel shuffles) with
    seeded random weights in place of their constant fills and a dynamic batch, against onnxruntime.
Every comparison prints max abs error, max rel error (max abs / max |reference|), cosine similarity and argmax
agreement over the last axis, and fails when max rel error > 1e-3, cosine < 0.9999 or argmax agreement < 0.99
(the detector's map: argmax over a row is not held, its saturated text pixels tie at 1.0; its text map binarised at
DBNet's 0.3 must agree on >= 99.99% of the pixels and hold text).
Inputs are seeded. The last line is "N passed, N failed, N skipped"; exit status 1 if any failed.
"""

import argparse
import importlib.util
import os
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
import compare as tcb  # noqa: E402  (bench/compare.py: the ctypes binding of libtailcut)

MAX_REL, MIN_COS, MIN_ARGMAX = 1e-3, 0.9999, 0.99


class Skip(Exception):
    """A case that cannot run here (its package is not installed)."""


class Failure(Exception):
    """A case whose outputs disagree or whose refusal did not come."""


def package_file(pkg, rel):
    """A file shipped in an installed package (found without importing it), or Skip."""
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        raise Skip(f"package {pkg} is not installed (make venv installs it)")
    path = os.path.join(list(spec.submodule_search_locations)[0], rel)
    if not os.path.isfile(path):
        raise Skip(f"{path} is missing from package {pkg}")
    return path


def metrics(ref, got):
    """max abs, max rel (to max |ref|), cosine, argmax agreement over the last axis (None when it has 1 element)."""
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if ref.shape != got.shape:
        raise Failure(f"shape {got.shape}, onnxruntime {ref.shape}")
    if not np.all(np.isfinite(got)):
        raise Failure("tailcut output has NaN or infinity")
    err = float(np.max(np.abs(ref - got))) if ref.size else 0.0
    peak = float(np.max(np.abs(ref))) if ref.size else 0.0
    rel = err / peak if peak > 0 else (0.0 if err == 0 else float("inf"))
    a, b = ref.ravel(), got.ravel()
    den = np.linalg.norm(a) * np.linalg.norm(b)
    cos = float(np.dot(a, b) / den) if den > 0 else (1.0 if err == 0 else 0.0)
    agree = None
    if ref.ndim >= 1 and ref.shape[-1] > 1:
        agree = float(np.mean(np.argmax(ref, axis=-1) == np.argmax(got, axis=-1)))
    return err, rel, cos, agree


def check(label, ref, got, max_rel=MAX_REL, argmax=True, min_cos=MIN_COS, min_argmax=MIN_ARGMAX):
    """Fails on the bounds; argmax False: the agreement is printed, not held (a map whose rows are near ties)."""
    err, rel, cos, agree = metrics(ref, got)
    ag = "-" if agree is None else f"{agree:.4f}" + ("" if argmax else " (not held)")
    print(f"    {label:<40} max abs {err:.3e}  max rel {rel:.3e}  cosine {cos:.7f}  argmax {ag}")
    if rel > max_rel or cos < min_cos or (argmax and agree is not None and agree < min_argmax):
        raise Failure(f"{label}: max rel {rel:.3e} (bound {max_rel}), cosine {cos:.7f}, argmax agreement {ag}")


class Engine(tcb.Tailcut):
    """bench/compare.py's Tailcut with a build of one profile whose ranges may be dynamic."""

    def build_profile(self, model_path, ranges, threads, plan_path):
        """ranges: {input: (min dims, opt dims, max dims)}; builds, saves the plan and loads it."""
        lib, err = self.lib, tcb.TcError()
        names = [n.encode() for n in ranges]
        arr = (tcb.TcInputRange * len(ranges))()
        for r, name, (lo, opt, hi) in zip(arr, names, ranges.values()):
            r.name, r.rank = name, len(opt)
            for d in range(len(opt)):
                r.min[d], r.opt[d], r.max[d] = lo[d], opt[d], hi[d]
        profile = tcb.TcProfile(len(ranges), arr)
        opts = tcb.TcBuildOptions(ctypes_sizeof(tcb.TcBuildOptions), threads, 1, tcb.ctypes.pointer(profile), 0)
        opts.flags = 1  # TC_BUILD_TACTICS_FIXED: quick builds
        self.model = tcb.ctypes.c_void_p()
        self._check(lib.tc_model_load(model_path.encode(), None, tcb.ctypes.byref(self.model), tcb.ctypes.byref(err)),
                    "model load", err)
        self.built = tcb.ctypes.c_void_p()
        self._check(lib.tc_engine_build(self.model, tcb.ctypes.byref(opts), tcb.ctypes.byref(self.built),
                                        tcb.ctypes.byref(err)), "build", err)
        lib.tc_model_destroy(self.model)
        self.model = None
        self.save_and_load(plan_path)

    def infer(self, arrays):
        """Binds the arrays (C-contiguous copies where they are not: the binding hands over raw memory), runs, and
        returns the outputs by name."""
        arrays = {k: np.require(v, requirements="C") for k, v in arrays.items()}  # keeps 0-d arrays 0-d
        self.bind(arrays)
        self.run()
        return self.outputs()


def ctypes_sizeof(t):
    return tcb.ctypes.sizeof(t)


def ort_session(path, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.log_severity_level = 3  # errors only (ddddocr's output declaration draws a warning per run)
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def expect_refusal(eng, arrays, words):
    """Binding/running arrays outside the profile must fail with a message holding every word of words."""
    try:
        eng.infer(arrays)
    except tcb.CompareError as e:
        msg = str(e)
        missing = [w for w in words if w not in msg]
        if missing:
            raise Failure(f"refusal '{msg}' does not mention {missing}")
        print(f"    outside the profile: refused: {msg}")
        return
    raise Failure("a shape outside the profile was not refused")


# ---- silero-vad ----------------------------------------------------------------------------------------

SR, CHUNK, CONTEXT, N_CHUNKS = 16000, 512, 64, 40


def synthetic_stream(seed):
    """40 chunks of 16 kHz audio: quiet noise, then voiced bursts (a 110-220 Hz harmonic source with moving
    formant-like resonances, syllable-rate amplitude), then silence and louder noise."""
    rng = np.random.default_rng(seed)
    n = CHUNK * N_CHUNKS
    t = np.arange(n) / SR
    x = 0.003 * rng.standard_normal(n)
    for start, stop, f0 in ((6, 18, 120.0), (24, 34, 190.0)):
        a, b = start * CHUNK, stop * CHUNK
        tt = t[a:b] - t[a]
        pitch = f0 * (1 + 0.08 * np.sin(2 * np.pi * 3 * tt))
        phase = 2 * np.pi * np.cumsum(pitch) / SR
        voiced = sum((1.0 / k) * np.sin(k * phase) * (1 + 0.8 * np.sin(2 * np.pi * (500 + 300 * np.sin(2 * np.pi * 2 * tt)) * k / (k * f0 * 8)))
                     for k in range(1, 25))
        env = 0.5 * (1 - np.cos(2 * np.pi * 4 * tt)) * 0.3
        x[a:b] += env * voiced / 4
    x[36 * CHUNK:] += 0.05 * rng.standard_normal(4 * CHUNK)
    return x.astype(np.float32)


def stream(lib, threads, work, tc_path, ort_path, ort_extra, rate=SR, eng=None):
    """The 40-chunk stream through tailcut (model tc_path, or the engine eng already built) and onnxruntime (ort_path,
    with the inputs ort_extra, which tailcut also gets when eng is given), at sample rate rate: 16 kHz chunks of 512
    samples after 64 of context, 8 kHz ones (the 16 kHz stream decimated) of 256 after 32."""
    chunk, context = CHUNK * rate // SR, CONTEXT * rate // SR
    sess = ort_session(ort_path, threads)
    own = eng is None
    tc_extra = ort_extra if not own else {}
    if own:
        eng = Engine(lib)
    try:
        if own:
            eng.build_profile(tc_path, {"input": ([1, chunk + context],) * 3, "state": ([2, 1, 128],) * 3}, threads,
                              os.path.join(work, "silero_stream.plan"))
        audio = synthetic_stream(7)[::SR // rate]
        ctx_ort = ctx_tc = np.zeros((1, context), np.float32)
        st_ort = np.zeros((2, 1, 128), np.float32)
        st_tc = st_ort.copy()
        p_ort, p_tc = [], []
        for k in range(N_CHUNKS):
            piece = audio[k * chunk:(k + 1) * chunk][None, :]
            x_ort = np.concatenate([ctx_ort, piece], axis=1)
            x_tc = np.concatenate([ctx_tc, piece], axis=1)
            out, st_ort = sess.run(None, {"input": x_ort, "state": st_ort, **ort_extra})
            res = eng.infer({"input": np.ascontiguousarray(x_tc), "state": np.ascontiguousarray(st_tc), **tc_extra})
            st_tc = res["stateN"]
            p_ort.append(float(out.ravel()[0]))
            p_tc.append(float(res["output"].ravel()[0]))
            ctx_ort, ctx_tc = x_ort[:, -context:], x_tc[:, -context:]
        p_ort, p_tc = np.array(p_ort), np.array(p_tc)
        d_ort, d_tc = p_ort > 0.5, p_tc > 0.5
        print(f"    probabilities at {rate} Hz (onnxruntime): " + " ".join(f"{v:.2f}" for v in p_ort))
        err = float(np.max(np.abs(p_ort - p_tc)))
        print(f"    {N_CHUNKS} chunks: max abs error of the speech probability {err:.3e}, speech chunks "
              f"{int(d_ort.sum())} (onnxruntime) / {int(d_tc.sum())} (tailcut), decisions identical: "
              f"{bool(np.all(d_ort == d_tc))}")
        check("final state", st_ort, st_tc)
        if err > 1e-4:
            raise Failure(f"speech probabilities differ by {err:.3e} (bound 1e-4)")
        if not np.all(d_ort == d_tc):
            raise Failure(f"speech decisions differ at chunks {np.nonzero(d_ort != d_tc)[0].tolist()}")
        if d_ort.all() or not d_ort.any():
            raise Failure("the stream does not give both speech and non-speech chunks: the test would not tell")
    finally:
        if own:
            eng.close()


def case_silero_stream(lib, threads, work):
    path = package_file("silero_vad", "data/silero_vad_openvino_16k.onnx")
    stream(lib, threads, work, path, path, {})


def case_silero_main_16k(lib, threads, work):
    """silero_vad.onnx, the package's default model as shipped: an If on its graph input sr (16000 or 8000), decided
    at run time (both branches are in the plan, the one sr picks runs), in one dynamic profile that holds both chunk
    sizes (8 kHz: 256 + 32 samples, 16 kHz: 512 + 64). The 16 kHz and 8 kHz streams match onnxruntime on the same
    model; a 16 kHz-sized chunk with sr = 8000 (which onnxruntime cannot run either: its 8 kHz branch fails) is refused
    naming the branch's step, and the engine still runs afterwards."""
    path = package_file("silero_vad", "data/silero_vad.onnx")
    eng = Engine(lib)
    try:
        eng.build_profile(path, {"input": ([1, 288], [1, 576], [1, 576]), "state": ([2, 1, 128],) * 3, "sr": ([],) * 3},
                          threads, os.path.join(work, "silero_main.plan"))
        for rate in (SR, 8000):
            stream(lib, threads, work, path, path, {"sr": np.array(rate, np.int64)}, rate=rate, eng=eng)
        x = np.random.default_rng(5).standard_normal((1, 576)).astype(np.float32) * 0.1
        try:
            eng.infer({"input": x, "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(8000, np.int64)})
            raise Failure("a 576-sample chunk with sr = 8000 ran (onnxruntime's 8 kHz branch cannot run it)")
        except tcb.CompareError as e:
            if "If branch is taken" not in str(e):
                raise Failure(f"the refusal of a 576-sample chunk at 8 kHz does not say why: {e}")
            print(f"    576 samples at 8 kHz: refused: {e}")
        stream(lib, threads, work, path, path, {"sr": np.array(SR, np.int64)}, rate=SR, eng=eng)
    finally:
        eng.close()


def case_silero_sequence(lib, threads, work):
    path = package_file("silero_vad", "data/silero_vad_16k_sequence.onnx")
    sess = ort_session(path, threads)
    eng = Engine(lib)
    try:
        state = ([1, 1, 128],) * 3
        eng.build_profile(path, {"input": ([1, 576], [16, 576], [40, 576]), "h": state, "c": state}, threads,
                          os.path.join(work, "silero_seq.plan"))
        rng = np.random.default_rng(11)
        audio = synthetic_stream(3)
        for n in (1, 16, 40):
            x = np.stack([audio[max(0, k * CHUNK - CONTEXT):k * CHUNK + CHUNK] if k else
                          np.concatenate([np.zeros(CONTEXT, np.float32), audio[:CHUNK]]) for k in range(n)])
            h = (0.1 * rng.standard_normal((1, 1, 128))).astype(np.float32)
            c = (0.1 * rng.standard_normal((1, 1, 128))).astype(np.float32)
            ref = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"input": x, "h": h, "c": c})))
            got = eng.infer({"input": x, "h": h, "c": c})
            for name in ref:
                check(f"sequence {n}: {name}", ref[name], got[name])
        x = np.zeros((41, 576), np.float32)
        x[:, ::7] = 0.01
        expect_refusal(eng, {"input": x, "h": h, "c": c}, ["input"])
    finally:
        eng.close()


# ---- PP-OCR (rapidocr_onnxruntime) ---------------------------------------------------------------------


def ocr_data():
    """bench/accuracy/ocr_cls_data.py (its text renderer and classifier set), or Skip without its fonts."""
    sys.path.insert(0, os.path.join(REPO, "bench", "accuracy"))
    import ocr_cls_data

    if not os.path.isdir(ocr_cls_data.FONT_DIR):
        raise Skip(f"{ocr_cls_data.FONT_DIR} is missing (make deps installs fonts-dejavu-core)")
    return ocr_cls_data


def rec_batch(n, width, seed):
    """n rendered text lines as the recognizer takes them: height 48, aspect kept, width <= width, BGR,
    (x / 255 - 0.5) / 0.5, zero right padding (rapidocr's TextRecognizer.resize_norm_img, with Pillow)."""
    from PIL import Image

    data = ocr_data()
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 3, 48, width), np.float32)
    fonts = {}
    for i in range(n):
        img = data.render(rng, data.random_text(rng, data.WORDS_EVAL), fonts)
        w = min(width, max(1, int(np.ceil(48 * img.width / img.height))))
        a = np.asarray(img.convert("RGB").resize((w, 48), Image.Resampling.BILINEAR), np.float32)[:, :, ::-1]
        x[i, :, :, :w] = (a.transpose(2, 0, 1) / 255.0 - 0.5) / 0.5
    return x


def det_page(h, w, seed):
    """A page of h x w: rendered text lines pasted on a light background, normalised as rapidocr's detector
    input ((x / 255 - mean) / std, ImageNet mean and std, BGR)."""
    from PIL import Image

    data = ocr_data()
    rng = np.random.default_rng(seed)
    page = Image.new("RGB", (w, h), (235, 235, 228))
    fonts, y = {}, 4
    while y < h - 16:
        line = data.render(rng, data.random_text(rng, data.WORDS_EVAL), fonts)
        if line.width > w - 8:
            line = line.crop((0, 0, w - 8, line.height))
        page.paste(line, (int(rng.integers(0, max(1, w - line.width))), y))
        y += line.height + int(rng.integers(2, 20))
    a = np.asarray(page, np.float32)[:, :, ::-1] / 255.0
    a = (a - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    return a.transpose(2, 0, 1)[None].astype(np.float32)


def run_ocr(lib, threads, work, model, ranges, sizes, outside, make_input, what):
    """Builds model with one dynamic profile on input x, compares every output with onnxruntime at each of
    sizes, checks the refusal of outside."""
    path = package_file("rapidocr_onnxruntime", "models/" + model)
    sess = ort_session(path, threads)
    eng = Engine(lib)
    try:
        eng.build_profile(path, {"x": ranges}, threads, os.path.join(work, model + ".plan"))
        for k, shape in enumerate(sizes):
            x = make_input(shape, k)
            ref = sess.run(None, {"x": x})
            got = eng.infer({"x": x})
            for o, r in zip(sess.get_outputs(), ref):
                what(f"x {'x'.join(map(str, shape))}: {o.name[:16]}", r, got[o.name])
        expect_refusal(eng, {"x": np.ones(outside, np.float32)}, ["'x'", "outside the profile"])
    finally:
        eng.close()


def case_ppocr_det(lib, threads, work):
    def what(label, ref, got):
        check(label, ref, got, argmax=False)
        agree = float(np.mean((ref > 0.3) == (got > 0.3)))  # DBNet's binarisation threshold
        print(f"    {'':<40} text-map agreement at 0.3: {agree:.6f} ({int((ref > 0.3).sum())} text pixels)")
        if agree < 0.9999 or not (ref > 0.3).any():
            raise Failure(f"{label}: text maps agree on {agree:.6f} of the pixels (or no text found)")

    run_ocr(lib, threads, work, "ch_PP-OCRv4_det_infer.onnx", ([1, 3, 96, 96], [1, 3, 320, 480], [1, 3, 640, 640]),
            [(1, 3, 96, 128), (1, 3, 320, 480), (1, 3, 640, 640)], (1, 3, 672, 640),
            lambda s, k: det_page(s[2], s[3], 20 + k), what)


def case_ppocr_rec(lib, threads, work):
    run_ocr(lib, threads, work, "ch_PP-OCRv4_rec_infer.onnx", ([1, 3, 48, 32], [4, 3, 48, 320], [8, 3, 48, 640]),
            [(1, 3, 48, 64), (4, 3, 48, 320), (8, 3, 48, 640)], (8, 3, 48, 704),
            lambda s, k: rec_batch(s[0], s[3], 30 + k), check)


def case_ppocr_cls(lib, threads, work):
    def make(s, k):
        x, _, _ = ocr_data().make_set(s[0], 40 + k, ocr_data().WORDS_EVAL)
        return np.ascontiguousarray(x)

    run_ocr(lib, threads, work, "ch_ppocr_mobile_v2.0_cls_infer.onnx",
            ([1, 3, 48, 192], [8, 3, 48, 192], [32, 3, 48, 192]), [(1, 3, 48, 192), (8, 3, 48, 192), (32, 3, 48, 192)],
            (33, 3, 48, 192), make, check)


def case_ddddocr_crnn(lib, threads, work):
    """ddddocr's common.onnx, a CRNN (Conv feature extractor, bidirectional LSTM of 512 units, Gemm to 8210 classes)
    on gray text lines [1, 1, 64, W]. Its graph output is declared [1, seqlen] but computes [W/8, 1, 8210]: onnxruntime
    warns and goes on, and so does tailcut (the computed shape is used), so the file is built as shipped. Dynamic
    width 64..480 run at three widths; 512 refused."""
    from PIL import Image

    path = package_file("ddddocr", "common.onnx")
    data = ocr_data()

    def line(shape, k):
        rng = np.random.default_rng(50 + k)
        img = data.render(rng, data.random_text(rng, data.WORDS_EVAL), {}).convert("L")
        img = img.resize((shape[3], 64), Image.Resampling.BILINEAR)
        return (np.asarray(img, np.float32) / 255.0)[None, None]

    sess = ort_session(path, threads)
    eng = Engine(lib)
    try:
        eng.build_profile(path, {"input1": ([1, 1, 64, 64], [1, 1, 64, 160], [1, 1, 64, 480])}, threads,
                          os.path.join(work, "ddddocr.plan"))
        for k, w in enumerate((64, 200, 480)):
            x = line((1, 1, 64, w), k)
            ref = sess.run(None, {"input1": x})[0]
            got = eng.infer({"input1": x})
            check(f"x 1x1x64x{w}: {sess.get_outputs()[0].name}", ref, got[sess.get_outputs()[0].name])
        expect_refusal(eng, {"input1": np.ones((1, 1, 64, 512), np.float32)}, ["'input1'", "outside the profile"])
    finally:
        eng.close()


CASES = [("silero_vad_stream", case_silero_stream), ("silero_vad_main_16k", case_silero_main_16k),
         ("silero_vad_sequence", case_silero_sequence),
         ("ppocr_det", case_ppocr_det), ("ppocr_rec", case_ppocr_rec), ("ppocr_cls", case_ppocr_cls),
         ("ddddocr_crnn", case_ddddocr_crnn)]
# Cases in the modules beside this file, which take this module for its helpers (Engine, check, expect_refusal).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import light_zoo  # noqa: E402
import quantized_dynamic  # noqa: E402

CASES += quantized_dynamic.cases(sys.modules[__name__]) + light_zoo.cases(sys.modules[__name__])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(REPO, "build", "libtailcut.so"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--filter", default="")
    args = ap.parse_args(argv)
    lib = tcb.load_library(args.lib)
    passed = failed = skipped = 0
    with tempfile.TemporaryDirectory(prefix="tc_realmodels_") as work:
        for name, fn in CASES:
            if args.filter not in name:
                continue
            print(f"{name}:")
            t0 = time.perf_counter()
            try:
                fn(lib, args.threads, work)
            except Skip as e:
                skipped += 1
                print(f"  SKIP {name}: {e}")
                continue
            except (Failure, tcb.CompareError) as e:
                failed += 1
                print(f"  FAIL {name}: {e}")
                continue
            passed += 1
            print(f"  PASS {name} ({time.perf_counter() - t0:.1f} s)")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
