#!/usr/bin/env python3
"""Row kernels in a lean form, to see what the
generator's general form costs: one row per block iteration, 32-bit in-row
indices, only the rows-in-registers path (no fallback loops, no prefetch of
the next row), __launch_bounds__(BX, MINB) at full occupancy.

    lean_rows.py KIND BX PB MINB NAME PRELUDE.cu [smem] > kernel.cu

KIND: softmax_fwd (x -> exp(x - max) / sum(exp(x - max))), softmax_bwd
(y, grad -> y * (grad - sum(grad * y))), rmsnorm_fwd
(x, w -> x * rstd * w, rstd), layernorm_fwd (x, w, b -> (x - mean) * rstd *
w + b, mean, rstd), all bf16 rows with float statistics, eps 1e-5, as in
tests/corpus/fusions. Suffixes, in any order: _rr loads the
row L1::evict_last for the reductions and again L1::evict_first for the
output pass (torch.compile's form); _p adds the same L2 policies
(createpolicy.fractional), as Triton's eviction_policy does; _8b loads and
stores 8-byte chunks instead of 16-byte ones; _x drops the row loop and
the chunk guards (a block a row: launch it with grid = rows, on rows of
exactly BX * PB chunks); _tr reduces a block's warp partials in warp 0 and
broadcasts once, as Triton's kernels do. PRELUDE.cu: a generated
kernel source (its text before `extern "C"` is the device prelude used). smem: column operands (weight,
bias) kept in shared memory, filled once per block, instead of registers.
Blocks loop over rows with the grid's stride, so a grid smaller than the
rows (the variant's grid_x) reuses the columns across rows. The kernel takes the generated
kernel's arguments in the same order, so its cubin can stand in for one in
an artifact directory (bench/gpu/probes/lean_swap.sh does that for a
variant of bench/gpu/variants.sh)."""
import sys

from probe_args import probe_args

KINDS = ("softmax_fwd", "softmax_bwd", "rmsnorm_fwd", "layernorm_fwd")
SUFFIXES = ("_8b", "_rr", "_p", "_x", "_tr")


def split_kind(text):
    """KIND[_8b][_rr][_p] -> (kind, set of suffixes)."""
    flags = set()
    while any(text.endswith(x) for x in SUFFIXES):
        x = next(x for x in SUFFIXES if text.endswith(x))
        flags.add(x)
        text = text[:-len(x)]
    if text not in KINDS:
        sys.exit(f"lean_rows.py: kind '{text}'; expected one of {', '.join(KINDS)} with suffixes from {SUFFIXES}")
    return text, flags


