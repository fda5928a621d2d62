#!/usr/bin/env bash
# Nsight Compute on softmax backward at 16384x4096 bf16: our kernel (the
# variant named $1, default sb16k, from bench/gpu/variants.sh prepare)
# against torch.compile's Triton kernel of the same math, the same sections
# and metrics for both, to see where the 3-4% between them goes.
# Usage (on the GPU machine, carry .devcarry): bash bench/gpu/probes/softmax_bwd_ncu.sh [VARIANT]
set -uo pipefail
V=${1:-sb16k}
M=dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__occupancy_limit_registers,gpu__time_duration.sum
for s in long_scoreboard barrier short_scoreboard wait lg_throttle mio_throttle drain no_instruction; do
  M+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
done
show() { grep -E 'dram__|sm__warps|inst_executed|launch__|gpu__time|stalled' | sed 's/^ */  /'; }
echo "=== ours ($V)"
ncu --clock-control none --apply-rules no -k 'regex:fusion_|fz_' -c 1 --metrics "$M" \
  python3 bench/gpu/run.py --no-compile --no-steady --three-shapes --artifacts .devcarry/variants/$V \
  --fusions .devcarry/fusions/softmax_bwd.py --size-map 4096:16384,16384:4096 --out /tmp/x --rep 5 --warmup 1 2>&1 | show
echo "=== torch.compile"
cat > /tmp/sbc.py <<'PY'
import torch
def f(y, dy):
    yf, dyf = y.float(), dy.float()
    return (yf * (dyf - (dyf * yf).sum(1, keepdim=True))).to(torch.bfloat16)
g = torch.compile(f)
y = torch.softmax(torch.randn(16384, 4096, device="cuda"), -1).to(torch.bfloat16)
dy = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(40):
    g(y, dy)
torch.cuda.synchronize()
PY
ncu --clock-control none --apply-rules no -k 'regex:triton_' --launch-skip 30 -c 1 --metrics "$M" python3 /tmp/sbc.py 2>&1 | show
