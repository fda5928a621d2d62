#!/usr/bin/env bash
# The GPU check of tests/random's graphs whose reductions over broadcast axes
# the trivial_reductions pass now rewrites (they ran on one block before:
# the launch audit's seeds 238, 471, 990, 1598, 1756, 1396, and SEEDS=...
# for others): each seed compiled here by fusiond_random_gpu_bundle, run on
# the GPU by fusiond_random_gpu_check (C++ runtime, NaN- and 0x42-filled
# outputs) against the CPU reference evaluating the original definition.
#
#   here:   bash tests/launch_audit/random_seeds_gpu_check.sh prepare [BUILD_DIR]
#           writes .devcarry/launch_audit_rnd/r<seed>/ and the check's bundle
#           (bin, lib); BUILD_DIR defaults to build.
#   device: bash tests/launch_audit/random_seeds_gpu_check.sh run   (carry: [".devcarry"])
# Exit status 1 when a seed fails to compile or its check fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
D=${FUSIOND_DEVCARRY:-.devcarry}/launch_audit_rnd
read -r -a seeds <<<"${SEEDS:-238 471 990 1598 1756 1396}"
case "${1:-}" in
  prepare)
    BUILD=${2:-build}
    ninja -C "$BUILD" -j2 fusiond_random_gpu_bundle fusiond_random_gpu_check fusiond_launch_audit \
      >/dev/null || { echo "random_seeds_gpu_check: building in $BUILD failed"; exit 1; }
    rm -rf "$D"
    mkdir -p "$D"
    failed=0
    for s in "${seeds[@]}"; do
      if ! "$BUILD/tests/random/fusiond_random_gpu_bundle" "$s" 1 "$D/s$s" >"$D/s$s.log" 2>&1 ||
        ! grep -q "^$s compiled" "$D/s$s/BUNDLE"; then
        echo "random_seeds_gpu_check: seed $s: $(tail -1 "$D/s$s.log")"; failed=1
      fi
      "$BUILD/tests/launch_audit/fusiond_launch_audit" --random "$s:1" | tail -1
    done
    bash scripts/bundle_binary.sh "$BUILD/tests/runtime_e2e/fusiond_random_gpu_check" "$D" || exit 1
    echo "device: bash tests/launch_audit/random_seeds_gpu_check.sh run   (carry: [\".devcarry\"])"
    exit $failed
    ;;
  run)
    rc=0
    for s in "${seeds[@]}"; do
      [ -s "$D/s$s/BUNDLE" ] || { echo "random_seeds_gpu_check: no $D/s$s (prepare here first)"; rc=1; continue; }
      echo "== seed $s"
      LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$D/bin/fusiond_random_gpu_check" "$D/s$s" >"$D/s$s.run.log" 2>&1 || rc=1
      grep -E "^SUMMARY|^FAIL|fail" "$D/s$s.run.log"
    done
    exit "$rc"
    ;;
  *) sed -n 2,13p "$0"; exit 2 ;;
esac
