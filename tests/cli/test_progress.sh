#!/usr/bin/env bash
# test_progress.sh - progress of long work on stderr and calibrate's sample subset: the plain line format of
# `calibrate` (sample i of n, the file, rate and ETA), of `build` (loading, tuning step i of n with the layer) and of
# `--accuracy-threshold` (its builds' tuning steps and each round's agreement), no progress with --quiet, the bar on a terminal
# (a pty: redrawn in place, cleared at the end); `calibrate --samples N` spreading its picks evenly over the folder
# (the middle of each part, or a seeded random one in it: the same seed the same picks), --seed without --samples
# refused, a malformed TAILCUT_PROGRESS_INTERVAL warned about once, and calibration results unchanged by the subset code (all samples: the cache of no --samples) and by
# threaded histograms (two runs: the same cache).
#
# usage: tests/cli/test_progress.sh [BUILD_DIR] [PYTHON]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${2:-$repo/.venv/bin/python}
tailcut="$build/tailcut"
work=$(mktemp -d "${TMPDIR:-/tmp}/tc_progress.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test_progress: FAIL: $*" >&2; exit 1; }
. "$repo/tests/cli/int8_cpu.sh" # int8

"$py" "$repo/tools/modelgen/modelgen.py" resnet50 -o "$work/r.onnx" --width-div 4 --blocks 1,1,1,1 --image 32 >/dev/null
"$py" - "$work" <<'PY'
import os, sys, numpy as np
w = sys.argv[1]; rng = np.random.default_rng(11)
os.makedirs(f"{w}/cal")
for k in range(10):
    np.save(f"{w}/cal/img_{k}.npy", rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
PY

# --- plain lines (stderr is a file): TAILCUT_PROGRESS_INTERVAL=0 prints one at every update ---
TAILCUT_PROGRESS_INTERVAL=0 "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" -o "$work/all.cache" \
  >"$work/cal.out" 2>"$work/cal.err" || fail "calibrate: $(cat "$work/cal.err")"
"$py" - "$work/cal.err" <<'PY' || fail "calibrate's progress lines: $(cat "$work/cal.err")"
import re, sys
text = open(sys.argv[1]).read()
assert "\r" not in text and "\x1b" not in text, "terminal codes in a file"
dur = r"(\d+s|\d+m\d\ds|\d+h\d\dm)"
line = re.compile(r"^tailcut calibrate: sample (\d+)/10(?: \((\S+)\))?(?:, [0-9.]+/s, ETA " + dur + r")?, " + dur + " elapsed$")
seen = []
for l in text.splitlines():
    if l.startswith("tailcut calibrate: loading model"):
        continue
    m = line.match(l)
    if m:
        seen.append((int(m.group(1)), m.group(2)))
    else:
        assert l.startswith("calibrated "), f"unexpected line {l!r}"
assert [s for s, _ in seen] == list(range(11)), seen          # sample 0/10 .. 10/10, each once
assert all(f and f.endswith(f"img_{k}.npy") for k, f in seen[:10]), seen  # the file under way
assert seen[10][1] is None, seen                                # the end names no file
assert re.search(r"sample [1-9]\d*/10 \(\S+\), [0-9.]+/s, ETA ", text), "no rate and ETA once a sample is done"
PY
grep -q "^calibrated [0-9]* tensors on 10 samples" "$work/cal.err" || fail "calibrate's summary: $(cat "$work/cal.err")"

# --quiet: nothing but the summary
TAILCUT_PROGRESS_INTERVAL=0 "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" -o "$work/q.cache" --quiet \
  >/dev/null 2>"$work/q.err" || fail "calibrate --quiet"
if grep -q "^tailcut calibrate:" "$work/q.err"; then fail "--quiet printed progress: $(cat "$work/q.err")"; fi

# build: loading, then tuning step i of n with the layer; --quiet: none
TAILCUT_PROGRESS_INTERVAL=0 "$tailcut" build "$work/r.onnx" -o "$work/r.plan" --batch 1 >/dev/null 2>"$work/b.err" ||
  fail "build: $(cat "$work/b.err")"
grep -q "^tailcut build: loading model, [0-9hms]* elapsed$" "$work/b.err" || fail "build: no loading line: $(cat "$work/b.err")"
grep -Eq "^tailcut build: tuning step 0/[0-9]+ \(.+ \(Conv\)\), [0-9hms]+ elapsed$" "$work/b.err" ||
  fail "build: no first tuning line: $(cat "$work/b.err")"
grep -Eq "^tailcut build: tuning step [1-9][0-9]*/[0-9]+ \(.+ \([A-Za-z]+\)\), [0-9.]+/s, ETA [0-9hms]+, [0-9hms]+ elapsed$" \
  "$work/b.err" || fail "build: no tuning line with rate and ETA: $(cat "$work/b.err")"
"$py" - "$work/b.err" <<'PY' || fail "build: steps not counted one by one to the end: $(cat "$work/b.err")"
import re, sys
runs, cur = [], None
for m in re.finditer(r"^tailcut build: tuning step (\d+)/(\d+)", open(sys.argv[1]).read(), re.M):
    i, n = int(m.group(1)), int(m.group(2))
    if i == 0:
        cur = [n]; runs.append(cur)
    assert cur is not None and cur[0] == n and i == len(cur) - 1, (i, n, cur)
    cur.append(i)
assert runs and all(r[-1] == r[0] for r in runs), runs   # each run ends at n/n
PY
TAILCUT_PROGRESS_INTERVAL=0 "$tailcut" build "$work/r.onnx" -o "$work/r.plan" --batch 1 --quiet >/dev/null \
  2>"$work/bq.err" || fail "build --quiet"
[ ! -s "$work/bq.err" ] || fail "build --quiet wrote to stderr: $(cat "$work/bq.err")"

# a malformed TAILCUT_PROGRESS_INTERVAL: one warning naming it and the value, then the default (a line every 5 s, not
# one per step as 0 gives); once per process (compare builds two engines); --quiet stays silent
nsteps=$(grep -c "tuning step" "$work/b.err")
for bad in abc 5x -1 1e9 nan; do
  TAILCUT_PROGRESS_INTERVAL=$bad "$tailcut" build "$work/r.onnx" -o "$work/r.plan" --batch 1 >/dev/null \
    2>"$work/bad.err" || fail "build with TAILCUT_PROGRESS_INTERVAL=$bad: $(cat "$work/bad.err")"
  [ "$(grep -c "warning: TAILCUT_PROGRESS_INTERVAL='$bad'" "$work/bad.err")" = 1 ] ||
    fail "TAILCUT_PROGRESS_INTERVAL=$bad: not one warning: $(cat "$work/bad.err")"
  [ "$(grep -c "tuning step" "$work/bad.err")" -lt "$nsteps" ] ||
    fail "TAILCUT_PROGRESS_INTERVAL=$bad: a line per step, not the default: $(cat "$work/bad.err")"
done
TAILCUT_PROGRESS_INTERVAL=abc "$tailcut" compare "$work/r.onnx" "$work/r.onnx" --data "$work/cal" >/dev/null \
  2>"$work/cmp.err" || fail "compare: $(cat "$work/cmp.err")"
[ "$(grep -c "TAILCUT_PROGRESS_INTERVAL" "$work/cmp.err")" = 1 ] ||
  fail "compare (two builds): not one warning: $(cat "$work/cmp.err")"
TAILCUT_PROGRESS_INTERVAL=abc "$tailcut" build "$work/r.onnx" -o "$work/r.plan" --batch 1 --quiet >/dev/null \
  2>"$work/bq.err" || fail "build --quiet"
[ ! -s "$work/bq.err" ] || fail "build --quiet with a bad TAILCUT_PROGRESS_INTERVAL wrote to stderr: $(cat "$work/bq.err")"

# --accuracy-threshold: each round's build and samples, then its agreement
if [ "$int8" = 1 ]; then
  TAILCUT_PROGRESS_INTERVAL=0 "$tailcut" build "$work/r.onnx" -o "$work/i.plan" --batch 1 --int8 --calib-data "$work/cal" \
    --tactics-fixed --accuracy-threshold 0.5 >/dev/null 2>"$work/acc.err" || fail "accuracy: $(cat "$work/acc.err")"
  for want in "^tailcut build: sample 10/10" "^tailcut build: accuracy rounds: building and running" \
              "^tailcut build: tuning step [0-9]*/[0-9]* (" "^accuracy: 0 layer(s) kept out of INT8 (fp32) by the threshold: cosine"; do
    grep -q "$want" "$work/acc.err" || fail "accuracy progress: no '$want': $(cat "$work/acc.err")"
  done
fi

# --- a terminal: the bar, redrawn in place and cleared at the end ---
"$py" - "$tailcut" "$work" <<'PY' || fail "progress bar on a terminal"
import os, pty, re, subprocess, sys
tailcut, w = sys.argv[1], sys.argv[2]
master, slave = pty.openpty()
p = subprocess.Popen([tailcut, "calibrate", f"{w}/r.onnx", "--data", f"{w}/cal", "-o", f"{w}/t.cache"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
chunks = []
while True:
    try:
        b = os.read(master, 4096)
    except OSError:
        break
    if not b:
        break
    chunks.append(b)
out = p.communicate()[0]
assert p.returncode == 0, p.returncode
text = b"".join(chunks).decode()
bars = re.findall(r"\r\x1b\[Ktailcut calibrate: \[([#.]{24})\] (\d+)/10 sample", text)
assert bars, repr(text)
assert all(len(b) == 24 for b, _ in bars), bars
assert text.count("\r\x1b[K") >= len(bars) + 1, repr(text)  # and one more that clears the last bar
assert re.search(r"\r\x1b\[K(\r?\n)?calibrated \d+ tensors on 10 samples", text), repr(text)
assert b"wrote" in out
PY

# --- calibrate --samples N: spread over the folder ---
picks() { grep "^sample [0-9]*:" "$1" | sed 's#.*/img_\([0-9]*\)\.npy$#\1#' | tr '\n' ' '; }
"$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples 3 --verbose --quiet -o "$work/s3.cache" \
  >"$work/s3.out" 2>"$work/s3.err" || fail "--samples 3: $(cat "$work/s3.err")"
[ "$(picks "$work/s3.out")" = "1 4 8 " ] || fail "--samples 3 picked '$(picks "$work/s3.out")', want the parts' middles 1 4 8"
grep -q "on 3 samples (of 10, spread evenly)" "$work/s3.err" || fail "--samples 3 summary: $(cat "$work/s3.err")"
for seed in 1 2 3 4 5 6; do
  "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples 3 --seed $seed --verbose --quiet -o "$work/x.cache" \
    >"$work/seed$seed.out" 2>/dev/null || fail "--seed $seed"
  set -- $(picks "$work/seed$seed.out")
  [ $# = 3 ] && [ "$1" -le 2 ] && [ "$2" -ge 3 ] && [ "$2" -le 5 ] && [ "$3" -ge 6 ] && [ "$3" -le 9 ] ||
    fail "--seed $seed picked '$*': not one from each of 0-2, 3-5, 6-9"
done
"$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples 3 --seed 4 --verbose --quiet -o "$work/x.cache" \
  >"$work/seed4b.out" 2>/dev/null || fail "--seed 4 again"
[ "$(picks "$work/seed4.out")" = "$(picks "$work/seed4b.out")" ] || fail "--seed 4 picked differently twice"
[ "$(for s in 1 2 3 4 5 6; do picks "$work/seed$s.out"; echo; done | sort -u | wc -l)" -ge 2 ] ||
  fail "six seeds picked the same samples"
if "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --seed 4 -o "$work/x.cache" 2>"$work/e.err"; then
  fail "--seed without --samples accepted"
fi
grep -q "give --samples" "$work/e.err" || fail "--seed without --samples: $(cat "$work/e.err")"
if "$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples 3 --seed -1 -o "$work/x.cache" 2>"$work/e.err"; then
  fail "--seed -1 accepted"
fi

# --- results unchanged: all samples through --samples, and a second run (threaded histograms) ---
"$tailcut" calibrate "$work/r.onnx" --data "$work/cal" --samples 10 --quiet -o "$work/s10.cache" >/dev/null 2>&1 ||
  fail "--samples 10"
cmp -s "$work/all.cache" "$work/s10.cache" || fail "--samples 10 of 10 changed the cache"
cmp -s "$work/all.cache" "$work/q.cache" || fail "two calibrations of the same samples differ"
echo "test_progress: OK"
