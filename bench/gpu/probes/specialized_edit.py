"""Edits a specialized persistent kernel (session 16) to find what made
layernorm backward slower than its general twin: `sync` puts back the
block barrier the general kernel has after the prologue (where it zeroes
its column partials for rows that do not fit), `noreturn` drops the early
`if (!fits) return;`. Usage: specialized_edit.py GENERATED.cu OUT.cu MODE[,MODE]"""
from probe_args import probe_args

src, dst, modes = probe_args(3, __doc__)[:3]
s = open(src).read()
for mode in modes.split(","):
    if mode == "sync":
        key = "  int stage = 0, fill = " if "int stage = 0, fill = " in s else "  const i64 iters = "
        assert key in s, "no row loop in " + src
        s = s.replace(key, "  __syncthreads();\n" + key, 1)
    elif mode == "noreturn":
        assert "  if (!fits) return;\n" in s, "not a specialized kernel: " + src
        s = s.replace("  if (!fits) return;\n", "", 1)
    else:
        raise SystemExit(f"unknown mode {mode}")
open(dst, "w").write(s)
