#!/usr/bin/env bash
# The main job on the embedded default: builds fusionc, then compiles every
# fusion in examples/ (or the files given) through the whole pipeline with the
# local RocksDB kernel cache, twice: the first compile is a miss, the second a
# hit served from the cache. No daemon, no GPU needed.
# Usage: scripts/run.sh [FILE.py ...]   (env: FUSIOND_CACHE_DIR, default build/cache)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS" --target fusionc
export FUSIOND_CACHE_DIR=${FUSIOND_CACHE_DIR:-$PWD/build/cache}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(examples/*.py)
for f in "${files[@]}"; do
  echo "== $f"
  build/client/fusionc/fusionc compile "$f" --explain --out "build/artifacts/$(basename "$f" .py)"
  build/client/fusionc/fusionc compile "$f" --json | python3 -c \
    'import json,sys; r=json.load(sys.stdin); print("second compile: cache", r["cache"], "|", len(r["segments"]), "segment(s):", ", ".join(s["scheduler"] for s in r["segments"]))'
done
echo "artifacts (manifest.json + cubins) under build/artifacts/, cache at $FUSIOND_CACHE_DIR"
