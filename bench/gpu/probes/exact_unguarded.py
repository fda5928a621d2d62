#!/usr/bin/env python3
"""Probe (session 23, for a later device session): an exact kernel (a
block a row, codegen's exact_) without the tests that guard its first loads
and its bodies, to see whether they are the ~1% that softmax backward
16384x4096 still trails torch.compile by under do_bench (bench/results/
gpu-2026-12-01-s23-9-launch-paths.log). The PTX differs from the lean probe
in torch.compile's form (lean_rows.py _rr_p_x_tr, which matched it) only
there: two alignment branches (vec_ok) and a row-count branch before the
first loads, and a branch around each body. Modes:
  align   vec_ok is `true` (the runtimes guarantee the manifest's aligns)
  rows    the first loads and the bodies skip the row test too (a launch
          of exactly one block per row group, as the manifest's grid is)
  both    align and rows

    exact_unguarded.py GENERATED.cu OUT.cu MODE      (variants.sh '# edit NAME exact_unguarded.py MODE')

Only for timing with aligned inputs: the edited kernel reads out of bounds
or misaligned where the guards would have stopped it.
"""
import re
import sys

from probe_args import probe_args


def main():
    src, dst, mode = probe_args(3, __doc__, {2: ("align", "rows", "both")})[:3]
    text = open(src).read()
    if "rg < rows" in text or "constexpr i64 T = " not in text:
        sys.exit(f"exact_unguarded.py: {src} is not an exact kernel (it has a row loop)")
    n = 0
    if mode in ("align", "both"):
        text, k = re.subn(r"const bool vec_ok = [^;]*;", "const bool vec_ok = true;", text)
        n += k
    if mode in ("rows", "both"):
        text, k = re.subn(r"if \(fits && \(i64\)blockIdx\.x \* \d+ \+ ty < rows\) \{", "if (fits) {", text)
        n += k
        text, k = re.subn(r"if \(active && true\) ", "", text)
        n += k
    if n == 0:
        sys.exit(f"exact_unguarded.py: nothing to edit in {src}")
    open(dst, "w").write(text)


if __name__ == "__main__":
    main()
