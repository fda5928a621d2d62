"""reread_hints.py's variant as a `# edit` probe for bench/gpu/variants.sh:
  reread_edit.py GENERATED.cu OUT.cu MINB HINTS FORWARD
MINB: __launch_bounds__ minimum blocks; HINTS 1: Triton's cache policies
(first pass evict_last, second evict_first); FORWARD 1: the second pass
walks the row forwards (each thread re-reads its own chunks)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reread_hints  # noqa: E402

src, dst, minb, hints, forward = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
text = open(src).read()
text = re.sub(r"__launch_bounds__\((\d+), \d+\)", lambda m: f"__launch_bounds__({m.group(1)}, {minb})", text, count=1)
open(dst, "w").write(reread_hints.variant(text, 1, hints, forward))  # minimum blocks set above
