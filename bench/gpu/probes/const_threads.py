"""The threads along a row as a literal (session 18, for a later device
session): a kernel whose manifest launches a literal grid y extent G (every
persistent kernel: the `fits` bound assumes it) still computes
T = gridDim.y * BX and t = blockIdx.y * BX + tx at run time, so NVVM cannot
fold the chunk guards (`jj < rlen`, 64-bit compares in the SASS of run 7b)
of a specialized kernel. Here T = G * BX and, when G is 1, t = tx; and
NVVM is told tx < BX (`__builtin_assume`: it does not take that from
__launch_bounds__, and kept a `tx > 2047` test in the PTX without it).
(Session 16: letting NVVM assume `fits` slowed the staged layernorm
backward by 30%; this removes less, and is to be timed, not assumed.)
Usage: const_threads.py GENERATED.cu OUT.cu"""
import json
import os
import re
import sys

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()
man = json.load(open(os.path.join(os.path.dirname(os.path.abspath(src)), "manifest.json")))
gy = man["kernels"][0]["grid"][1]
if not gy.isdigit():
    sys.exit(f"const_threads.py: grid y '{gy}' is not a literal")
m = re.search(r"const i64 T = \(i64\)gridDim\.y \* (\d+);", s)
if not m:
    sys.exit("const_threads.py: no T = gridDim.y * BX in " + src)
bx = int(m.group(1))
s = s.replace(m.group(0), f"const i64 T = {int(gy) * bx};", 1)
if gy == "1":
    s = s.replace(f"const i64 t = (i64)blockIdx.y * {bx} + tx;", "const i64 t = tx;", 1)
decl = "const int tx = threadIdx.x, ty = threadIdx.y;"
assert decl in s
s = s.replace(decl, decl + f" __builtin_assume(tx >= 0 && tx < {bx});", 1)
open(dst, "w").write(s)
