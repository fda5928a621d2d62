#!/usr/bin/env bash
# Replaces a prepared variant's cubin (bench/gpu/variants.sh prepare) by
# bench/gpu/probes/lean_rows.py's kernel of the same name and arguments,
# compiled by NVRTC with the pipeline's options (fusiond_cgdev --compile-cu
# of $BUILD, default build-rt).
#   [GRID=N] lean_swap.sh VARIANT KIND BX PB MINB [smem]
# GRID: the blocks the manifest launches (rows / ceil(rows / N)); without it
# the generated kernel's own cap (from its registers) stays.
set -euo pipefail
cd "$(dirname "$0")/../../.."
v=.devcarry/variants/$1
stem=$(cut -d' ' -f1 "$v/RUN")
d=$v/$stem
name=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernels'][0]['name'])" "$d/manifest.json")
src=$(ls "$d"/*.cu)
python3 bench/gpu/probes/lean_rows.py "$2" "$3" "$4" "$5" "$name" "$src" ${6:-} > "$src.lean"
mv "$src.lean" "$src"
if [ -n "${GRID:-}" ]; then
  python3 - "$d/manifest.json" "$GRID" <<'PY'
import json, sys
path, n = sys.argv[1], sys.argv[2]
m = json.load(open(path))
m["kernels"][0]["grid"][0] = f"ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), {n}))"
json.dump(m, open(path, "w"))
PY
fi
"${BUILD:-build-rt}/compiler/nvrtc/fusiond_cgdev" --compile-cu "$src" "$name" "$d/$name.cubin"
