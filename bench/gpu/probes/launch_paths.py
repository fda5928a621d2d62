#!/usr/bin/env python3
"""Is torch.compile's do_bench edge on softmax backward
and rmsnorm forward in its kernel, or around it? Under CUDA-graph replay
ours equals torch.compile there; under do_bench (L2 flushed before every
launch) ours was 2-4% slower in every form tried, torch.compile's own
(lean_rows.py softmax_bwd_rr) included. So this times, in one process, on
the same inputs, under do_bench:

  compile          torch.compile's function (fresh outputs each call)
  ours             the runtime, preallocated outputs (what run.py times)
  ours-fresh       the runtime, outputs allocated each call
  ours-in-compile  the runtime writing into torch.compile's output tensors
  triton-wW-sS-H   torch.compile's Triton cubins (each autotuning candidate:
                   W warps, S bytes of shared memory, H its cache directory) launched by cuLaunchKernel here
  triton-...-jit   the same kernels' PTX compiled by the driver (not Triton's ptxas);
                   with --ptx-edits also -jit-nopol, -jit-nol1, -jit-plain: that PTX
                   without its L2 cache policies, its L1 priorities, or both
  ours-direct      our cubin launched the same way (same buffers as ours)

each ROUNDS times, interleaved. If a Triton cubin launched here keeps the edge, it is the
kernel's code; if ours-in-compile or ours-fresh gets it, the buffers.

  TRITON_CACHE_DIR=$(mktemp -d) python3 launch_paths.py ARTIFACT_DIR FUSION.py [--size-map A:B,...]
"""
from __future__ import annotations

import argparse
import ctypes as c
import glob
import itertools
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run as harness  # noqa: E402


def ptx_params(ptx: str, name: str):
    """The .entry's parameter types (u64 / u32 / ...) in order."""
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        raise SystemExit(f"launch_paths: no .entry {name} in the PTX")
    return re.findall(r"\.param\s+\.(\w+)", m.group(1))


