#!/usr/bin/env bash
# Builds fusiond_compile_time and runs it over the corpus; the JSON goes to
# $JSON, by default bench/results/compile-time-<date>-<HHMMSS>.json (UTC; the
# second keeps a later run from overwriting a recorded one: two runs within a
# minute did).
# Usage: bench/compile_time/run.sh [BUILD_DIR] [extra flags, e.g. --repeat 10]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-rt}
shift || true
CORPUS=${FUSIOND_CORPUS_DIR:-tests/corpus/fusions}
[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DFUSIOND_BUILD_SERVICE=OFF >/dev/null
ninja -C "$BUILD" -j2 fusiond_compile_time >/dev/null
mkdir -p bench/results
JSON=${JSON:-bench/results/compile-time-$(date -u +%F-%H%M%S).json}
# The corpus, then a fusion of two kernels (bench/compile_time/fusions: the
# kernels compiled at once, CompileOptions::kernel_threads).
"$BUILD/bench/compile_time/fusiond_compile_time" --out "$JSON" \
  "$@" "$CORPUS"/*.py bench/compile_time/fusions/*.py
