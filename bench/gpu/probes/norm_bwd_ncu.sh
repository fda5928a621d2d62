#!/usr/bin/env bash
# Nsight Compute on the norm backwards at 4096x16384 bf16: layernorm (82% of
# copy in session 11's run 5) against rmsnorm (86%), the same metrics and
# stall reasons for both, to see where layernorm's extra time goes.
# Here: bash bench/gpu/variants.sh prepare bench/gpu/variants/s11-8-norm-bwd-ncu.txt build-rt
# There (carry .devcarry): bash bench/gpu/probes/norm_bwd_ncu.sh [VARIANT...]
# (default lb4k rb4k: the prepared variants to profile, by name)
set -uo pipefail
M=dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,gpu__time_duration.sum,lts__t_sector_hit_rate.pct
for s in long_scoreboard barrier short_scoreboard wait lg_throttle mio_throttle drain no_instruction membar; do
  M+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
done
show() { grep -E 'dram__|sm__warps|inst_executed|launch__|gpu__time|stalled|lts__' | sed 's/^ */  /'; }
[ $# -gt 0 ] || set -- lb4k rb4k
for v in "$@"; do
  read -r stem map _ <.devcarry/variants/$v/RUN
  flags=(--no-compile --no-steady --three-shapes --artifacts .devcarry/variants/$v
         --fusions .devcarry/fusions/$stem.py --out /tmp/x --rep 5 --warmup 1)
  [ "$map" != "-" ] && flags+=(--size-map "$map")
  echo "=== $v ($stem)"
  ncu --clock-control none --apply-rules no -k 'regex:fusion_|fz_' -c 1 --metrics "$M" \
    python3 bench/gpu/run.py "${flags[@]}" 2>&1 | show
done
