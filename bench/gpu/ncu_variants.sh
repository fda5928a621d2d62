#!/usr/bin/env bash
# Nsight Compute's summary (speed of light, occupancy, launch) of the first
# launch of our kernel for each named variant of bench/gpu/variants.sh.
# Usage (on the GPU machine): bash bench/gpu/ncu_variants.sh NAME...
for v in "$@"; do
  read -r stem map compile < .devcarry/variants/$v/RUN
  echo "=== ncu $v"
  map_flag=()
  [ "$map" != "-" ] && map_flag=(--size-map "$map")
  ncu --clock-control none -k 'regex:fusion_|fz_' -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    python3 bench/gpu/run.py --no-compile --three-shapes --artifacts .devcarry/variants/$v --fusions .devcarry/fusions/$stem.py --out /tmp/x --rep 5 --warmup 1 "${map_flag[@]}" 2>&1 \
    | grep -E 'Duration|Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles|Block Limit|Waves|Grid Size|Block Size|Shared Memory Config|Dynamic Shared|One or More|No Eligible|Active Warps|Eligible Warps|Issued Warp' | head -40
done
