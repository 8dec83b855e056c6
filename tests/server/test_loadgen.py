#!/usr/bin/env python3
"""test_loadgen.py - end-to-end tests of `tailcut loadgen` against `tailcut serve` (127.0.0.1 only).

Generates a tiny ResNet with tools/modelgen into a temporary model repository (as test_server.py does),
starts the server on a free port, runs loadgen open loop (--rate 50, Poisson, --json), open loop with a
constant schedule and an --input .npy file, and closed loop (--concurrency 2), checks the JSON report
(keys, ok > 0, no errors, ordered percentiles, sent == ok + errors), and checks that loadgen against a
port with no server reports connect errors without crashing.

--binary (KServe v2 binary tensor data extension) is tested against fake_kserve.FakeKServe, an in-process fake
server that checks every binary request body strictly: open loop with random data, a malformed-response mode
(every broken answer counted as `malformed`), --input .npy (values checked bit for bit), several input datatypes
(values identical to those of the JSON body for the same seed); and against `tailcut serve`, SKIPPED while that
answers binary requests with a 400 naming "binary" (not supported yet).

usage: python tests/server/test_loadgen.py [--tailcut build-loadgen/tailcut]
Needs numpy (e.g. /tmp/venvtest/bin/python). Prints "N passed, N failed"; exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_kserve import FakeKServe  # noqa: E402
from server_fixture import Checks, free_port, make_repo, sanitizer_clean, start_server, stop_server  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = ["sent", "ok", "errors", "throughput_per_s", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "mean_ms", "max_ms"]
ERROR_KINDS = ["connect", "timeout", "http_4xx", "http_5xx", "http_other", "malformed", "io", "not_sent"]


check = Checks()


def loadgen(tailcut, tmp, tag, args, timeout=30):
    """Runs loadgen with --json; returns (CompletedProcess, parsed JSON or None)."""
    jpath = os.path.join(tmp, tag + ".json")
    r = subprocess.run([tailcut, "loadgen", *args, "--json", jpath], capture_output=True, text=True, timeout=timeout)
    print(f"--- loadgen {tag} (rc {r.returncode}) ---\n{r.stdout}{r.stderr}", end="")
    rep = None
    if os.path.exists(jpath):
        with open(jpath) as f:
            rep = json.load(f)
    return r, rep


def check_report(tag, r, rep, min_ok=1):
    check(f"{tag}: exit 0, sanitizer clean", r.returncode == 0 and sanitizer_clean(r.stderr),
          f"rc={r.returncode} {r.stderr[-1500:]}")
    if rep is None:
        check(f"{tag}: JSON written", False)
        return
    check(f"{tag}: JSON keys", all(k in rep for k in KEYS) and all(k in rep["errors"] for k in ERROR_KINDS),
          str(rep))
    errs = sum(rep["errors"].values())
    check(f"{tag}: ok >= {min_ok}, no errors", rep["ok"] >= min_ok and errs == 0, str(rep))
    check(f"{tag}: sent == ok + errors", rep["sent"] == rep["ok"] + errs - rep["errors"]["not_sent"], str(rep))
    p = [rep[k] for k in ["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]]
    check(f"{tag}: percentiles ordered", all(isinstance(v, (int, float)) for v in p)
          and 0 < p[0] <= p[1] <= p[2] <= p[3] <= p[4] and 0 < rep["mean_ms"] <= p[4], str(p))
    check(f"{tag}: throughput > 0", rep["throughput_per_s"] > 0, str(rep))


def binary_tests_fake(tailcut, tmp):
    """--binary against the in-process fake KServe server."""
    fake = FakeKServe(mode="ok")
    try:
        r, rep = loadgen(tailcut, tmp, "binary_fake", ["--url", fake.url, "--model", "m", "--binary", "--rate", "50",
                                                        "--duration", "1", "--seed", "2"])
        check_report("--binary open loop vs fake server", r, rep, min_ok=30)
        check("--binary: fake server saw only valid binary requests, one per ok",
              fake.bad_requests == 0 and rep is not None and fake.good_requests == rep["ok"]
              and fake.json_requests == 0, f"bad={fake.bad_requests} {fake.bad_reasons[:3]} good={fake.good_requests}")
        check("--binary: banner names the binary extension", "binary tensor extension" in r.stdout, r.stdout)
        x = fake.last_inputs["input"] if fake.last_inputs else None
        check("--binary: random FP32 data non-zero, finite, 6 significant digits as in JSON",
              x is not None and x.shape == (1, 4) and np.all(np.isfinite(x)) and np.all(x != 0)
              and all(np.float32(float(f"{v:.6g}")) == v for v in x.ravel()), str(x))
    finally:
        fake.close()

    fake = FakeKServe(mode="malformed")
    try:
        r, rep = loadgen(tailcut, tmp, "binary_malformed",
                         ["--url", fake.url, "--model", "m", "--binary", "--rate", "20", "--distribution", "constant",
                          "--duration", "1"])
        check("--binary malformed responses: exit 0, sanitizer clean", r.returncode == 0 and sanitizer_clean(r.stderr),
              f"rc={r.returncode} {r.stderr[-1500:]}")
        others = {k: v for k, v in (rep or {}).get("errors", {}).items() if k != "malformed"}
        check("--binary malformed responses: all 20 counted as malformed, none ok",
              rep is not None and rep["sent"] == 20 and rep["ok"] == 0 and rep["errors"]["malformed"] == 20
              and not any(others.values()) and rep["p50_ms"] is None, str(rep))
        check("--binary malformed responses: requests themselves valid", fake.bad_requests == 0
              and fake.good_requests == 20, f"bad={fake.bad_requests} {fake.bad_reasons[:3]} good={fake.good_requests}")
    finally:
        fake.close()

    fake = FakeKServe(mode="ok")
    try:
        x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
        np.save(os.path.join(tmp, "b.npy"), x)
        r, rep = loadgen(tailcut, tmp, "binary_input",
                         ["--url", fake.url, "--model", "m", "--binary", "--concurrency", "2", "--duration", "1",
                          "--input", os.path.join(tmp, "b.npy")])
        check_report("--binary closed loop, --input .npy batch 3", r, rep)
        got = fake.last_inputs["input"] if fake.last_inputs else None
        check("--binary --input: server got the file's values bit for bit, no bad requests",
              fake.bad_requests == 0 and got is not None and got.shape == x.shape and got.tobytes() == x.tobytes(),
              f"bad={fake.bad_requests} {fake.bad_reasons[:3]} got={got}")
    finally:
        fake.close()

    inputs = [("input", "FP32", [-1, 4]), ("ids", "INT64", [1, 3]), ("attention_mask", "INT32", [1, 5]),
              ("flags", "BOOL", [1, 2]), ("u8", "UINT8", [1, 3]), ("i8", "INT8", [1, 2]), ("d", "FP64", [1, 2])]
    fake = FakeKServe(mode="ok", inputs=inputs, outputs=[("out", "FP32", [1, 2]), ("out2", "FP32", [1, 2])])
    try:
        common = ["--url", fake.url, "--model", "m", "--rate", "10", "--distribution", "constant",
                  "--duration", "0.3", "--seed", "7"]
        r, rep = loadgen(tailcut, tmp, "multi_json", common)
        check_report("7 inputs of 7 datatypes, JSON body", r, rep, min_ok=3)
        json_inputs = fake.last_inputs
        r, rep = loadgen(tailcut, tmp, "multi_binary", [*common, "--binary"])
        check_report("7 inputs of 7 datatypes, --binary, 2 binary outputs", r, rep, min_ok=3)
        got = fake.last_inputs
        check("--binary 7 datatypes: valid requests", fake.bad_requests == 0 and fake.good_requests == 3,
              f"bad={fake.bad_requests} {fake.bad_reasons[:3]} good={fake.good_requests}")
        same = got is not None and json_inputs is not None and all(
            got[n].dtype == json_inputs[n].dtype and got[n].shape == json_inputs[n].shape
            and got[n].tobytes() == json_inputs[n].tobytes() for n, _, _ in inputs)
        check("--binary 7 datatypes: same values as the JSON body for the same seed", same,
              f"binary={got} json={json_inputs}")
        check("--binary 7 datatypes: ints in [1,100), mask all 1, bools 1",
              got is not None and all(np.all((got[n] >= 1) & (got[n] < 100)) for n in ("ids", "u8", "i8"))
              and np.all(got["attention_mask"] == 1) and np.all(got["flags"] == 1) and np.all(got["d"] != 0), str(got))
    finally:
        fake.close()


def binary_probe(port):
    """POSTs one binary request to `tailcut serve`; returns (status, body text)."""
    x = np.ones((1, 3, 32, 32), np.float32)
    hdr = json.dumps({"inputs": [{"name": "input", "shape": [1, 3, 32, 32], "datatype": "FP32",
                                  "parameters": {"binary_data_size": x.nbytes}}],
                      "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v2/models/rn/infer", data=hdr + x.tobytes(), method="POST",
                                 headers={"Content-Type": "application/octet-stream",
                                          "Inference-Header-Content-Length": str(len(hdr))})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tailcut", default=os.environ.get("TAILCUT", os.path.join(ROOT, "build-loadgen", "tailcut")))
    args = ap.parse_args()
    tailcut = os.path.abspath(args.tailcut)
    tmp = tempfile.mkdtemp(prefix="tc_loadgen_test_")
    server = None
    try:
        make_repo(tmp)
        port = free_port()
        server, log = start_server(tailcut, os.path.join(tmp, "repo"), port)
        url = f"http://127.0.0.1:{port}"

        t = time.time()
        r, rep = loadgen(tailcut, tmp, "open_poisson", ["--url", url, "--model", "rn", "--rate", "50",
                                                         "--duration", "2", "--seed", "1"])
        check_report("open loop poisson 50/s", r, rep, min_ok=40)
        check("open loop: ~100 scheduled, finished in time", rep is not None and 60 <= rep["sent"] <= 150
              and time.time() - t < 15, str(rep))
        check("open loop: P99.9 caveat below 1000 samples", "not meaningful" in r.stdout, r.stdout)

        x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
        np.save(os.path.join(tmp, "x.npy"), x)
        r, rep = loadgen(tailcut, tmp, "open_constant_input",
                         ["--url", url, "--model", "rn", "--rate", "20", "--distribution", "constant",
                          "--duration", "1", "--input", os.path.join(tmp, "x.npy")])
        check_report("open loop constant 20/s, --input .npy batch 2", r, rep, min_ok=15)
        check("constant schedule: exactly 20 sent", rep is not None and rep["sent"] == 20, str(rep))

        r, rep = loadgen(tailcut, tmp, "closed", ["--url", url, "--model", "rn", "--concurrency", "2",
                                                   "--duration", "1"])
        check_report("closed loop concurrency 2", r, rep)

        status, text = binary_probe(port)
        if status == 400 and "binary" in text.lower():
            check.skip("--binary vs tailcut serve", f"the server does not support the binary extension yet: {text.strip()}")
        else:
            r, rep = loadgen(tailcut, tmp, "binary_serve", ["--url", url, "--model", "rn", "--binary", "--rate", "20",
                                                             "--duration", "1", "--seed", "3"])
            check_report("--binary vs tailcut serve", r, rep, min_ok=15)

        r, rep = loadgen(tailcut, tmp, "unknown_model", ["--url", url, "--model", "nope", "--rate", "10",
                                                          "--duration", "1"])
        check("unknown model: non-zero exit, http_4xx reported, no crash",
              r.returncode == 1 and rep is not None and rep["errors"]["http_4xx"] == 1 and sanitizer_clean(r.stderr),
              f"rc={r.returncode} {rep} {r.stderr[-800:]}")

        # Shut the server down before checking its log.
        server.terminate()
        server.wait(20)
        log.seek(0)
        logtext = log.read().decode(errors="replace")
        check("server sanitizer clean", sanitizer_clean(logtext), logtext[-1500:])
        server = None

        dead = f"http://127.0.0.1:{free_port()}"
        r, rep = loadgen(tailcut, tmp, "no_server", ["--url", dead, "--model", "rn", "--rate", "50",
                                                      "--duration", "1", "--timeout-ms", "2000"])
        check("no server: connect error reported, no crash",
              r.returncode == 1 and rep is not None and rep["errors"]["connect"] > 0 and rep["ok"] == 0
              and sanitizer_clean(r.stderr) and "connect" in r.stderr, f"rc={r.returncode} {rep} {r.stderr[-800:]}")

        r = subprocess.run([tailcut, "loadgen", "--url", "http://10.0.0.1:80", "--model", "rn", "--rate", "1",
                            "--duration", "1"], capture_output=True, text=True, timeout=10)
        check("non-loopback URL refused", r.returncode == 2 and "loopback" in r.stderr, r.stderr)
        r = subprocess.run([tailcut, "loadgen", "--url", dead, "--model", "rn", "--rate", "1", "--concurrency", "2",
                            "--duration", "1"], capture_output=True, text=True, timeout=10)
        check("--rate with --concurrency refused", r.returncode == 2, r.stderr)

        binary_tests_fake(tailcut, tmp)
    except Exception as e:  # noqa: BLE001 - report, do not crash
        check("test harness", False, repr(e))
    finally:
        stop_server(server)
        shutil.rmtree(tmp, ignore_errors=True)
    return check.summary(show_skipped=True)


if __name__ == "__main__":
    sys.exit(main())
