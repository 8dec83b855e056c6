#!/usr/bin/env python3
"""serve_ab.py - two `tailcut serve` binaries (A: before a change, B: after) on the same model repository, interleaved.

One server runs at a time (two idle servers beside each other disturbed each other's P99 up to 8x with the same
binary): per round A then B (the order flips every round), each started, warmed up (1 s of loadgen), measured with
`tailcut loadgen --concurrency C --duration S` (keep-alive connections: the steady path) and --fresh requests each on
a new connection (connect, GET /v2/health/live, read, close: what accepting a connection costs), then stopped.
Prints per server the medians over rounds of loadgen's P50
and P99, the fresh-connection P50 and P99, and the ratios B/A.

usage: serve_ab.py --a OLD/tailcut --b NEW/tailcut --repo DIR --model M [--rounds 6] [--duration 3] [--concurrency 2]
                   [--fresh 1000]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "server"))
from server_fixture import free_port, start_server, stop_server  # noqa: E402


def loadgen(tailcut, port, model, concurrency, duration, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([tailcut, "loadgen", "--url", f"http://127.0.0.1:{port}", "--model", model, "--concurrency",
                        str(concurrency), "--duration", str(duration), "--seed", str(seed), "--json", f.name],
                       check=True, capture_output=True, timeout=duration + 60)
        rep = json.load(open(f.name))
    if any(rep.get("errors", {}).values()):
        raise RuntimeError(f"loadgen errors: {rep['errors']}")
    return rep["p50_ms"], rep["p99_ms"]


def fresh_ms(port):
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    out = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        out += c
    s.close()
    if not out.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"fresh request: {out[:100]!r}")
    return (time.perf_counter() - t0) * 1e3


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--duration", type=float, default=3)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--fresh", type=int, default=1000)
    args = ap.parse_args()
    bins = {"A": os.path.abspath(args.a), "B": os.path.abspath(args.b)}
    res = {k: {"p50": [], "p99": [], "fresh50": [], "fresh99": []} for k in bins}
    for r in range(args.rounds):
        for k in (("A", "B") if r % 2 == 0 else ("B", "A")):
            port = free_port()
            server, _ = start_server(bins[k], args.repo, port)
            try:
                loadgen(bins[k], port, args.model, args.concurrency, 1, r)  # warm-up
                p50, p99 = loadgen(bins[k], port, args.model, args.concurrency, args.duration, r)
                fresh = [fresh_ms(port) for _ in range(args.fresh)]
            finally:
                stop_server(server)
            res[k]["p50"].append(p50)
            res[k]["p99"].append(p99)
            res[k]["fresh50"].append(pct(fresh, 0.5))
            res[k]["fresh99"].append(pct(fresh, 0.99))
    med = {k: {m: statistics.median(v) for m, v in res[k].items()} for k in bins}
    print(f"{args.rounds} rounds; loadgen --concurrency {args.concurrency} --duration {args.duration}; "
          f"{args.fresh} fresh-connection requests per server per round (medians over rounds, ms)")
    print(f"{'':4} {'loadgen P50':>12} {'loadgen P99':>12} {'fresh P50':>10} {'fresh P99':>10}")
    for k in bins:
        m = med[k]
        print(f"{k:4} {m['p50']:12.3f} {m['p99']:12.3f} {m['fresh50']:10.3f} {m['fresh99']:10.3f}")
    m, n = med["A"], med["B"]
    print(f"B/A  {n['p50'] / m['p50']:12.3f} {n['p99'] / m['p99']:12.3f} {n['fresh50'] / m['fresh50']:10.3f} "
          f"{n['fresh99'] / m['fresh99']:10.3f}")


if __name__ == "__main__":
    main()
