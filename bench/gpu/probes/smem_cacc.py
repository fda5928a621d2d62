"""One column accumulator of a norm backward kernel in shared memory
(session 17): the generated kernel keeps each thread's column partial sums
in registers (layernorm backward at 4096x16384: 2 x 32 floats a thread,
128 registers); this moves the last one (cacc1) to dynamic shared memory
after the staged ring, laid out [column slot][thread] (no bank conflicts),
and raises the manifest's smem_bytes beside OUT.cu by its size. Usage:
smem_cacc.py GENERATED.cu OUT.cu"""
import json
import os
import re

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()
bx = int(re.search(r"__launch_bounds__\((\d+),", s).group(1))
m = re.search(r"  float cacc1\[(\d+)\];\n#pragma unroll\n  for \(int q = 0; q < \d+; \+\+q\) cacc1\[q\] = 0;\n", s)
assert m, "no second column accumulator"
n = int(m.group(1))
man_path = os.path.join(os.path.dirname(os.path.abspath(src)), "manifest.json")
man = json.load(open(man_path))
k = man["kernels"][0]
base = int(k["smem_bytes"])
assert k["block"][1] == "1", "block_y > 1"
s = (s[:m.start()] + f"  float* cacc1 = (float*)(fz_smem + {base}) + tx;\n"
     f"#pragma unroll\n  for (int q = 0; q < {n}; ++q) cacc1[q * {bx}] = 0;\n" + s[m.end():])
s, c1 = re.subn(r"cp1\[l\] = fz_comb<0, float>\(cp1\[l\], ", f"cp1[l * {bx}] = fz_comb<0, float>(cp1[l * {bx}], ", s)
s, c2 = re.subn(r"&cacc1\[k \* (\d+)\]", lambda mm: f"cacc1 + k * {mm.group(1)} * {bx}", s)
s, c3 = re.subn(r"cacc1\[k \* (\d+) \+ l( \+ \d)?\]",
                lambda mm: f"cacc1[(k * {mm.group(1)} + l{mm.group(2) or ''}) * {bx}]", s)
assert c1 == 1 and c2 == 1 and c3 == 4, (c1, c2, c3)
k["smem_bytes"] = str(base + n * bx * 4)
json.dump(man, open(man_path, "w"), indent=1)
open(dst, "w").write(s)
