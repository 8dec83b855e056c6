"""thread_budget_checks.py - issue 27 (other clients' latency during large uploads), called by test_server.py: the models
of one repository share the CPU budget by default. Two models that each took every core (budget / instances) made
their kernel threads oversubscribe the machine whenever both were busy: the CPU backend's threads meet at the end of
every step and a descheduled one holds up the others, so a 1 ms model answered in seconds beside a 56 MiB upload to
the other. Each model now gets budget / (instances x models in the repository) threads, at least 1; config.json's
tailcut.engine_threads still sets a model's own. Checked from the server's log line of each model, and by inference."""
import json
import os
import re

from repo_checks import CONFIG, _close, _infer, _log, _model
from server_fixture import free_port, start_server, stop_server

READY = re.compile(r"model '(\w+)' ready \(.*; (\d+) instance\(s\) x (\d+) thread\(s\), ([^;]+); CPU budget (\d+) ")


def thread_budget_checks(check, tailcut, tmp, plan, x, y):
    repo = os.path.join(tmp, "repo_budget")
    _model(repo, "a", files=[("model.plan", plan)])
    _model(repo, "b", files=[("model.plan", plan)])
    own = json.loads(json.dumps(CONFIG))
    own["tailcut"]["engine_threads"] = 2
    _model(repo, "c", config=own, files=[("model.plan", plan)])
    port = free_port()
    server = None
    try:
        server, log = start_server(tailcut, repo, port)
        for name in ("a", "b", "c"):
            st, res = _infer(port, name, x)
            check(f"thread budget: model {name} of three infers correctly", st == 200 and _close(res, y),
                  f"{st} {str(res)[:200]}")
        text = _log(log)
        lines = {m.group(1): m for m in READY.finditer(text)}
        check("thread budget: a ready line per model", set(lines) == {"a", "b", "c"}, text[-2000:])
        if set(lines) == {"a", "b", "c"}:
            budget = int(lines["a"].group(5))
            want = max(1, budget // 3)
            for name in ("a", "b"):
                m = lines[name]
                check(f"thread budget: model {name} gets budget {budget} / 3 models = {want} thread(s)",
                      int(m.group(3)) == want and "3 models" in m.group(4), m.group(0))
            check("thread budget: tailcut.engine_threads in config.json still sets a model's own (2)",
                  int(lines["c"].group(3)) == 2 and lines["c"].group(4) == "config", lines["c"].group(0))
    except RuntimeError as e:
        check("thread budget: the server starts", False, str(e)[-1500:])
    finally:
        stop_server(server)
