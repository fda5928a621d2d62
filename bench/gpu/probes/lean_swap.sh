#!/usr/bin/env bash
# Replaces a prepared variant's cubin (bench/gpu/variants.sh prepare) by
# bench/gpu/probes/lean_rows.py's kernel of the same name and arguments,
# compiled by NVRTC with the pipeline's options (fusiond_cgdev --compile-cu).
#   lean_swap.sh VARIANT KIND BX PB MINB [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../../.."
v=.devcarry/variants/$1
stem=$(cut -d' ' -f1 "$v/RUN")
d=$v/$stem
name=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernels'][0]['name'])" "$d/manifest.json")
src=$(ls "$d"/*.cu)
python3 bench/gpu/probes/lean_rows.py "$2" "$3" "$4" "$5" "$name" "$src" > "$src.lean"
mv "$src.lean" "$src"
"${6:-build-rt}/compiler/nvrtc/fusiond_cgdev" --compile-cu "$src" "$name" "$d/$name.cubin"
