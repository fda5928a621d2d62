#!/usr/bin/env bash
# The main job on the embedded default: builds fusionc, then compiles every
# fusion in examples/ (or the files given) through the whole pipeline with the
# local RocksDB kernel cache. For each file: what the compiler decided
# (schedulers and heuristics), a compile that writes the artifacts (a miss
# the first time), and one more compile, served from the cache (a hit).
# No daemon, no GPU needed.
# Usage: scripts/run.sh [FILE.py ...]
#   env: FUSIOND_CACHE_DIR (default build/cache), JOBS (default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS" --target fusionc
FUSIONC=build/client/fusionc/fusionc
export FUSIOND_CACHE_DIR=${FUSIOND_CACHE_DIR:-$PWD/build/cache}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(examples/*.py)
for f in "${files[@]}"; do
  stem=$(basename "$f" .py)
  echo "== $f"
  "$FUSIONC" compile "$f" --explain --no-codegen | sed -n '/^passes:/,/^stages/p'
  "$FUSIONC" compile "$f" --out "build/artifacts/$stem"
  "$FUSIONC" compile "$f" | head -1
done
echo "artifacts (manifest.json + cubins): build/artifacts/; kernel cache: $FUSIOND_CACHE_DIR"
