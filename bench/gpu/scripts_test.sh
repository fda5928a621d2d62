#!/usr/bin/env bash
# The GPU host's scripts, checked where there is no GPU (a mistake found
# here costs no device time): every shell script parses (bash -n), every
# Python tool answers --help with exit status 0 (so its imports resolve
# without torch, CUDA or the gRPC client), and every other Python file
# compiles. Usage: bench/gpu/scripts_test.sh [PYTHON]
set -u
cd "$(dirname "$0")/../.."
PY=${1:-python3}
fail=0
for f in bench/gpu/*.sh bench/gpu/selftest/*.sh bench/gpu/probes/*.sh; do
  bash -n "$f" || { echo "FAIL: bash -n $f"; fail=1; }
done
for f in bench/gpu/*.py bench/gpu/probes/*.py; do
  case "$f" in *_test.py) continue ;; esac
  out=$("$PY" "$f" --help 2>&1) || { echo "FAIL: $f --help:"; echo "$out" | tail -5; fail=1; }
done
for f in bench/gpu/*_test.py; do
  "$PY" -c "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])" "$f" \
    || { echo "FAIL: $f does not parse"; fail=1; }
done
[ $fail = 0 ] && echo "scripts_test: every GPU-host script parses, every tool answers --help"
exit $fail
