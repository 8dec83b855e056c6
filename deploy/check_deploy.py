#!/usr/bin/env python3
"""check_deploy.py - offline checks of deploy/ (no cluster, no docker, no network), run by `make deploy-check`.

- deploy/kubernetes/*.yaml: kubernetes-validate (strict: unknown fields refused) for the built-in kinds;
  deploy/kserve/*.yaml: check-jsonschema against the vendored KServe schemas (deploy/schemas/); a mutated copy of
  each (a misspelt field) must be refused, so that neither check passes everything.
- The manifests against each other and against the server: ports, probe paths, the Service's target port, the
  grace period covering preStop + --shutdown-timeout, a non-root user matching the Dockerfile's, the HPA's metric
  produced by an adapter rule, the InferenceService's runtime and model format served by the ServingRuntime.
- `tailcut serve` started with the exact arguments of the Deployment, the ServingRuntime and the Dockerfile's CMD
  (the model repository and port swapped for a generated model on 127.0.0.1): it must become ready, answer the
  probes' paths with 200 and, on SIGTERM, exit 0 within --shutdown-timeout.
- deploy/Dockerfile: hadolint; every COPY source exists; the build stage configures with CMake from only what it
  COPYs; the runtime stage's Debian packages provide every DT_NEEDED library of tailcut and libtailcut.so.
- deploy/grafana/tailcut-dashboard.json and the adapter rules: every tc_* metric a query names is one the running
  server exports; the dashboard has P50/P99/P99.9 from the request histogram, queue/compute/I/O, batch sizes and
  rejections.

usage: .venv/bin/python deploy/check_deploy.py --tailcut build/tailcut
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import kubernetes_validate
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))
from server_fixture import Checks, free_port, http_status, make_repo, read_metrics, start_server  # noqa: E402

K8S_VERSION = "1.30.0"  # the oldest Kubernetes the manifests are meant for (native sidecars, autoscaling/v2)
BIN = os.path.dirname(sys.executable)
check = Checks()


def load_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def docs_of_kind(kind):
    out = []
    for p in sorted(glob.glob(os.path.join(HERE, "*", "*.yaml"))):
        out += [d for d in load_docs(p) if d.get("kind") == kind]
    return out


def opt(args, name):
    """The value after `name` in an argument list (None when absent)."""
    return args[args.index(name) + 1] if name in args else None


# ---- schemas ----------------------------------------------------------------------------------------------------

def k8s_valid(doc):
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        return ""
    except kubernetes_validate.ValidationError as e:
        return str(e.message)[:300]
    except Exception as e:  # noqa: BLE001 - the package raises several kinds (unknown kind, bad version)
        return f"{type(e).__name__}: {e}"[:300]


def schema_checks(tmp):
    for p in sorted(glob.glob(os.path.join(HERE, "kubernetes", "*.yaml"))):
        for d in load_docs(p):
            err = k8s_valid(d)
            check(f"kubernetes-validate {os.path.basename(p)} {d['kind']}/{d['metadata']['name']}", not err, err)
    dep = docs_of_kind("Deployment")[0]
    bad = json.loads(json.dumps(dep))
    bad["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = bad["spec"]["template"]["spec"][
        "containers"][0].pop("readinessProbe")
    check("kubernetes-validate refuses a misspelt field (readinesProbe)", k8s_valid(bad) != "")
    for kind in ("ServingRuntime", "InferenceService"):
        schema = os.path.join(HERE, "schemas", f"{kind.lower()}.schema.json")
        src = os.path.join(HERE, "kserve", f"{kind.lower()}.yaml")
        r = subprocess.run([os.path.join(BIN, "check-jsonschema"), "--schemafile", schema, src],
                           capture_output=True, text=True, timeout=60)
        check(f"check-jsonschema {os.path.basename(src)} ({kind})", r.returncode == 0, r.stdout + r.stderr)
        doc = load_docs(src)[0]
        doc["spec"]["bogusField"] = 1
        badp = os.path.join(tmp, f"bad-{kind}.yaml")
        with open(badp, "w") as f:
            yaml.safe_dump(doc, f)
        r = subprocess.run([os.path.join(BIN, "check-jsonschema"), "--schemafile", schema, badp],
                           capture_output=True, text=True, timeout=60)
        check(f"check-jsonschema refuses an unknown field in a {kind}", r.returncode != 0 and "bogusField" in r.stdout,
              r.stdout)


# ---- consistency ------------------------------------------------------------------------------------------------

def dockerfile():
    with open(os.path.join(HERE, "Dockerfile")) as f:
        text = f.read()
    joined = re.sub(r"\\\n", " ", text)
    lines = [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return text, lines


def docker_cmd(lines):
    ep = json.loads([ln for ln in lines if ln.startswith("ENTRYPOINT ")][-1][len("ENTRYPOINT "):])
    cmd = json.loads([ln for ln in lines if ln.startswith("CMD ")][-1][len("CMD "):])
    return ep, cmd


def docker_uid(lines):
    return [ln for ln in lines if ln.startswith("USER ")][-1].split()[1].split(":")[0]


def probe_port(c, probe):
    port = c[probe]["httpGet"]["port"]
    if isinstance(port, str):
        port = next(p["containerPort"] for p in c["ports"] if p.get("name") == port)
    return port


def prestop_sleep(c):
    """Seconds of the container's preStop `sleep` (0 without one)."""
    cmd = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    return int(cmd[-1]) if cmd and cmd[0].endswith("sleep") else 0


