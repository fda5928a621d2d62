"""The 4-D batch norm backward with its channels software-pipelined
(session 17): one loop streams channel c+G's x and dy from DRAM for its
statistics while it re-reads channel c's (now in L2) and writes c's dx, so
the DRAM's reads never wait for a channel's second pass. Replaces the
generated outer persistent kernel of bench/gpu/fusions/batchnorm_bwd_4d.py
(its prelude, offsets and parameters kept; no kept chunks). Usage:
bn_pipelined.py GENERATED.cu OUT.cu [UNROLL]"""
import re

from probe_args import probe_args

args = probe_args(2, __doc__)
src, dst = args[:2]
unroll = int(args[2]) if len(args) > 2 else 2
s = open(src).read()
head, kernel = s.split('extern "C" __global__', 1)
sig = kernel[:kernel.index("{") + 1]
name = re.search(r"\) (\w+)\(", sig).group(1)
rows = int(re.search(r"const i64 rows = \(i64\)\((\d+)\);", kernel).group(1))
rlen = int(re.search(r"const i64 rlen = \(i64\)\((\d+)\);", kernel).group(1))
inv_n = re.search(r"\(rv12 \* \(\(float\)\(\(([-+.e0-9]+)\)\)\)\)", kernel).group(1)
offsets = kernel[kernel.index("  auto ro_in0"):kernel.index("  const i64 rstride")]
assert "ro_in1" in offsets and "ro_out0" in offsets and "rowbase" in offsets


def loads(x, d, ind):
    """The loop's U chunks of x (in0) and dy (in1) at c0, into x and d."""
    return (f"#pragma unroll\n{ind}for (int u = 0; u < U; ++u) {{\n"
            f"{ind}  const i64 jj = (c0 + (i64)u * T) * 8;\n"
            f"{ind}  if (jj < rlen) {{ Chunk<16>::ld({x}[u], in0 + ro_in0(jj)); Chunk<16>::ld({d}[u], in1 + ro_in1(jj)); }}\n"
            f"{ind}}}\n")


def stats(x, d, mean, istd, a0, a1, ind):
    """Adds those chunks' sum(dy) to a0 and sum(dy * xhat) to a1."""
    return (f"#pragma unroll\n{ind}for (int u = 0; u < U; ++u) {{\n"
            f"{ind}  const i64 jj = (c0 + (i64)u * T) * 8;\n{ind}  if (jj < rlen) {{\n"
            f"#pragma unroll\n{ind}    for (int l = 0; l < 8; ++l) {{\n"
            f"{ind}      const float dy = Ty<5>::get({d}[u], l), xh = (Ty<5>::get({x}[u], l) - {mean}) * {istd};\n"
            f"{ind}      {a0} += dy; {a1} += dy * xh;\n{ind}    }}\n{ind}  }}\n{ind}}}\n")


