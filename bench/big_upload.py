#!/usr/bin/env python3
"""big_upload.py - what a 56 MiB inference request costs `tailcut serve`, and what two of them do to other clients.

One server, two models: "big" (one FP32 input [1, 1, 3584, 4096] = 56 MiB, ReduceMean over it: the work is the
request, not the model) and "rn" (the tiny ResNet of the server tests). Measures:
1. server CPU (utime + stime of the process, /proc/PID/stat) for one 56 MiB binary request, with Content-Length and
   chunked (Transfer-Encoding), each the median of --reps requests sent one at a time on an idle server; the answer
   is checked against numpy's mean of the same data (a wrong answer is an error, not a figure);
2. other clients' latency: `tailcut loadgen --rate R --binary` on "rn" for --duration s alone, then again while two
   threads upload 56 MiB requests back to back; P99 of both and their ratio, alternated --rounds times (medians).
The machine's other load is not controlled: quote medians and say how loaded it was (the script prints loadavg).

--upload-mib-s paces the uploaders (a client behind a network link) so that the uploading client does not take the
machine's cores itself: what the server does to other clients, apart from what the benchmark's own client does.

usage: .venv/bin/python bench/big_upload.py --tailcut build/tailcut [--rate 50 --duration 10 --rounds 3 --reps 5]
                                            [--upload-mib-s M]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))
from server_fixture import free_port, make_repo, parse_infer_response, start_server, stop_server  # noqa: E402

SHAPE = (1, 1, 3584, 4096)  # 14,680,064 FP32 = 56 MiB


def big_model(repo):
    d = os.path.join(repo, "big", "1")
    os.makedirs(d)
    g = helper.make_graph([helper.make_node("ReduceMean", ["x"], ["y"], axes=[2, 3], keepdims=1)], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(d, "model.onnx"))
    with open(os.path.join(repo, "big", "config.json"), "w") as f:
        json.dump({"max_batch_size": 0, "input": [{"name": "x", "data_type": "TYPE_FP32", "dims": list(SHAPE)}],
                   "output": [{"name": "y", "data_type": "TYPE_FP32", "dims": [1, 1, 1, 1]}]}, f)


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def body_of(x):
    hdr = json.dumps({"inputs": [{"name": "x", "shape": list(SHAPE), "datatype": "FP32",
                                  "parameters": {"binary_data_size": x.nbytes}}],
                      "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    return hdr, x.tobytes()


def paced(hdr, data, mib_s):
    """The body in 1 MiB pieces, sent no faster than mib_s MiB/s (a client behind a network link)."""
    yield hdr
    mv, t0 = memoryview(data), time.monotonic()
    for i in range(0, len(data), 1 << 20):
        ahead = t0 + i / (mib_s * (1 << 20)) - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
        yield mv[i:i + (1 << 20)]


def upload(port, hdr, data, chunked, mib_s=0.0):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(hdr))}
    if chunked:
        def chunks():
            yield hdr
            mv = memoryview(data)
            for i in range(0, len(data), 1 << 20):
                yield bytes(mv[i:i + (1 << 20)])
        body = paced(hdr, data, mib_s) if mib_s > 0 else chunks()
        c.request("POST", "/v2/models/big/infer", body=body, headers=headers, encode_chunked=True)
    elif mib_s > 0:
        headers["Content-Length"] = str(len(hdr) + len(data))
        c.request("POST", "/v2/models/big/infer", body=paced(hdr, data, mib_s), headers=headers)
    else:
        c.request("POST", "/v2/models/big/infer", body=hdr + data, headers=headers)
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, r.headers, raw


def loadgen(a, port, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([a.tailcut, "loadgen", "--url", f"http://127.0.0.1:{port}", "--model", "rn", "--rate",
                        str(a.rate), "--duration", str(a.duration), "--binary", "--seed", str(seed), "--json",
                        out.name], check=True, capture_output=True, timeout=a.duration + 120)
        return json.load(open(out.name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tailcut", default=os.path.join(ROOT, "build", "tailcut"))
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--upload-mib-s", type=float, default=0.0,
                    help="pace each uploader's body to this many MiB/s in the latency rounds (0: as fast as it can: "
                         "on a 2-core machine the uploading client itself then takes most of a core)")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    want = float(x.astype(np.float64).mean())
    hdr, data = body_of(x)
    print(f"request body {(len(hdr) + len(data)) / 2**20:.2f} MiB; loadavg {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        make_repo(tmp)
        big_model(os.path.join(tmp, "repo"))
        port = free_port()
        server, _ = start_server(a.tailcut, os.path.join(tmp, "repo"), port)
        try:
            res = {}
            for chunked in (False, True):
                cpu, wall = [], []
                for _ in range(a.reps):
                    c0, t0 = cpu_s(server.pid), time.time()
                    st, h, raw = upload(port, hdr, data, chunked)
                    wall.append(time.time() - t0)
                    time.sleep(0.3)  # let the server's threads settle before reading its CPU time
                    cpu.append(cpu_s(server.pid) - c0)
                    got = float(parse_infer_response(h, raw)["y"].ravel()[0]) if st == 200 else None
                    if got is None or abs(got - want) > 1e-4 * max(1.0, abs(want)) + 1e-6:
                        raise SystemExit(f"wrong or failed answer: status {st}, got {got}, want {want}")
                kind = "chunked" if chunked else "content-length"
                res[kind] = (statistics.median(cpu), statistics.median(wall))
                print(f"56 MiB request ({kind}): server CPU median {res[kind][0]:.3f} s (all {cpu}), "
                      f"wall median {res[kind][1]:.3f} s", flush=True)
            ratios = []
            for r in range(a.rounds):
                alone = loadgen(a, port, r)
                stop = threading.Event()
                count = [0, 0]

                def uploader(k):
                    while not stop.is_set():
                        if upload(port, hdr, data, k == 1, a.upload_mib_s)[0] == 200:
                            count[k] += 1
                threads = [threading.Thread(target=uploader, args=(k,)) for k in (0, 1)]
                for t in threads:
                    t.start()
                time.sleep(0.5)
                during = loadgen(a, port, r)
                stop.set()
                for t in threads:
                    t.join()
                ratio = during["p99_ms"] / alone["p99_ms"]
                ratios.append(ratio)
                pace = f" paced to {a.upload_mib_s:g} MiB/s each" if a.upload_mib_s > 0 else ""
                print(f"round {r + 1}: rn at {a.rate:g}/s alone P99 {alone['p99_ms']:.2f} ms (ok {alone['ok']}/"
                      f"{alone['sent']}), with two 56 MiB uploaders{pace} P99 {during['p99_ms']:.2f} ms (ok {during['ok']}/"
                      f"{during['sent']}, {sum(count)} uploads done): ratio {ratio:.2f}; loadavg {os.getloadavg()}",
                      flush=True)
            print(f"median P99 ratio with/without two 56 MiB uploads: {statistics.median(ratios):.2f} "
                  f"(target <= 2); server CPU per 56 MiB request: {res['content-length'][0]:.3f} s "
                  f"(Content-Length), {res['chunked'][0]:.3f} s (chunked) (target < 0.5 s)")
        finally:
            stop_server(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
