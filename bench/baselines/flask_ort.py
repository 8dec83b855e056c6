#!/usr/bin/env python3
"""flask_ort.py - the usual first deployment of an ONNX model, as a baseline for `tailcut serve`.

One onnxruntime InferenceSession (CPU execution provider, intra_op_num_threads=--threads,
inter_op_num_threads=1, default graph optimisations) wrapped in a Flask app and served by Flask's
built-in threaded server (`app.run(threaded=True)`: one thread per connection, HTTP/1.1 keep-alive).
Concurrent requests call session.run concurrently, as such an app does; there is no batching.

It speaks the subset of the KServe v2 protocol that `tailcut loadgen` uses:
  GET  /v2/health/live, /v2/health/ready, /v2                 -> {"live": true} / {"ready": true} / server info
  GET  /v2/models/<name>[/versions/1]                          -> metadata: name, versions, platform,
       inputs/outputs [{name, datatype ("FP32", ...), shape (-1 for a dynamic dimension)}]
  GET  /v2/models/<name>/ready                                 -> {"name", "ready": true}
  POST /v2/models/<name>[/versions/1]/infer                    -> {"model_name", "model_version",
       "outputs": [{name, datatype, shape, data}]}
Request tensors are JSON (inputs[].name/shape/datatype/data, data flat or nested) or use the binary
tensor extension: header Inference-Header-Content-Length: N, the first N body bytes are the JSON
header, and each input with parameters.binary_data_size takes that many raw little-endian bytes
(row-major) from what follows, in the order of "inputs". An output is returned binary when its
request entry has parameters.binary_data true (or the request has parameters.binary_data_output
true): its JSON entry then carries parameters.binary_data_size instead of data, the raw bytes follow
the JSON header in the body, the response has Inference-Header-Content-Length and Content-Type
application/octet-stream. A request naming "outputs" gets only those. BYTES tensors are not
supported. Errors answer {"error": message} with status 400 (404 for an unknown model, version or
path, 405 for a wrong method, 500 for anything unexpected).

usage: python bench/baselines/flask_ort.py --model MODEL.onnx [--name NAME] [--port 8000]
                                           [--host 127.0.0.1] [--threads N] [--access-log]
Needs flask, numpy and onnxruntime (tools/requirements.txt: `make venv`, then .venv/bin/python).
Werkzeug's per-request access log is off unless --access-log is given (it would cost the baseline).
"""

import argparse
import json
import logging
import os
import sys

import numpy as np
import onnxruntime as ort
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

# ONNX Runtime type strings <-> KServe v2 datatypes <-> numpy.
ORT_TO_KSERVE = {"tensor(float)": "FP32", "tensor(double)": "FP64", "tensor(float16)": "FP16",
                 "tensor(int8)": "INT8", "tensor(int16)": "INT16", "tensor(int32)": "INT32",
                 "tensor(int64)": "INT64", "tensor(uint8)": "UINT8", "tensor(uint16)": "UINT16",
                 "tensor(uint32)": "UINT32", "tensor(uint64)": "UINT64", "tensor(bool)": "BOOL",
                 "tensor(string)": "BYTES", "tensor(bfloat16)": "BF16"}
KSERVE_TO_NUMPY = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT8": np.int8,
                   "INT16": np.int16, "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8,
                   "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64, "BOOL": np.bool_}
NUMPY_TO_KSERVE = {np.dtype(v).str: k for k, v in KSERVE_TO_NUMPY.items()}


class BadRequest(Exception):
    """A client error: answered {"error": str(e)} with self.status."""

    def __init__(self, msg, status=400):
        super().__init__(msg)
        self.status = status


def json_response(obj, status=200):
    return Response(json.dumps(obj, separators=(",", ":")), status=status, mimetype="application/json")


def error(msg, status=400):
    return json_response({"error": msg}, status)


def io_meta(arg):
    shape = [d if isinstance(d, int) and d >= 0 else -1 for d in (arg.shape or [])]
    return {"name": arg.name, "datatype": ORT_TO_KSERVE.get(arg.type, arg.type), "shape": shape}


def check_shape(shape, name):
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                              for d in shape):
        raise BadRequest(f"input '{name}': 'shape' missing or not an array of non-negative integers")
    count = 1
    for d in shape:
        count *= d
    return count