body = f'''
  const int tx = threadIdx.x, ty = threadIdx.y;
  (void)ty;
  const unsigned short* __restrict__ in0 = (const unsigned short*)in0_;
  const unsigned short* __restrict__ in1 = (const unsigned short*)in1_;
  const unsigned short* __restrict__ in2 = (const unsigned short*)in2_;
  const u32* __restrict__ in3 = (const u32*)in3_;
  const u32* __restrict__ in4 = (const u32*)in4_;
  unsigned short* __restrict__ out0 = (unsigned short*)out0_;
  unsigned short* __restrict__ out1 = (unsigned short*)out1_;
  unsigned short* __restrict__ out2 = (unsigned short*)out2_;
  const i64 rows = (i64)({rows});
  const i64 rlen = (i64)({rlen});
  const i64 t = (i64)blockIdx.y * 512 + tx;
  const i64 T = (i64)gridDim.y * 512;
  __shared__ __align__(16) float fz_red[2][1][2][16];
  unsigned fz_rb = 0;
  u32* bar = (u32*)ws;
  const size_t part_stride = (size_t)gridDim.x * gridDim.y * 2;
  double* ws_row = (double*)wsp;
  unsigned par = 0;
  i64 rb_in0 = 0, rb_in1 = 0, rb_in2 = 0, rb_in3 = 0, rb_in4 = 0, rb_out0 = 0, rb_out1 = 0, rb_out2 = 0;
  (void)rb_in2; (void)rb_out1; (void)rb_out2;
{offsets}
  // Block sum of (a0, a1), then the channel group's sum through the
  // workspace and the group barrier.
  auto group_sum = [&](float& a0, float& a1) {{
    a0 = fz_warp_reduce<0>(a0);
    a1 = fz_warp_reduce<0>(a1);
    if ((tx & 31) == 0) {{ fz_red[fz_rb][0][0][tx >> 5] = a0; fz_red[fz_rb][0][1][tx >> 5] = a1; }}
    __syncthreads();
    a0 = 0; a1 = 0;
    for (int w = 0; w < 16; ++w) {{ a0 += fz_red[fz_rb][0][0][w]; a1 += fz_red[fz_rb][0][1][w]; }}
    fz_rb ^= 1;
    double* part = ws_row + (size_t)(par & 1) * part_stride;
    const size_t base = ((size_t)blockIdx.x * gridDim.y) * 2;
    if (tx == 0) {{ part[base + (size_t)blockIdx.y * 2 + 0] = (double)a0; part[base + (size_t)blockIdx.y * 2 + 1] = (double)a1; }}
    fz_group_sync(bar);
    par++;
    a0 = 0; a1 = 0;
    for (int b = 0; b < (int)gridDim.y; ++b) {{ a0 += (float)part[base + (size_t)b * 2 + 0]; a1 += (float)part[base + (size_t)b * 2 + 1]; }}
  }};
  constexpr int U = {unroll};
  // Prologue: the first channel's statistics.
  i64 ch = blockIdx.x;
  float s0 = 0, s1 = 0;
  if (ch < rows) {{
    rowbase(ch);
    const float mean = Ty<6>::load(in3 + rb_in3), istd = Ty<6>::load(in4 + rb_in4);
    for (i64 c0 = t; c0 * 8 < rlen; c0 += (i64)T * U) {{
      u32 wx[U][4], wd[U][4];
{loads("wx", "wd", "      ")}{stats("wx", "wd", "mean", "istd", "s0", "s1", "      ")}    }}
  }}
  group_sum(s0, s1);
  for (; ch < rows; ch += gridDim.x) {{
    const i64 nch = ch + gridDim.x;
    const bool next = nch < rows;
    rowbase(ch);
    const float mean = Ty<6>::load(in3 + rb_in3), istd = Ty<6>::load(in4 + rb_in4);
    const float wgt = Ty<5>::load(in2 + rb_in2);
    const i64 cb0 = rb_in0, cb1 = rb_in1, cbo = rb_out0;
    const float k1 = s0 * ((float)({inv_n})), k2 = s1 * ((float)({inv_n}));
    const float g1 = Ty<5>::round(s1), g0 = Ty<5>::round(s0);
    float nmean = 0, nistd = 0;
    i64 nb0 = 0, nb1 = 0;
    if (next) {{ rowbase(nch); nmean = Ty<6>::load(in3 + rb_in3); nistd = Ty<6>::load(in4 + rb_in4); nb0 = rb_in0; nb1 = rb_in1; }}
    float a0 = 0, a1 = 0;
    for (i64 c0 = t; c0 * 8 < rlen; c0 += (i64)T * U) {{
      u32 nx[U][4], nd[U][4], cx[U][4], cd[U][4];
      if (next) {{
        rb_in0 = nb0; rb_in1 = nb1;
{loads("nx", "nd", "        ")}      }}
      rb_in0 = cb0; rb_in1 = cb1; rb_out0 = cbo;
{loads("cx", "cd", "      ")}#pragma unroll
      for (int u = 0; u < U; ++u) {{
        const i64 jj = (c0 + (i64)u * T) * 8;
        if (jj < rlen) {{
          float fo[8];
          u32 wo[4];
#pragma unroll
          for (int l = 0; l < 8; ++l) {{
            const float dy = Ty<5>::get(cd[u], l), xh = (Ty<5>::get(cx[u], l) - mean) * istd;
            fo[l] = (((dy - k1) - xh * s1 * ((float)({inv_n}))) * istd) * wgt;
          }}
          (void)k2;
          Ty<5>::template pack<8>(wo, fo);
          Chunk<16>::st(out0 + ro_out0(jj), wo);
        }}
      }}
      if (next) {{
{stats("nx", "nd", "nmean", "nistd", "a0", "a1", "        ")}      }}
    }}
    if (tx == 0 && blockIdx.y == 0) {{ rowbase(ch); Ty<5>::store(out1 + rb_out1, g1); Ty<5>::store(out2 + rb_out2, g0); }}
    if (next) group_sum(a0, a1);
    s0 = a0; s1 = a1;
  }}
}}
'''
open(dst, "w").write(head + 'extern "C" __global__' + sig + body)
