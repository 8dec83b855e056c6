#!/usr/bin/env python3
"""test_batching.py - end-to-end tests of the scheduler of `tailcut serve` over HTTP on 127.0.0.1.

One server, one generated tiny ResNet served under several configs:
  plain   no dynamic_batching (each request runs alone) - the reference outputs
  batch   dynamic_batching, max_batch_size 8, preferred 4, long queue delay: concurrent requests form batches > 1 and
          every request gets its own rows back
  qfull   max_queue_size 2 with a long delay: requests beyond the bound get 503 at once, the queued ones complete
  tmo     default_timeout_microseconds 100 ms with a 1.5 s delay: the request times out (503); a per-request
          "timeout" parameter overrides it
  prio    priority_levels 2, max_batch_size 3: a later high-priority request runs before an earlier low one
  inst    instance_group count 2: /config reports it, concurrent requests all succeed
Then SIGTERM while requests wait in a batching queue: every one of them is answered 200 and the server exits 0.

usage: python tests/server/test_batching.py [--tailcut build-server/tailcut]
Prints "N passed, N failed"; exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_fixture import (Checks, binary_infer_body, free_port, http_raw, make_repo,  # noqa: E402
                            parse_infer_response, read_metrics, sanitizer_clean, start_server, stop_server)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIGS = {
    "plain": {"max_batch_size": 8},
    "batch": {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 2000000,
                                                        "preferred_batch_size": [4]}},
    "qfull": {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 1000000, "max_queue_size": 2}},
    "tmo": {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 1500000,
                                                      "default_queue_policy": {"default_timeout_microseconds": 100000}}},
    "prio": {"max_batch_size": 3, "dynamic_batching": {"max_queue_delay_microseconds": 1500000, "priority_levels": 2,
                                                       "default_priority_level": 2}},
    "inst": {"max_batch_size": 4, "instance_group": [{"count": 2, "kind": "KIND_CPU"}], "dynamic_batching": {}},
}


check = Checks()


def infer(port, model, x, extra=None, timeout=30):
    """Binary request; returns (status, {output: array} or error text, completion time)."""
    body, hdr = binary_infer_body([("input", x, "FP32")], outputs=["logits"], extra=extra)
    st, rh, raw = http_raw(port, f"/v2/models/{model}/infer", body, hdr, timeout=timeout)
    t = time.time()
    if st == 200:
        return st, parse_infer_response(rh, raw), t
    try:
        return st, json.loads(raw).get("error", ""), t
    except ValueError:
        return st, raw[:200], t


def concurrent(port, model, xs, extras=None, stagger=0.0):
    """Sends one request per input from its own thread; returns results in input order."""
    res = [None] * len(xs)

    def one(i):
        try:
            res[i] = infer(port, model, xs[i], extras[i] if extras else None)
        except Exception as e:  # noqa: BLE001
            res[i] = (-1, repr(e), time.time())
    ths = []
    for i in range(len(xs)):
        th = threading.Thread(target=one, args=(i,))
        th.start()
        ths.append(th)
        if stagger:
            time.sleep(stagger)
    for th in ths:
        th.join(60)
    return res


def wait_queue(port, model, depth, limit=10.0):
    """Waits until the model's queue holds `depth` requests."""
    t0 = time.time()
    while time.time() - t0 < limit:
        if read_metrics(port).get(f'tc_queue_depth{{model="{model}"}}', -1) >= depth:
            return True
        time.sleep(0.01)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tailcut", default=os.environ.get("TAILCUT", os.path.join(ROOT, "build-server", "tailcut")))
    args = ap.parse_args()
    tailcut = os.path.abspath(args.tailcut)
    tmp = tempfile.mkdtemp(prefix="tc_batching_test_")
    server = None
    try:
        src = os.path.join(make_repo(tmp), "model.onnx")
        repo = os.path.join(tmp, "brepo")
        for name, cfg in CONFIGS.items():
            os.makedirs(os.path.join(repo, name, "1"))
            shutil.copy(src, os.path.join(repo, name, "1", "model.onnx"))
            with open(os.path.join(repo, name, "config.json"), "w") as f:
                json.dump(dict(cfg, input=[{"name": "input", "data_type": "TYPE_FP32", "dims": [3, 32, 32]}],
                               tailcut={"tactics": "fixed"}), f)
        port = free_port()
        server, log = start_server(tailcut, repo, port)
        rng = np.random.default_rng(1)
        xs = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(8)]
        ref = []
        for x in xs:
            st, out, _ = infer(port, "plain", x)
            ref.append(out["logits"] if st == 200 else None)
        check("plain model answers", all(r is not None for r in ref))

        # Batch formation: 4 concurrent requests (preferred size 4) run as one batch, long before the 2 s delay.
        t0 = time.time()
        res = concurrent(port, "batch", xs[:4])
        dt = time.time() - t0
        ok = all(r[0] == 200 for r in res)
        check("batch: 4 concurrent requests answered", ok, str([r[:2] for r in res])[:300])
        if ok:
            err = max(float(np.max(np.abs(r[1]["logits"] - ref[i]))) for i, r in enumerate(res))
            check("batch: each request gets its own rows (== unbatched, 1e-4)", err <= 1e-4, f"max err {err}")
        check("batch: preferred size reached runs before the queue delay", dt < 1.5, f"{dt:.2f}s")
        m = read_metrics(port)
        b4 = m.get('tc_batch_size_bucket{model="batch",le="4"}', 0) - m.get('tc_batch_size_bucket{model="batch",le="2"}', 0)
        check("batch: batch-size histogram shows a batch of 3..4", b4 >= 1, str({k: v for k, v in m.items() if "batch_size" in k and "batch\"" in k}))
        # Mixed request batch sizes: a batch-2 request and two batch-1 requests still split correctly.
        x2 = np.concatenate([xs[4], xs[5]])
        res = concurrent(port, "batch", [x2, xs[6], xs[7]])
        ok = all(r[0] == 200 for r in res)
        if ok:
            err = max(float(np.max(np.abs(res[0][1]["logits"] - np.concatenate([ref[4], ref[5]])))),
                      float(np.max(np.abs(res[1][1]["logits"] - ref[6]))),
                      float(np.max(np.abs(res[2][1]["logits"] - ref[7]))))
            ok = err <= 1e-4 and res[0][1]["logits"].shape == (2, 1000)
        check("batch: requests of batch 2 + 1 + 1 split correctly", ok, str([r[:2] for r in res])[:300])
        # A lone request waits for the queue delay, then runs alone.
        t0 = time.time()
        st, out, _ = infer(port, "batch", xs[0])
        dt = time.time() - t0
        check("batch: a lone request runs after max_queue_delay", st == 200 and 1.8 <= dt < 6, f"{st} {dt:.2f}s")

        # Queue bound: 2 queued (waiting for the 1 s delay), the next ones refused with 503 immediately.
        first = []
        ths = [threading.Thread(target=lambda i=i: first.append(infer(port, "qfull", xs[i]))) for i in range(2)]
        for th in ths:
            th.start()
        queued = wait_queue(port, "qfull", 2)
        t0 = time.time()
        over = [infer(port, "qfull", xs[2]), infer(port, "qfull", xs[3])]
        dt = time.time() - t0
        for th in ths:
            th.join(30)
        check("qfull: queue fills to max_queue_size", queued)
        check("qfull: requests beyond the bound get 503 at once",
              all(o[0] == 503 and "full" in o[1] for o in over) and dt < 0.5, f"{[o[:2] for o in over]} {dt:.2f}s")
        check("qfull: the queued requests complete", len(first) == 2 and all(f[0] == 200 for f in first),
              str([f[:2] for f in first])[:200])
        m = read_metrics(port)
        check("qfull: rejections counted", m.get('tc_request_rejected_total{model="qfull",reason="queue_full"}') == 2)

        # Timeouts: the default 100 ms expires long before the 1.5 s delay; a per-request timeout overrides it.
        t0 = time.time()
        st, msg, _ = infer(port, "tmo", xs[0])
        dt = time.time() - t0
        check("tmo: request times out with 503", st == 503 and "timed out" in str(msg) and dt < 1.0, f"{st} {msg} {dt:.2f}s")
        st, out, _ = infer(port, "tmo", xs[1], extra={"parameters": {"timeout": 5000000}})
        check("tmo: per-request timeout parameter overrides the default", st == 200, f"{st} {out}")
        m = read_metrics(port)
        check("tmo: timeouts counted", m.get('tc_request_rejected_total{model="tmo",reason="timeout"}') == 1)

        # Priorities: two low-priority requests wait (1.5 s delay, max batch 3); a high-priority batch-2 request
        # arrives, becomes the head and runs at once with one of them; the other low one waits for the delay.
        lows = []
        ths = [threading.Thread(target=lambda i=i: lows.append(infer(port, "prio", xs[i]))) for i in range(2)]
        for i, th in enumerate(ths):  # one after the other, so the arrival order is known
            th.start()
            queued = wait_queue(port, "prio", i + 1)
        t0 = time.time()
        st, out, t_high = infer(port, "prio", np.concatenate([xs[2], xs[3]]), extra={"parameters": {"priority": 1}})
        dt_high = time.time() - t0
        for th in ths:
            th.join(30)
        late = max(lw[2] for lw in lows) if len(lows) == 2 else 0
        check("prio: high-priority request runs at once", queued and st == 200 and dt_high < 1.0, f"{st} {dt_high:.2f}s")
        check("prio: a low-priority request still waits for the delay",
              len(lows) == 2 and all(lw[0] == 200 for lw in lows) and late - t_high > 0.5,
              f"{[lw[:2] for lw in lows]} gap {late - t_high:.2f}s")
        st, _, _ = infer(port, "prio", xs[0], extra={"parameters": {"priority": 3}})
        check("prio: priority above priority_levels -> 400", st == 400)

        # Instances.
        st, rh, raw = http_raw(port, "/v2/models/inst/config")
        cfg = json.loads(raw) if st == 200 else {}
        check("inst: /config shows 2 instances", cfg.get("instance_group", [{}])[0].get("count") == 2, str(cfg)[:300])
        # issue 27 defect 9: the int64 fields of /config are JSON numbers (were decimal strings), as in Triton's JSON
        st, rh, raw = http_raw(port, "/v2/models/tmo/config")
        db = json.loads(raw).get("dynamic_batching", {}) if st == 200 else {}
        qp = db.get("default_queue_policy", {})
        check("tmo: /config int64 fields are JSON numbers",
              type(db.get("max_queue_delay_microseconds")) is int and db["max_queue_delay_microseconds"] == 1500000
              and type(qp.get("default_timeout_microseconds")) is int and qp["default_timeout_microseconds"] == 100000
              and type(qp.get("max_queue_size")) is int and db.get("preferred_batch_size") == [], str(db)[:300])
        res = concurrent(port, "inst", xs[:6])
        ok = all(r[0] == 200 for r in res) and max(float(np.max(np.abs(r[1]["logits"] - ref[i])))
                                                   for i, r in enumerate(res)) <= 1e-4
        check("inst: concurrent requests on 2 instances correct", ok, str([r[:2] for r in res])[:300])

        m = read_metrics(port)
        for k in ("tc_queue_duration_us_count", "tc_compute_duration_us_count", "tc_io_duration_us_count",
                  "tc_request_duration_us_count"):
            check(f"metrics: {k} counted", m.get(k + '{model="batch"}', 0) >= 8, str(m.get(k + '{model="batch"}')))
        q = [m.get(f'tc_request_duration_quantiles_us{{model="batch",quantile="{p}"}}') for p in ("0.5", "0.9", "0.99", "0.999")]
        check("metrics: request quantiles present and ordered", all(v is not None and v == v for v in q) and q == sorted(q), str(q))
        check("metrics: gauges idle", m.get('tc_queue_depth{model="batch"}') == 0 and m.get('tc_inflight_requests{model="batch"}') == 0)

        # SIGTERM drain: 3 requests wait for the 2 s delay of "batch"; SIGTERM must run and answer all of them.
        res = []
        ths = [threading.Thread(target=lambda i=i: res.append(infer(port, "batch", xs[i]))) for i in range(3)]
        for th in ths:
            th.start()
        queued = wait_queue(port, "batch", 3)
        server.send_signal(signal.SIGTERM)
        for th in ths:
            th.join(30)
        try:
            rc = server.wait(30)
        except subprocess.TimeoutExpired:
            rc = None
        check("drain: 3 queued requests before SIGTERM", queued)
        check("drain: every queued request answered 200", len(res) == 3 and all(r[0] == 200 for r in res),
              str([r[:2] for r in res])[:300])
        check("drain: exit 0", rc == 0, f"rc={rc}")
        log.seek(0)
        text = log.read().decode(errors="replace")
        check("no sanitizer report", sanitizer_clean(text), text[-3000:])
        server = None
    except Exception as e:  # noqa: BLE001 - report, do not crash
        import traceback
        traceback.print_exc()
        check("test harness", False, repr(e))
    finally:
        stop_server(server)
        shutil.rmtree(tmp, ignore_errors=True)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
