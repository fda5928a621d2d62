#!/usr/bin/env bash
# Nsight Compute's summary (speed of light, occupancy, launch) of the first
# launch of our kernel for each named variant of bench/gpu/variants.sh.
# With NCU_STALLS=1 also DRAM bytes and the warp stall reasons (cycles per
# issued instruction spent in each), to see what a kernel waits on.
# Usage (on the GPU machine): [NCU_STALLS=1] bash bench/gpu/ncu_variants.sh NAME...
stalls=()
if [ "${NCU_STALLS:-0}" = 1 ]; then
  m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__inst_executed.sum
  for s in long_scoreboard barrier short_scoreboard wait math_pipe_throttle lg_throttle \
           mio_throttle membar drain not_selected selected no_instruction dispatch_stall; do
    m+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
  done
  stalls=(--metrics "$m")
fi
for v in "$@"; do
  read -r stem map compile < .devcarry/variants/$v/RUN
  echo "=== ncu $v"
  map_flag=()
  [ "$map" != "-" ] && map_flag=(--size-map "$map")
  ncu --clock-control none --apply-rules no -k 'regex:fusion_|fz_' -c 1 --section SpeedOfLight --section WarpStateStats \
    --section Occupancy --section LaunchStats "${stalls[@]}" \
    python3 bench/gpu/run.py --no-compile --three-shapes --artifacts .devcarry/variants/$v --fusions .devcarry/fusions/$stem.py --out /tmp/x --rep 5 --warmup 1 "${map_flag[@]}" 2>&1 \
    | grep -E 'Duration|Throughput|Achieved Occupancy|Registers|Stall|stalled|bytes|inst_executed|Warp Cycles|Block Limit Reg|Block Limit Shared|Waves|Grid Size|Block Size|Dynamic Shared|Active Warps|Eligible Warps|Issued Warp' | head -60
done
