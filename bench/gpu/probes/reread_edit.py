"""reread_hints.py's variant as a `# edit` probe for bench/gpu/variants.sh:
  reread_edit.py GENERATED.cu OUT.cu MINB HINTS FORWARD
MINB: __launch_bounds__ minimum blocks; HINTS 1: Triton's cache policies
(first pass evict_last, second evict_first); FORWARD 1: the second pass
walks the row forwards (each thread re-reads its own chunks)."""
import os
import re
import sys

from probe_args import probe_args

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reread_hints  # noqa: E402

args = probe_args(5, __doc__, {3: ("0", "1"), 4: ("0", "1")})
src, dst, minb, hints, forward = args[0], args[1], int(args[2]), int(args[3]), int(args[4])
text = open(src).read()
text = re.sub(r"__launch_bounds__\((\d+), \d+\)", lambda m: f"__launch_bounds__({m.group(1)}, {minb})", text, count=1)
open(dst, "w").write(reread_hints.variant(text, 1, hints, forward))  # minimum blocks set above
