"""Asks for more dynamic shared memory than a kernel uses (session 18): the
manifest beside OUT.cu gets smem_bytes = BYTES, the kernel is unchanged, so
the SM's shared-memory carve-out grows and its L1 shrinks as they would for
a kernel that used that much. Usage: smem_pad.py GENERATED.cu OUT.cu BYTES"""
import json
import os
import shutil

from probe_args import probe_args

src, dst, nbytes = probe_args(3, __doc__)[:3]
man_path = os.path.join(os.path.dirname(os.path.abspath(src)), "manifest.json")
man = json.load(open(man_path))
man["kernels"][0]["smem_bytes"] = str(int(nbytes))
json.dump(man, open(man_path, "w"), indent=1)
shutil.copyfile(src, dst)
