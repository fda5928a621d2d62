"""A norm forward's column operands (smem_columns: weight, bias in static
shared memory) kept as float instead of bf16 (session 18, after
float_columns.py won for the staged norm backwards): each `cs_inN` array
doubles, its fill widens every chunk once (two float4 halves a chunk, each
half its own [k][tx] array, conflict-free), and the final pass reads floats
instead of unpacking bf16 every row. Usage: float_smem_columns.py
GENERATED.cu OUT.cu"""
import re

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s = open(src).read()
cols = re.findall(r"__shared__ __align__\(16\) u32 (cs_in\d+)\[(\d+)\];", s)
assert cols, "no column operand in shared memory"
for name, words in cols:
    n = int(words)
    inp = name[3:]
    s = s.replace(f"u32 {name}[{n}];", f"u32 {name}[{2 * n}];", 1)
    fill = re.compile(rf"if \(jj < rlen\) Chunk<16>::ld\(&{name}\[\(k \* (\d+) \+ tx\) \* 4\], ({inp} \+ ro_{inp}\(jj\))\);")
    m = fill.search(s)
    assert m, name
    bx = m.group(1)
    slot = f"(k * {bx} + tx) * 4"
    s = s[:m.start()] + (
        f"if (jj < rlen) {{ u32 cw[4]; Chunk<16>::ld(cw, {m.group(2)}); "
        f"*(float4*)&{name}[{slot}] = make_float4(Ty<5>::get(cw, 0), Ty<5>::get(cw, 1), Ty<5>::get(cw, 2), Ty<5>::get(cw, 3)); "
        f"*(float4*)&{name}[{n} + {slot}] = make_float4(Ty<5>::get(cw, 4), Ty<5>::get(cw, 5), Ty<5>::get(cw, 6), Ty<5>::get(cw, 7)); }}"
    ) + s[m.end():]
    use = re.compile(rf"u32 sw_{inp}\[4\];\n(\s+)if \(active && jj < rlen\) Chunk<16>::ld\(sw_{inp}, &{name}\[\(k \* {bx} \+ tx\) \* 4\]\);")
    s, k = use.subn(lambda mm: (f"u32 sw_{inp}[8];\n{mm.group(1)}if (active && jj < rlen) {{ Chunk<16>::ld(sw_{inp}, &{name}[{slot}]); "
                                f"Chunk<16>::ld(sw_{inp} + 4, &{name}[{n} + {slot}]); }}"), s)
    assert k >= 1, (name, k)
    s, k2 = re.subn(rf"Ty<5>::get\(w_{inp}, l\)", f"__uint_as_float(w_{inp}[l])", s)
    assert k2 >= 1, (name, k2)
open(dst, "w").write(s)
