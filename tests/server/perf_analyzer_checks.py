"""perf_analyzer_checks.py - Triton's perf_analyzer (the binary in the tritonclient==2.41.0 wheel) against
`tailcut serve`: closed loop at concurrency 1, then 4 (one run each), then Poisson request rates 20 and 60/s (lower
when the server does less: a sanitizer build), each writing its CSV (-f), which is parsed and checked (one row per
load level, throughput > 0, p50 <= p90 <= p95 <= p99, send/recv times present), and the server's /metrics must count
the requests as successes and none as failures. perf_analyzer needs libcudart.so.12 (PyPI nvidia-cuda-runtime-cu12,
put on LD_LIBRARY_PATH here) and Debian's libb64-0d. On a loaded machine its stability rule (3 windows within -s
percent) can miss: each run is retried (at most 3 attempts); about 30-60 s in all. Used by test_clients.py."""
import csv
import importlib.util
import os
import subprocess
import sys

from server_fixture import read_metrics


def perf_analyzer_env():
    """(binary path, environment) or (None, why)."""
    exe = os.path.join(os.path.dirname(sys.executable), "perf_analyzer")
    if not os.path.exists(exe):
        return None, f"{exe} missing: install tools/requirements.txt (tritonclient[http]==2.41.0)"
    spec = importlib.util.find_spec("nvidia.cuda_runtime")
    if spec is None:
        return None, "nvidia-cuda-runtime-cu12 not installed (tools/requirements.txt)"
    lib = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    env = dict(os.environ, LD_LIBRARY_PATH=lib + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    return exe, env


def parse_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run_pa(exe, env, port, model, args, csv_path, attempts=3, count=40):
    """Runs perf_analyzer until it writes its CSV; returns (rows, last output)."""
    out = ""
    for _ in range(attempts):
        if os.path.exists(csv_path):
            os.remove(csv_path)
        cmd = [exe, "-m", model, "-u", f"127.0.0.1:{port}", "-i", "http", "-b", "1",
               "--measurement-mode", "count_windows", "--measurement-request-count", str(count),
               "-s", "1000", "-r", "6",
               "-f", csv_path, *args]
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=45)
            out = r.stdout + r.stderr
        except subprocess.TimeoutExpired as e:
            out = f"timed out: {e.stdout}"
            continue
        if r.returncode == 0 and os.path.exists(csv_path):
            return parse_csv(csv_path), out
    return None, out


def row_ok(row, key_col):
    try:
        p = [float(row[k]) for k in ("p50 latency", "p90 latency", "p95 latency", "p99 latency")]
        return float(row["Inferences/Second"]) > 0 and p[0] > 0 and p == sorted(p) and \
            float(row["Client Send"]) >= 0 and float(row[key_col]) > 0
    except (KeyError, ValueError):
        return False


def perf_analyzer_checks(check, port, model, tmp):
    exe, env = perf_analyzer_env()
    if exe is None:
        check("perf_analyzer available", False, env)
        return
    r = subprocess.run([exe, "--version"], env=env, capture_output=True, text=True, timeout=30)
    check("perf_analyzer runs (libcudart from nvidia-cuda-runtime-cu12, libb64-0d)",
          "error while loading shared libraries" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-500:])
    before = read_metrics(port)
    ok_key, fail_key = f'tc_request_success_total{{model="{model}"}}', f'tc_request_failure_total{{model="{model}"}}'
    rows, out = [], ""
    for conc in ("1", "4"):  # one run each: a level that misses perf_analyzer's stability rule is retried alone
        r, out = run_pa(exe, env, port, model, ["--concurrency-range", conc], os.path.join(tmp, f"pa_c{conc}.csv"))
        rows = rows + r if rows is not None and r else None
    check("perf_analyzer --concurrency-range 1, then 4: CSV rows for concurrency 1 and 4, consistent percentiles",
          rows is not None and [r["Concurrency"] for r in rows] == ["1", "4"] and
          all(row_ok(r, "Concurrency") for r in rows), f"{rows} {out[-1500:]}")
    if rows:
        print("  " + "; ".join(f"c={r['Concurrency']}: {float(r['Inferences/Second']):.0f}/s, p50 "
                               f"{int(r['p50 latency'])} us, p99 {int(r['p99 latency'])} us" for r in rows))
    # Rates the server sustains here (a sanitizer build on a loaded machine may do < 10/s): 20 and 60/s, or 30% and 60%
    # of the closed-loop throughput at concurrency 1 when that is lower.
    thr = float(rows[0]["Inferences/Second"]) if rows else 10.0
    lo = max(1, min(20, int(0.3 * thr)))
    hi = max(lo + 1, min(60, int(0.6 * thr)))
    rate_args = ["--request-rate-range", f"{lo}:{hi}:{hi - lo}", "--request-distribution", "poisson"]
    rows, out = run_pa(exe, env, port, model, rate_args, os.path.join(tmp, "pa_rate.csv"), count=40 if lo >= 10 else 12)
    check(f"perf_analyzer --request-rate-range {lo}:{hi}:{hi - lo} (Poisson): CSV rows for both rates, throughput near "
          "each", rows is not None and [float(r["Request Rate"]) for r in rows] == [float(lo), float(hi)] and
          all(row_ok(r, "Request Rate") and float(r["Inferences/Second"]) > 0.5 * float(r["Request Rate"])
              for r in rows), f"{rows} {out[-1500:]}")
    if rows:
        print("  " + "; ".join(f"rate {r['Request Rate']}/s: {float(r['Inferences/Second']):.1f}/s, p99 "
                               f"{int(r['p99 latency'])} us" for r in rows))
    after = read_metrics(port)
    check("perf_analyzer's requests: counted as successes by /metrics, none failed",
          after[ok_key] - before[ok_key] >= 4 * 40 and after[fail_key] == before[fail_key],
          f"successes +{after[ok_key] - before[ok_key]}, failures +{after[fail_key] - before[fail_key]}")
