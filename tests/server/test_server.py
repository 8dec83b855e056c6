#!/usr/bin/env python3
"""test_server.py - end-to-end tests of `tailcut serve` (KServe v2 over HTTP, 127.0.0.1 only).

Generates a tiny ResNet with tools/modelgen into a temporary model repository, starts the server on
a free port and checks every endpoint (incl. Triton's /config), JSON and binary-tensor inference against
`tailcut run` (and onnxruntime when importable), request validation (malformed JSON, dtype, shape, element
count, binary byte counts and header length, unknown model, 413), INT64 values above 2^53 exact and out-of-range or
non-integral values refused (an INT64 model), a long UTF-8 request id echoed whole, 6 MiB chunked and 20 MiB bodies received whole, half-open and slow connections closed
after --http-timeout, malformed request heads answered in JSON by the front stage while keep-alive, pipelining, 200
slow-loris and 2,000 concurrent connections are handled (head_checks.py), /metrics, a clean exit on SIGTERM, and (repo_checks.py) a repository with broken models:
each is UNAVAILABLE with its reason while the others serve, corrupt or stale cached plans are rebuilt, and Triton's
model control (index, load, unload, reload under load); the models of a repository share the CPU budget
(thread_budget_checks.py).
(Scheduler behaviour is in test_batching.py, the soak in test_soak.py.)

usage: python tests/server/test_server.py [--tailcut build-server/tailcut]
Needs numpy (.venv/bin/python after `make venv`). Prints "N passed, N failed"; exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_fixture import (Checks, binary_infer_body, free_port, http_raw, make_repo,  # noqa: E402
                            parse_infer_response, start_server, stop_server)
from repo_checks import bad_config_checks, repository_checks  # noqa: E402
from thread_budget_checks import thread_budget_checks  # noqa: E402
from http_checks import (config_number_checks, encoding_checks, error_shape_checks,  # noqa: E402
                         header_limit_checks, nonfinite_model_checks, transfer_encoding_checks)
from head_checks import keepalive_checks, malformed_checks, many_connections_checks, slow_checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


check = Checks()


def http(port, path, body=None, method=None, timeout=30, headers=None):
    """Returns (status, parsed JSON or text)."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers=headers or {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        status, raw, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
    if "json" in ctype:
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")
    return status, raw.decode(errors="replace")




def infer_req(x, name="input", dtype="FP32", shape=None):
    return {"inputs": [{"name": name, "shape": list(shape if shape is not None else x.shape), "datatype": dtype,
                        "data": x.ravel().tolist()}]}


BAD_CONFIGS = []


def refused(tailcut, tmp, tag, config, expect_words):
    """A bad config.json (with the plan of rn): the model is UNAVAILABLE with a reason holding expect_words, checked
    for all of them at once by repo_checks.bad_config_checks (before issue 27 defect 6 the server exited 1)."""
    BAD_CONFIGS.append((tag, config, expect_words))


