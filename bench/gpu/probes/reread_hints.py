"""Variants of a generated multi-pass row kernel (softmax backward 16384x4096,
512 threads a row, one 16-byte chunk a thread per pass) shaped like
torch.compile's Triton kernel for it: __launch_bounds__ minimum blocks,
Triton's cache policies (first pass: L1 evict_last + L2 evict_last policy;
second pass: L1 evict_first + L2 evict_first, so the re-read hits L1), and
the second pass forward (each thread re-reads its own chunk) instead of the
generator's backward order.

  python3 bench/gpu/probes/reread_hints.py GENERATED.cu OUTDIR
writes OUTDIR/mp{A..E}.cu:  A as generated, minimum blocks 1; B 4 blocks;
C B + hints; D B + forward; E B + hints + forward (Triton's form).
Compile each with `fusiond_cgdev --compile-cu FILE fz_softmax_bwd OUT.cubin`
and put the cubin in place of the generated one (session 11, run 3)."""
import os
import sys

from probe_args import probe_args

HELPERS = '''
__device__ __forceinline__ void fz_ld_last(u32* w, const void* p) {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.L1::evict_last.L2::cache_hint.v4.b32 {%0,%1,%2,%3}, [%4], %5;"
      : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p), "l"(pol));
}
__device__ __forceinline__ void fz_ld_first(u32* w, const void* p) {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.L1::evict_first.L2::cache_hint.v4.b32 {%0,%1,%2,%3}, [%4], %5;"
      : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p), "l"(pol));
}
'''


def hinted(text, helper):
    for x in ("in0", "in1"):
        text = text.replace(f"Chunk<16>::ld(w_{x}[u], {x} + ro_{x}(jj));", f"{helper}(w_{x}[u], {x} + ro_{x}(jj));")
    return text


def variant(src, minb, hints, forward):
    pre, ker = src.split('extern "C"', 1)
    ker = ('extern "C"' + ker).replace("__launch_bounds__(512, 1)", f"__launch_bounds__(512, {minb})")
    first, final = ker.split("auto fin = ", 1)
    if hints:
        first, final = hinted(first, "fz_ld_last"), hinted(final, "fz_ld_first")
    if forward:
        final = final.replace("const i64 jj = rlen - 8 - (c0 + (i64)u * T) * 8;",
                              "const i64 jj = (c0 + (i64)u * T) * 8;").replace("if (jj >= 0)", "if (jj < rlen)")
    return pre + HELPERS + first + "auto fin = " + final


def main():
    path, outdir = probe_args(2, __doc__)[:2]
    src = open(path).read()
    os.makedirs(outdir, exist_ok=True)
    for name, args in {"mpA": (1, 0, 0), "mpB": (4, 0, 0), "mpC": (4, 1, 0), "mpD": (4, 0, 1), "mpE": (4, 1, 1)}.items():
        open(os.path.join(outdir, name + ".cu"), "w").write(variant(src, *args))


if __name__ == "__main__":
    main()
