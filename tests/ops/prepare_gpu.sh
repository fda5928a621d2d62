#!/usr/bin/env bash
# Compiles the GPU check fusions of the new ops (tests/ops/fusions/*.py) here
# (NVRTC needs no GPU) into the git-ignored .devcarry/ops/: the scripts under
# .devcarry/ops/fusions/ and `fusionc compile --out` artifacts under
# .devcarry/ops/<stem>/. Then prints the device command: bench/gpu/run.py
# runs each against its float64 reference (client/python/fusiond/
# frontend_torch.py), PyTorch eager and torch.compile, and exits non-zero
# when any output is wrong or any artifact is missing.
# Usage: tests/ops/prepare_gpu.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
FUSIONC="$BUILD/client/fusionc/fusionc"
[ -x "$FUSIONC" ] || { echo "no $FUSIONC: build fusionc first (ninja -C $BUILD fusionc)" >&2; exit 1; }
OUT=.devcarry/ops
rm -rf "${OUT:?}"
mkdir -p "$OUT/fusions"
cp tests/ops/fusions/*.py "$OUT/fusions/"
failed=0
for f in "$OUT"/fusions/*.py; do
  stem=$(basename "$f" .py)
  if ! "$FUSIONC" compile "$f" --no-cache --out "$OUT/$stem" >"$OUT/$stem.log" 2>&1; then
    echo "FAILED to compile $stem:" >&2
    tail -3 "$OUT/$stem.log" >&2
    failed=1
  fi
done
echo "carry: [\".devcarry\"]"
echo "device command: python3 bench/gpu/run.py --artifacts .devcarry/ops --fusions .devcarry/ops/fusions/*.py --require-ours --out \$OUT"
exit $failed