def shutdown_checks(tailcut, tmp):
    """Issue 27 defect 5: a second SIGTERM during the drain does not kill the server, and a stalled upload does not
    stretch the shutdown past --shutdown-timeout: the server exits 0 within it and says it closed what was left."""
    import socket
    port = free_port()
    server, log = start_server(tailcut, os.path.join(tmp, "repo"), port, extra=("--shutdown-timeout", "3"))
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        # headers announcing 100000 bytes, then 10 of them, then nothing: a stalled upload
        sock.sendall(b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000\r\n\r\n" + b" " * 10)
        time.sleep(0.5)
        t0 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        server.send_signal(signal.SIGTERM)  # a second one, mid-drain
        try:
            rc = server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            rc = "still running after 20 s"
        dt = time.monotonic() - t0
        check("shutdown: a second SIGTERM mid-drain does not kill the server (exit 0)", rc == 0, f"rc={rc}")
        check("shutdown: a stalled upload does not stretch it past --shutdown-timeout 3 (+1 s)", dt < 4.0,
              f"{dt:.1f} s")
    finally:
        sock.close()
        stop_server(server)


def large_body_checks(port, x, y):
    """Issue 27: bodies from 2 MiB live in growable mappings (src/server/body_buf.c). A 6 MiB JSON body sent chunked
    (no Content-Length: it grows from 64 KiB on the heap into a mapping, then by mremap) and a 20 MiB binary request
    with Content-Length (16 MiB first, then grown) whose JSON header is padded with spaces, so that its tensor lands
    past the growth, arrive whole: the same answer as a small request, exactly."""
    import http.client
    js = json.dumps(infer_req(x)).encode()

    def post(body, headers, chunked):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            if chunked:
                pieces = (body[i:i + 100000] for i in range(0, len(body), 100000))
                c.request("POST", "/v2/models/rn/infer", body=pieces, headers=headers, encode_chunked=True)
            else:
                c.request("POST", "/v2/models/rn/infer", body=body, headers=headers)
            r = c.getresponse()
            return r.status, r.headers, r.read()
        finally:
            c.close()

    st, _, raw = post(js + b" " * (6 << 20), {"Content-Type": "application/json"}, True)
    try:
        got = np.array(json.loads(raw)["outputs"][0]["data"], np.float32).reshape(y.shape)
    except (ValueError, KeyError, IndexError, TypeError):
        got = None
    check("a 6 MiB chunked JSON body (grown into a mapping) gives the same answer",
          st == 200 and got is not None and np.array_equal(got, y), f"{st} {raw[:200]!r}")
    header = json.dumps({"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}).encode()
    header += b" " * ((20 << 20) + 37 - len(header))  # an odd length: the tensor needs the aligning pad
    st, h, raw = post(header + x.astype("<f4").tobytes(), {"Content-Type": "application/octet-stream",
                                                          "Inference-Header-Content-Length": str(len(header))}, False)
    try:
        got = parse_infer_response(h, raw)["logits"].reshape(y.shape) if st == 200 else None
    except (ValueError, KeyError):
        got = None
    check("a 20 MiB binary request (Content-Length, grown past 16 MiB) gives the same answer",
          got is not None and np.array_equal(got, y), f"{st} {raw[:200]!r}")


def raw_exchange(port, data, wait=1.0):
    """Sends raw bytes on one connection; returns every byte the server sent until it closed or went quiet."""
    import socket
    sock = socket.create_connection(("127.0.0.1", port), timeout=wait)
    out = b""
    try:
        sock.sendall(data)
        while True:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
    finally:
        sock.close()
    return out


def framing_checks(port):
    """Issue 27 defect 7: conflicting framing headers are refused with one 400 (JSON) and the connection closed, so
    the bytes after the first body never run as a second request (request smuggling behind a proxy)."""
    smuggled = b"GET /v2 HTTP/1.1\r\nHost: x\r\n\r\n"
    for tag, headers in (("two different Content-Length", b"Content-Length: 5\r\nContent-Length: 40\r\n"),
                         ("Content-Length and Transfer-Encoding", b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")):
        body = b"hello" if b"chunked" not in headers else b"5\r\nhello\r\n0\r\n\r\n"
        out = raw_exchange(port, b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + body + smuggled)
        ok = out.startswith(b"HTTP/1.1 400") and out.count(b"HTTP/1.1 ") == 1 and b'"error"' in out
        check(f"framing: {tag} -> one 400, nothing smuggled", ok, repr(out[:300]))


def body_budget_checks(tailcut, tmp):
    """Issue 27 defect 1: request bodies held at once are capped server-wide (--max-buffered-bytes): a body that would
    pass the budget is drained and answered 503, the budget is given back when a request completes, and a large body
    that fits is still served."""
    port = free_port()
    server, _ = start_server(tailcut, os.path.join(tmp, "repo"), port,
                             extra=("--max-body-bytes", "4000000", "--max-buffered-bytes", "300000"))
    inf = "/v2/models/rn/infer"
    try:
        x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
        st, res = http(port, inf, infer_req(x))
        check("budget: a small request is served", st == 200, f"{st} {str(res)[:200]}")
        big = json.dumps(infer_req(x)).encode() + b" " * 400000  # valid JSON, over the 300000-byte budget
        st, res = http(port, inf, big)
        msg = res.get("error", "") if isinstance(res, dict) else str(res)
        check("budget: a body over the server-wide budget -> 503", st == 503 and "max-buffered-bytes" in msg,
              f"{st} {msg[:200]}")
        st, res = http(port, inf, json.dumps(infer_req(x)).encode() + b" " * 200000)  # fits: served
        check("budget: a 200 KB body within the budget is served, the budget given back", st == 200,
              f"{st} {str(res)[:200]}")
        for _ in range(3):
            st, _ = http(port, inf, big)
        check("budget: the refusals leave nothing held (still 503 for the big one, 200 for small)",
              st == 503 and http(port, inf, infer_req(x))[0] == 200)
    finally:
        stop_server(server)


def int64_model_checks(tailcut, tmp):
    """Issue 27: an INT64 model (y = x + [0, 1, -1, 0]) answers JSON integers above 2^53 exactly, refuses values
    outside INT64 and non-integers with 400, and echoes a long UTF-8 request id whole (valid JSON)."""
    from onnx import TensorProto, helper, numpy_helper
    import onnx
    mdir = os.path.join(tmp, "repo64", "i64", "1")
    os.makedirs(mdir)
    g = helper.make_graph([helper.make_node("Add", ["x", "c"], ["y"], name="add")], "i64",
                          [helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, ["batch", 4])],
                          [numpy_helper.from_array(np.array([0, 1, -1, 0], np.int64), "c")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(mdir, "model.onnx"))
    with open(os.path.join(tmp, "repo64", "i64", "config.json"), "w") as f:
        json.dump({"max_batch_size": 4}, f)
    port = free_port()
    server, log = start_server(tailcut, os.path.join(tmp, "repo64"), port)
    try:
        inf = "/v2/models/i64/infer"
        # Through a double these would come back rounded with 200; the second request holds INT64's extremes.
        for tag, big in (("above 2^53", [[2**53 + 1, -2**53 - 3, 12345678901234567, 7]]),
                         ("extremes", [[2**53 + 1, -2**63 + 1, 2**63 - 2, 7], [2**62 + 3, 0, 0, -(2**63)]])):
            want = [[v + c for v, c in zip(row, (0, 1, -1, 0))] for row in big]
            st, res = http(port, inf, {"inputs": [{"name": "x", "shape": [len(big), 4], "datatype": "INT64",
                                                   "data": big}]})
            ok = st == 200 and isinstance(res, dict) and res["outputs"][0]["datatype"] == "INT64"
            check(f"INT64 model: values {tag} come back exact", ok and res["outputs"][0]["data"] == sum(want, []),
                  f"{st} {str(res)[:400]}")

        def refused400(name, data, word):
            st, b = http(port, inf, {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "INT64", "data": data}]})
            msg = b.get("error", "") if isinstance(b, dict) else ""
            check(name, st == 400 and word in msg and "'x'" in msg, f"{st} {str(b)[:300]}")
        refused400("INT64 model: 2^63 -> 400", [1, 2, 3, 2**63], "outside the range of INT64")
        refused400("INT64 model: -2^63 - 1 -> 400", [-(2**63) - 1, 2, 3, 4], "outside the range of INT64")
        refused400("INT64 model: 1.5 -> 400", [1, 2, 1.5, 4], "not an integer")
        refused400("INT64 model: true -> 400", [1, 2, True, 4], "BOOL")
        long_id = "\u00e9" * 300 + "-\U0001F600"
        st, res = http(port, inf, {"id": long_id, "inputs": [{"name": "x", "shape": [1, 4], "datatype": "INT64",
                                                              "data": [1, 2, 3, 4]}]})
        check("long UTF-8 id echoed whole (valid JSON)", st == 200 and isinstance(res, dict) and res.get("id") == long_id,
              f"{st} {str(res)[:300]}")
    finally:
        stop_server(server)
    log.seek(0)
    text = log.read().decode(errors="replace")
    check("INT64 model: no sanitizer report", "ERROR: AddressSanitizer" not in text and "runtime error" not in text,
          text[-2000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tailcut", default=os.environ.get("TAILCUT", os.path.join(ROOT, "build-server", "tailcut")))
    args = ap.parse_args()
    tailcut = os.path.abspath(args.tailcut)
    tmp = tempfile.mkdtemp(prefix="tc_server_test_")
    server = None
    try:
        model_dir = make_repo(tmp)
        onnx_path = os.path.join(model_dir, "model.onnx")
        # A directory without config.json is not a model and is ignored.
        os.makedirs(os.path.join(tmp, "repo", "not_a_model"))

        port = free_port()
        server, log = start_server(tailcut, os.path.join(tmp, "repo"), port, extra=("--http-timeout", "2"))
        check("plan cached as 1/model.plan", os.path.exists(os.path.join(model_dir, "model.plan")))

        st, body = http(port, "/v2")
        check("GET /v2", st == 200 and isinstance(body, dict) and body.get("name") == "tailcut", f"{st} {body}")
        check("GET /v2/health/live", http(port, "/v2/health/live")[0] == 200)
        check("GET /v2/health/ready", http(port, "/v2/health/ready")[0] == 200)
        st, md = http(port, "/v2/models/rn")
        ok = (st == 200 and md.get("name") == "rn" and md.get("platform") == "tailcut"
              and md["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 3, 32, 32]}]
              and md["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [-1, 1000]}])
        check("GET /v2/models/rn metadata", ok, f"{st} {md}")
        st, body = http(port, "/v2/models/rn/ready")
        check("GET /v2/models/rn/ready", st == 200 and body.get("ready") is True, f"{st} {body}")

        # Inference vs `tailcut run` on the same input (and onnxruntime when available).
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
        st, res = http(port, "/v2/models/rn/infer", infer_req(x))
        ok = st == 200 and res.get("model_name") == "rn" and len(res.get("outputs", [])) == 1
        check("POST infer 200", ok, f"{st} {str(res)[:300]}")
        y = None
        if ok:
            out = res["outputs"][0]
            check("infer output name/datatype/shape",
                  out["name"] == "logits" and out["datatype"] == "FP32" and out["shape"] == [1, 1000], str(out)[:200])
            y = np.array(out["data"], dtype=np.float32).reshape(out["shape"])
            np.save(os.path.join(tmp, "x.npy"), x)
            outdir = os.path.join(tmp, "run_out")
            os.makedirs(outdir)
            r = subprocess.run([tailcut, "run", onnx_path, "--input", "input=" + os.path.join(tmp, "x.npy"),
                                "--output-dir", outdir], capture_output=True, text=True, timeout=60)
            if r.returncode == 0:
                ref = np.load(os.path.join(outdir, "logits.npy"))
                err = float(np.max(np.abs(ref - y)))
                check("infer == tailcut run (1e-4)", err <= 1e-4, f"max abs err {err}")
            else:
                check("tailcut run", False, r.stderr)
            try:
                import onnxruntime as ort
                sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
                ref = sess.run(None, {"input": x})[0]
                err = float(np.max(np.abs(ref - y)))
                check("infer == onnxruntime (1e-4)", err <= 1e-4, f"max abs err {err}")
            except ImportError:
                print("note: onnxruntime not importable; skipped that comparison")

        # Batch 2 within max_batch_size, and nested data arrays; rows match single-image results.
        x2 = np.concatenate([x, rng.standard_normal((1, 3, 32, 32)).astype(np.float32)])
        req = {"inputs": [{"name": "input", "shape": [2, 3, 32, 32], "datatype": "FP32", "data": x2.tolist()}],
               "outputs": [{"name": "logits"}]}
        st, res = http(port, "/v2/models/rn/infer", req)
        ok = st == 200 and res["outputs"][0]["shape"] == [2, 1000]
        check("infer batch 2 (nested data, outputs filter)", ok, f"{st} {str(res)[:300]}")
        if ok and y is not None:
            y2 = np.array(res["outputs"][0]["data"], dtype=np.float32).reshape(2, 1000)
            check("batch 2 row 0 == batch 1", float(np.max(np.abs(y2[0] - y[0]))) <= 1e-4)

        # Binary tensor extension: binary in and out, binary in with JSON out, JSON in with binary out.
        inf = "/v2/models/rn/infer"
        if y is not None:
            body, hdr = binary_infer_body([("input", x, "FP32")], outputs=["logits"])
            st, rh, raw = http_raw(port, inf, body, hdr)
            ok = st == 200 and rh.get("Inference-Header-Content-Length") is not None
            check("binary infer 200 with Inference-Header-Content-Length", ok, f"{st} {raw[:200]!r}")
            if ok:
                yb = parse_infer_response(rh, raw)["logits"]
                check("binary output == JSON output", yb.shape == (1, 1000) and np.array_equal(yb, y))
            body, hdr = binary_infer_body([("input", x, "FP32")], outputs=["logits"], binary_outputs=False)
            st, rh, raw = http_raw(port, inf, body, hdr)
            ok = st == 200 and rh.get("Inference-Header-Content-Length") is None
            check("binary input, JSON output", ok and np.array_equal(parse_infer_response(rh, raw)["logits"], y),
                  f"{st} {raw[:200]!r}")
            req = dict(infer_req(x), parameters={"binary_data_output": True})
            st, rh, raw = http_raw(port, inf, json.dumps(req).encode(), {"Content-Type": "application/json"})
            ok = st == 200 and rh.get("Inference-Header-Content-Length") is not None
            check("JSON input, binary_data_output", ok and np.array_equal(parse_infer_response(rh, raw)["logits"], y),
                  f"{st} {raw[:200]!r}")
            body, hdr = binary_infer_body([("input", x2, "FP32")], outputs=["logits"], extra={"id": "req-7"})
            st, rh, raw = http_raw(port, inf, body, hdr)
            ok = st == 200 and json.loads(raw[:int(rh["Inference-Header-Content-Length"])]).get("id") == "req-7"
            check("binary batch 2 echoes id", ok and parse_infer_response(rh, raw)["logits"].shape == (2, 1000),
                  f"{st} {raw[:200]!r}")

        def expect_raw(name, status, body, headers, word):
            st, _, raw = http_raw(port, inf, body, headers)
            try:
                msg = json.loads(raw).get("error", "")
            except ValueError:
                msg = ""
            check(name, st == status and word in msg, f"got {st} {raw[:200]!r}")

        body, hdr = binary_infer_body([("input", x, "FP32")])
        expect_raw("binary: body shorter than binary_data_size -> 400", 400, body[:-4], hdr, "binary_data_size")
        expect_raw("binary: trailing bytes -> 400", 400, body + b"xxxx", hdr, "bytes")
        bad = dict(hdr, **{"Inference-Header-Content-Length": str(len(body) + 1)})
        expect_raw("binary: header length above body -> 400", 400, body, bad, "Inference-Header-Content-Length")
        bad = dict(hdr, **{"Inference-Header-Content-Length": "12abc"})
        expect_raw("binary: header length not a number -> 400", 400, body, bad, "Inference-Header-Content-Length")
        hl = int(hdr["Inference-Header-Content-Length"])
        js = json.loads(body[:hl])
        js["inputs"][0]["parameters"]["binary_data_size"] = x.nbytes - 4
        j2 = json.dumps(js).encode()
        expect_raw("binary: binary_data_size != shape bytes -> 400", 400, j2 + body[hl:],
                   dict(hdr, **{"Inference-Header-Content-Length": str(len(j2))}), "binary_data_size")
        expect_raw("binary_data_size without the header -> 400", 400, body[:hl], {"Content-Type": "application/json"},
                   "Inference-Header-Content-Length")

        # Triton's model configuration extension (what perf_analyzer reads).
        st, cfg = http(port, "/v2/models/rn/config")
        ok = (st == 200 and cfg.get("name") == "rn" and cfg.get("max_batch_size") == 4
              and cfg["input"][0]["name"] == "input" and cfg["input"][0]["data_type"] == "TYPE_FP32"
              and [int(d) for d in cfg["input"][0]["dims"]] == [3, 32, 32]
              and [int(d) for d in cfg["output"][0]["dims"]] == [1000]
              and cfg["instance_group"][0]["count"] == 1 and "dynamic_batching" not in cfg)
        check("GET /v2/models/rn/config", ok, f"{st} {cfg}")

        # Slow and half-open connections are closed after --http-timeout (2 s here).
        import socket as socketlib
        for tag, payload in (("half-open (nothing sent)", b""),
                             ("slow (headers never finished)", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\n")):
            sk = socketlib.create_connection(("127.0.0.1", port), timeout=10)
            if payload:
                sk.sendall(payload)
            t0 = time.time()
            try:
                closed = sk.recv(4096) == b""
            except (ConnectionResetError, socketlib.timeout):
                closed = False
            dt = time.time() - t0
            sk.close()
            check(f"{tag} connection closed by the server", closed and 1.0 <= dt <= 8.0, f"closed={closed} {dt:.1f}s")
        st, res = http(port, inf, infer_req(x))
        check("infer fine while connections timed out", st == 200)

        def expect(name, status, path, body, method=None, headers=None):
            st, b = http(port, path, body, method=method, headers=headers)
            check(name, st == status and isinstance(b, dict) and isinstance(b.get("error"), str) and b["error"],
                  f"got {st} {str(b)[:200]}")

        expect("malformed JSON -> 400", 400, inf, b'{"inputs": [')
        expect("non-object JSON -> 400", 400, inf, b'[1,2,3]')
        expect("missing inputs -> 400", 400, inf, {"outputs": []})
        expect("wrong dtype -> 400", 400, inf, infer_req(x, dtype="INT64"))
        expect("unknown dtype -> 400", 400, inf, infer_req(x, dtype="FLOAT"))
        expect("wrong rank -> 400", 400, inf, infer_req(x.reshape(3, 32, 32)))
        expect("wrong static dim -> 400", 400, inf, infer_req(np.zeros((1, 3, 16, 64), np.float32)))
        expect("batch above profile -> 400", 400, inf, infer_req(np.zeros((5, 3, 32, 32), np.float32)))
        expect("negative shape -> 400", 400, inf, infer_req(x, shape=[-1, 3, 32, 32]))
        expect("element count mismatch -> 400", 400, inf,
               {"inputs": [{"name": "input", "shape": [1, 3, 32, 32], "datatype": "FP32", "data": [1.0] * 100}]})
        expect("string in data -> 400", 400, inf,
               {"inputs": [{"name": "input", "shape": [1], "datatype": "FP32", "data": ["a"]}]})
        expect("unknown input name -> 400", 400, inf, infer_req(x, name="nope"))
        expect("missing input -> 400", 400, inf, {"inputs": []})
        expect("timeout parameter not an integer -> 400", 400, inf, dict(infer_req(x), parameters={"timeout": -1}))
        expect("priority parameter not an integer -> 400", 400, inf, dict(infer_req(x), parameters={"priority": "hi"}))
        expect("priority above the levels -> 400", 400, inf, dict(infer_req(x), parameters={"priority": 2}))
        expect("binary_data_output not a boolean -> 400", 400, inf,
               dict(infer_req(x), parameters={"binary_data_output": "yes"}))
        expect("output binary_data not a boolean -> 400", 400, inf,
               dict(infer_req(x), outputs=[{"name": "logits", "parameters": {"binary_data": 1}}]))
        expect("output requested twice -> 400", 400, inf, dict(infer_req(x), outputs=[{"name": "logits"}] * 2))
        expect("classification extension -> 400", 400, inf,
               dict(infer_req(x), outputs=[{"name": "logits", "parameters": {"classification": 3}}]))
        expect("id not a string -> 400", 400, inf, dict(infer_req(x), id=7))
        expect("unknown output -> 400", 400, inf, dict(infer_req(x), outputs=[{"name": "nope"}]))
        expect("unknown model infer -> 404", 404, "/v2/models/nomodel/infer", infer_req(x))
        expect("unknown model metadata -> 404", 404, "/v2/models/nomodel", None)
        expect("escaping model name -> 404", 404, "/v2/models/..%2F..%2Fetc/infer", infer_req(x))
        expect("GET infer -> 405", 405, inf, None, method="GET")
        expect("unknown path -> 404", 404, "/v3/whatever", None)
        framing_checks(port)
        # issue 27 defect 9 (part): 405 carries Allow; Expect: 100-continue over the size limit gets 413, not 100
        out = raw_exchange(port, b"GET /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\n\r\n")
        check("405 has an Allow header", out.startswith(b"HTTP/1.1 405") and b"\r\nAllow: POST\r\n" in out,
              repr(out[:300]))
        out = raw_exchange(port, b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n"
                           b"Expect: 100-continue\r\n\r\n")
        check("Expect: 100-continue over the limit -> 413 at once (no 100)",
              out.startswith(b"HTTP/1.1 413") and b"100 Continue" not in out, repr(out[:300]))
        # issue 27 defect 8: lenient parsing
        expect("%00 in the model name -> 404", 404, "/v2/models/rn%00x/infer", infer_req(x))
        bad_name = json.dumps(infer_req(x)).replace('"name": "input"', '"name": "input\\u0000junk"')
        expect("NUL inside an input name -> 400", 400, inf, bad_name.encode())
        expect("bytes after the JSON body -> 400", 400, inf, json.dumps(infer_req(x)).encode() + b" garbage")
        ok_esc = json.dumps(dict(infer_req(x), id="a\\u0000b"))  # an escaped backslash, then 'u0000': no NUL
        st, _ = http(port, inf, ok_esc.encode())
        check("an escaped backslash before u0000 is no NUL (200)", st == 200, f"{st}")
        # issue 27 defect 4: a body of many small JSON nodes (here 8 MiB of empty objects, 2.8M nodes, which cJSON
        # would turn into ~300 MB of tree) is refused before any tree is built: its value count is bounded by the
        # model's input sizes
        nodes = b'{"inputs": [], "x": [' + b"{}," * ((8 << 20) // 3) + b"{}]}"
        st, b = http(port, inf, nodes)
        check("8 MiB of empty JSON objects -> 413 (bounded by the model's inputs)",
              st == 413 and isinstance(b, dict) and "more values" in b.get("error", ""), f"{st} {str(b)[:200]}")
        big = b" " * (64 * 1024 * 1024 + 1)
        expect("oversized body -> 413", 413, inf, big)
        check("server alive after bad requests", http(port, "/v2/health/live")[0] == 200)
        st, res = http(port, inf, infer_req(x))
        check("infer still correct after bad requests", st == 200 and y is not None and
              float(np.max(np.abs(np.array(res["outputs"][0]["data"], np.float32) - y.ravel()))) == 0.0)

        st, text = http(port, "/metrics")
        ok = st == 200 and isinstance(text, str)
        check("GET /metrics", ok, f"{st}")
        if ok:
            vals = {}
            for line in text.splitlines():
                if line and not line.startswith("#"):
                    k, v = line.rsplit(" ", 1)
                    vals[k] = float(v)
            succ = vals.get('tc_request_success_total{model="rn"}', -1)
            fail = vals.get('tc_request_failure_total{model="rn"}', -1)
            cnt = vals.get('tc_request_duration_us_count{model="rn"}', -1)
            inf_b = vals.get('tc_request_duration_us_bucket{model="rn",le="+Inf"}', -1)
            check("metrics counters", succ == 9 and fail >= 29 and cnt == succ + fail and inf_b == cnt,
                  f"succ={succ} fail={fail} count={cnt} inf={inf_b}")
            check("metrics TYPE lines", "# TYPE tc_request_duration_us histogram" in text
                  and "# TYPE tc_request_success_total counter" in text)
        # issue 27 defect 9 (rest), after the metrics counts: JSON errors, 415, JSON 431, config numbers
        error_shape_checks(check, port)
        encoding_checks(check, port, x)
        transfer_encoding_checks(check, port)
        header_limit_checks(check, port)
        config_number_checks(check, port)
        large_body_checks(port, x, y)
        # issue 27 defect 9 (the HTML answers of libmicrohttpd): malformed first heads -> JSON; what must keep working
        malformed_checks(check, port)
        keepalive_checks(check, port)
        slow_checks(check, port, timeout_s=2)
        many_connections_checks(check, tailcut, os.path.join(tmp, "repo"))

        # SIGTERM: a request in flight still completes, then exit 0.
        import threading
        result = {}

        def slow():
            result["r"] = http(port, inf, infer_req(x2[:1]))
        th = threading.Thread(target=slow)
        th.start()
        time.sleep(0.05)
        server.send_signal(signal.SIGTERM)
        th.join(20)
        try:
            rc = server.wait(20)
        except subprocess.TimeoutExpired:
            rc = None
        check("SIGTERM exits 0", rc == 0, f"rc={rc}")
        r = result.get("r")
        check("request around SIGTERM answered or refused cleanly", r is None or r[0] == 200, str(r)[:200])
        log.seek(0)
        logtext = log.read().decode(errors="replace")
        check("no sanitizer report", "ERROR: AddressSanitizer" not in logtext and "runtime error" not in logtext,
              logtext[-2000:])
        server = None

        # An INT8 model: "precision": "int8" with a calibration cache from `tailcut calibrate` next to model.onnx, and
        # 7-bit weights ("int8_reduce_range"): without VNNI the AVX2 7-bit-weight variants run it.
        qdir = os.path.join(tmp, "repo8", "q", "1")
        os.makedirs(os.path.join(tmp, "cal"))
        os.makedirs(qdir)
        shutil.copy(onnx_path, os.path.join(qdir, "model.onnx"))
        for k in range(8):
            np.save(os.path.join(tmp, "cal", f"input.{k}.npy"), rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
        r = subprocess.run([tailcut, "calibrate", onnx_path, "--data", os.path.join(tmp, "cal"), "-o",
                            os.path.join(qdir, "calib.cache")], capture_output=True, text=True, timeout=120)
        check("tailcut calibrate for the INT8 model", r.returncode == 0, r.stderr)
        with open(os.path.join(tmp, "repo8", "q", "config.json"), "w") as f:
            json.dump({"max_batch_size": 4, "tailcut": {"precision": "int8", "calibration_cache": "calib.cache",
                                                        "int8_reduce_range": True, "tactics": "fixed"}}, f)
        p8 = free_port()
        s8, log8 = start_server(tailcut, os.path.join(tmp, "repo8"), p8)
        try:
            st, res = http(p8, "/v2/models/q/infer", infer_req(x))
            ok = st == 200 and res["outputs"][0]["shape"] == [1, 1000]
            check("INT8 model: POST infer 200", ok, f"{st} {str(res)[:300]}")
            if ok and y is not None:
                y8 = np.array(res["outputs"][0]["data"], dtype=np.float32)
                cos = float(y8 @ y.ravel() / (np.linalg.norm(y8) * np.linalg.norm(y)))
                check("INT8 model: output close to FP32 (cosine > 0.98)", cos > 0.98, f"cosine {cos}")
            r = subprocess.run([tailcut, "inspect", os.path.join(qdir, "model.plan")], capture_output=True, text=True)
            flags = open("/proc/cpuinfo").read().split()
            has_int8 = "avx512_vnni" in flags or ("avx2" in flags and "fma" in flags)  # VNNI or the AVX2 variant
            check("INT8 model: the cached plan has INT8 steps", (" int8 " in r.stdout) == has_int8, r.stdout[-500:])
            w7 = "avx2" in flags and "fma" in flags and "avx512_vnni" not in flags
            check("INT8 model: int8_reduce_range gives 7-bit-weight steps without VNNI",
                  ("w7_avx2" in r.stdout) == w7, r.stdout[-500:])
        finally:
            stop_server(s8)
        # An FP16 model: "precision": "fp16" (no calibration).
        hdir = os.path.join(tmp, "repo16", "h", "1")
        os.makedirs(hdir)
        shutil.copy(onnx_path, os.path.join(hdir, "model.onnx"))
        with open(os.path.join(tmp, "repo16", "h", "config.json"), "w") as f:
            json.dump({"max_batch_size": 4, "tailcut": {"precision": "fp16", "tactics": "fixed"}}, f)
        p16 = free_port()
        s16, log16 = start_server(tailcut, os.path.join(tmp, "repo16"), p16)
        try:
            st, res = http(p16, "/v2/models/h/infer", infer_req(x))
            ok = st == 200 and res["outputs"][0]["shape"] == [1, 1000]
            check("FP16 model: POST infer 200", ok, f"{st} {str(res)[:300]}")
            if ok and y is not None:
                y16 = np.array(res["outputs"][0]["data"], dtype=np.float32)
                cos = float(y16 @ y.ravel() / (np.linalg.norm(y16) * np.linalg.norm(y)))
                check("FP16 model: output close to FP32 (cosine > 0.999)", cos > 0.999, f"cosine {cos}")
            r = subprocess.run([tailcut, "inspect", os.path.join(hdir, "model.plan")], capture_output=True, text=True)
            has_fp16 = "avx512_fp16" in open("/proc/cpuinfo").read()
            check("FP16 model: the cached plan has FP16 steps", (" fp16 " in r.stdout) == has_fp16, r.stdout[-500:])
        finally:
            stop_server(s16)
        int64_model_checks(tailcut, tmp)
        nonfinite_model_checks(check, tailcut, tmp)
        body_budget_checks(tailcut, tmp)
        shutdown_checks(tailcut, tmp)
        refused(tailcut, tmp, "int8 without a cache", '{"max_batch_size": 4, "tailcut": {"precision": "int8"}}',
                ["config.json", "tailcut.calibration_cache"])
        refused(tailcut, tmp, "cache path outside the folder", '{"max_batch_size": 4, "tailcut": {"precision": "int8", '
                '"calibration_cache": "../x.cache"}}', ["config.json", "tailcut.calibration_cache"])
        refused(tailcut, tmp, "int8_reduce_range without int8", '{"max_batch_size": 4, "tailcut": '
                '{"int8_reduce_range": true}}', ["config.json", "tailcut.int8_reduce_range"])
        refused(tailcut, tmp, "int8_reduce_range not a bool", '{"max_batch_size": 4, "tailcut": {"precision": "int8", '
                '"calibration_cache": "c.cache", "int8_reduce_range": 1}}', ["config.json", "tailcut.int8_reduce_range"])

        r = subprocess.run([tailcut, "serve", "--model-repository", os.path.join(tmp, "repo"), "--http-timeout", "0"],
                           capture_output=True, text=True, timeout=30)
        check("serve --http-timeout 0 refused", r.returncode == 2 and "--http-timeout" in r.stderr, r.stderr)
        refused(tailcut, tmp, "negative max_batch_size", '{"max_batch_size": -1}', ["config.json", "max_batch_size"])
        refused(tailcut, tmp, "missing max_batch_size", '{}', ["config.json", "max_batch_size"])
        refused(tailcut, tmp, "not JSON", '{"max_batch_size": ', ["config.json"])
        refused(tailcut, tmp, "wrong data_type", '{"max_batch_size": 4, "input": [{"name": "input", '
                '"data_type": "TYPE_INT64"}]}', ["config.json", "input[0].data_type"])
        refused(tailcut, tmp, "wrong dims", '{"max_batch_size": 4, "input": [{"name": "input", '
                '"dims": [3, 16, 16]}]}', ["config.json", "input[0].dims"])
        refused(tailcut, tmp, "dynamic_batching without max_batch_size", '{"max_batch_size": 0, '
                '"dynamic_batching": {}}', ["config.json", "dynamic_batching"])
        refused(tailcut, tmp, "preferred size above max_batch_size", '{"max_batch_size": 4, '
                '"dynamic_batching": {"preferred_batch_size": [8]}}', ["config.json", "preferred_batch_size"])
        refused(tailcut, tmp, "negative queue delay", '{"max_batch_size": 4, '
                '"dynamic_batching": {"max_queue_delay_microseconds": -5}}', ["config.json", "max_queue_delay_microseconds"])
        refused(tailcut, tmp, "instance count 0", '{"max_batch_size": 4, "instance_group": [{"count": 0}]}',
                ["config.json", "instance_group[0].count"])
        refused(tailcut, tmp, "GPU instance on a CPU plan", '{"max_batch_size": 4, "instance_group": '
                '[{"kind": "KIND_GPU"}]}', ["config.json", "KIND_GPU", "built for the cpu backend", "--backend cuda"])
        refused(tailcut, tmp, "GPU other than 0", '{"max_batch_size": 4, "instance_group": [{"kind": "KIND_GPU", '
                '"gpus": [1]}]}', ["config.json", "instance_group[0].gpus", "CUDA_VISIBLE_DEVICES"])
        refused(tailcut, tmp, "mixed instance kinds", '{"max_batch_size": 4, "instance_group": [{"kind": "KIND_CPU"}, '
                '{"kind": "KIND_GPU"}]}', ["config.json", "instance_group[1].kind", "same kind"])
        refused(tailcut, tmp, "unknown instance kind", '{"max_batch_size": 4, "instance_group": [{"kind": "KIND_TPU"}]}',
                ["config.json", "instance_group[0].kind"])
        refused(tailcut, tmp, "unknown precision", '{"max_batch_size": 4, "tailcut": {"precision": "int4"}}',
                ["config.json", "tailcut.precision"])
        refused(tailcut, tmp, "max_batch_size above the plan", '{"max_batch_size": 16}', ["max_batch_size", "plan"])
        refused(tailcut, tmp, "unknown input", '{"max_batch_size": 4, "input": [{"name": "x"}]}',
                ["config.json", "input[0].name"])
        plan = os.path.join(model_dir, "model.plan")
        bad_config_checks(check, tailcut, tmp, plan, BAD_CONFIGS)
        if y is not None:
            repository_checks(check, tailcut, tmp, onnx_path, plan, x, y)
            thread_budget_checks(check, tailcut, tmp, plan, x, y)
        else:
            check("repository checks need the reference output", False)
    except Exception as e:  # noqa: BLE001 - report, do not crash
        check("test harness", False, repr(e))
    finally:
        stop_server(server)
        shutil.rmtree(tmp, ignore_errors=True)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