args = probe_args(6, __doc__)
kind, FLAGS = split_kind(args[0])
BX, PB, MINB, name = int(args[1]), int(args[2]), int(args[3]), args[4]
SMEM = len(args) > 6 and args[6] == "smem"
W = BX // 32
WQ = max(1, W // 4)
print(open(args[5]).read().split('extern "C"')[0])

E = 4 if "_8b" in FLAGS else 8  # bf16 elements a chunk: 16 bytes, or 8 as Triton's kernels load
NW, CB = E // 2, 2 * E  # 32-bit words and bytes a chunk
RR = "_rr" in FLAGS
POLICY = "_p" in FLAGS
EXACT = "_x" in FLAGS  # a block a row (grid = rows), rows exactly BX * PB chunks: no row loop, no guards
TRITON_REDUCE = "_tr" in FLAGS  # warp 0 combines the warps' partials, one broadcast (Triton's form)
ins = {"softmax_fwd": ["x"], "softmax_bwd": ["y", "g"], "rmsnorm_fwd": ["x", "w"], "layernorm_fwd": ["x", "w", "b"]}[kind]
outs = {"softmax_fwd": ["o"], "softmax_bwd": ["o"], "rmsnorm_fwd": ["o", "rs"], "layernorm_fwd": ["o", "mu", "rs"]}[kind]
row_ins = [i for i in ins if i in ("y", "g", "x")]
cols = [i for i in ins if i in ("w", "b")]
sig = ", ".join([f"const void* __restrict__ {i}_" for i in ins] + [f"void* __restrict__ {o}_" for o in outs] + ["i64 s0", "i64 s1"])


def vec_loop(body, ind="    "):
    guard = "  {\n" if EXACT else "  if (j < rlen) {\n"
    return (f"{ind}#pragma unroll\n{ind}for (int k = 0; k < {PB}; ++k) {{\n{ind}  const int j = (tx + k * {BX}) * {E};\n"
            f"{ind}{guard}{body}{ind}  }}\n{ind}}}\n")


def block_sum(v, op=0):
    if TRITON_REDUCE:
        ident = "0.0f" if op == 0 else "(-__int_as_float(0x7f800000))"
        return (f"    {v} = fz_warp_reduce<{op}>({v});\n    if ((tx & 31) == 0) red[rb][tx >> 5] = {v};\n    __syncthreads();\n"
                f"    if (tx < 32) {{\n      float q = tx < {W} ? red[rb][tx] : {ident};\n      q = fz_warp_reduce<{op}>(q);\n"
                f"      if (tx == 0) red[rb][0] = q;\n    }}\n    __syncthreads();\n    {v} = red[rb][0];\n    rb ^= 1;\n")
    comb = (lambda a, b: f"{a} + {b}") if op == 0 else (lambda a, b: f"fz_max({a}, {b})")
    return (f"    {v} = fz_warp_reduce<{op}>({v});\n    if ((tx & 31) == 0) red[rb][tx >> 5] = {v};\n    __syncthreads();\n"
            f"    {{\n      const float4* r = (const float4*)red[rb];\n      float4 q = r[0];\n"
            f"      {v} = {comb(comb(comb('q.x', 'q.y'), 'q.z'), 'q.w')};\n"
            f"      for (int w = 1; w < {WQ}; ++w) {{ q = r[w]; {v} = {comb(comb(comb(comb(v, 'q.x'), 'q.y'), 'q.z'), 'q.w')}; }}\n"
            f"    }}\n    rb ^= 1;\n")


def get(a, l="l"):
    if SMEM and a in ("w", "b"):  # each thread reads back only the chunks it stored
        return f"Ty<5>::get(&cs_{a}[(k * {BX} + tx) * {NW}], {l})"
    return f"Ty<5>::get(&w_{a}[k * {NW}], {l})"


k = [f'extern "C" __global__ void __launch_bounds__({BX}, {MINB}) {name}({sig}) {{',
     "  const int tx = threadIdx.x;",
     "  const int rows = (int)s0, rlen = (int)s1;",
     f"  __shared__ __align__(16) float red[2][{4 * WQ}];",
     "  int rb = 0;"]
k += [f"  const unsigned short* __restrict__ {i} = (const unsigned short*){i}_;" for i in ins]
k += ["  unsigned short* __restrict__ o = (unsigned short*)o_;"]
k += [f"  float* __restrict__ {x} = (float*){x}_;" for x in outs if x != "o"]
for c in cols:
    if SMEM:
        k += [f"  __shared__ __align__(16) u32 cs_{c}[{PB * BX * NW}];",
              vec_loop(f"      Chunk<{CB}>::ld(&cs_{c}[(k * {BX} + tx) * {NW}], {c} + j);\n", "  ")]
    else:
        k += [f"  u32 w_{c}[{PB * NW}];", vec_loop(f"      Chunk<{CB}>::ld(&w_{c}[k * {NW}], {c} + j);\n", "  ")]
k += ["  { const int row = blockIdx.x;" if EXACT else "  for (int row = blockIdx.x; row < rows; row += gridDim.x) {",
      "    const size_t base = (size_t)row * rlen;"]


def ld_l1(i, hint):
    """One chunk of row input i with an L1 eviction priority (and with _p the
    same L2 policy, as Triton's eviction_policy emits)."""
    vol = " volatile" if hint == "evict_first" else ""  # the re-read stays after the block sum
    regs = ", ".join(f"%{q}" for q in range(NW))
    outs = ", ".join(f'"=r"(w_{i}[k * {NW} + {q}])' for q in range(NW))
    if POLICY:
        pol = "pol_el" if hint == "evict_last" else "pol_ef"
        return (f'      asm{vol}("ld.global.L1::{hint}.L2::cache_hint.v{NW}.u32 {{{regs}}}, [%{NW}], %{NW + 1};" : {outs} '
                f': "l"({i} + base + j), "l"({pol}));\n')
    return (f'      asm{vol}("ld.global.L1::{hint}.v{NW}.u32 {{{regs}}}, [%{NW}];" : {outs} : "l"({i} + base + j));\n')


def reload():  # _rr: the row inputs loaded again for the output pass
    return vec_loop("".join(ld_l1(i, "evict_first") for i in row_ins)) if RR else ""


if POLICY:
    k += ["  unsigned long long pol_el, pol_ef;",
          '  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol_el));',
          '  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol_ef));']


for i in row_ins:
    k += [f"    u32 w_{i}[{PB * NW}];",
          vec_loop(ld_l1(i, "evict_last") if RR else f"      Chunk<{CB}>::ld(&w_{i}[k * {NW}], {i} + base + j);\n")]
if kind == "softmax_fwd":
    k += ["    float m = -__int_as_float(0x7f800000);", vec_loop(f"#pragma unroll\n      for (int l = 0; l < {E}; ++l) m = fz_max(m, {get('x')});\n"),
          block_sum("m", 1),
          "    float s = 0;", vec_loop(f"#pragma unroll\n      for (int l = 0; l < {E}; ++l) s += fz_exp_approx({get('x')} - m);\n"),
          block_sum("s"),
          "    const float inv = 1.0f / s;",
          reload(),
          vec_loop(f"      float f[{E}]; u32 p[{NW}];\n#pragma unroll\n      for (int l = 0; l < {E}; ++l) f[l] = fz_exp_approx({get('x')} - m) * inv;\n"
                   f"      Ty<5>::template pack<{E}>(p, f);\n      Chunk<{CB}>::stcs(o + base + j, p);\n")]
elif kind == "softmax_bwd":
    k += ["    float s = 0;", vec_loop(f"#pragma unroll\n      for (int l = 0; l < {E}; ++l) s += {get('g')} * {get('y')};\n"),
          block_sum("s"),
          reload(),
          vec_loop(f"      float f[{E}]; u32 p[{NW}];\n#pragma unroll\n      for (int l = 0; l < {E}; ++l) f[l] = {get('y')} * ({get('g')} - s);\n"
                   f"      Ty<5>::template pack<{E}>(p, f);\n      Chunk<{CB}>::st(o + base + j, p);\n")]
elif kind == "rmsnorm_fwd":
    k += ["    float s = 0;", vec_loop(f"#pragma unroll\n      for (int l = 0; l < {E}; ++l) {{ const float v = {get('x')}; s += v * v; }}\n"),
          block_sum("s"),
          "    const float r = rsqrtf(s * (1.0f / (float)rlen) + 1e-5f);",
          "    if (tx == 0) rs[row] = r;",
          reload(),
          vec_loop(f"      float f[{E}]; u32 p[{NW}];\n#pragma unroll\n      for (int l = 0; l < {E}; ++l) f[l] = {get('x')} * r * {get('w')};\n"
                   f"      Ty<5>::template pack<{E}>(p, f);\n      Chunk<{CB}>::stcs(o + base + j, p);\n")]
else:
    k += ["    float s = 0;", vec_loop(f"#pragma unroll\n      for (int l = 0; l < {E}; ++l) s += {get('x')};\n"),
          block_sum("s"),
          "    const float m = s / (float)rlen;",
          "    float d2 = 0;", vec_loop(f"#pragma unroll\n      for (int l = 0; l < {E}; ++l) {{ const float d = {get('x')} - m; d2 += d * d; }}\n"),
          block_sum("d2"),
          "    const float r = rsqrtf(d2 / (float)rlen + 1e-5f);",
          "    if (tx == 0) { mu[row] = m; rs[row] = r; }",
          reload(),
          vec_loop(f"      float f[{E}]; u32 p[{NW}];\n#pragma unroll\n      for (int l = 0; l < {E}; ++l) f[l] = ({get('x')} - m) * r * {get('w')} + {get('b')};\n"
                   f"      Ty<5>::template pack<{E}>(p, f);\n      Chunk<{CB}>::stcs(o + base + j, p);\n")]
k += ["  }", "}"]
print("\n".join(k))
