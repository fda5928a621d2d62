"""The 4-D batch norm's first pass with chunks handed out at run time
(session 18): in the generated outer persistent multi-pass kernel each block
of a channel group reads a fixed share of the channel, and the group barrier
then waits for the slowest block (session 17's timeline: the last block of a
group ends its first pass 2.2 us after the median, ~3 us a round at the
barrier). Here a channel is cut into contiguous chunks of U x BX 16-byte
vectors, and a block takes the next chunk from a per-channel counter in the
kept workspace (thread 0 asks for chunk k + 1 while the block reads chunk
k), so fast blocks read more chunks and the group reaches its barrier
together. A block keeps its first KEPT chunks in shared memory, lists the
chunks it took, and writes dx for exactly those in the second pass (the
others re-read from L2, last taken first). After the group barrier block 0
of the group zeroes the channel's counter for the next launch (every block
has made its last request before it arrived). Usage: bn_steal.py
GENERATED.cu OUT.cu [cs] (cs: also streaming stores for dx, as store_cs.py)"""
import re

from probe_args import probe_args

args = probe_args(2, __doc__)
src, dst = args[:2]
cs = args[2:3] == ["cs"]
s = open(src).read()
kept = int(re.search(r"if \(fz_ki < (\d+)\) \{ \(\(u32\*\)fz_smem\)", s).group(1))
unroll = int(re.search(r"u32 w_in0\[(\d+)\]\[4\];", s).group(1))
bx = int(re.search(r"const i64 t = \(i64\)blockIdx\.y \* (\d+) \+ tx;", s).group(1))
assert "const int tx = threadIdx.x, ty = threadIdx.y;" in s and f"__launch_bounds__({bx}," in s
CTR = 600  # first counter word in the kept workspace (past the group barriers' words)
MAXC = 64  # chunks a block may take (a list in shared memory)
chunk = unroll * bx  # vectors a chunk


def kept_slot(k, u, word):
    return f"((u32*)fz_smem)[(({k} * {unroll} + {u}) * 8 + {word}) * {bx} + tx]"


def jj(g, u):
    return f"(((i64){g} * {chunk} + (i64){u} * {bx} + tx) * 8)"


def global_loads(g, ind):
    return (f"{ind}u32 w_in0[{unroll}][4];\n{ind}u32 w_in1[{unroll}][4];\n"
            f"#pragma unroll\n{ind}for (int u = 0; u < {unroll}; ++u) {{\n"
            f"{ind}  const i64 jj = {jj(g, 'u')};\n"
            f"{ind}  if (jj < rlen) {{ Chunk<16>::ld(w_in0[u], in0 + ro_in0(jj)); Chunk<16>::ld(w_in1[u], in1 + ro_in1(jj)); }}\n"
            f"{ind}}}\n")


store_kept = "; ".join([f"{kept_slot('cnt', 'u', w)} = w_in0[u][{w}]" for w in range(4)] +
                       [f"{kept_slot('cnt', 'u', 4 + w)} = w_in1[u][{w}]" for w in range(4)])
first = (
    "    if (vec_ok) {\n"
    "      extern __shared__ __align__(16) unsigned char fz_smem[];\n"
    f"      const int nch = (int)((rlen + {chunk * 8 - 1}) / {chunk * 8});\n"
    f"      u32* ctr = bar + {CTR} + row;\n"
    "      if (tx == 0) fz_tk[0] = active ? (int)atomicAdd(ctr, 1u) : nch;\n"
    "      __syncthreads();\n"
    "      int g = fz_tk[0];\n"
    "      fz_cnt = 0;\n"
    "      for (int cnt = 0; g < nch; ++cnt) {\n"
    "        const int nxt = tx == 0 ? (int)atomicAdd(ctr, 1u) : 0;\n" + global_loads("g", "        ") +
    f"#pragma unroll\n        for (int u = 0; u < {unroll}; ++u) {{\n"
    f"          const i64 jj = {jj('g', 'u')};\n"
    f"          if (jj < rlen) {{\n            if (cnt < {kept}) {{ {store_kept}; }}\n"
    "            body0(VW<8>(), jj, w_in0[u], w_in1[u]);\n          }\n        }\n"
    f"        if (tx == 0) {{ fz_list[cnt < {MAXC} ? cnt : {MAXC - 1}] = g; fz_tk[(cnt + 1) & 1] = nxt; }}\n"
    "        __syncthreads();\n"
    "        g = fz_tk[(cnt + 1) & 1];\n"
    "        fz_cnt = cnt + 1;\n"
    "      }\n"
    "    } else {\n")
i0 = s.index("    if (vec_ok) {\n      extern __shared__")
i1 = s.index("    } else {\n", i0) + len("    } else {\n")
s = s[:i0] + first + s[i1:]

kept_read = "".join(f"          w_in0[{w}] = {kept_slot('k', 'u', w)};\n" for w in range(4))
kept_read += "".join(f"          w_in1[{w}] = {kept_slot('k', 'u', 4 + w)};\n" for w in range(4))
second = (
    "    if (vec_ok) {\n"
    "      extern __shared__ __align__(16) unsigned char fz_smem[];\n"
    "      for (int k = fz_cnt - 1; active && k >= 0; --k) {\n"
    "        const int g = fz_list[k];\n"
    f"        if (k >= {kept}) {{\n" + global_loads("g", "          ") +
    f"#pragma unroll\n          for (int u = 0; u < {unroll}; ++u) {{\n"
    f"            const i64 jj = {jj('g', 'u')};\n"
    "            if (jj < rlen) fin(VW<8>(), jj, w_in0[u], w_in1[u]);\n          }\n"
    "          continue;\n        }\n"
    f"#pragma unroll 1\n        for (int u = 0; u < {unroll}; ++u) {{\n"
    f"          const i64 jj = {jj('g', 'u')};\n"
    "          if (!(jj < rlen)) break;\n"
    "          u32 w_in0[4], w_in1[4];\n" + kept_read +
    "          fin(VW<8>(), jj, w_in0, w_in1);\n        }\n      }\n")
j0 = s.index("    if (vec_ok) {\n      extern __shared__", i0 + len(first))
j1 = s.index("    } else {\n", j0)
s = s[:j0] + second + s[j1:]

# Shared state, and the counter's reset once the group is past its barrier.
decl = "  unsigned fz_rb = 0;\n"
assert decl in s
s = s.replace(decl, decl + f"  __shared__ int fz_tk[2];\n  __shared__ int fz_list[{MAXC}];\n  int fz_cnt = 0;\n", 1)
sync = "      fz_group_sync(bar);\n      par++;\n"
assert sync in s
s = s.replace(sync, sync + f"      if (tx == 0 && blockIdx.y == 0 && active) bar[{CTR} + row] = 0;\n", 1)
if cs:
    s = re.sub(r"::st\((out\d+)", r"::stcs(\1", s)
open(dst, "w").write(s)
