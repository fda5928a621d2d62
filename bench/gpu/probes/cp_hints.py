"""The staged rows' cp.async copies with an L2 cache policy (session 21).
After do_bench's L2 flush the cache holds ~60 MB of dirty lines, and
layernorm backward 4096x16384's loop runs 5.5 us longer than without the
flush (timeline.py --flush), while a same-size copy does not lose: if the
rows' lines, dead once copied to shared memory, are allocated evict-first,
later allocations take them (clean, no write-back) before other lines.
Rewrites the prelude's fz_cp_async 16-byte copy to
`cp.async.cg.shared.global.L2::cache_hint [dst], [src], 16, 16, POLICY`
with POLICY from:
  evict_first        createpolicy.fractional evict_first, 1.0
  evict_last         the same with evict_last (the control for the policy's cost)
  range_evict_first  createpolicy.range evict_first over the copy's 16 bytes
Both fractional forms stopped on the H200 with an illegal instruction (runs
9-10; `16, POLICY` and `16, 16, POLICY` alike): ptxas miscompiles
fractional cache policies on cp.async (Triton worked around the same,
triton-lang/triton#11660, fixed in a later ptxas than NVRTC 13.0's); the
range policy stopped the same way (run 11). So with NVRTC 13.0 no cp.async
may carry an L2 cache hint; the probe stays for a later toolkit.
Usage: cp_hints.py GENERATED.cu OUT.cu MODE"""
import sys

from probe_args import probe_args

MODES = ("evict_first", "evict_last", "range_evict_first")
src, dst, mode = probe_args(3, __doc__, {2: MODES})[:3]
CP = 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(sa), "l"(g) : "memory");'
s = open(src).read()
if CP not in s:
    sys.exit("cp_hints.py: the prelude's fz_cp_async not in the expected form in " + src)
if mode == "range_evict_first":
    policy = 'asm volatile("createpolicy.range.global.L2::evict_first.b64 %0, [%1], 16, 16;" : "=l"(pol) : "l"(g));'
else:
    policy = 'asm volatile("createpolicy.fractional.L2::' + mode + '.b64 %0, 1.0;" : "=l"(pol));'
hinted = ('{ u64 pol; ' + policy + '\n'
          '    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, 16, %2;" :: "r"(sa), "l"(g), '
          '"l"(pol) : "memory"); }')
open(dst, "w").write(s.replace(CP, hinted, 1))
