#!/usr/bin/env python3
"""serve_compare.py - `tailcut serve` against other servings of the same model, under the same load.

Every load is `tailcut loadgen` over loopback HTTP (KServe v2). Open-loop runs are Poisson
(`loadgen --rate R`, latency measured from each request's intended send time, so a server that falls
behind is charged for the queueing it causes); saturation rates come from closed-loop runs
(`loadgen --concurrency C`, throughput_per_s). When two servers are compared they run interleaved:
round r loads one server then the other (the order flips every round), only one server is under load
at a time, and round r uses loadgen --seed r for both, so both see the same request schedule and
body. Each server is warmed up (a short closed-loop run) before anything is measured. A summary
figure is the median over rounds of the per-round figure (loadgen reports percentiles per run, so
runs cannot be pooled); ok/sent/errors are summed over rounds.

Experiments (--experiment):
  flask     (default) ResNet-50 (tools/modelgen, batch 1, 224x224) in `tailcut serve` and in
            bench/baselines/flask_ort.py (Flask's threaded server around one onnxruntime session),
            both with --threads engine/intra-op threads. The Flask baseline's saturation rate is
            measured closed loop (--concurrency C); both servers then take open-loop Poisson load at
            --load-fraction (0.7) of it for --rounds x --duration s. Prints P50/P90/P99/P99.9,
            throughput and errors per server, and the P99 ratio tailcut/flask (and, for context,
            tailcut's own closed-loop throughput: below the offered rate, tailcut is overloaded).
            With "precision": "int8" in --tailcut-config's "tailcut" block (and no
            "calibration_cache" there), --calib-samples seeded random samples are calibrated by
            `tailcut calibrate` first and the cache goes into the version folder as calib.cache.
  batching  ResNet-50 in two `tailcut serve` repositories, both with max_batch_size 8, one without
            and one with "dynamic_batching": {"max_queue_delay_microseconds": 2000,
            "preferred_batch_size": [4, 8]} (Triton's field names). The no-batching saturation rate
            is measured closed loop; both run at --load-fraction (0.8 for this experiment) of it,
            interleaved; then an ascending sweep (--sweep-start, --sweep-step, --sweep-max, as
            fractions of that saturation rate, one run per step of --duration s but at least
            --sweep-min-requests (30) requests' worth, both servers alternating)
            finds for each the highest Poisson rate whose P99 stays under --p99-limit-ms (100) with
            no errors. Prints both and the ratio batching/no-batching (and both closed-loop
            throughputs at --concurrency, for context). A server that ignores dynamic_batching
            runs all the same (the two then measure alike).
  overhead  MobileNetV2 at batch 1: one plan built with `tailcut build --batch 1 --threads N`, timed
            by `tailcut bench` (P50, in process) and served by `tailcut serve` to one client
            (loadgen --concurrency 1, with --binary when `tailcut loadgen --help` offers it, else
            JSON; --tensors json forces JSON), alternating bench and loadgen runs per round. Prints
            server P50 minus bench P50 in microseconds: what HTTP, the codec, the server and the
            client add to one request.
--tensors binary makes every loadgen run of flask and batching use --binary as well (the servers
must then support the binary tensor extension).

The model files are generated into a temporary folder (removed at the end unless --keep), servers
listen on free 127.0.0.1 ports, and every process the script starts is stopped on exit, on an
exception, on Ctrl-C and on SIGTERM (and gets SIGTERM itself should the script be killed outright).
--plan build serves a plan built by `tailcut build` (auto-tuned, shapes as the server would use)
instead of letting `tailcut serve` build the .onnx itself (heuristic tactics); overhead always does.

Run it with the project virtualenv (numpy, onnx, onnxruntime and flask: `make venv`):
    .venv/bin/python bench/serve_compare.py --tailcut build/tailcut                 # flask, 3 x 10 s
    .venv/bin/python bench/serve_compare.py --experiment batching --duration 10 --json batching.json
    .venv/bin/python bench/serve_compare.py --experiment overhead --rounds 5 --duration 5
    .venv/bin/python bench/serve_compare.py --duration 5 --rounds 1                 # a quick look

Exit status: 0 when the experiment ran (whatever the figures), 1 on an error, 2 on bad arguments,
130 on Ctrl-C, 143 on SIGTERM.
"""

import argparse
import ctypes
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELGEN = os.path.join(ROOT, "tools", "modelgen", "modelgen.py")
FLASK_APP = os.path.join(ROOT, "bench", "baselines", "flask_ort.py")
PCT_KEYS = ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "mean_ms", "max_ms")
DYNAMIC_BATCHING = {"max_queue_delay_microseconds": 2000, "preferred_batch_size": [4, 8]}


class CompareError(Exception):
    """Ends the experiment with exit status 1."""


class Stop(BaseException):
    """Raised by the SIGTERM/SIGHUP handler so that the cleanup in main runs."""


# ---- processes ------------------------------------------------------------------------------

