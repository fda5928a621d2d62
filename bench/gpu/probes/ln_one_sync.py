"""Layernorm forward's statistics in one block reduction instead of two
(session 12 probe). The generated persistent kernel sums the row, waits
for the block (one __syncthreads), then sums squared deviations from the
mean and waits again. Here each thread sums d = x - K and d * d over its
row elements and the block merges both sums in one round:
mean = K + S1 / n, var = (S2 - S1 * S1 / n) / n.

  shift: K is the row's first element (loaded a row ahead with the row), so
         the cancellation in S2 - S1^2/n is only as large as K's distance
         from the mean (the shifted-data algorithm);
  zero:  K = 0 (sum and sum of squares; an upper bound on what the merged
         reduction saves, numerically the weakest form).

Usage: ln_one_sync.py GENERATED.cu OUT.cu shift|zero. Only the rows-in-
registers path is rewritten (the fallback loops are deleted): correct only
at shapes whose rows fit the kernel, like fits_only.py."""
import re
import sys

from probe_args import probe_args

src, out, mode = probe_args(3, __doc__, {2: ("shift", "zero")})[:3]
s = open(src).read()

def drop(s, key, keep):
    out, i = [], 0
    while True:
        k = s.find(key, i)
        if k < 0:
            out.append(s[i:])
            break
        out.append(s[i:k])
        j, depth = k + len(key), 1
        while depth > 0:
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            j += 1
        out.append(keep)
        i = j
    return "".join(out)


# The fallback loops go (as in fits_only.py).
s = drop(s, "} else     if (vec_ok) {", "}")
s = drop(s, "} else {\n      for (i64 jj = t; active", "}")

a = s.index("    float acc0 = 0;\n")
b = s.index("    const float rv5 = ")
pb = re.search(r"for \(int k = 0; k < (\d+); \+\+k\)", s[a:b]).group(1)
m = re.search(r"fz_red\[2\]\[1\]\[1\]\[(\d+)\]", s)
nw = int(m.group(1))
s = s.replace(m.group(0), f"fz_red[2][1][2][{nw}]")
kval = "cK" if mode == "shift" else "0.f"
merged = f"""    float acc0 = 0, acc1 = 0;
    const float K = {kval};
    auto body0 = [&](auto vw, i64 j, const u32* w_in0) {{
      constexpr int VV = decltype(vw)::value;
#pragma unroll
      for (int l = 0; l < VV; ++l) {{
        const float d = Ty<5>::get(w_in0, l) - K;
        acc0 += d;
        acc1 += d * d;
      }}
    }};
    if (fits) {{
#pragma unroll
      for (int k = 0; k < {pb}; ++k) {{
        const i64 jj = (t + (i64)k * T) * 8;
        if (active && jj < rlen) body0(VW<8>(), jj, &pb_in0[k * 4]);
      }}
    }}
    acc0 = fz_warp_reduce<0>(acc0);
    acc1 = fz_warp_reduce<0>(acc1);
    if ((tx & 31) == 0) {{ fz_red[fz_rb][ty][0][tx >> 5] = acc0; fz_red[fz_rb][ty][1][tx >> 5] = acc1; }}
    __syncthreads();
    {{
      float s0 = 0, s1 = 0;
#pragma unroll
      for (int w = 0; w < {nw}; ++w) {{ s0 += fz_red[fz_rb][ty][0][w]; s1 += fz_red[fz_rb][ty][1][w]; }}
      acc0 = s0;
      acc1 = s1;
    }}
    fz_rb ^= 1;
    const float rmean0 = K + acc0 / (float)rlen;
    const float rv6 = rmean0;
    acc1 = fmaxf(acc1 - acc0 * (acc0 / (float)rlen), 0.f);
"""
s = s[:a] + merged + s[b:]
if mode == "shift":
    # K for the row: its first element, loaded with the row (a row ahead).
    s = s.replace("  i64 it = 0;\n  for (i64 rg", "  float cK = 0.f;\n  if (fits && (i64)blockIdx.x * 1 + ty < rows) "
                  "{ rowbase((i64)blockIdx.x * 1 + ty); cK = Ty<5>::load(in0 + rb_in0); }\n  i64 it = 0;\n  for (i64 rg", 1)
    s = s.replace("    u32 nb_in0[", "    float nK = 0.f;\n    u32 nb_in0[", 1)
    s = s.replace("      if (fits && nact) {\n", "      if (fits && nact) {\n        nK = Ty<5>::load(in0 + rb_in0);\n", 1)
    i = s.rindex("pb_in0[q] = nb_in0[q];\n")
    s = s[:i] + "pb_in0[q] = nb_in0[q];\n    cK = nK;\n" + s[i + len("pb_in0[q] = nb_in0[q];\n"):]
open(out, "w").write(s)