def decode_input(entry, meta, binary, offset):
    """Returns (numpy array, new offset into binary) for one request input entry."""
    name = meta["name"]
    dt = entry.get("datatype")
    if not isinstance(dt, str):
        raise BadRequest(f"input '{name}': 'datatype' missing or not a string")
    if dt != meta["datatype"]:
        raise BadRequest(f"input '{name}': datatype '{dt}' does not match the model's {meta['datatype']}")
    np_dt = KSERVE_TO_NUMPY.get(dt)
    if np_dt is None:
        raise BadRequest(f"input '{name}': datatype {dt} is not supported")
    shape = entry.get("shape")
    count = check_shape(shape, name)
    want = meta["shape"]
    if len(shape) != len(want):
        raise BadRequest(f"input '{name}': shape has rank {len(shape)}, the model expects {len(want)}")
    for d, (got, exp) in enumerate(zip(shape, want)):
        if exp >= 0 and got != exp:
            raise BadRequest(f"input '{name}': shape[{d}] is {got}, the model expects {exp}")
    params = entry.get("parameters") or {}
    if not isinstance(params, dict):
        raise BadRequest(f"input '{name}': 'parameters' must be an object")
    size = params.get("binary_data_size")
    if size is not None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise BadRequest(f"input '{name}': parameters.binary_data_size must be a non-negative integer")
        if binary is None:
            raise BadRequest(f"input '{name}': binary_data_size given without Inference-Header-Content-Length")
        if "data" in entry:
            raise BadRequest(f"input '{name}': both 'data' and parameters.binary_data_size given")
        nbytes = count * np.dtype(np_dt).itemsize
        if size != nbytes:
            raise BadRequest(f"input '{name}': binary_data_size is {size}, shape {shape} of {dt} needs {nbytes}")
        if offset + size > len(binary):
            raise BadRequest(f"input '{name}': the body holds {len(binary) - offset} binary bytes, "
                             f"binary_data_size is {size}")
        arr = np.frombuffer(binary, dtype=np.dtype(np_dt).newbyteorder("<"), count=count, offset=offset)
        return arr.reshape(shape), offset + size
    data = entry.get("data")
    if not isinstance(data, list):
        raise BadRequest(f"input '{name}': 'data' missing or not an array")
    try:
        arr = np.asarray(data, dtype=np_dt)
    except (TypeError, ValueError, OverflowError) as e:
        raise BadRequest(f"input '{name}': a value in 'data' does not fit datatype {dt} ({e})")
    if arr.size != count:
        raise BadRequest(f"input '{name}': shape holds {count} elements but 'data' has {arr.size}")
    return arr.reshape(shape), offset