class Direct:
    """A cubin's kernel launched by cuLaunchKernel on torch's current stream."""

    def __init__(self, drv, cubin: bytes, name: str, types, grid, block, smem):
        """cubin: a cubin, or PTX text ending in a NUL (the driver compiles it)."""
        self.drv, self.grid, self.block, self.smem = drv, grid, block, smem
        mod, fn = c.c_void_p(), c.c_void_p()
        self._image = c.create_string_buffer(cubin, len(cubin))
        drv.check(drv.cuModuleLoadData(c.byref(mod), self._image), "cuModuleLoadData", name)
        drv.check(drv.cuModuleGetFunction(c.byref(fn), mod, name.encode()), "cuModuleGetFunction", name)
        if smem > 48 * 1024:
            drv.check(drv.cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute", name)
        self.fn = fn
        self.types = types

    def bind(self, values):
        ctor = {"u64": c.c_uint64, "b64": c.c_uint64, "s64": c.c_int64, "u32": c.c_uint32, "b32": c.c_uint32,
                "s32": c.c_int32, "f32": c.c_float}
        self._vals = [ctor[t](v) for t, v in zip(self.types, values)]
        self._params = (c.c_void_p * len(self._vals))(*[c.cast(c.byref(v), c.c_void_p) for v in self._vals])

    def __call__(self):
        import torch
        stream = torch.cuda.current_stream().cuda_stream
        self.drv.check(self.drv.cuLaunchKernel(self.fn, *self.grid, *self.block, self.smem, stream,
                                               self._params, None), "cuLaunchKernel", "direct")


PTX_EDITS = ("nopol", "nol1", "plain")


def edit_ptx(ptx: str, mode: str) -> str:
    """Triton's PTX without its L2 cache policies (nopol: the loads'
    .L2::cache_hint and policy operand), its L1 eviction priorities (nol1),
    or both (plain); "" leaves it."""
    if mode in ("nopol", "plain"):
        ptx = re.sub(r"(ld\.global[^;\n]*?)\.L2::cache_hint([^;\n]*?), %rd\d+;", r"\1\2;", ptx)
    if mode in ("nol1", "plain"):
        ptx = re.sub(r"\.L1::evict_(last|first)", "", ptx)
    return ptx


def triton_kernels(cache: str):
    """The kernels torch.compile left in TRITON_CACHE_DIR (its autotuner's
    candidates of one kernel: each is tried)."""
    found = []
    for meta in glob.glob(os.path.join(cache, "*", "*.json")):
        d = json.load(open(meta))
        if not isinstance(d, dict) or "name" not in d or "num_warps" not in d:
            continue
        stem = os.path.splitext(meta)[0]
        if os.path.exists(stem + ".cubin") and os.path.exists(stem + ".ptx"):
            found.append((d, stem))
    if not found or len({d["name"] for d, _ in found}) != 1:
        raise SystemExit(f"launch_paths: expected one kernel's candidates in {cache}, found "
                         f"{[d['name'] for d, _ in found]}")
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artifacts", help="the fusion's artifact directory (manifest.json, cubin)")
    p.add_argument("fusion", help="its definition (.py repro script)")
    p.add_argument("--size-map", default="")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ptx-edits", action="store_true",
                   help="also time each Triton kernel's PTX without its L2 policies (-nopol), its L1 "
                        "priorities (-nol1) and both (-plain)")
    args = p.parse_args()
    cache = os.environ.get("TRITON_CACHE_DIR")
    if not cache:
        raise SystemExit("launch_paths: set TRITON_CACHE_DIR to a fresh directory")
    import torch
    from fusiond import runtime
    script = harness.frontend.load_script(args.fusion)
    size_map = harness.parse_size_map(args.size_map)
    inputs = script.make_inputs("cuda", seed=1, size_map=size_map if script.program.symbolic else None)
    ref = script.program.function("float64")(*inputs)
    compiled = torch.compile(script.program.function("native"), dynamic=False)
    couts = compiled(*inputs)
    couts = list(couts) if isinstance(couts, (list, tuple)) else [couts]
    fusion = runtime.load(args.artifacts)
    ours_out, checks = harness.run_ours(fusion, inputs, ref)
    print("ours check:", checks)

    drv = runtime._Driver.get()
    fusion._module(torch.cuda.current_device())
    # Triton's kernel: parameters as its PTX declares them; the tensors in
    # the order inductor passes them (inputs, then outputs), extents, then
    # null scratch pointers.
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    rows = tensors[0].shape[0]
    k = fusion.manifest.kernels[0]
    saved = [t.clone() for t in tensors]
    ptrs = [t.data_ptr() for t in tensors] + [o.data_ptr() for o in couts]

    def bind(tri, types, xblock, perm):
        n64 = len([t for t in types if t in ("u64", "b64")])
        it64 = iter(list(perm) + [0] * (n64 - len(perm)))
        it32 = iter([rows, tensors[0].numel() // rows, 0, 0])
        tri.bind([next(it64) if t in ("u64", "b64") else next(it32) for t in types])
        tri.grid = ((rows + xblock - 1) // xblock, 1, 1)

    tris = {}
    for meta, stem in triton_kernels(cache):
        types = ptx_params(open(stem + ".ptx").read(), meta["name"])
        label = f"triton-w{meta['num_warps']}-s{meta['shared']}-{os.path.basename(os.path.dirname(stem))[:6]}"
        print(f"{label}: {meta['name']} params {types}")
        tri = Direct(drv, open(stem + ".cubin", "rb").read(), meta["name"], types, (rows, 1, 1),
                     (32 * meta["num_warps"], 1, 1), meta["shared"])
        # Which pointer is which, and the rows a block, are inductor's
        # choice: try orders (inputs restored after each) until outputs check.
        found = None
        for xblock in (1, 2, 4, 8):
            for perm in itertools.permutations(ptrs):
                bind(tri, types, xblock, perm)
                for o in couts:
                    o.fill_(float("nan"))
                tri()
                torch.cuda.synchronize()
                ok = harness.check_outputs(couts, ref)
                for t, s0 in zip(tensors, saved):
                    t.copy_(s0)
                if all(r["pass"] for r in ok):
                    found = (xblock, perm)
                    break
            if found:
                break
        print(f"  {label}:", f"XBLOCK {found[0]}, pointer order {[ptrs.index(q) for q in found[1]]}" if found
              else "no order checked; not timed")
        if found:
            bind(tri, types, *found)
            tris[label] = tri
            # The same PTX compiled by this driver's ptxas instead of Triton's,
            # as is and (--ptx-edits) without its cache policies.
            ptx = open(stem + ".ptx").read()
            for mode in ("",) + (PTX_EDITS if args.ptx_edits else ()):
                jit = Direct(drv, edit_ptx(ptx, mode).encode() + b"\0", meta["name"], types, (rows, 1, 1),
                             (32 * meta["num_warps"], 1, 1), meta["shared"])
                bind(jit, types, *found)
                for o in couts:
                    o.fill_(float("nan"))
                jit()
                torch.cuda.synchronize()
                if not all(r["pass"] for r in harness.check_outputs(couts, ref)):
                    raise SystemExit(f"launch_paths: {label}-jit{mode} does not check")
                tris[f"{label}-jit{('-' + mode) if mode else ''}"] = jit

    plan = fusion.plan([tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs])
    grid, block, smem = plan.launches[0]
    mine = Direct(drv, fusion._binaries[k.binary], k.name, ["u64"] * len(k.params), tuple(grid), tuple(block),
                  smem)
    vals = []
    for prm in k.params:
        if prm.kind == "input":
            vals.append(inputs[prm.index].data_ptr())
        elif prm.kind == "output":
            vals.append(ours_out[prm.index].data_ptr())
        elif prm.kind == "size":
            vals.append(plan.symbols[prm.symbol])
        else:
            raise SystemExit(f"launch_paths: parameter kind {prm.kind} not handled")
    mine.bind(vals)
    for o in ours_out:
        o.fill_(float("nan"))
    mine()
    torch.cuda.synchronize()
    print("ours-direct check:", harness.check_outputs(ours_out, ref))

    calls = {
        "compile": lambda: compiled(*inputs),
        "ours": lambda: fusion.run(inputs, outputs=ours_out),
        "ours-fresh": lambda: fusion.run(inputs),
        "ours-in-compile": lambda: fusion.run(inputs, outputs=couts),
        **tris,
        "ours-direct": mine,
    }
    times = {n: [] for n in calls}
    for _ in range(args.rounds):
        for n, f in calls.items():
            times[n].append(harness.bench(f, 25, 100))
    shape = "x".join(str(s) for s in tensors[0].shape)
    print(f"{os.path.basename(args.fusion)} {shape}, do_bench median us, {args.rounds} rounds interleaved:")
    for n, t in times.items():
        print(f"  {n:<16} " + " ".join(f"{v:7.1f}" for v in t))
    print("steady (one CUDA graph of the same call, no rotation, us):")
    for n in calls:
        if n in ("compile", "ours", "ours-direct") or n in tris:
            print(f"  {n:<16} {harness.steady_us([calls[n]]):7.1f}")


if __name__ == "__main__":
    main()
