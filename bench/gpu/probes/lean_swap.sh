#!/usr/bin/env bash
# Replaces a prepared variant's cubin (bench/gpu/variants.sh prepare) by
# bench/gpu/probes/lean_rows.py's kernel of the same name and arguments,
# compiled by NVRTC with the pipeline's options (fusiond_cgdev --compile-cu
# of $BUILD, default build-rt).
#   [GRID=N] lean_swap.sh VARIANT KIND BX PB MINB [smem]
# GRID: the blocks the manifest launches (rows / ceil(rows / N)); without it
# the generated kernel's own cap (from its registers) stays. The manifest's
# block becomes BX x 1 (a lean kernel launched with a variant's 64 x 2
# block computes wrong results).
set -euo pipefail
cd "$(dirname "$0")/../../.."
v=.devcarry/variants/$1
stem=$(cut -d' ' -f1 "$v/RUN")
d=$v/$stem
name=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernels'][0]['name'])" "$d/manifest.json")
src=$(ls "$d"/*.cu)
python3 bench/gpu/probes/lean_rows.py "$2" "$3" "$4" "$5" "$name" "$src" ${6:-} > "$src.lean"
mv "$src.lean" "$src"
# The lean kernel runs BX x 1 threads a block whatever the variant's block
# was (it strides over rows, so any grid covers them).
python3 - "$d/manifest.json" "$3" "${GRID:-}" <<'PY'
import json, sys
path, bx, n = sys.argv[1], sys.argv[2], sys.argv[3]
m = json.load(open(path))
m["kernels"][0]["block"] = [bx, "1", "1"]
if n:
    m["kernels"][0]["grid"][0] = f"ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), {n}))"
json.dump(m, open(path, "w"))
PY
"${BUILD:-build-rt}/compiler/nvrtc/fusiond_cgdev" --compile-cu "$src" "$name" "$d/$name.cubin"
