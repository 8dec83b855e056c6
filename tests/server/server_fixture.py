"""server_fixture.py - what the server test scripts share: a free loopback port, a model repository holding a tiny
generated ResNet with its config.json, a `tailcut serve` process started on 127.0.0.1 and waited on until ready, and
a check for sanitizer reports in captured output."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

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


def start_server(tailcut, repo, port, extra=()):
    """Starts `tailcut serve` on 127.0.0.1:port; returns (process, log file) once /v2/health/ready answers 200."""
    log = tempfile.TemporaryFile()
    p = subprocess.Popen([tailcut, "serve", "--model-repository", repo, "--http-port", str(port),
                          "--http-address", "127.0.0.1", "--threads", "2", *extra],
                         stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 40
    while time.time() < deadline:
        if p.poll() is not None:
            break
        try:
            if http_status(port, "/v2/health/ready") == 200:
                return p, log
        except OSError:
            pass
        time.sleep(0.1)
    log.seek(0)
    raise RuntimeError("server did not become ready:\n" + log.read().decode(errors="replace"))


def sanitizer_clean(text):
    return "ERROR: AddressSanitizer" not in text and "runtime error" not in text and "LeakSanitizer" not in text
