#!/bin/sh
# run_server_tests.sh - builds the CLI in build-server (ASan) and runs tests/server/test_server.py with a
# Python that has numpy (and onnxruntime when available). usage: tests/server/run_server_tests.sh [PYTHON]
set -e
cd "$(dirname "$0")/../.."
PY=${1:-${PYTHON:-.venv/bin/python}}
[ -x "$PY" ] || PY=python3
cmake -S . -B build-server -DTC_SANITIZE=ON -DTC_TESTS=OFF >/dev/null
cmake --build build-server --target tailcut_cli -j2 >/dev/null
exec timeout 120 "$PY" tests/server/test_server.py --tailcut build-server/tailcut
