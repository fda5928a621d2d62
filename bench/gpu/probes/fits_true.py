"""Makes a specialized kernel take its fast path unconditionally
(`const bool fits = true;`): what the run-time `fits` test costs the
kernels (session 16). Correct only where the manifest's requires and
alignment hold. Usage: fits_true.py GENERATED.cu OUT.cu"""
import re

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()
s2, n = re.subn(r"const bool fits = vec_ok && rlen <= \d+LL;", "const bool fits = true;", s)
assert n == 1, "no fits test in " + src
open(dst, "w").write(s2)
