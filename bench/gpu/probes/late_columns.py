#!/usr/bin/env python3
"""Probe (session 23, for a later device session): an exact kernel (a
block a row, codegen's exact_) that loads its column operands (a norm
forward's weight and bias) chunk by chunk in the output pass, where it uses
them, instead of into registers when the block starts, as torch.compile's
kernels do. In the exact form a block holds one row, so the preload buys no
reuse, and it holds 8 registers a column operand through the reductions:
layernorm forward 2048x8192 at 512 x 2 took 48 registers (two blocks a SM)
and ran 29.3-30.8 us against 23.1-23.8 for the pipeline's 256 x 4, while at
three blocks (40 registers, launch_bounds.py 3) it ran 24.9
(bench/results/gpu-2026-12-01-s23-{3,7,8}-*.log). Modes:
  plain  the chunk loaded as the preload did (Chunk<B>::ld)
  last   with an L1 evict_last priority (torch.compile's weight loads)

    late_columns.py GENERATED.cu OUT.cu MODE      (variants.sh '# edit NAME late_columns.py MODE')
"""
import re
import sys

from probe_args import probe_args


def main():
    src, dst, mode = probe_args(3, __doc__, {2: ("plain", "last")})[:3]
    text = open(src).read()
    if "rg < rows" in text or "constexpr i64 T = " not in text:
        sys.exit(f"late_columns.py: {src} is not an exact kernel (it has a row loop)")
    pre = re.compile(r"  u32 cb_(in\d+)\[(\d+)\];\n  if \(fits\) \{\n#pragma unroll\n    for \(int k = 0; k < \d+; \+\+k\) \{\n"
                     r"      const i64 jj = [^\n]*\n      if \(true\) Chunk<(\d+)>::ld\(&cb_\1\[k \* (\d+)\], \1 \+ ro_\1\(jj\)\);\n"
                     r"    \}\n  \}\n")
    cols = {m.group(1): (int(m.group(3)), int(m.group(4))) for m in pre.finditer(text)}
    if not cols:
        sys.exit(f"late_columns.py: no column operands preloaded into registers in {src}")
    text = pre.sub("", text)
    final = re.compile(r"        if \(active && true\) fin\((VW<\d+>\(\), jj[^;]*)\);\n")
    m = final.search(text)
    if m is None or any(text.count(f"cb_{c}[") != 1 for c in cols):
        sys.exit(f"late_columns.py: {src} uses its columns outside the output pass")
    loads, args = "", m.group(1)
    for c, (b, w) in cols.items():
        if mode == "last":
            regs = ", ".join(f"%{q}" for q in range(w))
            outs = ", ".join(f'"=r"(lc_{c}[{q}])' for q in range(w))
            ld = f'asm("ld.global.L1::evict_last.v{w}.u32 {{{regs}}}, [%{w}];" : {outs} : "l"({c} + ro_{c}(jj)));'
        else:
            ld = f"Chunk<{b}>::ld(lc_{c}, {c} + ro_{c}(jj));"
        loads += f" u32 lc_{c}[{w}]; {ld}"
        args = args.replace(f"&cb_{c}[k * {w}]", f"lc_{c}")
    text = text[:m.start()] + f"        if (active && true) {{{loads} fin({args}); }}\n" + text[m.end():]
    open(dst, "w").write(text)


if __name__ == "__main__":
    main()
