"""Launches a grid-synchronized kernel with cuLaunchKernel instead of
cuLaunchCooperativeKernel (session 17): sets the manifest's "cooperative"
false beside GENERATED.cu and copies the source unchanged, to time what the
cooperative launch itself costs. Only for a measurement on an idle GPU: a
plain launch does not guarantee the co-residency the grid barrier needs.
Usage: noncoop.py GENERATED.cu OUT.cu"""
import json
import os
import shutil

from probe_args import probe_args

src, dst = probe_args(2, __doc__)[:2]
man_path = os.path.join(os.path.dirname(os.path.abspath(src)), "manifest.json")
man = json.load(open(man_path))
assert all(k["cooperative"] for k in man["kernels"]), "not a cooperative kernel"
for k in man["kernels"]:
    k["cooperative"] = False
json.dump(man, open(man_path, "w"), indent=1)
shutil.copyfile(src, dst)
