"""http_checks.py - issue 27 defect 9 (the rest), called by test_server.py: every error the server can control is
KServe JSON (`{"error": ...}`, Content-Type application/json), compressed bodies get 415 naming the encoding (JSON and
binary-extension requests alike), request headers over the server's 64 KiB limit get a JSON 431 (not
libmicrohttpd's HTML page), NaN/+-Inf outputs are valid JSON (null) and exact in the binary tensor extension, and
every int64 field of /v2/models/{m}/config is a JSON number; a Transfer-Encoding other than chunked gets a JSON 501."""
import gzip
import json
import os
import socket
import zlib

import numpy as np

from server_fixture import (binary_infer_body, free_port, http_raw, parse_infer_response, parse_raw_response,
                            start_server, stop_server)


def _strict_json(raw):
    """json.loads that refuses NaN/Infinity (Python's default accepts them; JSON has no such tokens)."""
    def bad(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(raw, parse_constant=bad)


def _json_error(headers, raw):
    """The error message of a KServe JSON error response, or None when it is not one."""
    if "application/json" not in (headers.get("Content-Type") or ""):
        return None
    try:
        body = _strict_json(raw)
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), str) else None


def _raw(port, data, timeout=3.0):
    """Sends raw bytes; returns (status, headers dict (lower-case names), body) of the first response."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        sock.sendall(data)
        while True:
            try:
                chunk = sock.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
            head, sep, rest = out.partition(b"\r\n\r\n")
            if sep:
                hdrs = {k.strip().lower(): v.strip() for k, _, v in
                        (ln.decode(errors="replace").partition(":") for ln in head.split(b"\r\n")[1:])}
                if len(rest) >= int(hdrs.get("content-length", "0")):
                    break
    finally:
        sock.close()
    return parse_raw_response(out)


def encoding_checks(check, port, x):
    """Content-Encoding other than identity -> 415 with a JSON error naming it (was 400 "malformed JSON")."""
    inf = "/v2/models/rn/infer"
    js = json.dumps({"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32",
                                 "data": x.ravel().tolist()}]}).encode()
    for enc, body in (("gzip", gzip.compress(js)), ("deflate", zlib.compress(js)), ("br", b"\x8b\x00")):
        st, h, raw = http_raw(port, inf, body, {"Content-Type": "application/json", "Content-Encoding": enc})
        msg = _json_error(h, raw)
        check(f"Content-Encoding {enc} (JSON request) -> 415 naming it", st == 415 and msg is not None and enc in msg
              and h.get("Accept-Encoding") == "identity", f"{st} {h.get('Content-Type')} {raw[:200]!r}")
    bbody, bh = binary_infer_body([("input", x, "FP32")], ["logits"])
    st, h, raw = http_raw(port, inf, gzip.compress(bbody), dict(bh, **{"Content-Encoding": "gzip"}))
    msg = _json_error(h, raw)
    check("Content-Encoding gzip (binary-extension request) -> 415 naming it",
          st == 415 and msg is not None and "gzip" in msg, f"{st} {raw[:200]!r}")
    st, h, raw = http_raw(port, inf, js, {"Content-Type": "application/json", "Content-Encoding": "identity"})
    check("Content-Encoding identity is served", st == 200, f"{st} {raw[:200]!r}")
    # keep-alive survives the refusal: the refused body was drained, the next request on the connection is served
    req = (f"POST {inf} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
           f"Content-Length: {len(gzip.compress(js))}\r\n\r\n").encode() + gzip.compress(js)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall(req + b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        out = b""
        while out.count(b"HTTP/1.1 ") < 2 or not out.endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    finally:
        sock.close()
    check("a 415 keeps the connection: the next request on it is served",
          out.startswith(b"HTTP/1.1 415") and b"HTTP/1.1 200" in out, repr(out[:400]))


def transfer_encoding_checks(check, port):
    """A Transfer-Encoding other than chunked (gzip, "gzip, chunked") -> JSON 501 at once and the connection closed;
    libmicrohttpd would read such a body until the client closed, and client and server waited on each other."""
    import time
    for te, body in (("gzip", b"\x1f\x8b\x08\x00"), ("gzip, chunked", b"4\r\n\x1f\x8b\x08\x00\r\n0\r\n\r\n")):
        t0 = time.time()
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        out, closed = b"", False
        try:
            sock.sendall(f"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: {te}\r\n\r\n".encode()
                         + body)
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    closed = True
                    break
                out += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        finally:
            sock.close()
        _, _, js = out.partition(b"\r\n\r\n")
        try:
            msg = _strict_json(js)["error"]
        except (ValueError, KeyError, TypeError):
            msg = ""
        check(f"Transfer-Encoding '{te}' -> JSON 501 at once, connection closed",
              out.startswith(b"HTTP/1.1 501") and b"application/json" in out and te in msg and closed
              and time.time() - t0 < 3, repr(out[:300]))


def header_limit_checks(check, port):
    """Request headers over the server's limit (64 KiB) -> JSON 431 and the connection closed; headers under it are
    served. (Heads past libmicrohttpd's connection memory, 256 KiB: head_checks.py; the front stage answers them.)"""
    for tag, size in (("100 KB header", 100_000), ("70 KB URL query", 70_000)):
        if "header" in tag:
            req = b"GET /v2 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n"
        else:
            req = b"GET /v2?q=" + b"a" * size + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        st, h, body = _raw(port, req)
        ok = st == 431 and "application/json" in h.get("content-type", "") and h.get("connection", "").lower() == "close"
        try:
            ok = ok and "65536" in _strict_json(body)["error"]
        except (ValueError, KeyError, TypeError):
            ok = False
        check(f"{tag} -> JSON 431", ok, f"{st} {h} {body[:200]!r}")
    st, _, _ = _raw(port, b"GET /v2 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 30_000 + b"\r\n\r\n")
    check("30 KB header is served", st == 200, str(st))


def error_shape_checks(check, port):
    """Errors the server answers itself are all KServe JSON with Content-Type application/json."""
    cases = (("404", b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404),
             ("405", b"DELETE /v2 HTTP/1.1\r\nHost: x\r\n\r\n", 405),
             ("400 malformed JSON", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n{x}", 400),
             ("400 framing", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                             b"Content-Length: 2\r\n\r\nab", 400))
    for tag, req, want in cases:
        st, h, body = _raw(port, req)
        ok = st == want and "application/json" in h.get("content-type", "")
        try:
            ok = ok and isinstance(_strict_json(body)["error"], str)
        except (ValueError, KeyError, TypeError):
            ok = False
        check(f"error {tag} is JSON", ok, f"{st} {h} {body[:200]!r}")


def config_number_checks(check, port):
    """/v2/models/rn/config: dims and max_batch_size are JSON numbers (were decimal strings)."""
    st, h, raw = http_raw(port, "/v2/models/rn/config")
    cfg = _strict_json(raw) if st == 200 else {}
    dims = [d for io in cfg.get("input", []) + cfg.get("output", []) for d in io.get("dims", [])]
    check("config: dims and max_batch_size are JSON numbers",
          dims and all(type(d) is int for d in dims) and type(cfg.get("max_batch_size")) is int
          and cfg["input"][0]["dims"] == [3, 32, 32] and cfg["output"][0]["dims"] == [1000], str(cfg)[:300])


def nonfinite_model_checks(check, tailcut, tmp):
    """A model whose outputs hold +Inf, -Inf and NaN (y = x / [0, 0, 0, 1]): the JSON response is valid JSON with
    null for them (docs/reference/http.md), the binary tensor extension carries them exactly."""
    from onnx import TensorProto, helper, numpy_helper
    import onnx
    mdir = os.path.join(tmp, "repo_nan", "nf", "1")
    os.makedirs(mdir)
    g = helper.make_graph([helper.make_node("Div", ["x", "c"], ["y"], name="div")], "nf",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          [numpy_helper.from_array(np.array([0, 0, 0, 1], np.float32), "c")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(mdir, "model.onnx"))
    with open(os.path.join(tmp, "repo_nan", "nf", "config.json"), "w") as f:
        json.dump({"max_batch_size": 0}, f)
    port = free_port()
    server, _ = start_server(tailcut, os.path.join(tmp, "repo_nan"), port)
    try:
        x = np.array([[1, -1, 0, 2]], np.float32)
        req = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": x.ravel().tolist()}]}
        st, h, raw = http_raw(port, "/v2/models/nf/infer", json.dumps(req).encode(), {"Content-Type": "application/json"})
        try:
            data = _strict_json(raw)["outputs"][0]["data"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            data = repr(e)
        check("NaN/Inf outputs: JSON response is valid JSON, null for them", st == 200 and data == [None, None, None, 2.0],
              f"{st} {raw[:300]!r}")
        body, hdr = binary_infer_body([("x", x, "FP32")], ["y"])
        st, h, raw = http_raw(port, "/v2/models/nf/infer", body, hdr)
        y = parse_infer_response(h, raw)["y"].ravel() if st == 200 else None
        check("NaN/Inf outputs: the binary tensor extension carries them exactly",
              y is not None and y[0] == np.inf and y[1] == -np.inf and np.isnan(y[2]) and y[3] == 2, f"{st} {y}")
    finally:
        stop_server(server)
