"""repo_checks.py - issue 27 defect 6, called by test_server.py: one broken model does not stop the server.

A repository holds a healthy model beside broken ones (corrupt model.onnx, config.json that is not JSON, no version
folder, a corrupt plan with no model.onnx, a folder whose name no URL can carry) and two whose cached plan is corrupt or
older than model.onnx beside it (rebuilt at start). The server starts, the healthy and rebuilt models infer correctly,
the broken ones are UNAVAILABLE with their reason (model ready / metadata / infer answer 400 with it, one log line each,
POST /v2/repository/index lists states and reasons), /v2/health/ready follows strict readiness; Triton's model control
loads a model fixed on disk, refuses a still-broken one with its reason, reloads a loaded one while requests run without
failing any, and unloads (drain, then not ready and inference refused). Also: --strict-readiness false, a repository
of broken models only still starts, bad config.json files each give their reason, an unreadable repository exits 1."""
import json
import os
import shutil
import subprocess
import threading
import time

import numpy as np

from server_fixture import free_port, http_raw, start_server, stop_server


def _http(port, path, body=None, method=None):
    """Returns (status, parsed JSON body or None)."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    st, _, raw = http_raw(port, path, data, {"Content-Type": "application/json"}, method=method)
    try:
        return st, json.loads(raw)
    except ValueError:
        return st, None


def _infer(port, model, x):
    req = {"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}
    return _http(port, f"/v2/models/{model}/infer", req)


def _close(res, y):
    try:
        out = np.array(res["outputs"][0]["data"], np.float32).reshape(y.shape)
        return float(np.max(np.abs(out - y))) <= 1e-4
    except (KeyError, TypeError, ValueError, IndexError):
        return False


CONFIG = {"max_batch_size": 4, "input": [{"name": "input", "data_type": "TYPE_FP32", "dims": [3, 32, 32]}],
          "output": [{"name": "logits", "data_type": "TYPE_FP32", "dims": [1000]}], "tailcut": {"tactics": "fixed"}}


def _model(repo, name, config=CONFIG, files=()):
    """Writes repo/name/config.json (a dict, or raw text) and files [(name in 1/, source path or bytes)] in order."""
    os.makedirs(os.path.join(repo, name), exist_ok=True)
    with open(os.path.join(repo, name, "config.json"), "w") as f:
        f.write(config if isinstance(config, str) else json.dumps(config))
    for fname, src in files:
        os.makedirs(os.path.join(repo, name, "1"), exist_ok=True)
        dst = os.path.join(repo, name, "1", fname)
        if isinstance(src, bytes):
            with open(dst, "wb") as f:
                f.write(src)
        else:
            shutil.copyfile(src, dst)


def _log(log):
    log.seek(0)
    return log.read().decode(errors="replace")


def repository_checks(check, tailcut, tmp, onnx, plan, x, y):
    repo = os.path.join(tmp, "repo_mixed")
    _model(repo, "good", files=[("model.plan", plan)])
    _model(repo, "bad_onnx", files=[("model.onnx", b"\x08\x07garbage, not a protobuf" * 10)])
    _model(repo, "bad_config", config='{"max_batch_size": 4,', files=[("model.plan", plan)])
    _model(repo, "no_version")
    _model(repo, "bad_plan", files=[("model.plan", b"TCPLAN\x00\x01 truncated")])
    _model(repo, "bad name!", files=[("model.plan", plan)])
    # a corrupt cached plan beside model.onnx: rebuilt
    _model(repo, "corrupt_cache", files=[("model.onnx", onnx), ("model.plan", b"not a plan at all" * 100)])
    # a cached plan older than model.onnx beside it: rebuilt
    _model(repo, "stale_cache", files=[("model.plan", plan), ("model.onnx", onnx)])
    st_plan = os.path.join(repo, "stale_cache", "1", "model.plan")
    os.utime(st_plan, (time.time() - 3600, time.time() - 3600))
    stale_mtime = os.stat(st_plan).st_mtime
    port = free_port()
    try:
        server, log = start_server(tailcut, repo, port, wait="/v2/health/live")
    except RuntimeError as e:
        check("repository with broken models: the server starts", False, str(e)[-1500:])
        return
    try:
        check("repository with broken models: the server starts (live 200)", _http(port, "/v2/health/live")[0] == 200)
        st, res = _infer(port, "good", x)
        check("healthy model beside broken ones infers correctly", st == 200 and _close(res, y), f"{st} {str(res)[:200]}")
        text = _log(log)
        st, res = _infer(port, "corrupt_cache", x)
        check("corrupt cached plan rebuilt from model.onnx: READY, infers correctly", st == 200 and _close(res, y),
              f"{st} {str(res)[:200]}")
        check("corrupt cached plan: a log line says it is rebuilt",
              "model 'corrupt_cache': cannot use the cached" in text and "rebuilding" in text, text[-2000:])
        r = subprocess.run([tailcut, "inspect", os.path.join(repo, "corrupt_cache", "1", "model.plan")],
                           capture_output=True, text=True, timeout=60)
        check("corrupt cached plan: replaced on disk by a valid one", r.returncode == 0, r.stderr[-500:])
        st, res = _infer(port, "stale_cache", x)
        check("stale cached plan (older than model.onnx) rebuilt: READY, infers correctly",
              st == 200 and _close(res, y), f"{st} {str(res)[:200]}")
        check("stale cached plan: a log line says so and the plan is rewritten",
              "model 'stale_cache':" in text and "older than model.onnx" in text and
              os.stat(st_plan).st_mtime > stale_mtime, text[-2000:])
        broken = {"bad_onnx": "model.onnx", "bad_config": "config.json", "no_version": "neither 1/model.plan nor",
                  "bad_plan": "model.plan"}
        for name, word in broken.items():
            st, body = _http(port, f"/v2/models/{name}/ready")
            err = (body or {}).get("error", "")
            check(f"{name}: ready -> 400, ready false, with the reason",
                  st == 400 and body.get("ready") is False and word in err and "UNAVAILABLE" in err, f"{st} {body}")
            st, body = _http(port, f"/v2/models/{name}")
            check(f"{name}: metadata -> 400 error JSON with the reason", st == 400 and word in (body or {}).get("error", ""),
                  f"{st} {body}")
            st, body = _infer(port, name, x)
            check(f"{name}: infer refused (400, not ready)", st == 400 and "not ready" in (body or {}).get("error", ""),
                  f"{st} {body}")
            check(f"{name}: one log line naming the model and reason",
                  sum(1 for ln in text.splitlines() if f"model '{name}' is UNAVAILABLE:" in ln and word in ln) == 1,
                  text[-2000:])
        check("a folder name no URL can carry: skipped with a log line",
              "bad name!: skipped: model names may only use" in text, text[-2000:])
        st, idx = _http(port, "/v2/repository/index", b"", method="POST")
        by = {e.get("name"): e for e in idx} if isinstance(idx, list) else {}
        ok = (st == 200 and set(by) == {"good", "corrupt_cache", "stale_cache", *broken}
              and all(by[n]["state"] == "READY" and by[n]["version"] == "1" for n in ("good", "corrupt_cache", "stale_cache"))
              and all(by[n]["state"] == "UNAVAILABLE" and w in by[n]["reason"] for n, w in broken.items()))
        check("POST /v2/repository/index lists every model with state and reason", ok, f"{st} {idx}")
        st, idx = _http(port, "/v2/repository/index", {"ready": True}, method="POST")
        ok = st == 200 and sorted(e["name"] for e in idx) == ["corrupt_cache", "good", "stale_cache"]
        check("index {\"ready\": true} lists only READY models", ok, f"{st} {idx}")
        st, body = _http(port, "/v2/health/ready")
        check("strict readiness: /v2/health/ready 400 (KServe v2: 4xx, as Triton) while a model is UNAVAILABLE",
              st == 400 and body == {"ready": False}, f"{st} {body}")
        check("GET /v2/repository/index -> 405", _http(port, "/v2/repository/index")[0] == 405)
        st, meta = _http(port, "/v2")
        check("server metadata lists the model_repository extension",
              "model_repository" in (meta or {}).get("extensions", []), f"{st} {meta}")

        # Model control: fix on disk, then load.
        _model(repo, "bad_config", config=CONFIG)
        st, body = _http(port, "/v2/repository/models/bad_config/load", b"", method="POST")
        check("fixed config.json: load -> 200", st == 200, f"{st} {body}")
        st, res = _infer(port, "bad_config", x)
        check("fixed config.json: ready and infers correctly",
              _http(port, "/v2/models/bad_config/ready")[0] == 200 and st == 200 and _close(res, y), f"{st}")
        _model(repo, "no_version", files=[("model.plan", plan)])
        st, body = _http(port, "/v2/repository/models/no_version/load", {}, method="POST")
        st2, res = _infer(port, "no_version", x)
        check("version folder added: load -> 200, infers", st == 200 and st2 == 200 and _close(res, y), f"{st} {body}")
        st, body = _http(port, "/v2/repository/models/bad_onnx/load", b"", method="POST")
        check("still broken: load -> 400 with the reason", st == 400 and "model.onnx" in (body or {}).get("error", ""),
              f"{st} {body}")
        check("still broken: stays UNAVAILABLE", _http(port, "/v2/models/bad_onnx/ready")[0] == 400)
        st, body = _http(port, "/v2/repository/models/nothere/load", b"", method="POST")
        check("load of a model not in the repository -> 400", st == 400 and "nothere" in (body or {}).get("error", ""),
              f"{st} {body}")
        st, body = _http(port, "/v2/repository/models/good/load", {"parameters": {"config": "{}"}}, method="POST")
        check("load with config overrides -> 400 (not supported)", st == 400, f"{st} {body}")

        # Reload a loaded model while requests run: none fails, the server does not crash.
        results, stop = [], threading.Event()

        def client():
            while not stop.is_set():
                results.append(_infer(port, "good", x))
        threads = [threading.Thread(target=client) for _ in range(3)]
        for t in threads:
            t.start()
        reloads = []
        for _ in range(3):
            time.sleep(0.3)
            reloads.append(_http(port, "/v2/repository/models/good/load", b"", method="POST")[0])
        time.sleep(0.3)
        stop.set()
        for t in threads:
            t.join(60)
        bad = [r for r in results if r[0] != 200 or not _close(r[1], y)]
        check("reload while requests run: every reload 200, no request fails",
              reloads == [200] * 3 and results and not bad, f"reloads={reloads} n={len(results)} bad={bad[:2]}")

        # Unload: drains, then not ready and refused; broken models unloaded no longer block readiness.
        results.clear()
        stop.clear()
        threads = [threading.Thread(target=client) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        st, body = _http(port, "/v2/repository/models/good/unload", {"parameters": {"unload_dependents": False}},
                         method="POST")  # what tritonclient sends
        stop.set()
        for t in threads:
            t.join(60)
        check("unload -> 200", st == 200, f"{st} {body}")
        odd = [r for r in results if not (r[0] == 200 and _close(r[1], y)) and
               not (r[0] == 400 and "not ready" in (r[1] or {}).get("error", ""))]
        check("unload while requests run: each answered correctly or refused as not ready", not odd, str(odd[:2]))
        st, body = _http(port, "/v2/models/good/ready")
        check("unloaded: ready -> 400", st == 400 and "unloaded" in (body or {}).get("error", ""), f"{st} {body}")
        st, body = _infer(port, "good", x)
        check("unloaded: inference refused with a clear error",
              st == 400 and "not ready" in body.get("error", "") and "unloaded" in body.get("error", ""), f"{st} {body}")
        st, idx = _http(port, "/v2/repository/index", b"", method="POST")
        e = [m for m in idx if m["name"] == "good"] if isinstance(idx, list) else []
        check("unloaded: index says UNAVAILABLE, reason unloaded",
              e and e[0]["state"] == "UNAVAILABLE" and e[0]["reason"] == "unloaded", str(e))
        for name in ("bad_onnx", "bad_plan"):
            check(f"unload of an UNAVAILABLE model ({name}) -> 200",
                  _http(port, f"/v2/repository/models/{name}/unload", b"", method="POST")[0] == 200)
        check("ready once every model that should be loaded is (unloaded ones do not count)",
              _http(port, "/v2/health/ready")[0] == 200)
        check("unload of an unknown model -> 400",
              _http(port, "/v2/repository/models/nothere/unload", b"", method="POST")[0] == 400)
        st, _ = _http(port, "/v2/repository/models/good/load", b"", method="POST")
        st2, res = _infer(port, "good", x)
        check("load after unload: 200, infers correctly", st == 200 and st2 == 200 and _close(res, y), f"{st} {st2}")
        # A model folder added after start: listed by index, loaded on request.
        _model(repo, "late", files=[("model.plan", plan)])
        st, idx = _http(port, "/v2/repository/index", b"", method="POST")
        e = [m for m in idx if m["name"] == "late"] if isinstance(idx, list) else []
        check("a folder added after start: index lists it, not loaded", e and e[0]["state"] == "UNAVAILABLE", str(e))
        st, _ = _http(port, "/v2/repository/models/late/load", b"", method="POST")
        st2, res = _infer(port, "late", x)
        check("a folder added after start: load -> 200, infers", st == 200 and st2 == 200 and _close(res, y))
        server.send_signal(15)
        try:
            rc = server.wait(30)
        except subprocess.TimeoutExpired:
            rc = None
        text = _log(log)
        check("model control: SIGTERM exits 0, no sanitizer report",
              rc == 0 and "ERROR: AddressSanitizer" not in text and "runtime error" not in text
              and "LeakSanitizer" not in text, f"rc={rc} {text[-3000:]}")
        server = None
    finally:
        stop_server(server)

    # --strict-readiness false: ready as soon as one model is.
    port = free_port()
    try:
        server, log = start_server(tailcut, repo, port, extra=("--strict-readiness", "false"), wait="/v2/health/live")
        check("--strict-readiness false: ready with a model UNAVAILABLE", _http(port, "/v2/health/ready")[0] == 200)
    except RuntimeError as e:
        check("--strict-readiness false: starts", False, str(e)[-1000:])
        server = None
    finally:
        stop_server(server)
    r = subprocess.run([tailcut, "serve", "--model-repository", os.path.join(tmp, "does_not_exist"),
                        "--http-port", str(free_port()), "--http-address", "127.0.0.1"],
                       capture_output=True, text=True, timeout=30)
    check("an unreadable repository still exits 1", r.returncode == 1 and "does_not_exist" in r.stderr,
          f"rc={r.returncode} {r.stderr[-500:]}")
    r = subprocess.run([tailcut, "serve", "--model-repository", repo, "--strict-readiness", "maybe"],
                       capture_output=True, text=True, timeout=30)
    check("--strict-readiness maybe refused (exit 2)", r.returncode == 2, r.stderr)


def bad_config_checks(check, tailcut, tmp, plan, cases):
    """Each (tag, config.json text, words) as its own model of one repository: the server starts though every model
    is broken, and each model is UNAVAILABLE with a reason holding the words."""
    repo = os.path.join(tmp, "bad_configs")
    for i, (_, config, _) in enumerate(cases):
        _model(repo, f"m{i}", config=config, files=[("model.plan", plan)])
    port = free_port()
    try:
        server, log = start_server(tailcut, repo, port, wait="/v2/health/live")
    except RuntimeError as e:
        check("repository of broken models only: the server starts", False, str(e)[-1500:])
        return
    try:
        check("repository of broken models only: starts, not ready", _http(port, "/v2/health/ready")[0] == 400)
        st, idx = _http(port, "/v2/repository/index", b"", method="POST")
        by = {e["name"]: e for e in idx} if isinstance(idx, list) else {}
        for i, (tag, _, words) in enumerate(cases):
            e = by.get(f"m{i}", {})
            ok = e.get("state") == "UNAVAILABLE" and all(w in e.get("reason", "") for w in words)
            check(f"bad config -> UNAVAILABLE with the reason: {tag}", ok, str(e))
    finally:
        stop_server(server)
