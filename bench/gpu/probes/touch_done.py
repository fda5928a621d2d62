#!/usr/bin/env python3
"""Probe (session 22, for a later device session): mark a row's L2 lines
evict-first once the kernel holds the row, with one 4-byte load a 128-byte
line (`ld.global.L1::no_allocate.L2::cache_hint`, an evict_first policy,
lanes with tx % 8 == 0, the value unused), instead of reading the row again
as reread_rows does. Session 22 found torch.compile's softmax backward edge
under do_bench in its policy pair (first read evict_last, second read
evict_first); whether an L2 hit with an evict-first policy is enough, and
whether the staged kernels (whose cp.async cannot carry a policy with NVRTC
13.0's ptxas) gain from it, is what this times. Modes:
  staged  after the row loop's fz_cp_wait (the current row's copies landed
          in shared memory): the current row's lines of every staged input
  regs    in the final pass's fits loop, after each chunk's body: the
          chunk's line of every row input held in registers (pb_*)

    touch_done.py GENERATED.cu OUT.cu MODE      (variants.sh '# edit NAME touch_done.py MODE')
"""
import re
import sys

from probe_args import probe_args

TOUCH = '''__device__ __forceinline__ void fz_touch_first(const void* p) {
  u64 pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  u32 v;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(pol));
}
'''


def touches(ptrs, ind):
    calls = " ".join(f"fz_touch_first({p} + ro_{p}(jj));" for p in ptrs)
    return f"{ind}if (active && jj < rlen && (tx & 7) == 0) {{ {calls} }}\n"


def staged(text):
    ptrs = sorted(set(re.findall(r"fz_cp_async<16>\(\(u32\*\)\(fz_smem \+ \d+ \+ \(\(\(\(fill\)[^;]*?, (in\d+) \+ ro_", text)))
    if not ptrs:
        sys.exit("touch_done.py staged: no staged row copies (fill) in the kernel")
    pb = re.search(r"for \(int k = 0; k < (\d+); \+\+k\) \{\n\s+const i64 jj = \(t \+ \(i64\)k \* T\) \* (\d+);\n\s+if \(jj < rlen\) \{\n\s+fz_cp_async<16>\(\(u32\*\)\(fz_smem \+ \d+ \+ \(\(\(\(fill\)", text)
    if not pb:
        sys.exit("touch_done.py staged: the fill loop's chunk count not found")
    k, v = pb.group(1), pb.group(2)
    anchor = "      fz_cp_commit();\n      fz_cp_wait<"
    i = text.find(anchor)
    if i < 0:
        sys.exit("touch_done.py staged: the row loop's fz_cp_wait not found")
    end = text.index("\n    }\n", i) + len("\n    }\n")
    loop = (f"    if (fits) {{\n#pragma unroll\n      for (int k = 0; k < {k}; ++k) {{\n"
            f"        const i64 jj = (t + (i64)k * T) * {v};\n" + touches(ptrs, "        ") + "      }\n    }\n")
    return text[:end] + loop + text[end:]


def regs(text):
    ptrs = sorted(set(re.findall(r"u32 pb_(in\d+)\[", text)))
    if not ptrs:
        sys.exit("touch_done.py regs: no row buffers pb_* in the kernel")
    calls = list(re.finditer(r"\n(\s+)if \(active && jj < rlen\) fin\(VW<\d+>\(\), jj[^\n]*\n", text))
    if not calls:
        sys.exit("touch_done.py regs: the final pass's fits call not found")
    m = calls[0]
    return text[:m.end()] + touches(ptrs, m.group(1)) + text[m.end():]


def main():
    src, dst, mode = probe_args(3, __doc__, {2: ("staged", "regs")})[:3]
    text = open(src).read()
    i = text.index('extern "C"')
    text = text[:i] + TOUCH + text[i:]
    open(dst, "w").write(staged(text) if mode == "staged" else regs(text))


if __name__ == "__main__":
    main()