def _child_setup():
    """In the child before exec: its own session (no terminal Ctrl-C: the script stops it) and
    SIGTERM should the script die without cleaning up (Linux prctl PR_SET_PDEATHSIG)."""
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Procs:
    """Every process the script starts; stop_all() ends those still running."""

    def __init__(self):
        self.live = []

    def start(self, cmd, log_path=None):
        out = open(log_path, "wb") if log_path else subprocess.PIPE
        try:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT if log_path else subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, preexec_fn=_child_setup, cwd=ROOT)
        finally:
            if log_path:
                out.close()
        self.live.append(p)
        return p

    def run(self, cmd, timeout):
        """Runs cmd to completion; returns (returncode, stdout+stderr text)."""
        p = self.start(cmd)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(p)
            raise CompareError(f"timed out after {timeout:.0f} s: {' '.join(cmd)}")
        finally:
            if p.poll() is not None and p in self.live:
                self.live.remove(p)
        return p.returncode, (out or b"").decode(errors="replace") + (err or b"").decode(errors="replace")

    def stop(self, p, grace=15.0):
        if p.poll() is None:
            try:
                p.terminate()
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
            except ProcessLookupError:
                pass
        if p in self.live:
            self.live.remove(p)

    def stop_all(self):
        for p in list(reversed(self.live)):
            try:
                self.stop(p)
            except Exception as e:  # keep stopping the others
                print(f"serve_compare: cannot stop pid {p.pid}: {e}", file=sys.stderr)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_status(port, path, timeout=2.0):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def log_tail(path, n=30):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError:
        return "(no log)"


class Server:
    def __init__(self, label, kind, port, model, proc, log):
        self.label, self.kind, self.port, self.model, self.proc, self.log = label, kind, port, model, proc, log
        self.url = f"http://127.0.0.1:{port}"

    def describe(self):
        return {"label": self.label, "kind": self.kind, "port": self.port, "model": self.model, "log": self.log}


