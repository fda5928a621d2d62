#!/usr/bin/env python3
"""A small transformer trained with torch.compile(backend="fusiond").

Plain PyTorch: two pre-norm blocks (RMSNorm, causal attention through
matmul + softmax, a SiLU-gated MLP, residuals) and a final RMSNorm, fp32
parameters under bf16 autocast, AdamW, regressing a fixed random target.
No dropout: the torch.compile backend leaves aten's random ops to aten, and
the runs must be comparable step for step.

    python3 examples/pytorch/transformer_train.py --steps 300            # fusiond only
    python3 examples/pytorch/transformer_train.py --steps 300 --compare  # + eager, Inductor

With --compare it reports, per step, the loss against eager (bf16
tolerance), whether two fusiond runs of the same seed give the same losses
bit for bit, which ops ran in fusiond kernels, the step time against eager
and torch.compile's default backend (Inductor), and each fusion's kernel
time against Inductor's for the same subgraph (--json FILE writes it all);
it exits 1 when a check fails. bench/gpu/pytorch_acceptance.sh runs it.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
try:
    import fusiond.torch_backend as fusiond_backend
except ImportError:  # a checkout without the package installed
    sys.path.insert(0, os.path.join(_ROOT, "client", "python"))
    import fusiond.torch_backend as fusiond_backend


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(torch.nn.Module):
    def __init__(self, dim, heads, hidden, seq):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = RMSNorm(dim)
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)
        self.register_buffer("causal", torch.full((seq, seq), float("-inf")).triu(1))

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)).float() * (1.0 / math.sqrt(hd)) + self.causal[:t, :t]
        attn = torch.softmax(scores, dim=-1).to(v.dtype)
        y = (attn @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(torch.nn.Module):
    def __init__(self, dim=256, heads=4, hidden=1024, seq=128, layers=2):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(dim, heads, hidden, seq) for _ in range(layers))
        self.norm = RMSNorm(dim)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


def make(seed, batch=16, seq=128, dim=256, batches=8):
    """Model, optimizer and a fixed dataset, all from `seed`."""
    torch.manual_seed(seed)
    model = Model(dim=dim, seq=seq).cuda()
    teacher = Model(dim=dim, seq=seq).cuda()
    g = torch.Generator(device="cuda").manual_seed(seed + 1)
    data = []
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(batches):
            x = torch.randn(batch, seq, dim, device="cuda", generator=g)
            data.append((x, teacher(x).float()))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return model, opt, data


def train(mode, steps, seed):
    """Losses and per-step wall times (ms) of `steps` steps; mode: eager,
    fusiond or inductor (torch.compile's default backend)."""
    torch._dynamo.reset()
    model, opt, data = make(seed)
    fn = model if mode == "eager" else torch.compile(model, backend=mode)
    losses, times = [], []
    for step in range(steps):
        x, y = data[step % len(data)]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(fn(x).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append((time.perf_counter() - t0) * 1e3)
    return losses, times


def _median_after_warmup(times, warmup=10):
    return statistics.median(times[warmup:] if len(times) > warmup + 5 else times)


def _bench_us(fn, reps=100):
    """GPU time per call (median, CUDA events over `reps` back-to-back calls,
    5 rounds) and host time per call (the same calls without waiting)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    gpu, host = [], []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        host.append((time.perf_counter() - t0) / reps * 1e6)
        end.record()
        torch.cuda.synchronize()
        gpu.append(start.elapsed_time(end) / reps * 1e3)
    return statistics.median(gpu), statistics.median(host)


def _random_inputs(first_inputs):
    out = []
    for item in first_inputs:
        if not isinstance(item, tuple):
            out.append(item)
            continue
        shape, dtype = item
        if dtype == torch.bool:
            out.append(torch.rand(shape, device="cuda") > 0.5)
        else:
            out.append(torch.randn(shape, device="cuda", dtype=torch.float32).to(dtype))
    return out


def per_fusion_times(groups):
    """Each fusion's time (ours vs Inductor compiling the same aten subgraph)."""
    rows, seen = [], set()
    for g in groups:
        grp = g["group"]
        if g["fallback"] or not g["first_inputs"] or (g["definition"], str(g["first_inputs"])) in seen:
            continue  # identical layers give identical fusions: each is timed once
        seen.add((g["definition"], str(g["first_inputs"])))
        inputs = _random_inputs(g["first_inputs"])
        fused_args = [inputs[k] for k in grp.take]
        ours_gpu, ours_host = _bench_us(lambda: grp.fd.execute(fused_args))
        torch._dynamo.reset()
        inductor = torch.compile(grp.fallback)
        ind_gpu, ind_host = _bench_us(lambda: inductor(*inputs))
        rows.append({"fusion": g["name"], "graph": g["graph"], "ops": len(g["ops"]),
                     "ours_us": ours_gpu, "inductor_us": ind_gpu, "ours_host_us": ours_host,
                     "inductor_host_us": ind_host, "shapes": [list(s[0]) for s in g["first_inputs"]
                                                              if isinstance(s, tuple)]})
    return rows


_CATEGORIES = {  # what each kind of op of the block leaves in the forward graph
    "norm": ("aten.rsqrt",), "softmax": ("aten.amax", "aten.exp"), "activation": ("aten.sigmoid",),
    "residual": ("aten.add",),
}


def compare(args):
    failures = []
    result = {"steps": args.steps, "seed": args.seed, "device": torch.cuda.get_device_name()}
    eager, eager_t = train("eager", args.steps, args.seed)
    fusiond_backend.reset_report()
    ours, ours_t = train("fusiond", args.steps, args.seed)
    groups = fusiond_backend.report()
    ours2, _ = train("fusiond", args.steps, args.seed)
    inductor, ind_t = train("inductor", args.steps, args.seed)

    def rel(a, b):
        return abs(a - b) / max(abs(b), 1e-6)
    ours_err = max(rel(a, b) for a, b in zip(ours, eager))
    ind_err = max(rel(a, b) for a, b in zip(inductor, eager))
    bound = max(args.rtol, 2 * ind_err)
    result["losses"] = {"eager": eager, "fusiond": ours, "fusiond_again": ours2, "inductor": inductor}
    result["max_rel_loss_diff"] = {"fusiond_vs_eager": ours_err, "inductor_vs_eager": ind_err,
                                   "bound": bound}
    print(f"losses: first {eager[0]:.5f} last eager {eager[-1]:.5f} fusiond {ours[-1]:.5f} "
          f"inductor {inductor[-1]:.5f}; max relative difference per step vs eager: fusiond "
          f"{ours_err:.2e}, inductor {ind_err:.2e} (bound {bound:.2e})")
    if ours_err > bound:
        failures.append(f"fusiond's losses differ from eager by {ours_err:.2e} > {bound:.2e}")
    if not ours[-1] < 0.9 * ours[0]:  # regressing a random teacher: the loss must fall
        failures.append(f"fusiond's run did not train (loss {ours[0]:.4f} -> {ours[-1]:.4f})")
    same = ours == ours2
    result["bitwise_same_seed"] = same
    print(f"two fusiond runs with seed {args.seed}: losses {'identical' if same else 'DIFFER'}")
    if not same:
        first = next(i for i, (a, b) in enumerate(zip(ours, ours2)) if a != b)
        failures.append(f"two fusiond runs differ from step {first}")

    fused = [g for g in groups if g["calls"] and not g["fallback"]]
    fell = [g for g in groups if g["fallback"]]
    result["fusions"] = [{k: v for k, v in g.items() if k != "group"} for g in groups]
    print(f"\n{len(fused)} fusions ran in fusiond kernels ({len(fell)} fell back to aten):")
    for g in groups:
        ops = sorted({o.replace('.default', '') for o in g["ops"]})
        state = f"fell back: {g['fallback']}" if g["fallback"] else f"{g['calls']} calls"
        print(f"  {g['name']:<24} {g['graph']:<9} {len(g['ops']):3d} ops, {state}: {', '.join(ops)}")
    forward_ops = [o for g in fused if g["graph"] == "forward" for o in g["ops"]]
    for cat, marks in _CATEGORIES.items():
        if not all(any(o.startswith(m) for o in forward_ops) for m in marks):
            failures.append(f"no {cat} op ran in a fusiond kernel in the forward graph")
    if fell:
        failures.append(f"{len(fell)} fusions fell back to aten: "
                        + "; ".join(f"{g['name']}: {g['fallback']}" for g in fell[:3]))

    steps = {"eager": _median_after_warmup(eager_t), "fusiond": _median_after_warmup(ours_t),
             "inductor": _median_after_warmup(ind_t)}
    result["step_ms"] = steps
    print(f"\nstep time (median ms after warmup): eager {steps['eager']:.2f}, fusiond "
          f"{steps['fusiond']:.2f} ({steps['eager'] / steps['fusiond']:.2f}x eager), inductor "
          f"{steps['inductor']:.2f} (fusiond {steps['inductor'] / steps['fusiond']:.2f}x inductor)")

    rows = per_fusion_times(groups)
    result["per_fusion"] = rows
    print("\nper fusion (GPU us per call, and host us per call):")
    print(f"  {'fusion':<24} {'graph':<9} {'ops':>4} {'ours':>9} {'inductor':>9} {'x':>6}"
          f" {'host ours':>10} {'host ind.':>10}")
    for r in rows:
        print(f"  {r['fusion']:<24} {r['graph']:<9} {r['ops']:4d} {r['ours_us']:9.1f} "
              f"{r['inductor_us']:9.1f} {r['inductor_us'] / r['ours_us']:6.2f} "
              f"{r['ours_host_us']:10.1f} {r['inductor_host_us']:10.1f}")
    result["failures"] = failures
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compare", action="store_true", help="also eager and Inductor, and check")
    p.add_argument("--rtol", type=float, default=2e-2,
                   help="per-step relative loss difference allowed vs eager (bf16), or twice "
                        "Inductor's, whichever is larger")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    fusiond_backend.register()
    if not args.compare:
        losses, times = train("fusiond", args.steps, args.seed)
        print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f}, {_median_after_warmup(times):.2f} ms/step")
        return 0
    result = compare(args)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, default=str)
    for failure in result["failures"]:
        print(f"FAIL: {failure}")
    print("transformer example:", "FAIL" if result["failures"] else "PASS")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
