"""Asks ptxas for N blocks per SM (the kernel's __launch_bounds__ second
argument) and lets the launch use them: the grid cap in the manifest next to
the kernel (the one-wave cap LaunchGrid computed from the pipeline's
registers) is replaced. Usage: min_blocks.py GENERATED.cu OUT.cu N OLDCAP:NEWCAP
(session 15: more resident blocks for the norm kernels)."""
import os
import re
import sys

from probe_args import probe_args
src, dst, n, caps = probe_args(4, __doc__)[:4]
s = open(src).read()
s, k = re.subn(r"__launch_bounds__\((\d+), \d+\)", lambda m: f"__launch_bounds__({m.group(1)}, {n})", s)
if k != 1:
    sys.exit("min_blocks.py: no __launch_bounds__ in " + src)
open(dst, "w").write(s)
if caps == "-":
    sys.exit(0)
old, new = caps.split(":")
man = os.path.join(os.path.dirname(src), "manifest.json")
m = open(man).read()
m2, k = re.subn(r"(\"grid\": \[\"[^\"]*?)\b%s\b" % old, lambda mm: mm.group(1) + new, m)
if k != 1:
    sys.exit(f"min_blocks.py: grid cap {old} not found in {man}")
# Workspaces sized by the grid (per-block partials) follow it (session 17:
# run 12's bn2u4 ran 16 channel slots on a workspace sized for 8).
m2 = m2.replace(f"min({old}, ", f"min({new}, ")
open(man, "w").write(m2)
