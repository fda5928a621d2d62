for v in rbm-base rf-base lf-base; do
  read -r stem map < .devcarry/variants/$v/RUN
  echo "=== ncu $v"
  ncu --clock-control none -k 'regex:fusion_|fz_' -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    python3 bench/gpu/run.py --no-compile --three-shapes --artifacts .devcarry/variants/$v --fusions .devcarry/fusions/$stem.py --out /tmp/x --rep 5 --warmup 1 2>&1 \
    | grep -E 'Duration|Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles|Block Limit|Waves|Grid Size|Block Size|Shared Memory Config|Dynamic Shared|One or More|No Eligible|Active Warps|Eligible Warps|Issued Warp' | head -40
done
