#!/usr/bin/env python3
"""test_soak.py - a soak of `tailcut serve`: at least 20,000 requests (closed loop, `tailcut loadgen
--concurrency 4`) against a tiny generated ResNet with dynamic batching, checking that every request succeeds and
that the server's resident memory (VmRSS) grows by less than 5% between the end of a warm-up (at least 10,000
requests) and the end of the soak.

Run it against a build without sanitizers (ASan's quarantine grows RSS by design).
usage: python tests/server/test_soak.py [--tailcut build/tailcut] [--requests 20000]
Prints "N passed, N failed"; exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_fixture import Checks, free_port, make_repo, sanitizer_clean, start_server, stop_server  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


check = Checks()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def loadgen(tailcut, port, seconds, tmp, extra=()):
    out = os.path.join(tmp, "lg.json")
    r = subprocess.run([tailcut, "loadgen", "--url", f"http://127.0.0.1:{port}", "--model", "rn", "--concurrency", "4",
                        "--duration", str(seconds), "--json", out, *extra], capture_output=True, text=True,
                       timeout=seconds + 60)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"loadgen failed: {r.stdout}{r.stderr}")
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tailcut", default=os.environ.get("TAILCUT", os.path.join(ROOT, "build", "tailcut")))
    ap.add_argument("--requests", type=int, default=20000)
    args = ap.parse_args()
    tailcut = os.path.abspath(args.tailcut)
    tmp = tempfile.mkdtemp(prefix="tc_soak_test_")
    server = None
    try:
        make_repo(tmp)
        with open(os.path.join(tmp, "repo", "rn", "config.json"), "w") as f:
            json.dump({"max_batch_size": 4, "dynamic_batching": {"max_queue_delay_microseconds": 500},
                       "tailcut": {"tactics": "fixed"}}, f)
        port = free_port()
        server, log = start_server(tailcut, os.path.join(tmp, "repo"), port)
        warm = loadgen(tailcut, port, 5, tmp)  # malloc arenas and connection pools settle
        warmed = warm["ok"]
        while warmed < 10000:  # at least 10,000 requests before the baseline, however slow the machine
            warmed += loadgen(tailcut, port, 3, tmp)["ok"]
        rss0 = rss_kib(server.pid)
        done, errors, rounds = 0, 0, 0
        rate = max(warm["ok"] / 5.0, 100.0)
        while done < args.requests and rounds < 20:
            secs = max(1, min(30, int((args.requests - done) / rate) + 1))
            rep = loadgen(tailcut, port, secs, tmp)
            done += rep["ok"]
            errors += rep["sent"] - rep["ok"]
            rounds += 1
        rss1 = rss_kib(server.pid)
        growth = (rss1 - rss0) / rss0 if rss0 > 0 else 1.0
        print(f"soak: {done} requests in {rounds} rounds, {errors} errors, VmRSS {rss0} KiB -> {rss1} KiB "
              f"({100 * growth:+.2f}%)")
        check(f"soak: >= {args.requests} requests succeeded", done >= args.requests, f"{done}")
        check("soak: no failed request", errors == 0, f"{errors}")
        check("soak: RSS growth under 5%", growth < 0.05, f"{rss0} -> {rss1} KiB")
        server.terminate()
        rc = server.wait(30)
        check("soak: clean exit", rc == 0, f"rc={rc}")
        log.seek(0)
        text = log.read().decode(errors="replace")
        check("soak: no sanitizer report", sanitizer_clean(text), text[-2000:])
        server = None
    except Exception as e:  # noqa: BLE001 - report, do not crash
        check("test harness", False, repr(e))
    finally:
        stop_server(server)
        shutil.rmtree(tmp, ignore_errors=True)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
