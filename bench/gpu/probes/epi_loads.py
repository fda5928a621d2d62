"""The column epilogue's partial loads with a cache hint (session 21): with
the partial rows stored evict-last (fz_st_partial), the epilogue, their
last reader, can load them as `ld.global.cs` (evict-first, so the dead
lines do not stay ahead of the next kernel's) or `ld.global.lu` (last
use). Every `*(const float4*)(wcol + ...)` load becomes fz_ld_part().
Usage: epi_loads.py GENERATED.cu OUT.cu MODE   (MODE: cs or lu)"""
import re
import sys

from probe_args import probe_args

src, dst, mode = probe_args(3, __doc__, {2: ("cs", "lu")})[:3]
s = open(src).read()
s, n = re.subn(r"\*\(const float4\*\)\((wcol \+ [^;]*?)\);", r"fz_ld_part(\1);", s)
if n == 0:
    sys.exit("epi_loads.py: no float4 partial load in " + src)
head = s.index('extern "C" __global__')
helper = ("__device__ __forceinline__ float4 fz_ld_part(const float* p) {\n  float4 v;\n"
          f'  asm volatile("ld.global.{mode}.v4.f32 {{%0, %1, %2, %3}}, [%4];" : "=f"(v.x), "=f"(v.y), '
          '"=f"(v.z), "=f"(v.w) : "l"(p));\n  return v;\n}\n')
open(dst, "w").write(s[:head] + helper + s[head:])
