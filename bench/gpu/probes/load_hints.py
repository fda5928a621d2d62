"""A generated kernel with cache-policy hints on its 16-byte loads (the
prelude's Chunk<16>::ld, i.e. every vector load of a row or column input),
to time them against the plain loads (session 11, run 4; l1 and l1nc session 22). Modes:
  el   ld.global.L1::evict_last.L2::cache_hint, L2 policy evict_last
       (torch.compile's Triton kernels' first read of a row)
  na   ld.global.nc.L1::no_allocate.L2::cache_hint, L2 policy evict_last
  l2   ld.global.nc.L2::cache_hint, L2 policy evict_last (L1 as default)
  ef   ld.global.L1::evict_first.L2::cache_hint, L2 policy evict_first
  nf   ld.global.nc.L1::no_allocate.L2::cache_hint, L2 policy evict_first
  cs   ld.global.cs (streaming: evict first at every level; no policy)
  l1   ld.global.L1::evict_last, no L2 policy (what torch.compile's Triton
       kernels emit for eviction_policy='evict_last': LDG.E.EL in SASS)
  l1nc ld.global.nc.L1::evict_last, no L2 policy (the plain loads' .nc form)

  python3 bench/gpu/probes/load_hints.py MODE GENERATED.cu OUT.cu
It rewrites the prelude's Chunk<16>::ld itself, so it is only for kernels
that do not read staged rows from shared memory with it (prefetch_size.py
edits the call sites instead). Then `fusiond_cgdev --compile-cu OUT.cu KERNEL CUBIN` in place of the
variant's cubin (bench/gpu/variants/s11-4-load-hints.txt)."""
import sys

from probe_args import probe_args

PLAIN = "    uint4 t = *(const uint4*)p; w[0] = t.x; w[1] = t.y; w[2] = t.z; w[3] = t.w;\n"
MODES = {
    "el": ("evict_last", "ld.global.L1::evict_last.L2::cache_hint.v4.u32"),
    "na": ("evict_last", "ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32"),
    "l2": ("evict_last", "ld.global.nc.L2::cache_hint.v4.u32"),
    "ef": ("evict_first", "ld.global.L1::evict_first.L2::cache_hint.v4.u32"),
    "nf": ("evict_first", "ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32"),
    "cs": (None, "ld.global.cs.v4.u32"),
    "l1": (None, "ld.global.L1::evict_last.v4.u32"),
    "l1nc": (None, "ld.global.nc.L1::evict_last.v4.u32"),
}


def main():
    args = probe_args(3, __doc__)
    if args[0].endswith(".cu"):  # variants.sh's '# edit' order: SRC DST MODE
        src, dst, mode = args[:3]
    else:
        mode, src, dst = args[:3]
    if mode not in MODES:
        sys.exit(f"load_hints.py: mode '{mode}'; expected one of {', '.join(MODES)}")
    policy, op = MODES[mode]
    text = open(src).read()
    assert PLAIN in text, "Chunk<16>::ld not found in the expected form"
    if policy is None:
        hinted = (f'    asm("{op} {{%0, %1, %2, %3}}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])'
                  f' : "l"(p));\n')
        open(dst, "w").write(text.replace(PLAIN, hinted, 1))
        return
    hinted = (f'    unsigned long long pol;\n    asm("createpolicy.fractional.L2::{policy}.b64 %0, 1.0;" : "=l"(pol));\n'
              f'    asm("{op} {{%0, %1, %2, %3}}, [%4], %5;" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])'
              f' : "l"(p), "l"(pol));\n')
    open(dst, "w").write(text.replace(PLAIN, hinted, 1))


if __name__ == "__main__":
    main()
