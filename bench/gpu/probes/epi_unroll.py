"""More partial rows in flight per thread in the column epilogue (session
19). Run 4's timeline of layernorm backward 4096x16384 spends 3.5 us from
the grid barrier to the end: each block sums two 64-column tiles of 128
partial rows, its 32 groups of 16 lanes taking four partials each with
`#pragma unroll 2` (kEpilogueLoads), so a tile costs two dependent L2
round trips and the block four. Here the unroll is N.
Usage: epi_unroll.py GENERATED.cu OUT.cu N"""
import re
import sys

from probe_args import probe_args

src, dst, n = probe_args(3, __doc__)[:3]
s = open(src).read()
pat = re.compile(r"#pragma unroll \d+\n(\s+for \(int p = grp; p < P; p \+= \d+\) \{)")
if not pat.search(s):
    sys.exit("epi_unroll.py: no epilogue partial loop in " + src)
s = pat.sub(lambda m: f"#pragma unroll {int(n)}\n{m.group(1)}", s, count=1)
open(dst, "w").write(s)
