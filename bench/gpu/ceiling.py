"""What a kernel that only streams can reach at a fusion's size: the ceiling
the percent-of-copy goals are measured against.

For each traffic pattern (N inputs read once, one output written once, all
the same size) it times, side by side in one run and with the harness's two
methods (do_bench with the L2 flushed; steady = one CUDA graph over rotated
buffer sets):
  * torch's copy_ of the same total bytes (what run.py's same-size column is),
  * Triton streaming kernels out = in0 (+ in1) over a sweep of block sizes,
    warps and cache hints, non-persistent grids,
and prints each as a percent of the 1 GiB copy rate measured in the same run.
If no streaming kernel reaches a goal at a size, no fusion that also reduces
can reach it there under the same timing.

  python3 bench/gpu/ceiling.py [--rep 100] [--json OUT.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as harness  # noqa: E402  (bench, steady_us, rotations, copy_bandwidth)

# name -> (inputs, elements per tensor (bf16)): the corpus shapes' traffic.
PATTERNS = {
    "fwd 2048x8192 (1 in, 1 out)": (1, 2048 * 8192),
    "bwd 2048x8192 (2 in, 1 out)": (2, 2048 * 8192),
    "fwd 16384x4096 (1 in, 1 out)": (1, 16384 * 4096),
    "bwd 16384x4096 (2 in, 1 out)": (2, 16384 * 4096),
}
BLOCKS = [1024, 2048, 4096, 8192]
WARPS = [4, 8, 16]
HINTS = ["", "stream"]  # "stream": evict_first loads, .cs stores


def triton_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def stream_k(a, b, out, n, BLOCK: tl.constexpr, NIN: tl.constexpr, HINT: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        if HINT:
            x = tl.load(a + offs, mask=m, eviction_policy="evict_first")
            if NIN == 2:
                x = x + tl.load(b + offs, mask=m, eviction_policy="evict_first")
            tl.store(out + offs, x, mask=m, cache_modifier=".cs")
        else:
            x = tl.load(a + offs, mask=m)
            if NIN == 2:
                x = x + tl.load(b + offs, mask=m)
            tl.store(out + offs, x, mask=m)

    return stream_k


def measure(nin, n, kernel, rep, copy_bw):
    import torch
    import triton
    nbytes = (nin + 1) * n * 2
    sets = []
    for _ in range(harness.rotations(nbytes)):
        ins = [torch.randn(n, dtype=torch.bfloat16, device="cuda") for _ in range(nin)]
        sets.append((ins, torch.empty(n, dtype=torch.bfloat16, device="cuda")))
    rows = []

    def pct(us):
        return 100.0 * nbytes / copy_bw / (us * 1e-6)

    # torch copy_ of the same total bytes.
    us = harness.same_size_copy_us(nbytes, 25, rep)
    st = harness.steady_copy_us(nbytes)
    rows.append({"impl": "torch copy_", "us": us, "steady_us": st, "pct": pct(us), "steady_pct": pct(st)})
    for block in BLOCKS:
        for warps in WARPS:
            for hint in HINTS:
                grid = (triton.cdiv(n, block),)

                def call(s=sets[0]):
                    ins, out = s
                    kernel[grid](ins[0], ins[-1], out, n, BLOCK=block, NIN=nin, HINT=bool(hint),
                                 num_warps=warps)
                    return out

                call()
                us = harness.bench(call, 25, rep)
                st = harness.steady_us([lambda s=s: call(s) for s in sets])
                rows.append({"impl": f"triton B{block} w{warps}{' ' + hint if hint else ''}",
                             "us": us, "steady_us": st, "pct": pct(us), "steady_pct": pct(st)})
    return nbytes, rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rep", type=float, default=100, help="do_bench repetition time, ms")
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args()
    import torch
    copy_bw = harness.copy_bandwidth(25, args.rep)
    print(f"{torch.cuda.get_device_name()}: 1 GiB copy_ {copy_bw / 1e12:.2f} TB/s = 100%")
    kernel = triton_kernel()
    result = {"device": torch.cuda.get_device_name(), "copy_tb_s": copy_bw / 1e12, "patterns": {}}
    for name, (nin, n) in PATTERNS.items():
        nbytes, rows = measure(nin, n, kernel, args.rep, copy_bw)
        result["patterns"][name] = {"bytes": nbytes, "rows": rows}
        print(f"\n== {name}: {nbytes / 1e6:.1f} MB, floor {nbytes / copy_bw * 1e6:.1f} us")
        print(f"{'impl':<28}{'do_bench us':>12}{'% copy':>8}{'steady us':>11}{'% copy':>8}")
        for r in rows:
            print(f"{r['impl']:<28}{r['us']:12.1f}{r['pct']:8.1f}{r['steady_us']:11.1f}{r['steady_pct']:8.1f}")
        best = max(rows[1:], key=lambda r: r["pct"])
        best_st = max(rows[1:], key=lambda r: r["steady_pct"])
        print(f"best streaming kernel: do_bench {best['pct']:.1f}% ({best['impl']}), "
              f"steady {best_st['steady_pct']:.1f}% ({best_st['impl']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
