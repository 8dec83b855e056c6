#!/usr/bin/env bash
# build.sh - builds the documentation site: copies docs/ into OUT/src, generates the reference pages there from the
# code (CLI from the binary's --help, C API from the header, ops from ops.inc, config.json from the server's parser,
# plan format from plan_format.h, Python API from the module's docstrings), runs `mkdocs build --strict` into
# OUT/site and checks every internal link and anchor of the site and of README.md.
# usage: tools/docs/build.sh TAILCUT_BINARY PYTHON OUT
set -euo pipefail
if [ $# -ne 3 ]; then echo "usage: $0 TAILCUT_BINARY PYTHON OUT" >&2; exit 2; fi
tailcut=$1 py=$2 out=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
gen="$root/tools/docs"
[ -x "$tailcut" ] || { echo "tools/docs/build.sh: $tailcut is not an executable (build it first: make build)" >&2; exit 1; }
rm -rf "$out/src" "$out/site"
mkdir -p "$out/src"
cp -r "$root/docs/." "$out/src/"
mkdir -p "$out/src/reference"
"$py" "$gen/gen_cli.py" "$tailcut" "$out/src/reference/cli.md"
"$py" "$gen/gen_capi.py" "$root/include/tailcut/tailcut.h" "$out/src/reference/c-api.md"
"$py" "$gen/gen_ops.py" "$root" "$out/src/reference/ops.md"
"$py" "$gen/gen_config.py" "$root/src/server/config.c" "$root/src/server/config.h" "$out/src/reference/config.md"
"$py" "$gen/gen_tools.py" "$root" "$out/src/reference/tools.md"
"$py" "$gen/gen_plan_format.py" "$root/src/engine/plan_format.h" "$out/src/reference/plan-format.md"
"$py" "$gen/gen_python_api.py" "$out/src/reference/python-api.md"
"$(dirname "$py")/mkdocs" build --strict -f "$root/mkdocs.yml" -d "$out/site"
"$py" "$gen/check_links.py" "$out/site" "$root/README.md"
echo "docs: site in $out/site"
