#!/usr/bin/env python3
"""compare.py - tailcut against ONNX Runtime on one model, interleaved in one process.

Both run on the same inputs and thread count, alternating one run of each per iteration (the
order flips every iteration) so that both see the same machine noise; the script reports both
latency distributions (nearest-rank P50/P90/P99/P99.9, mean), the ratios tailcut/ORT of P50 and
P99, load times, and the largest absolute difference between the two engines' outputs.

ONNX Runtime: CPU execution provider, intra_op_num_threads=N, inter_op_num_threads=1,
ORT_ENABLE_ALL, inputs and preallocated outputs bound once with IOBinding (the same "bind once,
run many" path tailcut's context uses). Its worker threads do not spin after a run unless
--ort-spin is given: spinning threads would steal the cores from the interleaved tailcut run.
tailcut: driven through ctypes on libtailcut.so (tc_model_load -> tc_engine_build -> tc_engine_save
-> tc_engine_load -> tc_context_create -> bind the numpy inputs (tc_context_set_input, C-contiguous)
-> tc_context_run).

Inputs are seeded random non-zero data, bit-identical to `tailcut bench --seed N`: floats ~N(0,1),
integer ids in [1, 100) (names containing "mask", "token_type" or "segment": 1), bools true.

--openvino adds OpenVINO's CPU plugin in FP32 as a third engine in the same rotation (ov_peer.py: where the openvino
module is installed, never by tools/requirements.txt).

Example:
    python bench/compare.py model.onnx --threads 2 --batch 1 --iterations 1000 --json cmp.json

Exit status: 0 when both engines ran (whatever the figures), 1 on an error, 2 on bad arguments.
"""

import argparse
import ctypes
import json
import os
import sys
import tempfile
import time

import numpy as np

import ov_peer  # OpenVINO as a third engine, where installed

TC_MAX_RANK = 8
TC_DTYPE_TO_NUMPY = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
                     7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
NUMPY_TO_TC_DTYPE = {np.dtype(v).type: k for k, v in TC_DTYPE_TO_NUMPY.items()}
ORT_TYPE_TO_NUMPY = {"tensor(float)": np.float32, "tensor(uint8)": np.uint8, "tensor(int8)": np.int8,
                     "tensor(uint16)": np.uint16, "tensor(int16)": np.int16, "tensor(int32)": np.int32,
                     "tensor(int64)": np.int64, "tensor(bool)": np.bool_, "tensor(float16)": np.float16,
                     "tensor(double)": np.float64, "tensor(uint32)": np.uint32, "tensor(uint64)": np.uint64}
PERCENTILES = (("p50", 5000), ("p90", 9000), ("p99", 9900), ("p999", 9990))


# ---- ctypes mirror of include/tailcut/tailcut.h ----------------------------------------------

class TcTensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32), ("dims", ctypes.c_int64 * TC_MAX_RANK),
                ("data", ctypes.c_void_p), ("nbytes", ctypes.c_size_t)]


class TcInputRange(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("rank", ctypes.c_int32), ("min", ctypes.c_int64 * TC_MAX_RANK),
                ("opt", ctypes.c_int64 * TC_MAX_RANK), ("max", ctypes.c_int64 * TC_MAX_RANK)]


class TcProfile(ctypes.Structure):
    _fields_ = [("num_inputs", ctypes.c_int32), ("inputs", ctypes.POINTER(TcInputRange))]


class TcBuildOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("threads", ctypes.c_int32), ("num_profiles", ctypes.c_int32),
                ("profiles", ctypes.POINTER(TcProfile)), ("disabled_passes", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("timing_cache", ctypes.c_char_p), ("calib_cache", ctypes.c_char_p),
                ("num_fp32_layers", ctypes.c_int32), ("fp32_layers", ctypes.POINTER(ctypes.c_char_p)),
                ("num_no_int8_layers", ctypes.c_int32), ("no_int8_layers", ctypes.POINTER(ctypes.c_char_p))]


class TcError(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 1024)]


class TcIoInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("dims", ctypes.c_int64 * TC_MAX_RANK), ("dim_names", ctypes.c_char_p * TC_MAX_RANK)]


class CompareError(Exception):
    """An error that ends the comparison (exit status 1)."""


