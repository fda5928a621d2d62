"""Staged rows through the bulk-copy engine (session 17): one thread copies
a whole row of each staged input into the ring with cp.async.bulk (sm_90),
completing on one mbarrier a stage, instead of every thread issuing 16-byte
cp.async for its own chunks. A stage is refilled after the row reduction's
__syncthreads (every thread is then done with the row the stage held), so
the ring needs one more stage for the same distance ahead: compile the
kernel with smem_bytes for the stages wanted. Only for specialized kernels
whose staged row is contiguous in the ring (block_y 1, grid_y 1,
persistent_batch * block_x * vectorize == the fits bound): the row's
rlen * element size bytes are copied (the kernel requires rlen a multiple
of the vector width). Usage:
bulk_rows.py GENERATED.cu OUT.cu"""
import re

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()

HELPERS = r'''
// Bulk copies (bench/gpu/probes/bulk_rows.py).
__device__ __forceinline__ u32 fz_sa(const void* p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void fz_mbar_init(u64* b, u32 n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(fz_sa(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void fz_mbar_expect(u64* b, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(fz_sa(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fz_bulk(void* s, const void* g, u32 bytes, u64* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(fz_sa(s)), "l"(g), "r"(bytes), "r"(fz_sa(b)) : "memory");
}
__device__ __forceinline__ void fz_mbar_wait(u64* b, u32 parity) {
  u32 ok;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok) : "r"(fz_sa(b)), "r"(parity) : "memory");
  } while (!ok);
}
'''

# The kernel's shape: block_x, persistent batch, vector width, row length.
bx = int(re.search(r"__launch_bounds__\((\d+),", s).group(1))
vec = int(re.search(r"const i64 jj = \(t \+ \(i64\)k \* T\) \* (\d+);", s).group(1))
m = re.search(r"const bool fits = vec_ok && rlen <= (\d+)LL;", s)
assert m, "no fits bound (not a specialized kernel)"
stages = int(re.search(r"int stage = 0, fill = (\d+);", s).group(1)) + 1
copies = re.findall(r"fz_cp_async<16>\(\(u32\*\)\(fz_smem \+ (\d+) \+ \(\(\(\(fill\) \* (\d+) \+ \(k\)\) \* 1 \+ ty\) \* (\d+) \+ tx\) \* 16\), (in\d+) \+ ro_in\d+\(jj\)\);", s)
assert copies, "no staged row copies"
pb = int(copies[0][1])
assert int(copies[0][2]) == bx and pb * bx * vec == int(m.group(1)), "the staged row is not whole"
assert "(i64)blockIdx.y * %d + tx" % bx in s and "gridDim.y * %d" % bx in s
stage_bytes = pb * bx * 16
row_bytes = f"(u32)rlen * {16 // vec}u"  # the row, at most a stage
assert all(int(c[1]) == pb for c in copies)


def bulk(stage, ind):
    body = f"{ind}fz_mbar_expect(&fz_mbar[{stage}], {len(copies)} * ({row_bytes}));\n"
    for off, _, _, ptr in copies:
        body += (f"{ind}fz_bulk(fz_smem + {off} + ({stage}) * {stage_bytes}, {ptr} + ro_{ptr}(0), "
                 f"{row_bytes}, &fz_mbar[{stage}]);\n")
    return body


s = s.replace('extern "C" __global__', HELPERS + '\nextern "C" __global__', 1)
s = s.replace("extern __shared__ __align__(16) unsigned char fz_smem[];",
              "extern __shared__ __align__(16) unsigned char fz_smem[];\n"
              f"  __shared__ __align__(8) u64 fz_mbar[{stages}];\n"
              f"  if (tx == 0 && ty == 0) {{\n    for (int i = 0; i < {stages}; ++i) fz_mbar_init(&fz_mbar[i], 1);\n"
              '    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");\n  }\n  __syncthreads();', 1)

# Prologue: the first stages' rows, one thread.
pro = re.compile(r"( *)#pragma unroll\n *for \(int k = 0; k < \d+; \+\+k\) \{\n *const i64 jj = .*\n *if \(jj < rlen\) \{\n"
                 r"(?: *fz_cp_async<16>\(\(u32\*\)\(fz_smem \+ \d+ \+ \(\(\(\(s\) .*\n)+ *\}\n *\}\n")
s, n = pro.subn(lambda m: f"{m.group(1)}if (tx == 0 && ty == 0) {{\n" + bulk("s", m.group(1) + "  ") + f"{m.group(1)}}}\n", s)
assert n == 1, "prologue copies not found"

# The loop's refill: out of the loop's top, after the row reduction's barrier.
top = re.compile(r"    \{\n      const i64 srow = row \+ \(i64\)(\d+) \* rstride;\n      if \(fits && srow < rows\) \{\n"
                 r"[\s\S]*?        rowbase\(row\);\n      \}\n      fz_cp_commit\(\);\n      fz_cp_wait<(\d+)>\(\);\n    \}\n")
m = top.search(s)
assert m, "loop refill not found"
ahead, waitn = m.group(1), m.group(2)
s = s[:m.start()] + (f"    fz_cp_commit();\n    fz_cp_wait<{waitn}>();\n"
                     f"    if (fits && active) fz_mbar_wait(&fz_mbar[stage], (u32)((it / {stages}) & 1));\n") + s[m.end():]
refill = (f"    {{\n      const i64 srow = row + (i64){ahead} * rstride;\n"
          f"      if (fits && srow < rows && tx == 0 && ty == 0) {{\n        rowbase(srow);\n" + bulk("fill", "        ") +
          "        rowbase(row);\n      }\n    }\n")
# The first barrier after the loop's reductions begin (fz_red written, then __syncthreads).
i = s.index("fz_mbar_wait(&fz_mbar[stage]")
j = s.index("    __syncthreads();\n", i) + len("    __syncthreads();\n")
s = s[:j] + refill + s[j:]
open(dst, "w").write(s)
