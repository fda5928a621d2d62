#!/usr/bin/env bash
# The GPU half of the launch audit's fixes: each kernel whose grid the audit
# changed, correct against float64 and timed against torch.compile by
# bench/gpu/run.py (do_bench and steady state), at the sizes of the cliff.
#
#   here:   bash tests/launch_audit/gpu_check.sh prepare [BUILD_DIR]
#           compiles every case with `fusionc compile --shapes --no-cache
#           --out` into .devcarry/launch_audit/<set>/<stem>/ and prints the
#           audit's launch of each (fusiond_launch_audit).
#   device: OUT=$OUT bash tests/launch_audit/gpu_check.sh run
#           (carry: [".devcarry"])
# Sets (artifacts compiled at COMPILE, run at the inputs list's sizes mapped
# by MAP, one artifact for the set):
#   rows64      softmax fwd/bwd, rmsnorm fwd, layernorm fwd at 64x65536 bf16
#               (rows split over two blocks: 128 blocks, was 64)
#   shortwide   relu_threshold_bwd_bf16 (a column sum beside a full output) at
#               64x65536 (lanes form: 256+ blocks, was 32 blocks of rows)
#   colsum_big  column_sum_symbolic compiled at 64x256, run at 8192x8192 and
#               2048x8192 (256 blocks, was 8)
#   lonegroup   column_sum_symbolic at 262144x32 (split 128, was 64)
#   fewrows     gpt2_log_softmax_odd_vocab at 64x50257 (inner reduction,
#               two blocks a row: 128 blocks; was inner persistent, 64)
#   pointwise_small*  ops_unary, bias_gelu_fwd compiled at 64x256, run at
#               8192x8192 (two waves, 528 blocks; was 16)
#   boxloss     yolo_ciou_box_loss_atan at its sizes (a whole-tensor sum of 5
#               MB: 131 blocks of 256 threads, was 16 of 512)
#   qkvheads    nanogpt_qkv_split_heads_transpose at its sizes (one kernel
#               reading the projection once, was two)
# Exit status 1 when a fusion fails its float64 check or does not run;
# fusions slower than torch.compile are printed by run.py's table.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
D=${FUSIOND_DEVCARRY:-.devcarry}/launch_audit
# set|file|--shapes for the compile|run.py --size-map
CASES=(
  "rows64|tests/corpus/fusions/softmax_fwd.py|64x65536|4096:64,16384:65536"
  "rows64|tests/corpus/fusions/softmax_bwd.py|64x65536;64x65536|4096:64,16384:65536"
  "rows64b|tests/corpus/fusions/rmsnorm_fwd.py|64x65536;65536|2048:64,8192:65536"
  "rows64b|tests/corpus/fusions/layernorm_fwd.py|64x65536;65536;65536|2048:64,8192:65536"
  "shortwide|tests/frontends/fusions/relu_threshold_bwd_bf16.py|64x65536;64x65536|16384:64,4096:65536"
  "colsum_big|tests/launch_audit/fusions/column_sum_symbolic.py|64x256|64:8192,256:8192"
  "colsum_wide|tests/launch_audit/fusions/column_sum_symbolic.py|64x256|64:2048,256:8192"
  "lonegroup|tests/launch_audit/fusions/column_sum_symbolic.py|262144x32|64:262144,256:32"
  "fewrows|tests/frontends/fusions/gpt2_log_softmax_odd_vocab.py|64x50257|1024:64"
  "pointwise_small|tests/ops/fusions/ops_unary_2048x8192.py|64x256|2048:8192"
  "pointwise_small2|tests/corpus/fusions/bias_gelu_fwd.py|64x256;256|8192:8192"
  "boxloss|tests/frontends/fusions/yolo_ciou_box_loss_atan.py|134400x4;134400x4;134400x1;scalar|"
  "qkvheads|tests/frontends/fusions/nanogpt_qkv_split_heads_transpose.py|4096x2304|"
)
case "${1:-}" in
  prepare)
    BUILD=${2:-build}
    ninja -C "$BUILD" -j2 fusionc fusiond_launch_audit >/dev/null ||
      { echo "launch_audit gpu_check: building fusionc in $BUILD failed"; exit 1; }
    rm -rf "$D"
    failed=0
    for c in "${CASES[@]}"; do
      IFS='|' read -r set file shapes map <<<"$c"
      stem=$(basename "$file" .py)
      mkdir -p "$D/$set/fusions"
      cp "$file" "$D/$set/fusions/"
      echo "$map" >"$D/$set/MAP"
      if ! "$BUILD/client/fusionc/fusionc" compile "$file" --shapes "$shapes" --no-cache \
        --out "$D/$set/$stem" >"$D/$set/$stem.log" 2>&1; then
        echo "launch_audit gpu_check: $set $stem: $(tail -1 "$D/$set/$stem.log")"; failed=1
      fi
    done
    echo "fusionc compile from $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- compiler || echo '+uncommitted compiler/ changes')" \
      >"$D/PRODUCER"
    "$BUILD/tests/launch_audit/fusiond_launch_audit" --all --shapes 64x65536 \
      tests/corpus/fusions/softmax_fwd.py | head -3
    echo "device: OUT=\$OUT bash tests/launch_audit/gpu_check.sh run   (carry: [\".devcarry\"])"
    exit $failed
    ;;
  run)
    OUT=${OUT:-bench/out}
    [ -s "$D/PRODUCER" ] || { echo "launch_audit gpu_check: no $D (run prepare here first)"; exit 1; }
    cat "$D/PRODUCER"
    mkdir -p "$OUT/launch_audit"
    rc=0
    for dir in "$D"/*/; do
      set=$(basename "$dir")
      [ -s "$dir/MAP" ] || continue
      echo "== $set (size map $(cat "$dir/MAP"))"
      python3 bench/gpu/run.py --artifacts "$dir" --fusions "$dir"/fusions/*.py --require-ours \
        --size-map "$(cat "$dir/MAP")" --three-shapes --warmup 10 --rep 40 \
        --out "$OUT/launch_audit" --tag "launch-audit-$set" 2>&1 | tee "$OUT/launch_audit/$set.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    done
    exit "$rc"
    ;;
  *) sed -n 2,30p "$0"; exit 2 ;;
esac
