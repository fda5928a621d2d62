#!/usr/bin/env bash
# Does an NVRTC option that changes the cubins cost kernel speed? The corpus
# kernels as compiled today against the same kernels compiled with the
# option, timed side by side on the lent GPU.
#
#   here:  scripts/device_bundle.sh [BUILD_DIR]          (.devcarry/artifacts, the baseline)
#          bash bench/compile_time/option_check.sh prepare [BUILD_DIR] [--name NAME] [--replace FROM TO]... [-- OPTION...]
#            recompiles every artifact's .cu with the pipeline's options plus
#            OPTION... (after replacing FROM by TO in it: a code generation idea)
#            into .devcarry/NAME/ (default nvrtc_variant, else nvrtc_variantSUFFIX; fusiond_nvrtc_variant:
#            it prints registers, stack frame, whether the code differs, NVRTC
#            CPU time both ways); several variants: one prepare per NAME
#   there: OUT=$OUT bash bench/compile_time/option_check.sh run [ROUNDS [NAME...]]   (carry .devcarry)
#            (the device needs only .devcarry: fusions/, artifacts/, the NAME dirs)
#            ROUNDS (default 2) interleaved rounds of bench/gpu/run.py over the
#            corpus (no torch.compile), baseline then each variant (default
#            nvrtc_variant); per fusion the best round of each (do_bench with
#            preallocated outputs, and steady state) is compared by option_compare.py,
#            each variant against the baseline
#
# Exit status of run: 1 when any variant's kernels of any fusion are more than 1%
# slower (LOSS_PCT, default 1) under either timing, fail their check, or did
# not run; 0 otherwise. The reports land in $OUT/option_check/.
set -uo pipefail
cd "$(dirname "$0")/../.."
D=${FUSIOND_DEVCARRY:-.devcarry}
# A variant's folder (which prepare replaces) starts nvrtc_variant, so that no
# other part of the bundle is touched; its name also tags its run.py reports
# (gpu-DATE-NAME-rN.json), which the comparison finds by glob: no '-' in it.
NAME_RULE="a variant name is nvrtc_variant followed by letters, digits, '_' or '.'"
bad_name() { case "$1" in nvrtc_variant*) ;; *) return 0 ;; esac; case "$1" in *[!A-Za-z0-9_.]*) return 0 ;; esac; return 1; }
case "${1:-}" in
  prepare)
    shift
    BUILD=build-rt
    case "${1:-}" in --* | "") ;; *) BUILD=$1; shift ;; esac
    NAME=nvrtc_variant
    if [ "${1:-}" = --name ]; then
      NAME=${2:-}
      shift 2 || shift $#
      bad_name "$NAME" && { echo "option_check prepare: $NAME_RULE" >&2; exit 2; }
    fi
    [ $# -gt 0 ] || { echo "option_check prepare: no --replace and no NVRTC option after --" >&2; exit 2; }
    [ -d "$D/artifacts" ] || { echo "option_check: no $D/artifacts (run scripts/device_bundle.sh first)" >&2; exit 1; }
    ninja -C "$BUILD" -j2 fusiond_nvrtc_variant >/dev/null || exit 1
    rm -rf "${D:?}/${NAME:?}"
    CUDA_CACHE_DISABLE=1 "$BUILD/bench/compile_time/fusiond_nvrtc_variant" "$D/artifacts" \
      "$D/$NAME" "$@"
    ;;
  run)
    ROUNDS=${2:-2}
    case "$ROUNDS" in "" | *[!0-9]*) echo "option_check run: ROUNDS is a number, before the names" >&2; exit 2 ;; esac
    shift 2 2>/dev/null || shift $#
    names=("$@")
    [ ${#names[@]} -gt 0 ] || names=(nvrtc_variant)
    OUT=${OUT:-bench/out}
    R=$OUT/option_check
    mkdir -p "$R"
    for need in "$D/fusions/CORPUS" "$D/artifacts"; do
      [ -e "$need" ] || { echo "option_check: no $need (prepare it here first)"; exit 1; }
    done
    for name in "${names[@]}"; do
      bad_name "$name" && { echo "option_check run: $NAME_RULE"; exit 2; }
      [ -e "$D/$name/OPTIONS" ] || { echo "option_check: no $D/$name/OPTIONS (prepare it here first)"; exit 1; }
      echo "variant $name: $(tr '\n' ' ' <"$D/$name/OPTIONS")"
    done
    mapfile -t corpus < <(sed "s|^|$D/fusions/|" "$D/fusions/CORPUS")
    for round in $(seq 1 "$ROUNDS"); do
      for side in base "${names[@]}"; do
        arts=$D/artifacts
        [ "$side" = base ] || arts=$D/$side
        timeout "${ROUND_TIMEOUT:-240}" python3 bench/gpu/run.py --no-compile --three-shapes \
          --artifacts "$arts" --fusions "${corpus[@]}" --out "$R" --tag "$side-r$round" \
          >"$R/$side-r$round.log" 2>&1
        echo "round $round $side: run.py exit $?"
      done
    done
    rc=0
    for name in "${names[@]}"; do
      echo "== $name ($(tr '\n' ' ' <"$D/$name/OPTIONS")) against the baseline"
      python3 bench/compile_time/option_compare.py --loss-pct "${LOSS_PCT:-1}" \
        --base "$R"/gpu-*-base-r*.json --option "$R"/gpu-*-"$name"-r*.json || rc=1
    done
    exit $rc
    ;;
  *) sed -n 2,23p "$0"; exit 2 ;;
esac
