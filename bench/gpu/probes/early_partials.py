"""A block's column partials stored during its last row instead of after
it (session 19, for a later device session). The timeline of layernorm
backward 4096x16384 (bench/results/gpu-2026-11-30-s19-3-timelines.log) has
the last block issue its 128 KiB of partials 5.6 us after its loop ends,
and the grid barrier wait for that. A chunk's accumulators are final once
the last iteration's second pass has added that chunk's terms, so here each
chunk's partials are stored right after its `fin` in the last iteration
(interleaved with that row's dx stores) and the store block after the loop
is gone. Kernels without clusters (cluster_x=1) only.
Usage: early_partials.py GENERATED.cu OUT.cu"""
import re
import sys

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()
if "__cluster_dims__" in s:
    sys.exit("early_partials.py: a cluster kernel (its partials go through shared memory): " + src)
post = re.compile(r"((?:  fz_cp_wait<0>\(\);\n)?)  if \(fits\) \{\n#pragma unroll\n    for \(int k = 0; k < \d+; \+\+k\) \{\n"
                  r"      const i64 jj = [^\n]*\n      if \(jj < rlen\) \{\n((?:[^\n]*\n)*?)      \}\n    \}\n  \}\n"
                  r"  fz_grid_sync\(bar\);\n")
m = post.search(s)
if not m:
    sys.exit("early_partials.py: no partial stores between the loop and the grid barrier in " + src)
stores = m.group(2)
s = s[:m.start()] + m.group(1) + "  fz_grid_sync(bar);\n" + s[m.end():]
loop = s.index("for (i64 it = 0; it < iters; ++it)")
calls = [c for c in re.finditer(r"\n( +)if \(active && jj < rlen\) fin\(VW<\d+>\(\)[^\n]*\n", s) if c.start() > loop]
if not calls:
    sys.exit("early_partials.py: no second-pass fin call in the row loop of " + src)
c = calls[-1]
ind = c.group(1)
body = "".join(ind + "  " + line.lstrip() + "\n" if not line.startswith("#") else line + "\n"
               for line in stores.rstrip("\n").split("\n"))
insert = f"{ind}if (it + 1 == iters && jj < rlen) {{\n{body}{ind}}}\n"
s = s[:c.end()] + insert + s[c.end():]
open(dst, "w").write(s)
