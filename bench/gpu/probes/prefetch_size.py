"""A generated kernel whose 16-byte global loads and cp.async copies carry
PTX's L2 prefetch-size qualifier (.L2::128B / .L2::256B: the L2 fetches that
much around each miss), to time against the plain loads (session 12, run 4).
Only loads from the kernel's inputs change (Chunk<16>::ld(..., inN + ...));
Chunk<16>::ld from shared memory (staged rows) stays as it is.
Usage: prefetch_size.py GENERATED.cu OUT.cu 128|256"""
import re
import sys

from probe_args import probe_args

src, dst, size = probe_args(3, __doc__, {2: ("128", "256")})[:3]
text = open(src).read()
CP = 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"'
assert CP in text, "prelude's fz_cp_async not in the expected form"
text = text.replace(CP, f'asm volatile("cp.async.cg.shared.global.L2::{size}B [%0], [%1], 16;"', 1)
helper = (f'__device__ __forceinline__ void fz_ldp(u32* w, const void* p) {{\n'
          f'  asm("ld.global.nc.L2::{size}B.v4.u32 {{%0, %1, %2, %3}}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), '
          f'"=r"(w[3]) : "l"(p));\n}}\n')
head, kern = text.split('extern "C"', 1)
kern, n = re.subn(r"Chunk<16>::ld\(([^;]*?), (in\d+ \+)", r"fz_ldp(\1, \2", kern)
assert n > 0, "no 16-byte input loads found"
open(dst, "w").write(head + helper + 'extern "C"' + kern)
