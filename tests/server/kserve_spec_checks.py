"""kserve_spec_checks.py - `tailcut serve` against the KServe v2 (Open Inference Protocol) REST spec's required API:
the JSON shapes of the health, server metadata, model metadata, model ready, inference and error responses (JSON
schemas transcribed from the spec's $server_metadata_response, $metadata_tensor, $inference_response,
$response_output and $inference_error_response; kserve/kserve docs/predict-api/v2/required_api.md, "HTTP/REST"),
their status codes, the binary tensor data extension's headers, and the tensor data forms the spec allows (nested or
flattened row-major). Used by test_clients.py; `expect(x)` computes the model's output with onnxruntime.
A server that is not ready answers /v2/health/ready with 400, as the spec says ("a 4xx status code indicates false")
and Triton does; repo_checks.py checks it (a repository with an UNAVAILABLE model)."""
import json

import jsonschema
import numpy as np

from server_fixture import binary_infer_body, http_raw, parse_infer_response

# The spec's datatypes (BF16 is in the newer Open Inference Protocol text).
DATATYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "FP32", "FP64",
             "BYTES", "BF16"]
_TENSOR_META = {"type": "object", "required": ["name", "datatype", "shape"],
                "properties": {"name": {"type": "string"}, "datatype": {"enum": DATATYPES},
                               "shape": {"type": "array", "items": {"type": "integer"}},
                               "parameters": {"type": "object"}}}
