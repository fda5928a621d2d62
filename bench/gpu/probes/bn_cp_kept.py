"""The 4-D batch norm's kept chunks copied by cp.async (session 18): the
generated outer persistent multi-pass kernel loads every chunk of a channel
into registers, then stores the first KEPT iterations' chunks to shared
memory for the second pass, so a thread has one iteration's loads in flight
at a time. Here the kept chunks go straight to shared memory by cp.async
when a channel starts (KEPT x U x 2 16-byte copies a thread, all in flight
while the other iterations load through registers), and their statistics
are summed from shared memory after the copies land. Modes:
  fill   the kept chunks' copies issued when the channel's first pass starts;
  ahead  the next channel's copies issued during this channel's second pass,
         after its kept chunks (now read first) are written out, so they
         overlap the second pass's re-reads and stores.
Each thread reads back only the slots it copied (16 bytes a thread, lanes
adjacent). Usage: bn_cp_kept.py GENERATED.cu OUT.cu MODE"""
import re

from probe_args import probe_args

src, dst, mode = probe_args(3, __doc__, {2: ("fill", "ahead")})[:3]
s = open(src).read()
kept = int(re.search(r"if \(fz_ki < (\d+)\) \{ \(\(u32\*\)fz_smem\)", s).group(1))
unroll = int(re.search(r"u32 w_in0\[(\d+)\]\[4\];", s).group(1))
bx = int(re.search(r"const i64 t = \(i64\)blockIdx\.y \* (\d+) \+ tx;", s).group(1))
assert "const int tx = threadIdx.x, ty = threadIdx.y;" in s and f"__launch_bounds__({bx}," in s


def slot(ki, u, inp):
    return f"(fz_smem + ((({ki} * {unroll} + {u}) * 2 + {inp}) * {bx} + tx) * 16)"


def copies(ind):
    """cp.async of this thread's kept chunks of the row rowbase() points at."""
    return (f"{ind}for (int ki = 0; ki < {kept} && ki < nki; ++ki) {{\n"
            f"#pragma unroll\n{ind}  for (int u = 0; u < {unroll}; ++u) {{\n"
            f"{ind}    const i64 jj = (t + (i64)ki * T * {unroll} + (i64)u * T) * 8;\n"
            f"{ind}    if (jj < rlen) {{ fz_cp_async<16>({slot('ki', 'u', 0)}, in0 + ro_in0(jj)); "
            f"fz_cp_async<16>({slot('ki', 'u', 1)}, in1 + ro_in1(jj)); }}\n"
            f"{ind}  }}\n{ind}}}\n")


def from_smem(fn, extra, ind):
    """fn(VW<8>, jj, kept chunks) over this thread's kept chunks, ki from ki0 down or up."""
    return (f"#pragma unroll\n{ind}for (int u = 0; u < {unroll}; ++u) {{\n"
            f"{ind}  const i64 jj = (t + (i64)ki * T * {unroll} + (i64)u * T) * 8;\n"
            f"{ind}  if (!(jj < rlen)) break;\n"
            f"{ind}  u32 a[4], b[4];\n"
            f"{ind}  Chunk<16>::ld(a, {slot('ki', 'u', 0)});\n"
            f"{ind}  Chunk<16>::ld(b, {slot('ki', 'u', 1)});\n"
            f"{ind}  {fn}(VW<8>(), jj, a, b{extra});\n{ind}}}\n")


nki = f"      const i64 nki = rlen > t * 8 ? (rlen - t * 8 + (i64)T * {unroll} * 8 - 1) / ((i64)T * {unroll} * 8) : 0;\n"
issue_first = "it == 0" if mode == "ahead" else "true"
first = (
    "    if (vec_ok) {\n"
    "      extern __shared__ __align__(16) unsigned char fz_smem[];\n" + nki +
    f"      if ({issue_first}) {{\n        if (active) {{\n" + copies("          ") +
    "        }\n        fz_cp_commit();\n      }\n"
    f"      for (i64 fz_ki = {kept}; active && fz_ki < nki; ++fz_ki) {{\n"
    f"        const i64 c0 = t + fz_ki * (i64)T * {unroll};\n"
    f"        u32 w_in0[{unroll}][4];\n        u32 w_in1[{unroll}][4];\n"
    f"#pragma unroll\n        for (int u = 0; u < {unroll}; ++u) {{\n"
    "          const i64 jj = (c0 + (i64)u * T) * 8;\n"
    "          if (jj < rlen) { Chunk<16>::ld(w_in0[u], in0 + ro_in0(jj)); Chunk<16>::ld(w_in1[u], in1 + ro_in1(jj)); }\n"
    "        }\n"
    f"#pragma unroll\n        for (int u = 0; u < {unroll}; ++u) {{\n"
    "          const i64 jj = (c0 + (i64)u * T) * 8;\n"
    "          if (jj < rlen) body0(VW<8>(), jj, w_in0[u], w_in1[u]);\n"
    "        }\n      }\n"
    "      fz_cp_wait<0>();\n"
    f"      for (int ki = 0; active && ki < {kept} && ki < nki; ++ki) {{\n" +
    from_smem("body0", "", "        ") + "      }\n"
    "    } else {\n")
i0 = s.index("    if (vec_ok) {\n      extern __shared__")
i1 = s.index("    } else {\n", i0) + len("    } else {\n")
s = s[:i0] + first + s[i1:]

# The second pass: the kept iterations read back from the new slots.
j0 = s.index("    if (vec_ok) {\n      extern __shared__", i0 + len(first))
j1 = s.index("    } else {\n", j0)
second = s[j0:j1]
reread = second[second.index(f"      for (; active && fz_ki >= {kept}; --fz_ki) {{"):
                second.index("      for (; active && fz_ki >= 0; --fz_ki) {")]
head = second[:second.index(f"      for (; active && fz_ki >= {kept}; --fz_ki) {{")]
kept_loop = (f"      for (int ki = {kept} - 1; ki >= 0; --ki) {{\n"
             "        if (!active || ki >= nki) continue;\n" +
             from_smem("fin", "", "        ") + "      }\n")
if mode == "fill":
    new_second = head + reread + kept_loop
else:
    ahead = ("      {\n        const i64 nrow = row + rstride;\n"
             "        if (active && nrow < rows) {\n          rowbase(nrow);\n" + copies("          ") +
             "          rowbase(row);\n        }\n        fz_cp_commit();\n      }\n")
    new_second = head + kept_loop + ahead + reread
new_second = new_second.replace("      extern __shared__ __align__(16) unsigned char fz_smem[];\n",
                                "      extern __shared__ __align__(16) unsigned char fz_smem[];\n" + nki, 1)
s = s[:j0] + new_second + s[j1:]
open(dst, "w").write(s)