def load_library(path):
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise CompareError(f"cannot load {path}: {e} (build it, or give --tailcut-lib)")
    vp, st, P = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER
    sigs = {
        "tc_status_str": (ctypes.c_char_p, [st]),
        "tc_model_load": (st, [ctypes.c_char_p, vp, P(vp), P(TcError)]),
        "tc_model_destroy": (None, [vp]),
        "tc_engine_build": (st, [vp, P(TcBuildOptions), P(vp), P(TcError)]),
        "tc_engine_save": (st, [vp, ctypes.c_char_p, P(TcError)]),
        "tc_engine_load": (st, [ctypes.c_char_p, P(vp), P(TcError)]),
        "tc_engine_destroy": (None, [vp]),
        "tc_engine_num_outputs": (ctypes.c_int, [vp]),
        "tc_engine_output_info": (st, [vp, ctypes.c_int, P(TcIoInfo)]),
        "tc_context_create": (st, [vp, ctypes.c_int, P(vp), P(TcError)]),
        "tc_context_destroy": (None, [vp]),
        "tc_context_set_input_shape": (st, [vp, ctypes.c_char_p, ctypes.c_int32, P(ctypes.c_int64)]),
        "tc_context_set_tensor": (st, [vp, ctypes.c_char_p, vp, ctypes.c_size_t]),
        "tc_context_set_input": (st, [vp, ctypes.c_char_p, P(TcTensor)]),
        "tc_context_tensor": (st, [vp, ctypes.c_char_p, P(TcTensor)]),
        "tc_context_run": (st, [vp]),
        "tc_context_error": (ctypes.c_char_p, [vp]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


# ---- inputs (the same generator as tools/tailcut/bench_inputs.c) ------------------------------

M64 = (1 << 64) - 1


def _splitmix(states):
    """splitmix64 output for an array of uint64 states (already advanced)."""
    z = states
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _draws(state, first, count):
    """Draws first .. first+count-1 (0-based) of the splitmix64 stream that starts at `state`."""
    k = np.arange(first + 1, first + count + 1, dtype=np.uint64)
    return _splitmix(np.uint64(state) + k * np.uint64(0x9E3779B97F4A7C15))


def make_input(name, shape, dtype, seed):
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    s = seed & M64
    for b in name.encode():
        s = (s * 1099511628211 + b) & M64
    low = name.lower()
    chunk = 1 << 18
    if np.issubdtype(dtype, np.floating):
        out = np.empty(n, dtype=np.float64)
        for lo in range(0, n, chunk):
            m = min(chunk, n - lo)
            u = (_draws(s, 12 * lo, 12 * m) >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
            u = u.reshape(m, 12)
            x = np.full(m, -6.0)
            for k in range(12):  # the same summation order as the C code
                x += u[:, k]
            small = np.abs(x) < 1e-3
            x[small] = np.where(x[small] < 0, -1e-3, 1e-3)
            out[lo:lo + m] = x
        return out.astype(dtype).reshape(shape), "~N(0,1)"
    if dtype == np.bool_:
        return np.ones(shape, dtype=np.bool_), "true"
    if "mask" in low or "token_type" in low or "segment" in low:
        return np.ones(shape, dtype=dtype), "1"
    out = np.empty(n, dtype=np.uint64)
    for lo in range(0, n, chunk):
        m = min(chunk, n - lo)
        out[lo:lo + m] = np.uint64(1) + _draws(s, lo, m) % np.uint64(99)
    return out.astype(dtype).reshape(shape), "ids in [1,100)"


def parse_shapes(spec):
    shapes = {}
    for item in spec.split(","):
        name, sep, dims = item.rpartition(":")
        if not sep or not name:
            raise ValueError(f"bad --shapes item '{item}' (want NAME:DxDx...)")
        shapes[name] = [int(d) for d in dims.lower().split("x")] if dims else []
    return shapes


def input_shapes(sess_inputs, batch, shapes):
    out = {}
    for i in sess_inputs:
        if i.name in shapes:
            out[i.name] = shapes[i.name]
            continue
        dims = []
        for d, v in enumerate(i.shape):
            if isinstance(v, int) and v >= 0:
                dims.append(v)
            elif d == 0 and batch:
                dims.append(batch)
            else:
                raise CompareError(f"input '{i.name}' dim {d} ({v}) is dynamic: give --shapes or --batch")
        out[i.name] = dims
    return out


# ---- statistics ------------------------------------------------------------------------------

def stats(ms):
    s = np.sort(np.asarray(ms, dtype=np.float64))
    n = len(s)
    r = {"samples": n, "mean_ms": float(s.mean()), "min_ms": float(s[0]), "max_ms": float(s[-1])}
    for key, per10k in PERCENTILES:  # nearest rank: ceil(p * n), counted from 1
        rank = min(max((per10k * n + 9999) // 10000, 1), n)
        r[key + "_ms"] = float(s[rank - 1])
    sd = float(s.std(ddof=1)) if n > 1 else 0.0
    r["cv"] = sd / r["mean_ms"] if r["mean_ms"] > 0 else 0.0
    return r


# ---- engines ---------------------------------------------------------------------------------

def ms_since(t0):
    return (time.perf_counter_ns() - t0) / 1e6


def ort_session(model, threads, spin):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if not spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    t0 = time.perf_counter_ns()
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return sess, ms_since(t0), ort.__version__


class Tailcut:
    """One engine and context of libtailcut, with the numpy inputs bound."""

    def __init__(self, lib):
        self.lib, self.model, self.engine, self.built, self.ctx = lib, None, None, None, None

    def _check(self, status, what, err=None):
        if status != 0:
            reason = err.message.decode(errors="replace") if err is not None else ""
            if not reason and self.ctx:
                reason = self.lib.tc_context_error(self.ctx).decode(errors="replace")
            raise CompareError(f"tailcut {what}: {reason or self.lib.tc_status_str(status).decode()}")

    def build(self, model_path, shapes, threads):
        """tc_model_load + tc_engine_build with one static profile; returns milliseconds."""
        lib, err = self.lib, TcError()
        names = [n.encode() for n in shapes]
        ranges = (TcInputRange * len(shapes))()
        for r, (name, dims) in zip(ranges, zip(names, shapes.values())):
            r.name, r.rank = name, len(dims)
            for d, v in enumerate(dims):
                r.min[d] = r.opt[d] = r.max[d] = v
        profile = TcProfile(len(shapes), ranges)
        opts = TcBuildOptions(ctypes.sizeof(TcBuildOptions), threads, 1, ctypes.pointer(profile), 0)
        t0 = time.perf_counter_ns()
        self.model = ctypes.c_void_p()
        self._check(lib.tc_model_load(model_path.encode(), None, ctypes.byref(self.model), ctypes.byref(err)),
                    "model load", err)
        self.built = ctypes.c_void_p()
        self._check(lib.tc_engine_build(self.model, ctypes.byref(opts), ctypes.byref(self.built),
                                        ctypes.byref(err)), "build", err)
        build_ms = ms_since(t0)
        lib.tc_model_destroy(self.model)
        self.model = None
        return build_ms

    def save_and_load(self, plan_path):
        """Saves the built engine, then times tc_engine_load + tc_context_create of the plan."""
        lib, err = self.lib, TcError()
        self._check(lib.tc_engine_save(self.built, plan_path.encode(), ctypes.byref(err)), "save", err)
        lib.tc_engine_destroy(self.built)
        self.built = None
        return self.load(plan_path)

    def load(self, plan_path):
        """Times tc_engine_load + tc_context_create of a plan file."""
        lib, err = self.lib, TcError()
        t0 = time.perf_counter_ns()
        self.engine = ctypes.c_void_p()
        self._check(lib.tc_engine_load(plan_path.encode(), ctypes.byref(self.engine), ctypes.byref(err)),
                    "plan load", err)
        self.ctx = ctypes.c_void_p()
        self._check(lib.tc_context_create(self.engine, 0, ctypes.byref(self.ctx), ctypes.byref(err)),
                    "context create", err)
        return ms_since(t0)

    def bind(self, arrays):
        """Binds each numpy array as the input of its name (shape and data; the library checks the dtype). The
        context reads the array's memory as packed row-major elements of the native byte order: any other array (a
        slice, a transpose, Fortran order, a big-endian dtype) is bound through a C-contiguous native copy, which
        this object keeps alive as long as the binding (the context keeps the pointer)."""
        self._bound = {}
        for name, a in arrays.items():
            a = np.asarray(a)
            if a.ndim > TC_MAX_RANK:
                raise CompareError(f"input '{name}' has rank {a.ndim}, above {TC_MAX_RANK}")
            code = NUMPY_TO_TC_DTYPE.get(a.dtype.type)  # the element type, whatever the byte order
            if code is None:
                raise CompareError(f"input '{name}' has dtype {a.dtype}, which tailcut lacks")
            # (np.ascontiguousarray would make a 0-d array 1-d: a scalar input such as silero's sr must stay rank 0)
            c = np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True)
            self._bound[name] = c
            t = TcTensor(code, c.ndim, (ctypes.c_int64 * TC_MAX_RANK)(*c.shape), c.ctypes.data, c.nbytes)
            self._check(self.lib.tc_context_set_input(self.ctx, name.encode(), ctypes.byref(t)),
                        "binding an input")  # the reason names the input, both dtypes and the cast

    def run(self):
        self._check(self.lib.tc_context_run(self.ctx), "run")

    def outputs(self):
        out = {}
        for k in range(self.lib.tc_engine_num_outputs(self.engine)):
            info, t = TcIoInfo(), TcTensor()
            self._check(self.lib.tc_engine_output_info(self.engine, k, ctypes.byref(info)), "output info")
            self._check(self.lib.tc_context_tensor(self.ctx, info.name, ctypes.byref(t)), "output")
            dtype = TC_DTYPE_TO_NUMPY.get(t.dtype)
            if dtype is None:
                raise CompareError(f"tailcut output '{info.name.decode()}' has dtype {t.dtype}, which numpy lacks")
            buf = (ctypes.c_char * t.nbytes).from_address(t.data) if t.nbytes else b""
            out[info.name.decode()] = np.frombuffer(buf, dtype=dtype).reshape(list(t.dims[:t.rank])).copy()
        return out

    def close(self):
        if self.ctx:
            self.lib.tc_context_destroy(self.ctx)
        for e in (self.engine, self.built):
            if e:
                self.lib.tc_engine_destroy(e)
        if self.model:
            self.lib.tc_model_destroy(self.model)
        self.ctx = self.engine = self.built = self.model = None


# ---- the comparison --------------------------------------------------------------------------

def ort_binding(sess, arrays, ref_outputs):
    """IOBinding with the inputs and preallocated outputs bound once; the caller keeps the returned output arrays alive
    as long as it runs the binding (onnxruntime writes into them through raw pointers)."""
    io = sess.io_binding()
    for name, a in arrays.items():
        io.bind_cpu_input(name, a)
    outs = {}
    for o, ref in zip(sess.get_outputs(), ref_outputs):
        buf = np.empty_like(ref)
        outs[o.name] = buf
        io.bind_output(o.name, "cpu", 0, buf.dtype, list(buf.shape), buf.ctypes.data)
    return io, outs


def max_abs_errors(ort_out, tc_out):
    errs = {}
    for name, ref in ort_out.items():
        got = tc_out.get(name)
        if got is None:
            raise CompareError(f"tailcut has no output named '{name}'")
        if got.shape != ref.shape:
            raise CompareError(f"output '{name}': tailcut shape {list(got.shape)}, onnxruntime {list(ref.shape)}")
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        errs[name] = {"max_abs_error": float(diff.max()) if diff.size else 0.0,
                      "max_abs_ref": float(np.abs(ref.astype(np.float64)).max()) if ref.size else 0.0}
        a, b = ref.astype(np.float64).ravel(), got.astype(np.float64).ravel()
        den = np.linalg.norm(a) * np.linalg.norm(b)
        errs[name]["cosine"] = float(a @ b / den) if den > 0 else 1.0
    return errs


def fmt_row(label, s):
    return (f"  {label:<12} {s['p50_ms']:10.4f} {s['p90_ms']:10.4f} {s['p99_ms']:10.4f} "
            f"{s['p999_ms']:10.4f} {s['mean_ms']:10.4f} {100 * s['cv']:6.1f}%")


def compare(args):
    shapes_opt = parse_shapes(args.shapes) if args.shapes else {}
    sess, ort_ms, ort_version = ort_session(args.ort_model or args.model, args.threads, args.ort_spin)
    shapes = input_shapes(sess.get_inputs(), args.batch, shapes_opt)
    arrays, fills = {}, {}
    for i in sess.get_inputs():
        dtype = ORT_TYPE_TO_NUMPY.get(i.type)
        if dtype is None:
            raise CompareError(f"input '{i.name}' has type {i.type}, which this script does not generate")
        arrays[i.name], fills[i.name] = make_input(i.name, shapes[i.name], dtype, args.seed)

    lib = load_library(args.tailcut_lib)
    tc = Tailcut(lib)
    ov = None
    try:
        if args.tailcut_plan:  # a plan built beforehand (e.g. tailcut build --int8)
            build_ms = 0.0
            plan_ms = tc.load(args.tailcut_plan)
            plan_bytes = os.path.getsize(args.tailcut_plan)
        else:
            build_ms = tc.build(args.model, shapes, args.threads)
            with tempfile.TemporaryDirectory(prefix="tc_compare_") as tmp:
                plan = os.path.join(tmp, "model.plan")
                plan_ms = tc.save_and_load(plan)
                plan_bytes = os.path.getsize(plan)
        tc.bind(arrays)

        out_names = [o.name for o in sess.get_outputs()]
        for _ in range(args.warmup):
            sess.run(out_names, arrays)
            tc.run()
        ref = sess.run(out_names, arrays)
        tc.run()
        errors = max_abs_errors(dict(zip(out_names, ref)), tc.outputs())
        io, ort_outs = ort_binding(sess, arrays, ref)  # ort_outs: the bound output buffers, kept alive to the end
        sess.run_with_iobinding(io)  # the binding's first run, untimed
        if getattr(args, "openvino", False):  # a third engine (ov_peer.py), warmed up like the others
            ov = ov_peer.OpenVinoPeer(args.ort_model or args.model, arrays, args.threads)
            for _ in range(args.warmup + 1):
                ov.run()
            ov_errors = max_abs_errors(dict(zip(out_names, ref)), ov.outputs())

        def run_tc():
            if lib.tc_context_run(tc.ctx) != 0:
                tc.run()  # raises with the context's reason

        runners = [lambda: sess.run_with_iobinding(io), run_tc] + ([ov.run] if ov else [])
        times = [[] for _ in runners]
        n = len(runners)
        clock = time.perf_counter_ns
        for k in range(args.iterations):
            # Each engine takes each place in the order in turn (two engines: the order flips every iteration).
            for which in [(k + j) % n for j in range(n)]:
                t0 = clock()
                runners[which]()
                times[which].append(clock() - t0)
    finally:
        tc.close()

    ort_t, tc_t = times[0], times[1]
    s_ort = stats(np.asarray(ort_t) / 1e6)
    s_tc = stats(np.asarray(tc_t) / 1e6)
    batch = next((v[0] for v in shapes.values() if v), 1)
    result = {
        "model": args.model, "ort_model": args.ort_model or args.model, "tailcut_plan": args.tailcut_plan,
        "threads": args.threads, "batch": batch, "seed": args.seed,
        "iterations": args.iterations, "warmup": args.warmup, "onnxruntime_version": ort_version,
        "ort_spinning": bool(args.ort_spin),
        "inputs": {n: {"shape": shapes[n], "dtype": str(arrays[n].dtype), "data": fills[n]} for n in arrays},
        "load_ms": {"ort_session": ort_ms, "tailcut_build": build_ms, "tailcut_plan_load": plan_ms},
        "plan_bytes": plan_bytes,
        "outputs": errors,
        "onnxruntime": dict(s_ort, throughput_per_s=batch * 1e3 / s_ort["mean_ms"]),
        "tailcut": dict(s_tc, throughput_per_s=batch * 1e3 / s_tc["mean_ms"]),
        "ratio_p50": s_tc["p50_ms"] / s_ort["p50_ms"],
        "ratio_p99": s_tc["p99_ms"] / s_ort["p99_ms"],
    }
    if ov is not None:
        s_ov = stats(np.asarray(times[2]) / 1e6)
        result.update({"openvino_version": ov.version, "openvino_precision": ov.precision,
                       "openvino_outputs": ov_errors,
                       "openvino": dict(s_ov, throughput_per_s=batch * 1e3 / s_ov["mean_ms"]),
                       "ratio_p50_openvino": s_tc["p50_ms"] / s_ov["p50_ms"],
                       "ratio_p99_openvino": s_tc["p99_ms"] / s_ov["p99_ms"]})
        result["load_ms"]["openvino_compile"] = ov.load_ms
    report(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"json: {args.json}")


def report(r):
    if r.get("tailcut_plan"):
        print(f"tailcut plan: {r['tailcut_plan']}")
    if r.get("ort_model") and r["ort_model"] != r["model"]:
        print(f"onnxruntime model: {r['ort_model']}")
    print(f"model: {r['model']}  threads: {r['threads']}  onnxruntime {r['onnxruntime_version']}"
          f" (spinning {'on' if r['ort_spinning'] else 'off'})")
    for name, i in r["inputs"].items():
        print(f"input: {name} {i['dtype']}{i['shape']}, {i['data']} (seed {r['seed']})")
    ld = r["load_ms"]
    print(f"load: onnxruntime session {ld['ort_session']:.1f} ms | tailcut import+build {ld['tailcut_build']:.1f} ms"
          f" | tailcut plan load + context {ld['tailcut_plan_load']:.2f} ms (plan {r['plan_bytes'] / 1e6:.1f} MB)")
    for name, e in r["outputs"].items():
        print(f"accuracy: output '{name}': max abs error {e['max_abs_error']:.3g} (max |onnxruntime| "
              f"{e['max_abs_ref']:.3g}), cosine {e['cosine']:.6f}")
        if e["max_abs_error"] > 1e-3 * max(1.0, e["max_abs_ref"]):
            print(f"warning: output '{name}' differs by more than 1e-3 relative to its largest value")
    print(f"\n{r['iterations']} interleaved iterations after {r['warmup']} warm-up runs each:")
    print(f"  {'latency ms':<12} {'P50':>10} {'P90':>10} {'P99':>10} {'P99.9':>10} {'mean':>10} {'CV':>7}"
          f"  throughput")
    engines = ("onnxruntime", "tailcut") + (("openvino",) if "openvino" in r else ())
    for key in engines:
        print(fmt_row(key, r[key]) + f"  {r[key]['throughput_per_s']:.1f}/s")
    print(f"ratio tailcut/onnxruntime: P50 {r['ratio_p50']:.3f}x  P99 {r['ratio_p99']:.3f}x"
          "  (below 1: tailcut faster)")
    if "openvino" in r:
        for name, e in r["openvino_outputs"].items():
            print(f"openvino {r['openvino_version']} ({r['openvino_precision']}): output '{name}' max abs difference "
                  f"from onnxruntime {e['max_abs_error']:.3g}; compile {r['load_ms']['openvino_compile']:.1f} ms")
        print(f"ratio tailcut/openvino: P50 {r['ratio_p50_openvino']:.3f}x  P99 {r['ratio_p99_openvino']:.3f}x")
    n = r["iterations"]
    if n < 1000:
        print(f"note: {n} samples < 1000: P99 and P99.9 are not meaningful")
    for key in engines:
        if r[key]["cv"] > 0.05:
            print(f"warning: {key} CV {100 * r[key]['cv']:.1f}% > 5%: the machine is noisy; quote medians")


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="tailcut vs ONNX Runtime, interleaved in one process.",
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="example: python bench/compare.py model.onnx --threads 2 --batch 1")
    p.add_argument("model", help="the .onnx model")
    p.add_argument("--threads", type=int, required=True, help="threads of each engine")
    p.add_argument("--batch", type=int, default=0, help="size of every input's dynamic first dim")
    p.add_argument("--shapes", help="NAME:DxDx..,... input shapes (override --batch)")
    p.add_argument("--iterations", type=int, default=200, help="timed runs of each engine (default 200)")
    p.add_argument("--warmup", type=int, default=10, help="untimed runs of each engine first (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--tailcut-lib", default=os.path.join(os.path.dirname(here), "build", "libtailcut.so"),
                   help="path of libtailcut.so (default: build/libtailcut.so of this repository)")
    p.add_argument("--ort-spin", action="store_true", help="let ONNX Runtime's workers spin between runs")
    p.add_argument("--json", help="write the figures to this file")
    p.add_argument("--tailcut-plan", help="run this prebuilt plan (e.g. from tailcut build --int8) instead of "
                   "building MODEL; its inputs must take the same shapes")
    p.add_argument("--ort-model", help="the model onnxruntime runs (default MODEL), e.g. a QDQ model")
    p.add_argument("--openvino", action="store_true",
                   help="also run OpenVINO's CPU plugin in FP32, interleaved (needs the openvino module: ov_peer.py)")
    args = p.parse_args(argv)
    if args.openvino and not ov_peer.available():
        p.error("--openvino: the openvino module is not installed here (ov_peer.py says how to install it)")
    if args.threads < 1 or args.iterations < 1 or args.warmup < 0 or args.batch < 0 or args.seed < 0:
        p.error("--threads and --iterations must be >= 1; --warmup, --batch and --seed >= 0")
    try:
        compare(args)
    except (CompareError, ValueError) as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # onnxruntime raises its own exception types for bad models
        print(f"compare.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
