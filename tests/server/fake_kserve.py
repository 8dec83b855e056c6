"""fake_kserve.py - a minimal in-process KServe v2 server for testing `tailcut loadgen --binary` (127.0.0.1 only).

Serves GET /v2/models/<model> (metadata) and POST /v2/models/<model>/infer with the binary tensor data extension
only. Every request body is checked strictly (Content-Type, Inference-Header-Content-Length, the JSON header's
inputs in metadata order with parameters.binary_data_size and no data, every output requested with
parameters.binary_data, total length); a bad one is counted in `bad_requests` (reason in `bad_reasons`) and
answered 400. The decoded inputs of the last good request are kept in `last_inputs`. A plain JSON request
(Content-Type application/json, no Inference-Header-Content-Length) is decoded too, counted in `json_requests` and
answered in JSON, so that a test can compare the values of both encodings.

Default model: one FP32 input "input" [1, 4] (the first dimension may be any batch >= 1), one FP32 output
"out" [batch, 2]. mode "ok" answers valid binary responses; mode "malformed" cycles through broken ones (see
MALFORMED_KINDS), each of which a checking client must reject.

usage:
    srv = FakeKServe(mode="ok")      # starts serving on srv.port
    ... srv.url, srv.good_requests, srv.bad_requests ...
    srv.close()
"""
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

NP_DTYPES = {"FP32": "<f4", "FP64": "<f8", "INT8": "i1", "UINT8": "u1", "INT16": "<i2", "UINT16": "<u2",
             "INT32": "<i4", "UINT32": "<u4", "INT64": "<i8", "UINT64": "<u8", "BOOL": "u1"}

# Broken 200 answers, in the order they are cycled through.
MALFORMED_KINDS = ["size_mismatch",      # binary_data_size does not match the bytes that follow
                   "no_header",          # no Inference-Header-Content-Length
                   "header_too_long",    # Inference-Header-Content-Length > body length
                   "bad_json",           # the JSON header does not parse
                   "shape_mismatch",     # sizes add up, but binary_data_size != product(shape) * 4
                   "bad_header_value",   # Inference-Header-Content-Length not a number
                   "plain_json"]         # a JSON answer with data (binary was requested)

DEFAULT_INPUTS = [("input", "FP32", [1, 4])]
DEFAULT_OUTPUTS = [("out", "FP32", [1, 2])]


