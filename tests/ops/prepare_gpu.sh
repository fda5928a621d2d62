#!/usr/bin/env bash
# Compiles the GPU check fusions of the new ops (tests/ops/fusions/*.py) here
# (NVRTC needs no GPU) into the git-ignored .devcarry/ops/: the scripts under
# .devcarry/ops/fusions/ and `fusionc compile --out` artifacts under
# .devcarry/ops/<stem>/. Then prints the device commands:
#  - bench/gpu/run.py runs the fusions without random ops against their
#    float64 reference (client/python/fusiond/frontend_torch.py), PyTorch
#    eager and torch.compile, and exits non-zero when any output is wrong or
#    any artifact is missing;
#  - fusiond_ops_gpu_check (tests/ops/gpu_check_main.cc, bundled with its
#    libraries under .devcarry/ops/bin and lib) runs the fusions with random
#    ops or iota (which the torch reference lacks) and those with slice, pad or cat
#    listed in .devcarry/ops/RANDOM, each under its pipeline schedule and
#    the other schedules fusiond_cgdev compiles below (.devcarry/ops/<stem>.alt<k>/),
#    against the CPU reference: random values and masks bit for bit.
# Usage: tests/ops/prepare_gpu.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
FUSIONC="$BUILD/client/fusionc/fusionc"
ninja -C "$BUILD" -j2 fusionc fusiond_cgdev fusiond_ops_gpu_check >/dev/null ||
  { echo "building fusionc, fusiond_cgdev and fusiond_ops_gpu_check in $BUILD failed" >&2; exit 1; }
CGDEV="$BUILD/compiler/nvrtc/fusiond_cgdev"
CHECK="$BUILD/tests/ops/fusiond_ops_gpu_check"
OUT=.devcarry/ops
rm -rf "${OUT:?}"
mkdir -p "$OUT/fusions" "$OUT/bin" "$OUT/lib"
cp tests/ops/fusions/*.py "$OUT/fusions/"
failed=0
harness=()
for f in "$OUT"/fusions/*.py; do
  stem=$(basename "$f" .py)
  if ! "$FUSIONC" compile "$f" --no-cache --out "$OUT/$stem" >"$OUT/$stem.log" 2>&1; then
    echo "FAILED to compile $stem:" >&2
    tail -3 "$OUT/$stem.log" >&2
    failed=1
  fi
  grep -qE "fd\.ops\.(uniform|normal|rand_like|randn_like|iota)\(" "$f" || harness+=("$OUT/fusions/$stem.py")
done

# Other schedules of the single-kernel random fusions (hand-set heuristics:
# another vector width, threads, persistent batch, a multi-pass kernel that
# computes the random values once per pass, an outer kernel without lanes); random_ops_1024x4096 is two
# segments, random_ops_onekernel_1024x4096 the same values in one.
alts() {
  case "$1" in
    dropout_layernorm_fwd_2048x8192)
      echo "vectorize=4 block_x=256 persistent_batch=8|multi_pass=true vectorize=2 block_x=256 persistent_batch=1" ;;
    dropout_rmsnorm_fwd_2048x8192)
      echo "vectorize=2 block_x=512 persistent_batch=8|multi_pass=true vectorize=8 block_x=128 persistent_batch=1" ;;
    dropout_bwd_2048x8192) echo "vectorize=1 unroll=1 block_x=128 block_y=4" ;;
    dropout_layernorm_bwd_2048x8192) echo "vectorize=4 block_x=256 persistent_batch=8" ;;
    random_ops_onekernel_1024x4096) echo "vectorize=1 block_x=256|vectorize=4 block_x=128 unroll=4" ;;
    dropout_softmax_dim0_2048x8192) echo "rows_per_block=1" ;;
    dropout_row_col_sums_2048x4096) echo "vectorize=2 block_x=256 persistent_batch=8" ;;
    # Shift ops: lane by lane (vectorize=1) against chunks of other widths.
    rope_fwd_2x32x2048x128|rope_partial_fwd_2x32x2048x128|rope_bwd_2x32x2048x128)
      echo "vectorize=1 unroll=4|vectorize=4 block_x=256" ;;
    slice_sum_4096x8192)
      echo "multi_pass=true vectorize=4 block_x=256 persistent_batch=1 reread_rows=false exact_tiling=false|vectorize=1 block_x=512 persistent_batch=8" ;;
    pad_softmax_2048x4096|slice_layernorm_2048x4096)
      echo "multi_pass=true vectorize=4 block_x=128 persistent_batch=1 reread_rows=false exact_tiling=false" ;;
    pad_row_col_sums_2048x4096) echo "vectorize=2 block_x=256 persistent_batch=8" ;;
    slice_outer_sum_2048x4096) echo "rows_per_block=1" ;;
  esac
}
: >"$OUT/RANDOM"
for f in "$OUT"/fusions/*.py; do
  stem=$(basename "$f" .py)
  # Random ops and iota (which the torch reference lacks), and shift ops
  # under other schedules, against the CPU reference.
  grep -qE "fd\.ops\.(uniform|normal|rand_like|randn_like|iota|slice|pad|cat)\(" "$f" || continue
  line="$stem"
  IFS='|' read -r -a sets <<<"$(alts "$stem")"
  k=0
  for set in "${sets[@]}"; do
    [ -n "$set" ] || continue
    k=$((k + 1))
    # shellcheck disable=SC2086
    if "$CGDEV" "$f" "$OUT/$stem.alt$k" $set >"$OUT/$stem.alt$k.log" 2>&1; then
      line="$line $stem.alt$k"
    else
      echo "FAILED to compile $stem with $set:" >&2
      tail -3 "$OUT/$stem.alt$k.log" >&2
      failed=1
    fi
  done
  echo "$line" >>"$OUT/RANDOM"
done

# The check and the shared libraries it needs (as scripts/device_bundle.sh).
bash scripts/bundle_binary.sh "$CHECK" "$OUT"
echo "prepare_gpu: $(du -sh "$OUT" | cut -f1) in $OUT" >&2
echo "carry: [\".devcarry\"]"
echo "device command: python3 bench/gpu/run.py --artifacts .devcarry/ops --fusions ${harness[*]} --require-ours --out \$OUT"
echo "device command: LD_LIBRARY_PATH=.devcarry/ops/lib .devcarry/ops/bin/fusiond_ops_gpu_check .devcarry/ops"
exit $failed
