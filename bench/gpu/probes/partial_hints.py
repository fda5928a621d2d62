"""Column partial stores with an L2 cache policy (session 20, for a later
device session). Layernorm backward 4096x16384 lost ~6 us to its partial
stores, three times what their 8.4 MB cost at the DRAM's rate
(partial_cost.py; docs/heuristics-tuning.md, session 20). If the partial
lines written while other blocks still stream their rows are evicted
before the epilogue reads them (written to the DRAM, then read back), an
evict-last policy keeps them. Every store of the form
`*(float4*)(wcol + ...) = VALUE;` (cluster and plain kernels) becomes
fz_st_part(), which stores with MODE:
  evict_last  st.global.L2::cache_hint with createpolicy evict_last;
  cg          st.global.cg (L2 only);
  plain       st.global through the same asm (the control).
Usage: partial_hints.py GENERATED.cu OUT.cu MODE"""
import re
import sys

from probe_args import probe_args

MODES = {
    "evict_last": ('  u64 pol;\n  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));\n'
                   '  asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" :: "l"(p), "f"(v.x), '
                   '"f"(v.y), "f"(v.z), "f"(v.w), "l"(pol) : "memory");\n'),
    "cg": ('  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), '
           '"f"(v.w) : "memory");\n'),
    "plain": ('  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), '
              '"f"(v.w) : "memory");\n'),
}
src, dst, mode = probe_args(3, __doc__, {2: tuple(MODES)})[:3]
s = open(src).read()
s, n = re.subn(r"\*\(float4\*\)\((wcol \+ [^;]*?)\) = ([^;]+);", r"fz_st_part((float4*)(\1), \2);", s)
if n == 0:
    sys.exit("partial_hints.py: no float4 partial store in " + src)
head = s.index('extern "C" __global__')
helper = "__device__ __forceinline__ void fz_st_part(float4* p, float4 v) {\n" + MODES[mode] + "}\n"
open(dst, "w").write(s[:head] + helper + s[head:])