def consistency_checks(lines):
    uid = docker_uid(lines)
    dep = docs_of_kind("Deployment")[0]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    port = int(opt(c["args"], "--http-port"))
    check("Deployment: container port = --http-port", c["ports"][0]["containerPort"] == port)
    check("Deployment: liveness on /v2/health/live, readiness on /v2/health/ready, startup on live",
          c["livenessProbe"]["httpGet"]["path"] == "/v2/health/live" and
          c["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready" and
          c["startupProbe"]["httpGet"]["path"] == "/v2/health/live")
    check("Deployment: every probe on the server's port",
          all(probe_port(c, p) == port for p in ("livenessProbe", "readinessProbe", "startupProbe")))
    pre = prestop_sleep(c)
    drain = int(opt(c["args"], "--shutdown-timeout"))
    grace = pod["terminationGracePeriodSeconds"]
    check(f"Deployment: grace period {grace} s >= preStop {pre} s + drain {drain} s + 1", grace >= pre + drain + 1)
    sec = pod["securityContext"]
    check("Deployment: runs as non-root, the Dockerfile's user", sec["runAsNonRoot"] is True and
          str(sec["runAsUser"]) == uid and uid != "0", f"runAsUser {sec.get('runAsUser')} vs USER {uid}")
    check("Deployment: models volume read-only", all(m.get("readOnly") for m in c["volumeMounts"]))
    svc = docs_of_kind("Service")[0]
    tp = svc["spec"]["ports"][0]["targetPort"]
    tport = next(p["containerPort"] for p in c["ports"] if p["name"] == tp) if isinstance(tp, str) else tp
    check("Service: selects the Deployment's pods and targets the server's port",
          svc["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items() and tport == port)
    ann = dep["spec"]["template"]["metadata"]["annotations"]
    check("Deployment: Prometheus scrapes /metrics on the server's port",
          ann["prometheus.io/path"] == "/metrics" and int(ann["prometheus.io/port"]) == port)
    hpa = docs_of_kind("HorizontalPodAutoscaler")[0]
    check("HPA: scales the Deployment", hpa["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"] and
          hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment")
    rules = adapter_rules()
    names = {r["name"]["as"] for r in rules}
    check("HPA: its metric is one an adapter rule produces",
          all(m["pods"]["metric"]["name"] in names for m in hpa["spec"]["metrics"]), f"adapter gives {names}")
    rt = docs_of_kind("ServingRuntime")[0]
    rc = rt["spec"]["containers"][0]
    formats = {f["name"] for f in rt["spec"]["supportedModelFormats"]}
    check("ServingRuntime: formats onnx and tailcut-plan, protocol v2",
          {"onnx", "tailcut-plan"} <= formats and rt["spec"]["protocolVersions"] == ["v2"], f"{formats}")
    rport = int(opt(rc["args"], "--http-port"))
    check("ServingRuntime: port 8080 (KServe's) = --http-port, probes on the health endpoints",
          rport == 8080 and rc["ports"][0]["containerPort"] == rport and
          rc["livenessProbe"]["httpGet"]["path"] == "/v2/health/live" and
          rc["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready" and
          probe_port(rc, "livenessProbe") == rport and probe_port(rc, "readinessProbe") == rport)
    rdrain, rpre = int(opt(rc["args"], "--shutdown-timeout")), prestop_sleep(rc)
    check(f"ServingRuntime: preStop {rpre} s + drain {rdrain} s + 1 within Kubernetes' default 30 s grace",
          rpre + rdrain + 1 <= 30)
    check("ServingRuntime: a startup probe on /v2/health/live (models load before the server listens)",
          rc["startupProbe"]["httpGet"]["path"] == "/v2/health/live" and probe_port(rc, "startupProbe") == rport and
          rc["startupProbe"]["periodSeconds"] * rc["startupProbe"]["failureThreshold"] >= 120)
    check("ServingRuntime: reads the storage initializer's /mnt/models", opt(rc["args"], "--model-repository") ==
          "/mnt/models")
    check("ServingRuntime: non-root, the Dockerfile's user", rc["securityContext"]["runAsNonRoot"] is True and
          str(rc["securityContext"]["runAsUser"]) == uid)
    isvc = docs_of_kind("InferenceService")[0]
    m = isvc["spec"]["predictor"]["model"]
    check("InferenceService: on the tailcut runtime, a format it serves, protocol v2",
          m["runtime"] == rt["metadata"]["name"] and m["modelFormat"]["name"] in formats and
          m["protocolVersion"] == "v2")
    return rules


def adapter_rules():
    cm = docs_of_kind("ConfigMap")[0]
    return yaml.safe_load(cm["data"]["config.yaml"])["rules"]


# ---- the server with the manifests' arguments ---------------------------------------------------------------------

def launch_checks(tailcut, repo, label, args, probes):
    """Starts tailcut with `args` (its repository and port swapped); checks probes, /metrics and the SIGTERM drain."""
    if args[0] != "serve":
        check(f"{label}: arguments start with serve", False, str(args))
        return None
    port = free_port()
    a = list(args[1:])
    a[a.index("--model-repository") + 1] = repo
    a[a.index("--http-port") + 1] = str(port)
    if "--http-address" in a:
        a[a.index("--http-address") + 1] = "127.0.0.1"
    else:
        a += ["--http-address", "127.0.0.1"]
    log = tempfile.TemporaryFile()
    p = subprocess.Popen([tailcut, "serve", *a], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline, ready = time.time() + 60, False
        while time.time() < deadline and p.poll() is None and not ready:
            try:
                ready = http_status(port, "/v2/health/ready") == 200
            except OSError:
                time.sleep(0.1)
        log.seek(0)
        check(f"{label}: `tailcut serve` with its arguments becomes ready", ready, log.read().decode()[-2000:])
        if not ready:
            return None
        for path in probes:
            check(f"{label}: probe {path} answers 200", http_status(port, path) == 200)
        metrics = read_metrics(port)
        drain = float(opt(a, "--shutdown-timeout") or 25)
        t0 = time.time()
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=drain + 5)
        except subprocess.TimeoutExpired:
            rc = None
        check(f"{label}: SIGTERM: exit 0 within --shutdown-timeout ({drain:g} s)",
              rc == 0 and time.time() - t0 <= drain + 1, f"rc {rc} after {time.time() - t0:.1f} s")
        return metrics
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


# ---- Dockerfile ---------------------------------------------------------------------------------------------------

def needed_libs(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def debian_package_of(lib):
    r = subprocess.run(["dpkg", "-S", f"*/{lib}"], capture_output=True, text=True)
    pkgs = {ln.split(":")[0] for ln in r.stdout.splitlines() if ln and not ln.startswith("diversion")}
    return pkgs


def dockerfile_checks(tailcut, text, lines, tmp):
    hl = os.path.join(BIN, "hadolint")
    r = subprocess.run([hl, os.path.join(HERE, "Dockerfile")], capture_output=True, text=True, timeout=60)
    check("Dockerfile: hadolint finds nothing", r.returncode == 0, r.stdout + r.stderr)
    froms = [ln.split()[1] for ln in lines if ln.startswith("FROM ")]
    check("Dockerfile: Debian slim base images, pinned", froms and all(re.fullmatch(r"debian:\d+(\.\d+)?-slim", f)
                                                                      for f in froms), str(froms))
    uid = docker_uid(lines)
    check("Dockerfile: runs as an unprivileged user", uid.isdigit() and int(uid) >= 1000, uid)
    ep, cmd = docker_cmd(lines)
    check("Dockerfile: EXPOSE = --http-port of the CMD",
          [ln.split()[1] for ln in lines if ln.startswith("EXPOSE ")] == [opt(cmd, "--http-port")])
    ctx = os.path.join(tmp, "context")
    copies = [ln.split()[1:] for ln in lines if ln.startswith("COPY ") and "--from=" not in ln]
    missing = [s for srcs in copies for s in srcs[:-1] if not os.path.exists(os.path.join(ROOT, s))]
    check("Dockerfile: every COPY source exists", not missing, str(missing))
    for srcs in copies:
        for s in srcs[:-1]:
            dst = os.path.join(ctx, s)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            (shutil.copytree if os.path.isdir(os.path.join(ROOT, s)) else shutil.copy)(os.path.join(ROOT, s), dst)
    build_run = [ln for ln in lines if ln.startswith("RUN cmake ")][0]
    flags = re.findall(r"-D\w+=\w+", build_run)
    r = subprocess.run(["cmake", "-S", ctx, "-B", os.path.join(ctx, "build"), *flags], capture_output=True, text=True,
                       timeout=300)
    check(f"Dockerfile: the build stage's sources configure alone (cmake {' '.join(flags)})", r.returncode == 0,
          (r.stdout + r.stderr)[-2000:])
    runtime = text.split("\nFROM ")[-1]
    runtime_pkgs = set(re.findall(r"\b(lib[a-z0-9.+-]+)\b", runtime.split("&& rm -rf")[0]))
    base = {"libc6", "libgcc-s1", "libstdc++6"}  # in debian:12-slim
    lib = os.path.join(os.path.dirname(tailcut), "libtailcut.so")
    needs = sorted(set(needed_libs(tailcut) + needed_libs(lib)) - {"libtailcut.so"})
    unprovided = [n for n in needs if not (debian_package_of(n) & (runtime_pkgs | base))]
    check(f"Dockerfile: the runtime stage's packages provide {len(needs)} needed libraries", not unprovided and needs,
          f"not provided: {[(n, sorted(debian_package_of(n))) for n in unprovided]}")
    return ep, cmd


# ---- dashboard --------------------------------------------------------------------------------------------------

def metric_names(expr):
    return set(re.findall(r"\btc_[a-z0-9_]+", expr))


def dashboard_checks(exported, rules):
    with open(os.path.join(HERE, "grafana", "tailcut-dashboard.json")) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
    base = {re.sub(r"\{.*", "", k) for k in exported}
    unknown = sorted({n for e in exprs for n in metric_names(e)} - base)
    check(f"dashboard: every metric of its {len(exprs)} queries is exported by the server", not unknown and exprs,
          f"unknown: {unknown}")
    check("dashboard: parentheses and braces balance in every query",
          all(e.count("(") == e.count(")") and e.count("{") == e.count("}") for e in exprs))
    hq = re.compile(r"histogram_quantile\(([0-9.]+), sum by \([^)]*\) \(rate\((tc_[a-z_]+)\{")
    found = {(float(q), m) for e in exprs for q, m in hq.findall(e)}
    check("dashboard: histogram_quantile only over _bucket series", all(m.endswith("_bucket") for _, m in found))
    want = {(q, "tc_request_duration_us_bucket") for q in (0.5, 0.99, 0.999)} | \
           {(0.99, f"tc_{k}_duration_us_bucket") for k in ("queue", "compute", "io")}
    check("dashboard: P50/P99/P99.9 of requests and P99 of queue/compute/I/O", want <= found, f"{want - found}")
    allm = {n for e in exprs for n in metric_names(e)}
    check("dashboard: batch sizes, rejections, queue depth panels",
          {"tc_batch_size_bucket", "tc_request_rejected_total", "tc_queue_depth"} <= allm)
    check("dashboard: panel ids unique", len({p["id"] for p in dash["panels"]}) == len(dash["panels"]))
    rule_metrics = {n for r in rules for n in metric_names(r["seriesQuery"] + r["metricsQuery"])}
    check("adapter rules: their series are exported by the server", rule_metrics and rule_metrics <= base,
          f"{rule_metrics - base}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tailcut", default=os.path.join(ROOT, "build", "tailcut"))
    a = ap.parse_args()
    tailcut = os.path.abspath(a.tailcut)
    with tempfile.TemporaryDirectory() as tmp:
        text, lines = dockerfile()
        schema_checks(tmp)
        rules = consistency_checks(lines)
        ep, cmd = dockerfile_checks(tailcut, text, lines, tmp)
        make_repo(tmp)
        repo = os.path.join(tmp, "repo")
        dep = docs_of_kind("Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
        rt = docs_of_kind("ServingRuntime")[0]["spec"]["containers"][0]
        exported = launch_checks(tailcut, repo, "Deployment", dep["args"],
                                 [dep[p]["httpGet"]["path"] for p in ("livenessProbe", "readinessProbe")])
        launch_checks(tailcut, repo, "ServingRuntime", rt["args"],
                      [rt[p]["httpGet"]["path"] for p in ("livenessProbe", "readinessProbe")])
        check("Dockerfile: ENTRYPOINT is the tailcut binary", ep == ["/usr/local/bin/tailcut"], str(ep))
        launch_checks(tailcut, repo, "Dockerfile CMD", cmd, ["/v2/health/live", "/v2/health/ready"])
        if exported:
            dashboard_checks(exported, rules)
        else:
            check("dashboard: a running server's metric names", False, "the server did not start")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