class FakeKServe:
    def __init__(self, model="m", mode="ok", inputs=None, outputs=None):
        self.model = model
        self.mode = mode
        self.inputs = inputs or DEFAULT_INPUTS
        self.outputs = outputs or DEFAULT_OUTPUTS
        self.lock = threading.Lock()
        self.good_requests = 0
        self.json_requests = 0
        self.bad_requests = 0
        self.bad_reasons = []
        self.last_inputs = None
        self.n_answers = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive
            disable_nagle_algorithm = True  # headers and body are written apart: no 40 ms delayed-ACK stalls

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                if self.path != f"/v2/models/{fake.model}":
                    return self._send(404, b'{"error":"not found"}')
                md = {"name": fake.model, "versions": ["1"], "platform": "fake",
                      "inputs": [{"name": n, "datatype": d, "shape": s} for n, d, s in fake.inputs],
                      "outputs": [{"name": n, "datatype": d, "shape": s} for n, d, s in fake.outputs]}
                self._send(200, json.dumps(md).encode())

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                if self.path != f"/v2/models/{fake.model}/infer":
                    return self._send(404, b'{"error":"not found"}')
                if (self.headers.get("Content-Type") == "application/json"
                        and self.headers.get("Inference-Header-Content-Length") is None):
                    try:
                        batch, inputs = fake.parse_json_request(body)
                    except (ValueError, KeyError, TypeError) as e:
                        return self._send(400, json.dumps({"error": f"bad JSON request: {e}"}).encode())
                    with fake.lock:
                        fake.json_requests += 1
                        fake.last_inputs = inputs
                    return self._send(200, json.dumps({"model_name": fake.model, "outputs": [
                        {"name": n, "datatype": d, "shape": [batch, 2], "data": [1] * (batch * 2)}
                        for n, d, _ in fake.outputs]}).encode())
                try:
                    batch, inputs = fake.parse_request(self.headers, body)
                except ValueError as e:
                    with fake.lock:
                        fake.bad_requests += 1
                        fake.bad_reasons.append(str(e))
                    return self._send(400, json.dumps({"error": f"bad binary request: {e}"}).encode())
                with fake.lock:
                    fake.good_requests += 1
                    fake.last_inputs = inputs
                    k = fake.n_answers
                    fake.n_answers += 1
                if fake.mode == "malformed":
                    return self._send(200, *fake.malformed_answer(MALFORMED_KINDS[k % len(MALFORMED_KINDS)], batch))
                self._send(200, *fake.answer(batch))

            def _send(self, status, body, extra=None):
                self.send_response(status)
                ct = "application/octet-stream" if extra and "Inference-Header-Content-Length" in extra \
                    else "application/json"
                self.send_header("Content-Type", ct)
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def parse_request(self, headers, body):
        """Checks a binary infer request; returns (batch, {name: np.ndarray}) or raises ValueError."""
        if headers.get("Content-Type") != "application/octet-stream":
            raise ValueError(f"Content-Type {headers.get('Content-Type')!r}")
        ihcl = headers.get("Inference-Header-Content-Length")
        if ihcl is None or not ihcl.isdigit():
            raise ValueError(f"Inference-Header-Content-Length {ihcl!r}")
        jlen = int(ihcl)
        if jlen > len(body):
            raise ValueError(f"Inference-Header-Content-Length {jlen} > body {len(body)}")
        try:
            hdr = json.loads(body[:jlen].decode())
        except ValueError as e:
            raise ValueError(f"JSON header: {e}") from None
        ins = hdr.get("inputs")
        if not isinstance(ins, list) or len(ins) != len(self.inputs):
            raise ValueError(f"inputs {ins!r}")
        off = jlen
        batch = None
        decoded = {}
        for entry, (name, dt, shape) in zip(ins, self.inputs):
            if entry.get("name") != name or entry.get("datatype") != dt or "data" in entry:
                raise ValueError(f"input entry {entry!r}")
            shp = entry.get("shape")
            if not isinstance(shp, list) or len(shp) != len(shape) or any(
                    not isinstance(d, int) or d < 1 for d in shp) or list(shp[1:]) != [max(d, 1) for d in shape[1:]]:
                raise ValueError(f"shape {shp!r} of {name}")
            if batch is None:
                batch = shp[0]
            size = (entry.get("parameters") or {}).get("binary_data_size")
            npdt = np.dtype(NP_DTYPES[dt])
            if size != int(np.prod(shp)) * npdt.itemsize:
                raise ValueError(f"binary_data_size {size!r} of {name} with shape {shp}")
            if off + size > len(body):
                raise ValueError(f"body too short for {name}")
            decoded[name] = np.frombuffer(body[off:off + size], dtype=npdt).reshape(shp)
            off += size
        if off != len(body):
            raise ValueError(f"{len(body) - off} bytes after the last input")
        outs = hdr.get("outputs")
        want = [{"name": n, "parameters": {"binary_data": True}} for n, _, _ in self.outputs]
        if outs != want:
            raise ValueError(f"outputs {outs!r}")
        return batch, decoded

    def parse_json_request(self, body):
        """Decodes a JSON infer request; returns (batch, {name: np.ndarray})."""
        ins = json.loads(body.decode())["inputs"]
        decoded = {}
        for entry, (name, dt, _) in zip(ins, self.inputs):
            if entry["name"] != name or entry["datatype"] != dt:
                raise ValueError(f"input entry {entry['name']!r}")
            decoded[name] = np.array(entry["data"]).astype(NP_DTYPES[dt]).reshape(entry["shape"])
        return ins[0]["shape"][0], decoded

    def _out_parts(self, batch):
        metas, blobs = [], []
        for name, dt, shape in self.outputs:
            shp = [batch] + [max(d, 1) for d in shape[1:]]
            data = (np.arange(int(np.prod(shp))) % 7 + 1).astype(NP_DTYPES[dt]).tobytes()
            metas.append({"name": name, "datatype": dt, "shape": shp, "parameters": {"binary_data_size": len(data)}})
            blobs.append(data)
        return metas, blobs

    def _binary(self, hdr_obj, blobs, hdr_bytes=None):
        h = hdr_bytes if hdr_bytes is not None else json.dumps(hdr_obj).encode()
        return h + b"".join(blobs), {"Inference-Header-Content-Length": str(len(h))}

    def answer(self, batch):
        metas, blobs = self._out_parts(batch)
        return self._binary({"model_name": self.model, "outputs": metas}, blobs)

    def malformed_answer(self, kind, batch):
        metas, blobs = self._out_parts(batch)
        hdr = {"model_name": self.model, "outputs": metas}
        if kind == "size_mismatch":
            return self._binary(hdr, blobs + [b"\0\0\0\0"])
        if kind == "no_header":
            body, _ = self._binary(hdr, blobs)
            return body, {"X-Info": "no-inference-header"}
        if kind == "header_too_long":
            body, _ = self._binary(hdr, blobs)
            return body, {"Inference-Header-Content-Length": str(len(body) + 1)}
        if kind == "bad_json":
            h = json.dumps(hdr).encode()
            return self._binary(None, blobs, hdr_bytes=h[:-1] + b",")
        if kind == "shape_mismatch":
            metas[0]["shape"] = [batch, 3]  # 12 bytes expected, binary_data_size still 8
            return self._binary(hdr, blobs)
        if kind == "bad_header_value":
            body, _ = self._binary(hdr, blobs)
            return body, {"Inference-Header-Content-Length": "12x"}
        if kind == "plain_json":
            return json.dumps({"model_name": self.model, "outputs": [
                {"name": m["name"], "datatype": m["datatype"], "shape": m["shape"], "data": [1.0] * (batch * 2)}
                for m in metas]}).encode(), None
        raise AssertionError(kind)
