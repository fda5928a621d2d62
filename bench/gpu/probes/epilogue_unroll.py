"""Sets the unroll of the column epilogue's loop over the partials (the
generator emits `#pragma unroll 4`): a probe of what the four loads in
flight buy against the compile time they cost (session 16).
Usage: epilogue_unroll.py GENERATED.cu OUT.cu N"""
from probe_args import probe_args

src, dst, n = probe_args(3, __doc__)[:3]
s = open(src).read()
key = "#pragma unroll 4\n        for (int p = grp;"
assert key in s, "no column epilogue loop in " + src
open(dst, "w").write(s.replace(key, f"#pragma unroll {int(n)}\n        for (int p = grp;"))
