"""server_fixture.py - what the server test scripts share: a free loopback port, a model repository holding a tiny
generated ResNet with its config.json, a `tailcut serve` process started on 127.0.0.1 and waited on until ready, a check for sanitizer reports in captured
output, raw HTTP, KServe binary-tensor request building and response parsing, and /metrics reading."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_status(port, path, timeout=2):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def make_repo(tmp):
    """Writes tmp/repo/rn/{config.json, 1/model.onnx}; returns the model's version folder."""
    model_dir = os.path.join(tmp, "repo", "rn", "1")
    os.makedirs(model_dir)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "modelgen", "modelgen.py"), "resnet50",
                    "--width-div", "16", "--blocks", "1,1,1,1", "--image", "32",
                    "-o", os.path.join(model_dir, "model.onnx")], check=True, timeout=60)
    with open(os.path.join(tmp, "repo", "rn", "config.json"), "w") as f:
        json.dump({"max_batch_size": 4,
                   "input": [{"name": "input", "data_type": "TYPE_FP32", "dims": [3, 32, 32]}],
                   "output": [{"name": "logits", "data_type": "TYPE_FP32", "dims": [1000]}]}, f)
    return model_dir


def start_server(tailcut, repo, port, extra=(), wait="/v2/health/ready"):
    """Starts `tailcut serve` on 127.0.0.1:port; returns (process, log file) once `wait` (/v2/health/ready; use
    /v2/health/live for a repository with broken models) answers 200."""
    log = tempfile.TemporaryFile()
    p = subprocess.Popen([tailcut, "serve", "--model-repository", repo, "--http-port", str(port),
                          "--http-address", "127.0.0.1", "--threads", "2", *extra],
                         stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 40
    while time.time() < deadline:
        if p.poll() is not None:
            break
        try:
            if http_status(port, wait) == 200:
                return p, log
        except OSError:
            pass
        time.sleep(0.1)
    if p.poll() is None:  # still starting (or hung): do not leave it running
        p.kill()
        p.wait()
    log.seek(0)
    raise RuntimeError("server did not become ready:\n" + log.read().decode(errors="replace"))


def sanitizer_clean(text):
    return "ERROR: AddressSanitizer" not in text and "runtime error" not in text and "LeakSanitizer" not in text


def http_raw(port, path, body=None, headers=None, method=None, timeout=30):
    """Returns (status, response headers, raw body bytes)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def parse_raw_response(out):
    """(status, header dict with lower-case names, body) of the first HTTP response in the bytes out; (None, {}, out)
    when out does not start with a status line."""
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return None, {}, out
    hdrs = {k.strip().lower(): v.strip() for k, _, v in (ln.decode(errors="replace").partition(":") for ln in lines[1:])}
    return status, hdrs, body


KSERVE_DTYPES = {"FP32": "<f4", "FP64": "<f8", "INT32": "<i4", "INT64": "<i8", "UINT8": "u1", "INT8": "i1",
                 "BOOL": "u1", "FP16": "<f2"}


def binary_infer_body(inputs, outputs=None, binary_outputs=True, extra=None):
    """KServe binary tensor request: inputs = [(name, array, datatype)], outputs = names. Returns (body, headers)."""
    header = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": dt,
                          "parameters": {"binary_data_size": a.nbytes}} for n, a, dt in inputs]}
    if outputs is not None:
        header["outputs"] = [{"name": o, "parameters": {"binary_data": binary_outputs}} for o in outputs]
    if extra:
        header.update(extra)
    js = json.dumps(header).encode()
    body = js + b"".join(np.ascontiguousarray(a).astype(KSERVE_DTYPES[dt]).tobytes() for _, a, dt in inputs)
    return body, {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(js))}


def parse_infer_response(headers, raw):
    """Returns {output name: array} from a JSON or binary KServe response (raises on malformed)."""
    hl = headers.get("Inference-Header-Content-Length")
    js = json.loads(raw[:int(hl)] if hl is not None else raw)
    pos = int(hl) if hl is not None else 0
    out = {}
    for o in js["outputs"]:
        size = o.get("parameters", {}).get("binary_data_size")
        if size is not None:
            a = np.frombuffer(raw[pos:pos + size], dtype=KSERVE_DTYPES[o["datatype"]]).reshape(o["shape"])
            pos += size
        else:
            a = np.array(o["data"], dtype=KSERVE_DTYPES[o["datatype"]]).reshape(o["shape"])
        out[o["name"]] = a
    if pos != len(raw) and hl is not None:
        raise ValueError(f"{len(raw) - pos} trailing bytes")
    return out


def read_metrics(port):
    """Returns {sample name with labels: value} from /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    vals = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            vals[k] = float(v)
    return vals


class Checks:
    """PASS / FAIL / SKIP lines and their counts, shared by the server test scripts: check(name, cond, detail),
    check.skip(name, why), and check.summary() which prints the time and the counts and returns the exit status."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.t_start = time.time()

    def __call__(self, name, cond, detail=""):
        if cond:
            self.passed += 1
            print(f"PASS {name}")
        else:
            self.failed += 1
            print(f"FAIL {name} {detail}")

    def skip(self, name, why):
        self.skipped += 1
        print(f"SKIP {name}: {why}")

    def summary(self, show_skipped=False):
        print(f"time {time.time() - self.t_start:.1f}s")
        print(f"{self.passed} passed, {self.failed} failed" + (f", {self.skipped} skipped" if show_skipped else ""))
        return 1 if self.failed else 0


def stop_server(server):
    """Kills a server the test did not stop itself (None: nothing to do)."""
    if server is not None:
        server.kill()
        server.wait()
