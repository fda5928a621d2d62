#!/usr/bin/env python3
"""Probe (session 22): a generated kernel with another __launch_bounds__
minimum of blocks a SM (MinBlocksPerSm asks 512-thread inner persistent
kernels for one, so ptxas may take up to 128 registers), to time the
generator's code at the blocks a SM a hand-written kernel got.

    launch_bounds.py GENERATED.cu OUT.cu MINB      (variants.sh '# edit NAME launch_bounds.py MINB')
"""
import re
import sys

from probe_args import probe_args


def main():
    src, dst, minb = probe_args(3, __doc__)[:3]
    text = open(src).read()
    new, n = re.subn(r"__launch_bounds__\((\d+), \d+\)", lambda m: f"__launch_bounds__({m.group(1)}, {int(minb)})", text)
    if n != 1:
        sys.exit(f"launch_bounds.py: expected one __launch_bounds__(T, N) in {src}, found {n}")
    open(dst, "w").write(new)


if __name__ == "__main__":
    main()
