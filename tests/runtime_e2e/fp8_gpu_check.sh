#!/usr/bin/env bash
# The fp8 fusions through the C++ runtime on the GPU: tests/frontends'
# fp8_amax_scale_cast_e4m3, fp8_delayed_scaling_cast_e5m2 and
# fp8_per_channel_amax_outer_axes and tests/ops' fp8_scale_* (fp8 inputs
# and outputs) compiled with fusionc, loaded by LoadedFusion and run by
# fusiond_ops_gpu_check (tests/ops/gpu_check_main.cc) into NaN-filled
# outputs, each output against the CPU reference (corpus::CheckOutput: an
# fp8 output must equal the reference's element for element, as integer
# outputs do).
#
#   here:   bash tests/runtime_e2e/fp8_gpu_check.sh prepare [BUILD_DIR]
#           compiles into .devcarry/fp8/<stem>/ and bundles the check with
#           its libraries under .devcarry/fp8/bin and lib (BUILD_DIR: build).
#   device: bash tests/runtime_e2e/fp8_gpu_check.sh run   (carry: [".devcarry"])
# Exit status 1 when a fusion fails to compile, load, run or match.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
D=${FUSIOND_DEVCARRY:-.devcarry}/fp8
FILES=(tests/frontends/fusions/fp8_amax_scale_cast_e4m3.py
  tests/frontends/fusions/fp8_delayed_scaling_cast_e5m2.py
  tests/frontends/fusions/fp8_per_channel_amax_outer_axes.py
  tests/ops/fusions/fp8_scale_*.py)
case "${1:-}" in
  prepare)
    BUILD=${2:-build}
    ninja -C "$BUILD" -j2 fusionc fusiond_ops_gpu_check >/dev/null ||
      { echo "fp8_gpu_check: building fusionc and fusiond_ops_gpu_check in $BUILD failed"; exit 1; }
    rm -rf "$D"
    mkdir -p "$D/fusions"
    : >"$D/RANDOM"
    failed=0
    for f in "${FILES[@]}"; do
      stem=$(basename "$f" .py)
      cp "$f" "$D/fusions/"
      if "$BUILD/client/fusionc/fusionc" compile "$f" --no-cache --out "$D/$stem" \
        >"$D/$stem.log" 2>&1; then
        echo "$stem" >>"$D/RANDOM"
      else
        echo "fp8_gpu_check: $stem: $(tail -1 "$D/$stem.log")"; failed=1
      fi
    done
    bash scripts/bundle_binary.sh "$BUILD/tests/ops/fusiond_ops_gpu_check" "$D" || exit 1
    echo "fp8_gpu_check: $(wc -l <"$D/RANDOM") fusions in $D"
    echo "device: bash tests/runtime_e2e/fp8_gpu_check.sh run   (carry: [\".devcarry\"])"
    exit $failed
    ;;
  run)
    [ -s "$D/RANDOM" ] || { echo "fp8_gpu_check: no $D/RANDOM (run prepare here first)"; exit 1; }
    LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$D/bin/fusiond_ops_gpu_check" "$D"
    ;;
  *) sed -n 2,16p "$0"; exit 2 ;;
esac
