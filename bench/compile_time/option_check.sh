#!/usr/bin/env bash
# Does an NVRTC option that changes the cubins cost kernel speed? The corpus
# kernels as compiled today against the same kernels compiled with the
# option, timed side by side on the lent GPU.
#
#   here:  scripts/device_bundle.sh [BUILD_DIR]          (.devcarry/artifacts, the baseline)
#          bash bench/compile_time/option_check.sh prepare [BUILD_DIR] [--replace FROM TO]... [-- OPTION...]
#            recompiles every artifact's .cu with the pipeline's options plus
#            OPTION... (after replacing FROM by TO in it: a code generation idea)
#            into .devcarry/nvrtc_variant/ (fusiond_nvrtc_variant: it prints
#            registers, whether the code differs, NVRTC CPU time both ways)
#   there: OUT=$OUT bash bench/compile_time/option_check.sh run [ROUNDS]   (carry .devcarry)
#            (the device needs only .devcarry: fusions/, artifacts/, nvrtc_variant/)
#            ROUNDS (default 2) interleaved rounds of bench/gpu/run.py over the
#            corpus (no torch.compile), baseline then option; per fusion the best
#            round of each (do_bench with preallocated outputs, and steady state)
#            is compared by option_compare.py
#
# Exit status of run: 1 when any fusion's option kernels are more than 1%
# slower (LOSS_PCT, default 1) under either timing, fail their check, or did
# not run; 0 otherwise. The reports land in $OUT/option_check/.
set -uo pipefail
cd "$(dirname "$0")/../.."
D=${FUSIOND_DEVCARRY:-.devcarry}
case "${1:-}" in
  prepare)
    shift
    BUILD=build-rt
    case "${1:-}" in --* | "") ;; *) BUILD=$1; shift ;; esac
    [ $# -gt 0 ] || { echo "option_check prepare: no --replace and no NVRTC option after --" >&2; exit 2; }
    [ -d "$D/artifacts" ] || { echo "option_check: no $D/artifacts (run scripts/device_bundle.sh first)" >&2; exit 1; }
    ninja -C "$BUILD" -j2 fusiond_nvrtc_variant >/dev/null || exit 1
    rm -rf "${D:?}/nvrtc_variant"
    CUDA_CACHE_DISABLE=1 "$BUILD/bench/compile_time/fusiond_nvrtc_variant" "$D/artifacts" \
      "$D/nvrtc_variant" "$@"
    ;;
  run)
    ROUNDS=${2:-2}
    OUT=${OUT:-bench/out}
    R=$OUT/option_check
    mkdir -p "$R"
    for need in "$D/fusions/CORPUS" "$D/artifacts" "$D/nvrtc_variant/OPTIONS"; do
      [ -e "$need" ] || { echo "option_check: no $need (prepare it here first)"; exit 1; }
    done
    echo "variant: $(tr '\n' ' ' <"$D/nvrtc_variant/OPTIONS")"
    mapfile -t corpus < <(sed "s|^|$D/fusions/|" "$D/fusions/CORPUS")
    for round in $(seq 1 "$ROUNDS"); do
      for side in base option; do
        arts=$D/artifacts
        [ $side = option ] && arts=$D/nvrtc_variant
        timeout "${ROUND_TIMEOUT:-240}" python3 bench/gpu/run.py --no-compile --three-shapes \
          --artifacts "$arts" --fusions "${corpus[@]}" --out "$R" --tag "$side-r$round" \
          >"$R/$side-r$round.log" 2>&1
        echo "round $round $side: run.py exit $?"
      done
    done
    python3 bench/compile_time/option_compare.py --loss-pct "${LOSS_PCT:-1}" \
      --base "$R"/gpu-*-base-r*.json --option "$R"/gpu-*-option-r*.json
    ;;
  *) sed -n 2,20p "$0"; exit 2 ;;
esac
