#!/usr/bin/env python3
"""A training-style loop that gets its fused kernels from fusiond.

Every step sends the same fusion definition (an RMSNorm forward, symbolic
shapes) to the daemon: the first step compiles (cache "miss"), every later
step is a cache hit, also across daemon restarts. When torch and a GPU are
available the kernels are launched with fusiond.runtime on torch tensors and
checked against eager PyTorch; otherwise the loop only fetches artifacts.

    fusiond --listen 127.0.0.1:50051 &
    PYTHONPATH=<build>/python python3 client/python/examples/train_loop.py \\
        --server 127.0.0.1:50051 --steps 20
"""

import argparse
import sys
import time

import fusiond


def rmsnorm_forward(hidden):
    """y = x * rsqrt(mean(x^2) + eps) * w over bfloat16 [rows, hidden] (rows
    symbolic), computed in float32; outputs y (bf16)."""
    b = fusiond.GraphBuilder()
    x = b.define_tensor([-1, hidden], "bfloat16", name="x")
    w = b.define_tensor([hidden], "bfloat16", name="w")
    xf = b.op("cast", x, dtype="float32")
    wf = b.op("cast", w, dtype="float32")
    sq = b.op("mul", xf, xf)
    ss = b.op("sum", sq, dims=[1], keepdim=True)
    mean = b.op("div", ss, b.define_constant(float(hidden)))
    rstd = b.op("rsqrt", b.op("add", mean, b.define_constant(1e-6)))
    wb = b.op("broadcast", wf, is_broadcast_dim=[True, False])
    y = b.op("mul", b.op("mul", xf, rstd), wb)
    b.add_output(b.op("cast", y, dtype="bfloat16"))
    return b.build()


def maybe_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--hidden", type=int, default=4096)
    args = parser.parse_args()

    torch = maybe_torch()
    graph = rmsnorm_forward(args.hidden)
    shapes = [[args.rows, args.hidden], [args.hidden]]
    client = fusiond.FusionClient(args.server)
    client.wait_ready()
    if torch is not None:
        x = torch.randn(args.rows, args.hidden, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(args.hidden, device="cuda", dtype=torch.bfloat16)

    fusion = None
    for step in range(args.steps):
        t0 = time.perf_counter()
        result = client.compile(graph, shapes)
        fetch_ms = (time.perf_counter() - t0) * 1e3
        line = f"step {step:3d}: {result.cache:4s} {fetch_ms:8.2f} ms, {len(result.kernels)} kernel(s)"
        if torch is not None:
            if fusion is None or result.cache == "miss":
                fusion = result.load()
            (y,) = fusion(x, w)
            xf = x.float()
            ref = (xf * torch.rsqrt(xf.pow(2).mean(1, keepdim=True) + 1e-6) * w.float()).bfloat16()
            err = ((y.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
            line += f", launched, max rel err {err:.2e}"
        print(line, flush=True)
    stats = client.stats()
    print(f"daemon: {stats['hits']} hits, {stats['misses']} misses, {stats['compiles']} compiles")
    if torch is None:
        print("(torch with a GPU not available: artifacts fetched, not launched)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
