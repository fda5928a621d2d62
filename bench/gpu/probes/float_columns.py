"""A staged norm backward's column operand (the weight) kept in shared
memory as float instead of bf16 (session 18): the generated kernel copies
the weight's bf16 chunks into shared memory once (cp.async) and unpacks each
element to float in both passes of every row (a shift or a mask an element
a pass; cuobjdump of layernorm backward 4096x16384: ~950 instructions a row
a thread). Here the prologue converts once and stores two float4 halves a
chunk (conflict-free, each thread reads back its own), the passes read
floats. The manifest's smem_bytes beside OUT.cu grows by the column region's
size (the region must be the last one). Usage: float_columns.py
GENERATED.cu OUT.cu"""
import json
import os
import re

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()
m = re.search(r"fz_cp_async<16>\(\(u32\*\)\(fz_smem \+ (\d+) \+ \(\(\(k\) \* 1 \+ ty\) \* (\d+) \+ tx\) \* 16\), "
              r"(in\d+) \+ (ro_in\d+)\(jj\)\);", s)
assert m, "no staged column operand"
off, bx, col, ro = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
pb = int(re.findall(r"for \(int k = 0; k < (\d+); \+\+k\)", s[:m.start()])[-1])
size = pb * bx * 16
man_path = os.path.join(os.path.dirname(os.path.abspath(src)), "manifest.json")
man = json.load(open(man_path))
k = man["kernels"][0]
assert int(k["smem_bytes"]) == off + size, "the column region is not the last"
slot = f"(fz_smem + {off} + (((k) * 1 + ty) * {bx} + tx) * 16)"
convert = (f"{{ u32 cw[4]; Chunk<16>::ld(cw, {col} + {ro}(jj)); "
           f"float4* c0 = (float4*){slot}; float4* c1 = (float4*)((unsigned char*)c0 + {size}); "
           "*c0 = make_float4(Ty<5>::get(cw, 0), Ty<5>::get(cw, 1), Ty<5>::get(cw, 2), Ty<5>::get(cw, 3)); "
           "*c1 = make_float4(Ty<5>::get(cw, 4), Ty<5>::get(cw, 5), Ty<5>::get(cw, 6), Ty<5>::get(cw, 7)); }")
s = s[:m.start()] + convert + s[m.end():]
w = "sw_" + col
pat = re.compile(rf"u32 {w}\[4\];\n(\s+)if \(active && jj < rlen\) Chunk<16>::ld\({w}, \(u32\*\)\(fz_smem \+ {off} \+ ([^;]*)\);")
s, n1 = pat.subn(lambda mm: (f"u32 {w}[8];\n{mm.group(1)}if (active && jj < rlen) {{ "
                             f"Chunk<16>::ld({w}, (u32*)(fz_smem + {off} + {mm.group(2)}); "
                             f"Chunk<16>::ld({w} + 4, (u32*)(fz_smem + {off + size} + {mm.group(2)}); }}"), s)
s, n2 = re.subn(rf"Ty<5>::get\(w_{col}, l\)", f"__uint_as_float(w_{col}[l])", s)
assert n1 == 2 and n2 == 2, (n1, n2)
k["smem_bytes"] = str(off + 2 * size)
json.dump(man, open(man_path, "w"), indent=1)
open(dst, "w").write(s)
