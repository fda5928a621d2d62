"""L2 policies for a two-pass kernel (session 12, run 7): the first pass
(the reductions) loads its inputs with the L2 evict_last policy, so that the
output the second pass writes evicts other lines first and what the first
pass read last is still in L2 when the second pass (walking the row
backwards) starts on it; the second pass loads with evict_first (each line
is dead after it). MODE: "lf" those loads; "lfs" also streaming (.cs)
stores of the second pass's output.

  l2_two_pass.py GENERATED.cu OUT.cu lf|lfs

Uses reread_hints.py's load helpers. For generated multi-pass kernels whose
vector loads read `w_inN[u]` (the outer persistent batch norm backward)."""
import os
import sys

from probe_args import probe_args

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reread_hints import HELPERS, hinted  # noqa: E402

src, dst, mode = probe_args(3, __doc__, {2: ("lf", "lfs")})[:3]
text = open(src).read()
pre, ker = text.split('extern "C"', 1)
first, final = ('extern "C"' + ker).split("auto fin = ", 1)
first, final = hinted(first, "fz_ld_last"), hinted(final, "fz_ld_first")
assert "fz_ld_last" in first and "fz_ld_first" in final, "no vector loads of the expected form"
if mode == "lfs":
    final = final.replace("Chunk<VV * 2>::st(", "Chunk<VV * 2>::stcs(")
    assert "::stcs(" in final
open(dst, "w").write(pre + HELPERS + first + "auto fin = " + final)
