"""Streaming stores for a generated kernel's row outputs (session 18): every
`Chunk<..>::st(outN` becomes `::stcs(outN` (st.global.cs, evict-first), the
store the generator emits only for kernels with one streamed input. Usage:
store_cs.py GENERATED.cu OUT.cu"""
import re
import sys

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
s, k = re.subn(r"::st\((out\d+)", r"::stcs(\1", open(src).read())
if k == 0:
    sys.exit("store_cs.py: no plain output store in " + src)
open(dst, "w").write(s)
