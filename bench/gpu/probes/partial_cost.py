"""What a cluster kernel's column partials cost (session 20; timings only:
the outputs come out wrong). From a generated inner-outer kernel with
clusters (cluster_x > 1), mode
  nostores  keeps the partial sums but stores them only when a value is
            12345 (never on random data): no workspace writes;
  noloads   reads both blocks' accumulators from the block's own shared
            memory instead of the cluster's (no distributed loads).
Usage: partial_cost.py GENERATED.cu OUT.cu MODE
Timed with bench/gpu/timeline.py ARTIFACT_DIR --cu OUT.cu and probes around
the cluster partials (bench/results/gpu-2026-12-01-s20-7-timeline-edits.log):
layernorm backward 4096x16384 without the partial stores ended its last row
loop at 98.4 us instead of 104.4 and the kernel at 107.2 instead of 114.2;
without the distributed loads nothing changed."""
import re
import sys

from probe_args import probe_args

src, dst, mode = probe_args(3, __doc__, {2: ("nostores", "noloads")})[:3]
s = open(src).read()
if "__cluster_dims__" not in s:
    sys.exit("partial_cost.py: not a cluster kernel: " + src)
if mode == "nostores":
    out, n = re.subn(r"(\*\(float4\*\)\(wcol \+ \(\(i64\)\(blockIdx\.x / \d+\) \* \d+ \+ \d+\) \* wstride \+ j\) = (s\d+);)",
                     r"if (\2.x == 12345.f) \1", s)
else:
    out, n = re.subn(r"fz_dsmem_ld4\(fz_cs \+ (\d+) \+ q, (\d+)\)", r"fz_cs[\1 + q + \2]", s)
if n == 0:
    sys.exit(f"partial_cost.py: nothing to edit for {mode} in {src}")
open(dst, "w").write(out)
