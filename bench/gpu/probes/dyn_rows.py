"""Rows handed out at run time in a staged inner-outer persistent kernel
(session 19). The timeline of layernorm backward 4096x16384 (run 3) has
the blocks end their 32 static rows between 85 and 108 us, and the same
groups of SM ids late in two launches (a hardware share of bandwidth, not
chance), so the grid waits ~15 us for its slowest blocks. Here each block
keeps its first two rows (blockIdx.x and blockIdx.x + gridDim.x, which the
prologue and the first iteration prefetch as before) and takes every later
row from a counter: thread 0 takes the row of iteration it + 2 at the top of
iteration it (its L2 round trip hidden behind the wait and the first pass),
publishes it in shared memory before the row reduction's barrier, and every
thread reads it at the end of the iteration. The counter (word 8 of the
barrier workspace, kept across launches) is put back to zero by block 0
after the grid barrier, when no block takes rows any more.
Not deterministic: which block sums a row's column terms changes from run
to run, so dw and db may differ in the last bits between runs.
Usage: dyn_rows.py GENERATED.cu OUT.cu"""
import re
import sys

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()


def sub1(old, new, text, count=1):
    if old not in text:
        sys.exit(f"dyn_rows.py: '{old}' not in {src}")
    return text.replace(old, new, count)


head = "  const i64 iters = (rows + rstride - 1) / rstride;\n  for (i64 it = 0; it < iters; ++it) {\n    row = it * rstride + (i64)blockIdx.x * 1 + ty;\n    active = row < rows;\n"
new_head = ("  __shared__ i64 fz_dyn[2];\n  u32* fz_ctr = bar + 8;\n"
            "  i64 cur = (i64)blockIdx.x, nxt = cur + rstride;\n"
            "  for (i64 it = 0; ; ++it) {\n    row = cur;\n    if (row >= rows) break;\n    active = true;\n"
            "    i64 take = 0;\n    if (tx == 0) take = 2 * rstride + (i64)atomicAdd(fz_ctr, 1u);\n")
s = sub1(head, new_head, s)
s = sub1("const i64 srow = row + (i64)1 * rstride;", "const i64 srow = nxt;", s)
s = sub1("const i64 nrow = row + rstride;", "const i64 nrow = nxt;", s)
# The first barrier of the loop body: publish the take before it.
loop_at = s.index("for (i64 it = 0; ; ++it)")
b = s.index("    __syncthreads();\n", loop_at)
s = s[:b] + "    if (tx == 0) fz_dyn[it & 1] = take;\n" + s[b:]
# The end of the loop body.
m = re.compile(r"\n  \}\n  fz_cp_wait<0>\(\);\n").search(s, b)
if not m:
    sys.exit("dyn_rows.py: no loop end followed by fz_cp_wait<0>() in " + src)
s = s[:m.start()] + "\n    cur = nxt;\n    nxt = fz_dyn[it & 1];" + s[m.start():]
g = s.find("\n  fz_grid_sync(bar);\n", m.start())
if g < 0:
    sys.exit("dyn_rows.py: no grid barrier after the row loop in " + src)
g += len("\n  fz_grid_sync(bar);\n")
s = s[:g] + "  if (blockIdx.x == 0 && blockIdx.y == 0 && tx == 0 && ty == 0) *(volatile u32*)fz_ctr = 0;\n" + s[g:]
open(dst, "w").write(s)