def wait_ready(srv, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if srv.proc.poll() is not None:
            raise CompareError(f"{srv.label} exited with status {srv.proc.returncode}:\n{log_tail(srv.log)}")
        try:
            if http_status(srv.port, "/v2/health/ready") == 200 and http_status(srv.port, f"/v2/models/{srv.model}") == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise CompareError(f"{srv.label} not ready after {timeout:.0f} s:\n{log_tail(srv.log)}")


def start_tailcut(procs, a, label, repo, model, work):
    port = free_port()
    log = os.path.join(work, f"{label}.log")
    cmd = [a.tailcut, "serve", "--model-repository", repo, "--http-port", str(port), "--http-address", "127.0.0.1",
           "--threads", str(a.http_threads)]
    extra = json.loads(a.tailcut_config) if getattr(a, "tailcut_config", None) else {}
    if "instance_group" not in extra and "tailcut" not in extra:
        cmd += ["--engine-threads", str(a.threads)]  # else the config's instances / threads decide
    srv = Server(label, "tailcut", port, model, procs.start(cmd, log), log)
    wait_ready(srv, a.ready_timeout)
    return srv


def start_flask(procs, a, label, onnx_path, model, work):
    port = free_port()
    log = os.path.join(work, f"{label}.log")
    cmd = [a.python, FLASK_APP, "--model", onnx_path, "--name", model, "--port", str(port), "--host", "127.0.0.1",
           "--threads", str(a.threads)]
    srv = Server(label, "flask", port, model, procs.start(cmd, log), log)
    wait_ready(srv, a.ready_timeout)
    return srv


# ---- models and repositories ----------------------------------------------------------------

def generate(procs, a, kind, out):
    print(f"generating {kind} -> {out}", flush=True)
    rc, text = procs.run([a.python, MODELGEN, kind, "-o", out], timeout=600)
    if rc != 0:
        raise CompareError(f"modelgen {kind} failed ({rc}):\n{text}")


def io_of(a, onnx_path):
    """[(name, [dims with -1 for symbolic], onnx elem type)] of the inputs and of the outputs."""
    code = ("import json,sys,onnx\n"
            "m=onnx.load(sys.argv[1],load_external_data=False)\n"
            "f=lambda v:[v.name,[d.dim_value if d.HasField('dim_value') else -1 for d in v.type.tensor_type.shape.dim],"
            "v.type.tensor_type.elem_type]\n"
            "init={i.name for i in m.graph.initializer}\n"
            "print(json.dumps([[f(v) for v in m.graph.input if v.name not in init],[f(v) for v in m.graph.output]]))\n")
    r = subprocess.run([a.python, "-c", code, onnx_path], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise CompareError(f"cannot read the inputs of {onnx_path}:\n{r.stderr}")
    return json.loads(r.stdout)


ONNX_TO_TRITON = {1: "TYPE_FP32", 2: "TYPE_UINT8", 3: "TYPE_INT8", 4: "TYPE_UINT16", 5: "TYPE_INT16", 6: "TYPE_INT32",
                  7: "TYPE_INT64", 9: "TYPE_BOOL", 10: "TYPE_FP16", 11: "TYPE_FP64", 12: "TYPE_UINT32",
                  13: "TYPE_UINT64"}


def make_config(io, max_batch_size, dynamic_batching=None):
    """A Triton-style config.json: with max_batch_size > 0 the dims leave out the batch dim, with 0
    they are the full shape and a symbolic batch dim is 1."""
    def entry(name, dims, et):
        d = dims[1:] if max_batch_size > 0 else [1 if (k == 0 and v < 0) else v for k, v in enumerate(dims)]
        return {"name": name, "data_type": ONNX_TO_TRITON.get(et, "TYPE_FP32"), "dims": d}
    cfg = {"max_batch_size": max_batch_size,
           "input": [entry(*v) for v in io[0]],
           "output": [entry(*v) for v in io[1]]}
    if dynamic_batching is not None:
        cfg["dynamic_batching"] = dynamic_batching
    return cfg


def make_repo(repo_dir, model, onnx_path, cfg, plan_path=None):
    """repo_dir/model/{config.json, 1/model.onnx (a link to onnx_path) [, 1/model.plan]}."""
    vdir = os.path.join(repo_dir, model, "1")
    os.makedirs(vdir)
    dst = os.path.join(vdir, "model.onnx")
    try:
        os.link(onnx_path, dst)
    except OSError:
        shutil.copyfile(onnx_path, dst)
    if plan_path:
        shutil.copyfile(plan_path, os.path.join(vdir, "model.plan"))
    with open(os.path.join(repo_dir, model, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    return repo_dir


def calibrate(procs, a, onnx_path, io, work):
    """With "precision": "int8": --calib-samples seeded standard-normal samples of every input
    (batch 1) and `tailcut calibrate` over them; returns the cache's path. Synthetic data, as the
    model's weights are: the figure is a speed figure, its accuracy is not the point here."""
    data = os.path.join(work, "calib-data")
    os.makedirs(data, exist_ok=True)
    code = ("import json,sys,numpy as np\n"
            "io,n,d=json.loads(sys.argv[1]),int(sys.argv[2]),sys.argv[3]\n"
            "rng=np.random.default_rng(1234)\n"
            "for name,dims,_ in io:\n"
            "  shape=[1 if (k==0 and v<0) else v for k,v in enumerate(dims)]\n"
            "  for k in range(n):\n"
            "    np.save(f'{d}/{name}.{k}.npy',rng.standard_normal(shape).astype(np.float32))\n")
    r = subprocess.run([a.python, "-c", code, json.dumps(io[0]), str(a.calib_samples), data],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise CompareError(f"cannot write calibration samples:\n{r.stderr}")
    cache = os.path.join(work, "calib.cache")
    cmd = [a.tailcut, "calibrate", onnx_path, "--data", data, "-o", cache, "--quiet"]
    print("calibrating: " + " ".join(cmd), flush=True)
    rc, text = procs.run(cmd, timeout=3600)
    if rc != 0:
        raise CompareError(f"tailcut calibrate failed ({rc}):\n{text}")
    return cache


def build_plan(procs, a, onnx_path, io, max_batch, out, calib=None):
    """`tailcut build` with the shapes the server would give its build: batch dim [1, max_batch], opt 1."""
    mins, opts, maxs = [], [], []
    for name, dims, _ in io[0]:
        if any(v < 0 for v in dims[1:]):
            raise CompareError(f"input '{name}' has a symbolic dimension past the batch dimension")
        rest = "x".join(str(v) for v in dims[1:])
        b = [dims[0]] * 3 if dims[0] >= 0 else [1, 1, max_batch]
        mins.append(f"{name}:{b[0]}x{rest}")
        opts.append(f"{name}:{b[1]}x{rest}")
        maxs.append(f"{name}:{b[2]}x{rest}")
    cmd = [a.tailcut, "build", onnx_path, "-o", out, "--threads", str(a.threads)]
    if calib:
        cmd += ["--int8", "--calib-cache", calib]
    if max_batch == 1:
        cmd += ["--batch", "1"]
    else:
        cmd += ["--min-shapes", ",".join(mins), "--opt-shapes", ",".join(opts), "--max-shapes", ",".join(maxs)]
    print("building plan: " + " ".join(cmd), flush=True)
    t0 = time.time()
    rc, text = procs.run(cmd, timeout=3600)
    if rc != 0:
        raise CompareError(f"tailcut build failed ({rc}):\n{text}")
    print(f"  built in {time.time() - t0:.1f} s", flush=True)


# ---- load -----------------------------------------------------------------------------------

def loadgen(procs, a, srv, work, tag, rate=None, concurrency=None, duration=None, seed=0, binary=False):
    """One `tailcut loadgen` run; returns its JSON report plus what was run."""
    duration = duration if duration is not None else a.duration
    jpath = os.path.join(work, f"lg-{tag}.json")
    if os.path.exists(jpath):
        os.remove(jpath)
    cmd = [a.tailcut, "loadgen", "--url", srv.url, "--model", srv.model, "--duration", f"{duration:g}",
           "--seed", str(seed), "--timeout-ms", str(a.timeout_ms), "--json", jpath]
    cmd += ["--rate", f"{rate:.6g}"] if rate is not None else ["--concurrency", str(concurrency)]
    if binary:
        cmd.append("--binary")
    rc, text = procs.run(cmd, timeout=duration + a.timeout_ms / 1000.0 + 120)
    rep = None
    if os.path.exists(jpath):
        with open(jpath) as f:
            rep = json.load(f)
    if rc != 0 or rep is None:
        raise CompareError(f"loadgen against {srv.label} failed ({rc}): {' '.join(cmd)}\n{text}\n"
                           f"server log:\n{log_tail(srv.log)}")
    if srv.proc.poll() is not None:
        raise CompareError(f"{srv.label} exited with status {srv.proc.returncode} during the load:\n{log_tail(srv.log)}")
    rep.update({"server": srv.label, "mode": "open" if rate is not None else "closed", "rate_per_s": rate,
                "concurrency": concurrency, "duration_s": duration, "seed": seed, "binary": binary,
                "command": " ".join(cmd)})
    return rep


def warm(procs, a, srv, work, binary=False):
    if a.warmup > 0:
        loadgen(procs, a, srv, work, f"warm-{srv.label}", concurrency=1, duration=a.warmup, binary=binary)


def saturation(procs, a, srv, work, binary=False):
    rep = loadgen(procs, a, srv, work, f"sat-{srv.label}", concurrency=a.concurrency,
                  duration=a.sat_duration or a.duration, binary=binary)
    if not rep.get("throughput_per_s") or rep.get("ok", 0) == 0:
        raise CompareError(f"{srv.label}: no successful responses in the saturation run: {json.dumps(rep)}")
    print(f"  {srv.label} closed loop, concurrency {a.concurrency}: {rep['throughput_per_s']:.2f} req/s "
          f"(p50 {fmt(rep['p50_ms'])} ms, errors {rep.get('errors_total', 0)})", flush=True)
    return rep


def summarize(reports):
    s = {"runs": len(reports),
         "sent": sum(r.get("sent", 0) for r in reports),
         "ok": sum(r.get("ok", 0) for r in reports),
         "samples": sum(r.get("samples", 0) for r in reports),
         "errors_total": sum(r.get("errors_total", 0) for r in reports),
         "errors": {}}
    for r in reports:
        for k, v in (r.get("errors") or {}).items():
            s["errors"][k] = s["errors"].get(k, 0) + v
    for k in PCT_KEYS + ("throughput_per_s",):
        vals = [r[k] for r in reports if r.get(k) is not None]
        s[k] = statistics.median(vals) if vals else None
        if len(vals) > 1:
            s[k + "_range"] = [min(vals), max(vals)]
    return s


def interleaved(procs, a, servers, work, tag, rate, binary=False):
    """--rounds rounds, each loading every server in turn (order flipped on odd rounds)."""
    per = {s.label: [] for s in servers}
    for r in range(a.rounds):
        order = servers if r % 2 == 0 else list(reversed(servers))
        for srv in order:
            rep = loadgen(procs, a, srv, work, f"{tag}-{srv.label}-r{r + 1}", rate=rate, seed=r + 1, binary=binary)
            per[srv.label].append(rep)
            print(f"  round {r + 1}/{a.rounds} {srv.label:>10}: " + line(rep), flush=True)
            cool(a, rep)
    return {label: {"rounds": reps, "summary": summarize(reps)} for label, reps in per.items()}


def cool(a, rep):
    """After an overloaded run the server may still be finishing abandoned requests: give it time."""
    if rep.get("errors_total", 0) or (rep.get("p99_ms") or 0) > 1000:
        time.sleep(a.cooldown)


# ---- printing -------------------------------------------------------------------------------

def fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def line(rep):
    return (f"p50 {fmt(rep.get('p50_ms'))}  p90 {fmt(rep.get('p90_ms'))}  p99 {fmt(rep.get('p99_ms'))}  "
            f"p99.9 {fmt(rep.get('p999_ms'))} ms  {fmt(rep.get('throughput_per_s'))}/s  "
            f"ok {rep.get('ok', 0)}/{rep.get('sent', 0)}  errors {rep.get('errors_total', 0)}")


def print_table(results, labels):
    print(f"{'server':>12} {'P50 ms':>9} {'P90 ms':>9} {'P99 ms':>9} {'P99.9 ms':>9} {'thru/s':>8} "
          f"{'ok':>7} {'samples':>7} {'errors':>7}")
    for label in labels:
        s = results[label]["summary"]
        print(f"{label:>12} {fmt(s['p50_ms']):>9} {fmt(s['p90_ms']):>9} {fmt(s['p99_ms']):>9} {fmt(s['p999_ms']):>9} "
              f"{fmt(s['throughput_per_s']):>8} {s['ok']:>7} {s['samples']:>7} {s['errors_total']:>7}"
              + (f"  {errors_text(s['errors'])}" if s["errors_total"] else ""))
    if any(results[lb]["summary"]["samples"] < 1000 * max(1, results[lb]["summary"]["runs"]) for lb in labels):
        print("note: fewer than 1000 samples per run: P99.9 (and with < 100, P99) is not meaningful; "
              "use a longer --duration")


def errors_text(errors):
    return ", ".join(f"{k} {v}" for k, v in errors.items() if v)


def ratio(x, y):
    return x / y if x is not None and y else None


# ---- experiments ----------------------------------------------------------------------------

def exp_flask(procs, a, work):
    check_python(a, "flask", "onnxruntime")
    binary = use_binary(a, default=False)
    onnx_path = os.path.join(work, "resnet50.onnx")
    generate(procs, a, "resnet50", onnx_path)
    io = io_of(a, onnx_path)
    extra = json.loads(a.tailcut_config) if a.tailcut_config else {}
    mbs = int(extra.get("max_batch_size", 0))
    cfg = make_config(io, mbs, extra.get("dynamic_batching"))
    cfg.update({k: v for k, v in extra.items() if k not in ("max_batch_size", "dynamic_batching")})
    tc_block = cfg.get("tailcut") if isinstance(cfg.get("tailcut"), dict) else {}
    calib = None
    if tc_block.get("precision") == "int8" and "calibration_cache" not in tc_block:
        calib = calibrate(procs, a, onnx_path, io, work)
        cfg["tailcut"] = {**tc_block, "calibration_cache": "calib.cache"}
    plan = None
    if a.plan == "build":
        plan = os.path.join(work, "resnet50.plan")
        build_plan(procs, a, onnx_path, io, max(mbs, 1), plan, calib)
    repo = make_repo(os.path.join(work, "repo-tailcut"), "resnet50", onnx_path, cfg, plan)
    if calib:
        shutil.copyfile(calib, os.path.join(repo, "resnet50", "1", "calib.cache"))
    print(f"tailcut config.json: {json.dumps(cfg)}", flush=True)
    print("starting servers", flush=True)
    t0 = time.time()
    tc = start_tailcut(procs, a, "tailcut", repo, "resnet50", work)
    print(f"  tailcut serve ready on {tc.url} in {time.time() - t0:.1f} s", flush=True)
    t0 = time.time()
    fl = start_flask(procs, a, "flask", onnx_path, "resnet50", work)
    print(f"  flask baseline ready on {fl.url} in {time.time() - t0:.1f} s", flush=True)
    warm(procs, a, tc, work, binary)
    warm(procs, a, fl, work, binary)
    print(f"saturation (closed loop, {'binary' if binary else 'JSON'} tensors)", flush=True)
    sat = saturation(procs, a, fl, work, binary)
    sat_tc = saturation(procs, a, tc, work, binary)  # reported only: the rate follows Flask's
    frac = a.load_fraction if a.load_fraction is not None else 0.7
    rate = frac * sat["throughput_per_s"]
    print(f"open loop: Poisson {rate:.2f} req/s ({frac:.0%} of the Flask saturation), "
          f"{a.rounds} rounds x {a.duration:g} s, interleaved", flush=True)
    res = interleaved(procs, a, [tc, fl], work, "flask", rate, binary)
    p99r = ratio(res["tailcut"]["summary"]["p99_ms"], res["flask"]["summary"]["p99_ms"])
    p50r = ratio(res["tailcut"]["summary"]["p50_ms"], res["flask"]["summary"]["p50_ms"])
    print(f"\n== flask: ResNet-50 batch 1 (224x224), {a.threads} threads, Poisson {rate:.2f} req/s = {frac:.0%} of "
          f"Flask's closed-loop {sat['throughput_per_s']:.2f} req/s (concurrency {a.concurrency}); "
          f"median over {a.rounds} x {a.duration:g} s")
    print_table(res, ["tailcut", "flask"])
    print(f"P99 ratio tailcut/flask: {fmt(p99r, '.3f')}   (P50 ratio {fmt(p50r, '.3f')})")
    print(f"closed-loop throughput at concurrency {a.concurrency}: tailcut {sat_tc['throughput_per_s']:.2f} req/s, "
          f"flask {sat['throughput_per_s']:.2f} req/s")
    return {"model": "resnet50", "plan": a.plan, "binary": binary, "saturation": {"flask": sat, "tailcut": sat_tc}, "load_fraction": frac,
            "rate_per_s": rate, "servers": res, "p99_ratio_tailcut_over_flask": p99r,
            "p50_ratio_tailcut_over_flask": p50r, "server_info": [tc.describe(), fl.describe()]}


def exp_batching(procs, a, work):
    binary = use_binary(a, default=False)
    onnx_path = os.path.join(work, "resnet50.onnx")
    generate(procs, a, "resnet50", onnx_path)
    io = io_of(a, onnx_path)
    mbs = 8
    plan = None
    if a.plan == "build":
        plan = os.path.join(work, "resnet50-b8.plan")
        build_plan(procs, a, onnx_path, io, mbs, plan)
    r_nb = make_repo(os.path.join(work, "repo-nobatch"), "resnet50", onnx_path, make_config(io, mbs), plan)
    r_b = make_repo(os.path.join(work, "repo-batch"), "resnet50", onnx_path, make_config(io, mbs, DYNAMIC_BATCHING),
                    plan)
    print("starting servers", flush=True)
    nb = start_tailcut(procs, a, "no-batching", r_nb, "resnet50", work)
    b = start_tailcut(procs, a, "batching", r_b, "resnet50", work)
    print(f"  no-batching on {nb.url}, batching on {b.url}", flush=True)
    warm(procs, a, nb, work, binary)
    warm(procs, a, b, work, binary)
    print(f"saturation (closed loop, {'binary' if binary else 'JSON'} tensors)", flush=True)
    sat = saturation(procs, a, nb, work, binary)
    sat_b = saturation(procs, a, b, work, binary)  # reported only
    sat_rate = sat["throughput_per_s"]
    frac = a.load_fraction if a.load_fraction is not None else 0.8
    rate = frac * sat_rate
    print(f"open loop: Poisson {rate:.2f} req/s ({frac:.0%} of the no-batching saturation), "
          f"{a.rounds} rounds x {a.duration:g} s, interleaved", flush=True)
    res = interleaved(procs, a, [nb, b], work, "batching", rate, binary)

    print(f"sweep: Poisson from {a.sweep_start:.0%} to {a.sweep_max:.0%} of {sat_rate:.2f} req/s in steps of "
          f"{a.sweep_step:.0%}, {a.duration:g} s each (at least {a.sweep_min_requests:g} requests), until "
          f"P99 >= {a.p99_limit_ms:g} ms or an error", flush=True)
    sweep = {nb.label: [], b.label: []}
    best = {nb.label: None, b.label: None}
    active = [nb, b]
    k = 0
    while active:
        f = a.sweep_start + k * a.sweep_step
        if f > a.sweep_max + 1e-9:
            break
        r = f * sat_rate
        order = list(active) if k % 2 == 0 else list(reversed(active))
        for srv in order:
            rep = loadgen(procs, a, srv, work, f"sweep-{srv.label}-{k}", rate=r, seed=100 + k, binary=binary,
                          duration=max(a.duration, a.sweep_min_requests / r))
            passed = rep.get("errors_total", 0) == 0 and rep.get("p99_ms") is not None and rep["p99_ms"] < a.p99_limit_ms
            rep["fraction_of_saturation"] = f
            rep["passed"] = passed
            sweep[srv.label].append(rep)
            print(f"  {f:5.0%} {r:7.2f}/s {srv.label:>12}: {line(rep)}  {'ok' if passed else 'STOP'}", flush=True)
            if passed:
                best[srv.label] = r
            else:
                active.remove(srv)
            cool(a, rep)
        k += 1
    capped = {lb: bool(sweep[lb]) and sweep[lb][-1]["passed"] for lb in sweep}
    bratio = ratio(best[b.label], best[nb.label])
    p99r = ratio(res[b.label]["summary"]["p99_ms"], res[nb.label]["summary"]["p99_ms"])
    print(f"\n== batching: ResNet-50, max_batch_size 8, {a.threads} engine threads; no-batching saturation "
          f"{sat_rate:.2f} req/s (closed loop, concurrency {a.concurrency})")
    print(f"-- at Poisson {rate:.2f} req/s ({frac:.0%}), median over {a.rounds} x {a.duration:g} s")
    print_table(res, [nb.label, b.label])
    print(f"P99 ratio batching/no-batching: {fmt(p99r, '.3f')}")
    print(f"-- highest Poisson rate with P99 < {a.p99_limit_ms:g} ms and no errors (sweep steps of "
          f"{a.sweep_step:.0%} x {sat_rate:.2f} req/s):")
    for lb in (nb.label, b.label):
        note = " (still passing at --sweep-max)" if capped[lb] else ""
        note = note if best[lb] is not None else " (none: the first step already failed)"
        print(f"  {lb:>12}: {fmt(best[lb])} req/s{note}")
    print(f"ratio batching/no-batching: {fmt(bratio, '.3f')}")
    print(f"closed-loop throughput at concurrency {a.concurrency}: no-batching {sat_rate:.2f} req/s, "
          f"batching {sat_b['throughput_per_s']:.2f} req/s")
    return {"model": "resnet50", "max_batch_size": mbs, "dynamic_batching": DYNAMIC_BATCHING, "plan": a.plan,
            "binary": binary,
            "saturation": {"no-batching": sat, "batching": sat_b}, "load_fraction": frac, "rate_per_s": rate, "servers": res,
            "p99_ratio_batching_over_nobatching": p99r,
            "sweep": {"p99_limit_ms": a.p99_limit_ms, "start": a.sweep_start, "step": a.sweep_step,
                      "max": a.sweep_max, "runs": sweep, "max_rate_per_s": best, "still_passing_at_max": capped},
            "max_rate_ratio_batching_over_nobatching": bratio,
            "server_info": [nb.describe(), b.describe()]}


def loadgen_has_binary(a):
    r = subprocess.run([a.tailcut, "loadgen", "--help"], capture_output=True, text=True, timeout=30)
    return "--binary" in (r.stdout + r.stderr)


def use_binary(a, default):
    """Whether loadgen runs get --binary: --tensors, else `default` when loadgen offers it."""
    if a.tensors == "json":
        return False
    has = loadgen_has_binary(a)
    if a.tensors == "binary" and not has:
        raise CompareError(f"--tensors binary: `{a.tailcut} loadgen --help` has no --binary")
    return has and (a.tensors == "binary" or default)


def bench(procs, a, plan, work, tag):
    jpath = os.path.join(work, f"bench-{tag}.json")
    cmd = [a.tailcut, "bench", plan, "--duration", f"{a.duration:g}", "--warmup", "10", "--json", jpath]
    rc, text = procs.run(cmd, timeout=a.duration + 600)
    if rc != 0 or not os.path.exists(jpath):
        raise CompareError(f"tailcut bench failed ({rc}): {' '.join(cmd)}\n{text}")
    with open(jpath) as f:
        rep = json.load(f)
    rep["command"] = " ".join(cmd)
    return rep


def exp_overhead(procs, a, work):
    binary = use_binary(a, default=True)
    onnx_path = os.path.join(work, "mobilenet_v2.onnx")
    generate(procs, a, "mobilenet_v2", onnx_path)
    io = io_of(a, onnx_path)
    plan = os.path.join(work, "mobilenet_v2.plan")
    build_plan(procs, a, onnx_path, io, 1, plan)
    repo = make_repo(os.path.join(work, "repo-overhead"), "mobilenet_v2", onnx_path, make_config(io, 0), plan)
    print(f"loadgen --binary: {'yes' if binary else 'no (JSON bodies)'}", flush=True)
    srv = start_tailcut(procs, a, "tailcut", repo, "mobilenet_v2", work)
    warm(procs, a, srv, work, binary=binary)
    server_runs, bench_runs = [], []
    for r in range(a.rounds):
        steps = ("bench", "serve") if r % 2 == 0 else ("serve", "bench")
        for s in steps:
            if s == "bench":
                rep = bench(procs, a, plan, work, f"r{r + 1}")
                bench_runs.append(rep)
                print(f"  round {r + 1}/{a.rounds}      bench: p50 {fmt(rep.get('p50_ms'), '.3f')}  "
                      f"p99 {fmt(rep.get('p99_ms'), '.3f')} ms  ({rep.get('samples')} runs)", flush=True)
            else:
                rep = loadgen(procs, a, srv, work, f"overhead-r{r + 1}", concurrency=1, seed=r + 1, binary=binary)
                server_runs.append(rep)
                print(f"  round {r + 1}/{a.rounds}      serve: " + line(rep), flush=True)
    s_p50 = statistics.median([x["p50_ms"] for x in server_runs if x.get("p50_ms") is not None] or [float("nan")])
    b_p50 = statistics.median([x["p50_ms"] for x in bench_runs if x.get("p50_ms") is not None] or [float("nan")])
    per_round = [(s["p50_ms"] - bb["p50_ms"]) * 1000.0 for s, bb in zip(server_runs, bench_runs)
                 if s.get("p50_ms") is not None and bb.get("p50_ms") is not None]
    over_us = (s_p50 - b_p50) * 1000.0
    ssum = summarize(server_runs)
    print(f"\n== overhead: MobileNetV2 batch 1, plan built with --threads {a.threads}, one client "
          f"(closed loop, concurrency 1, {'binary' if binary else 'JSON'} tensors); median over {a.rounds} x "
          f"{a.duration:g} s")
    print(f"  tailcut serve P50 {s_p50:.3f} ms (P99 {fmt(ssum['p99_ms'], '.3f')} ms, {ssum['ok']} ok, "
          f"{ssum['errors_total']} errors)")
    print(f"  tailcut bench P50 {b_p50:.3f} ms")
    print(f"  server P50 - bench P50: {over_us:.0f} us   (per round: {', '.join(f'{x:.0f}' for x in per_round)})")
    return {"model": "mobilenet_v2", "binary": binary, "server_runs": server_runs, "server_summary": ssum,
            "bench_runs": bench_runs, "server_p50_ms": s_p50, "bench_p50_ms": b_p50,
            "overhead_p50_us": over_us, "overhead_p50_us_per_round": per_round, "server_info": [srv.describe()]}


def check_python(a, *modules):
    code = "import " + ", ".join(modules)
    r = subprocess.run([a.python, "-c", code], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise CompareError(f"{a.python} cannot `{code}` (make venv installs tools/requirements.txt; or pass "
                           f"--python):\n{r.stderr.strip()}")


# ---- main -----------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description="tailcut serve against a Flask+onnxruntime baseline, dynamic batching "
                                 "and in-process bench, under tailcut loadgen", epilog="see the docstring for details")
    ap.add_argument("--experiment", choices=("flask", "batching", "overhead"), default="flask")
    ap.add_argument("--tailcut", default=os.path.join(ROOT, "build", "tailcut"), help="the CLI (default build/tailcut)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter with numpy/onnx/onnxruntime/flask for modelgen and the baseline (default: this one)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of each measured run (default 10)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="engine / onnxruntime intra-op threads (default 2)")
    ap.add_argument("--http-threads", type=int, default=2, help="tailcut serve --threads (default 2)")
    ap.add_argument("--concurrency", type=int, default=4, help="closed-loop clients of the saturation run (default 4)")
    ap.add_argument("--sat-duration", type=float, help="seconds of the saturation run (default --duration)")
    ap.add_argument("--load-fraction", type=float,
                    help="open-loop rate as a fraction of saturation (default 0.7 flask, 0.8 batching)")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds of closed-loop warm-up per server (default 2)")
    ap.add_argument("--timeout-ms", type=int, default=10000, help="loadgen per-request timeout (default 10000)")
    ap.add_argument("--cooldown", type=float, default=2.0, help="pause after an overloaded run, s (default 2)")
    ap.add_argument("--plan", choices=("server", "build"), default="server",
                    help="server: tailcut serve builds the .onnx (default); build: serve a `tailcut build` plan")
    ap.add_argument("--p99-limit-ms", type=float, default=100.0, help="batching sweep: P99 bound (default 100)")
    ap.add_argument("--sweep-start", type=float, default=0.1, help="batching sweep: first fraction (default 0.1)")
    ap.add_argument("--sweep-step", type=float, default=0.1, help="batching sweep: step fraction (default 0.1)")
    ap.add_argument("--sweep-max", type=float, default=3.0, help="batching sweep: last fraction (default 3.0)")
    ap.add_argument("--sweep-min-requests", type=float, default=30,
                    help="batching sweep: a step lasts at least this many requests' worth of time (default 30)")
    ap.add_argument("--tensors", choices=("auto", "json", "binary"), default="auto",
                    help="request tensors: auto (default) = binary for overhead when `loadgen --help` offers "
                    "--binary, JSON otherwise; binary needs loadgen --binary")
    ap.add_argument("--ready-timeout", type=float, default=600.0, help="seconds to wait for a server (default 600)")
    ap.add_argument("--tailcut-config", help="flask: JSON merged into tailcut's config.json, e.g. "
                    "'{\"max_batch_size\": 4, \"dynamic_batching\": {}, \"instance_group\": [{\"count\": 2}]}'")
    ap.add_argument("--calib-samples", type=int, default=16,
                    help="flask with \"precision\": \"int8\" in --tailcut-config's \"tailcut\" block and no "
                    "calibration_cache: seeded random samples `tailcut calibrate` runs (default 16)")
    ap.add_argument("--json", help="write every figure (and each run's loadgen report) here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (models, logs, reports)")
    a = ap.parse_args(argv)
    bad = []
    if a.duration <= 0 or a.rounds < 1 or a.threads < 1 or a.http_threads < 1 or not 1 <= a.concurrency <= 256:
        bad.append("--duration > 0, --rounds >= 1, --threads >= 1, --http-threads >= 1, 1 <= --concurrency <= 256")
    if not 1 <= a.calib_samples <= 4096:
        bad.append("1 <= --calib-samples <= 4096")
    if a.load_fraction is not None and a.load_fraction <= 0:
        bad.append("--load-fraction > 0")
    if a.sweep_start <= 0 or a.sweep_step <= 0 or a.sweep_max < a.sweep_start:
        bad.append("0 < --sweep-start <= --sweep-max, --sweep-step > 0")
    if bad:
        ap.error("needs " + "; ".join(bad))
    a.tailcut = os.path.abspath(a.tailcut)
    if not os.access(a.tailcut, os.X_OK):
        ap.error(f"--tailcut {a.tailcut} is not an executable (build it: make build, or cmake --build ...)")
    return a


def main(argv=None):
    a = parse_args(argv)

    def on_signal(signum, _frame):
        raise Stop(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored (cmd &)
    procs = Procs()
    work = tempfile.mkdtemp(prefix="serve_compare-")
    rc = 1
    try:
        check_python(a, "numpy", "onnx")
        t0 = time.time()
        run = {"flask": exp_flask, "batching": exp_batching, "overhead": exp_overhead}[a.experiment]
        result = run(procs, a, work)
        out = {"experiment": a.experiment, "tailcut": a.tailcut, "threads": a.threads, "http_threads": a.http_threads,
               "duration_s": a.duration, "rounds": a.rounds, "concurrency": a.concurrency,
               "cpus": os.cpu_count(), "wall_s": time.time() - t0, **result}
        print(f"(wall {out['wall_s']:.0f} s)")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
            print(f"wrote {a.json}")
        rc = 0
    except CompareError as e:
        print(f"serve_compare: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        print("serve_compare: interrupted", file=sys.stderr)
        rc = 130
    except Stop as e:
        print(f"serve_compare: stopped by {e}", file=sys.stderr)
        rc = 143
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        procs.stop_all()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if a.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