SERVER_METADATA = {"type": "object", "required": ["name", "version", "extensions"],
                   "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                                  "extensions": {"type": "array", "items": {"type": "string"}}}}
MODEL_METADATA = {"type": "object", "required": ["name", "platform", "inputs", "outputs"],
                  "properties": {"name": {"type": "string"},
                                 "versions": {"type": "array", "items": {"type": "string"}},
                                 "platform": {"type": "string"},
                                 "inputs": {"type": "array", "items": _TENSOR_META},
                                 "outputs": {"type": "array", "items": _TENSOR_META},
                                 "parameters": {"type": "object"}}}
_RESPONSE_OUTPUT = {"type": "object", "required": ["name", "shape", "datatype"],
                    "properties": {"name": {"type": "string"},
                                   "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                                   "datatype": {"enum": DATATYPES}, "parameters": {"type": "object"},
                                   "data": {"type": "array"}},
                    # data, unless the binary extension carries the tensor (parameters.binary_data_size)
                    "anyOf": [{"required": ["data"]},
                              {"required": ["parameters"],
                               "properties": {"parameters": {"required": ["binary_data_size"]}}}]}
INFER_RESPONSE = {"type": "object", "required": ["model_name", "outputs"],
                  "properties": {"model_name": {"type": "string"}, "model_version": {"type": "string"},
                                 "id": {"type": "string"}, "parameters": {"type": "object"},
                                 "outputs": {"type": "array", "items": _RESPONSE_OUTPUT}}}
ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string", "minLength": 1}}}


def conforms(obj, schema):
    try:
        jsonschema.validate(obj, schema)
        return ""
    except jsonschema.ValidationError as e:
        return e.message


def get_json(port, path, body=None, headers=None):
    st, h, raw = http_raw(port, path, body, headers or ({"Content-Type": "application/json"} if body else {}))
    try:
        return st, h, json.loads(raw) if raw else None
    except ValueError:
        return st, h, raw


def spec_checks(check, port, model, in_name, out_name, in_shape, expect):
    """in_shape: one request's input shape (batch first); expect(x) -> the expected output for input x."""
    for path in ("/v2/health/live", "/v2/health/ready", f"/v2/models/{model}/ready",
                 f"/v2/models/{model}/versions/1/ready"):
        st, _, body = get_json(port, path)
        # "A 200 status code indicates true"; the body "should be empty" (tailcut sends {"live"/"ready": true})
        check(f"spec: GET {path} -> 200", st == 200 and (body is None or isinstance(body, dict)), f"{st} {body}")
    st, h, body = get_json(port, "/v2")
    check("spec: server metadata ($server_metadata_response), application/json",
          st == 200 and not conforms(body, SERVER_METADATA) and "application/json" in h.get("Content-Type", ""),
          f"{st} {conforms(body, SERVER_METADATA) if isinstance(body, dict) else body}")
    for path in (f"/v2/models/{model}", f"/v2/models/{model}/versions/1"):
        st, _, body = get_json(port, path)
        err = conforms(body, MODEL_METADATA) if isinstance(body, dict) else "not JSON"
        check(f"spec: GET {path} ($model_metadata_response)", st == 200 and not err and body["name"] == model and
              [t["name"] for t in body["inputs"]] == [in_name] and [t["name"] for t in body["outputs"]] == [out_name],
              f"{st} {err}")
    for path in ("/v2/models/no_such_model", "/v2/models/no_such_model/ready"):
        st, _, body = get_json(port, path)
        check(f"spec: GET {path} -> 4xx with $metadata_model_error_response", 400 <= st < 500 and
              isinstance(body, dict) and not conforms(body, ERROR), f"{st} {body}")
    rng = np.random.default_rng(7)
    x = rng.standard_normal(in_shape).astype(np.float32)
    want = expect(x)
    req = {"id": "spec-1", "inputs": [{"name": in_name, "shape": list(x.shape), "datatype": "FP32",
                                       "data": x.ravel().tolist()}],
           "outputs": [{"name": out_name}]}
    path = f"/v2/models/{model}/infer"
    st, h, body = get_json(port, path, json.dumps(req).encode())
    err = conforms(body, INFER_RESPONSE) if isinstance(body, dict) else "not JSON"
    ok = st == 200 and not err
    got = np.array(body["outputs"][0]["data"], np.float32).reshape(body["outputs"][0]["shape"]) if ok else None
    check("spec: JSON inference ($inference_response): model_name, id echoed, outputs' shape/datatype/data",
          ok and body["model_name"] == model and body.get("id") == "spec-1" and
          body["outputs"][0]["name"] == out_name and body["outputs"][0]["datatype"] == "FP32" and
          list(got.shape) == list(want.shape) and np.allclose(got, want, rtol=1e-3, atol=1e-4) and
          "application/json" in h.get("Content-Type", ""), f"{st} {err}")
    nested = dict(req, inputs=[dict(req["inputs"][0], data=x.tolist())])
    st, _, body = get_json(port, path, json.dumps(nested).encode())
    check("spec: tensor data in its non-flattened (nested) form gives the same answer", st == 200 and np.allclose(
        np.array(body["outputs"][0]["data"], np.float32).reshape(want.shape), want, rtol=1e-3, atol=1e-4), f"{st}")
    st, _, body = get_json(port, f"/v2/models/{model}/versions/1/infer", json.dumps(req).encode())
    check("spec: POST /v2/models/<m>/versions/1/infer", st == 200 and not conforms(body, INFER_RESPONSE), f"{st}")
    bbody, bh = binary_infer_body([(in_name, x, "FP32")], [out_name])
    st, h, raw = http_raw(port, path, bbody, bh)
    hl = h.get("Inference-Header-Content-Length")
    ok = st == 200 and hl is not None and h.get("Content-Type", "").startswith("application/octet-stream")
    hdr = json.loads(raw[:int(hl)]) if ok else {}
    ok = ok and not conforms(hdr, INFER_RESPONSE) and hdr["outputs"][0]["parameters"]["binary_data_size"] == want.nbytes
    check("spec (binary tensor extension): Inference-Header-Content-Length, octet-stream, binary_data_size",
          ok and np.allclose(parse_infer_response(h, raw)[out_name], want, rtol=1e-3, atol=1e-4), f"{st} {hl}")
    bad = [("malformed JSON", b"{\"inputs\": [", 400),
           ("no inputs", json.dumps({"outputs": []}).encode(), 400),
           ("unknown input name", json.dumps({"inputs": [dict(req["inputs"][0], name="nope")]}).encode(), 400),
           ("datatype not the model's", json.dumps({"inputs": [dict(req["inputs"][0], datatype="INT32",
                                                                   data=[1] * x.size)]}).encode(), 400),
           ("shape not the model's", json.dumps({"inputs": [dict(req["inputs"][0], shape=[x.size],)]}).encode(), 400),
           ("data count != shape", json.dumps({"inputs": [dict(req["inputs"][0], data=[0.5] * (x.size - 1))]}).encode(),
            400),
           ("unknown requested output", json.dumps(dict(req, outputs=[{"name": "nope"}])).encode(), 400)]
    for what, b, want_st in bad:
        st, _, body = get_json(port, path, b)
        check(f"spec: {what} -> {want_st} with $inference_error_response", st == want_st and isinstance(body, dict) and
              not conforms(body, ERROR), f"{st} {body}")
    st, _, body = get_json(port, "/v2/models/no_such_model/infer", json.dumps(req).encode())
    check("spec: inference on an unknown model -> 4xx with $inference_error_response",
          400 <= st < 500 and isinstance(body, dict) and not conforms(body, ERROR), f"{st} {body}")