def create_app(session, model_name):
    app = Flask(__name__)
    inputs = [io_meta(a) for a in session.get_inputs()]
    outputs = [io_meta(a) for a in session.get_outputs()]
    in_by_name = {m["name"]: m for m in inputs}
    out_names = [m["name"] for m in outputs]
    metadata = {"name": model_name, "versions": ["1"], "platform": "onnxruntime_onnx",
                "inputs": inputs, "outputs": outputs}

    def check_model(name, version):
        if name != model_name:
            raise BadRequest(f"unknown model '{name}'", 404)
        if version is not None and version != "1":
            raise BadRequest("unknown model version", 404)

    @app.errorhandler(BadRequest)
    def on_bad_request(e):
        return error(str(e), e.status)

    @app.errorhandler(404)
    def on_404(_e):
        return error("not found", 404)

    @app.errorhandler(405)
    def on_405(_e):
        return error("method not allowed", 405)

    @app.errorhandler(Exception)
    def on_other(e):
        if isinstance(e, HTTPException):
            return error(e.description or e.name, e.code or 500)
        app.logger.exception("unexpected error")
        return error(f"internal error: {type(e).__name__}: {e}", 500)

    @app.route("/v2/health/live")
    def live():
        return json_response({"live": True})

    @app.route("/v2/health/ready")
    def ready():
        return json_response({"ready": True})

    @app.route("/v2")
    def server_meta():
        return json_response({"name": "flask_ort", "version": ort.__version__, "extensions": ["binary_tensor_data"]})

    @app.route("/v2/models/<name>")
    @app.route("/v2/models/<name>/versions/<version>")
    def model_meta(name, version=None):
        check_model(name, version)
        return json_response(metadata)

    @app.route("/v2/models/<name>/ready")
    @app.route("/v2/models/<name>/versions/<version>/ready")
    def model_ready(name, version=None):
        check_model(name, version)
        return json_response({"name": model_name, "ready": True})

    @app.route("/v2/models/<name>/infer", methods=["POST"])
    @app.route("/v2/models/<name>/versions/<version>/infer", methods=["POST"])
    def infer(name, version=None):
        check_model(name, version)
        body = request.get_data(cache=False)
        hdr_len = request.headers.get("Inference-Header-Content-Length")
        binary = None
        if hdr_len is not None:
            try:
                n = int(hdr_len)
            except ValueError:
                raise BadRequest("Inference-Header-Content-Length is not an integer")
            if n < 0 or n > len(body):
                raise BadRequest(f"Inference-Header-Content-Length {n} outside the body of {len(body)} bytes")
            head, binary = body[:n], memoryview(body)[n:]
        else:
            head = body
        try:
            req = json.loads(head)
        except (ValueError, UnicodeDecodeError):
            raise BadRequest("malformed JSON in request body")
        if not isinstance(req, dict):
            raise BadRequest("request body must be a JSON object")
        req_inputs = req.get("inputs")
        if not isinstance(req_inputs, list):
            raise BadRequest("field 'inputs' missing or not an array")
        feeds = {}
        offset = 0
        for i, entry in enumerate(req_inputs):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise BadRequest(f"inputs[{i}]: 'name' missing or not a string")
            meta = in_by_name.get(entry["name"])
            if meta is None:
                raise BadRequest(f"inputs[{i}]: model '{model_name}' has no input named '{entry['name'][:200]}'")
            if meta["name"] in feeds:
                raise BadRequest(f"input '{meta['name']}' given twice")
            feeds[meta["name"]], offset = decode_input(entry, meta, binary, offset)
        for m in inputs:
            if m["name"] not in feeds:
                raise BadRequest(f"input '{m['name']}' is missing")
        if binary is not None and offset != len(binary):
            raise BadRequest(f"{len(binary) - offset} binary bytes after the last input")
        rparams = req.get("parameters") or {}
        all_binary = isinstance(rparams, dict) and rparams.get("binary_data_output") is True
        req_outputs = req.get("outputs")
        wanted = {}  # name -> binary?
        if req_outputs is None:
            wanted = {n: all_binary for n in out_names}
        else:
            if not isinstance(req_outputs, list):
                raise BadRequest("field 'outputs' must be an array")
            for i, o in enumerate(req_outputs):
                if not isinstance(o, dict) or not isinstance(o.get("name"), str):
                    raise BadRequest(f"outputs[{i}]: 'name' missing or not a string")
                if o["name"] not in out_names:
                    raise BadRequest(f"outputs[{i}]: model '{model_name}' has no output named '{o['name'][:200]}'")
                p = o.get("parameters") or {}
                wanted[o["name"]] = (p.get("binary_data") is True) if isinstance(p, dict) and "binary_data" in p \
                    else all_binary
        names = [n for n in out_names if n in wanted]
        try:
            results = session.run(names, feeds)
        except Exception as e:  # onnxruntime raises its own exception types for bad shapes/values
            raise BadRequest(f"inference failed: {e}")
        out_json, chunks = [], []
        for n, arr in zip(names, results):
            arr = np.asarray(arr)
            dt = NUMPY_TO_KSERVE.get(arr.dtype.str) or NUMPY_TO_KSERVE.get(arr.dtype.newbyteorder("<").str)
            if dt is None:
                raise BadRequest(f"output '{n}': datatype {arr.dtype} is not supported")
            o = {"name": n, "datatype": dt, "shape": list(arr.shape)}
            if wanted[n]:
                raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
                o["parameters"] = {"binary_data_size": len(raw)}
                chunks.append(raw)
            else:
                o["data"] = arr.reshape(-1).tolist()
            out_json.append(o)
        resp = {"model_name": model_name, "model_version": "1", "outputs": out_json}
        text = json.dumps(resp, separators=(",", ":")).encode()
        if not chunks:
            return Response(text, status=200, mimetype="application/json")
        r = Response(b"".join([text, *chunks]), status=200, mimetype="application/octet-stream")
        r.headers["Inference-Header-Content-Length"] = str(len(text))
        return r

    return app


def main(argv=None):
    ap = argparse.ArgumentParser(description="Flask + onnxruntime KServe v2 baseline server")
    ap.add_argument("--model", required=True, help="the .onnx file")
    ap.add_argument("--name", help="model name in the URLs (default: the file name without .onnx)")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--threads", type=int, default=0, help="intra_op_num_threads (default 0: onnxruntime decides)")
    ap.add_argument("--access-log", action="store_true", help="keep Werkzeug's per-request log lines")
    a = ap.parse_args(argv)
    name = a.name or os.path.splitext(os.path.basename(a.model))[0]
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(a.model, sess_options=so, providers=["CPUExecutionProvider"])
    except Exception as e:
        print(f"flask_ort: cannot load {a.model}: {e}", file=sys.stderr)
        return 1
    if not a.access_log:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_app(session, name)
    print(f"flask_ort: model '{name}' ({a.model}), onnxruntime {ort.__version__}, intra_op {a.threads}, "
          f"listening on {a.host}:{a.port}", file=sys.stderr, flush=True)
    app.run(host=a.host, port=a.port, threaded=True, debug=False, use_reloader=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
