#!/usr/bin/env python3
"""Host cost of one launch through the Python runtime (client/python/fusiond/runtime.py).

    python3 bench/gpu/launch_overhead.py --artifacts DIR --fusions F1.py ... [--calls 2000]
                                         [--runtime OTHER/runtime.py]

For each symbolic fusion, at a small shape (SMALL below, so the GPU finishes
before the host issues the next call): microseconds of host time
per `fusion.run(...)` call, with preallocated outputs and with outputs
allocated per call, plus PyTorch eager's per-call host time on the same inputs
for scale. --profile prints the runtime's top functions (cProfile) for the
first fusion; --runtime times another copy of runtime.py instead of the
repo's; --against OTHER.py times the repo's and OTHER.py's side by side,
alternating --rounds rounds of --calls calls on the same inputs, and prints
each one's fastest round and the ratio (the host's speed drifts between
runs, so compare within one). do_bench flushes the L2 (a ~60 us memset) before each timed
call: a launch path slower than that shows up in every timing of ours.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import math
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as harness  # noqa: E402  (the harness's loaders and front end)


# The corpus' extents, made small enough that the GPU outruns the host.
SMALL = {2048: 64, 4096: 64, 8192: 512, 16384: 512}


def per_call_us(fn, calls):
    import torch
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def load_runtime(path, name):
    """Another copy of the runtime under the module name NAME: a runtime.py
    from before the manifest half moved out (loaded alone), or one beside its
    manifest.py (its package directory loaded as package NAME)."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(d, "manifest.py")):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    spec = importlib.util.spec_from_file_location(name, os.path.join(d, "__init__.py"),
                                                  submodule_search_locations=[d])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(name + ".runtime")


def symbolic_cases(args):
    """(stem, inputs, artifact dir) of each symbolic fusion with artifacts."""
    for path in args.fusions:
        stem = os.path.splitext(os.path.basename(path))[0]
        art = os.path.join(args.artifacts, stem)
        script = harness.frontend.load_script(path)
        if os.path.isfile(os.path.join(art, "manifest.json")) and script.program.symbolic:
            yield stem, script.make_inputs("cuda", seed=1, size_map=SMALL), art


def side_by_side(args, runtime, other):
    print(f"host us per call, fastest of {args.rounds} alternating rounds of {args.calls} calls "
          f"(preallocated outputs / allocating them); this runtime against {args.against}")
    print(f"{'fusion':24} {'this':>7} {'other':>7} {'ratio':>6}   {'this+a':>7} {'other+a':>7} {'ratio':>6}")
    for stem, inputs, art in symbolic_cases(args):
        fusions = [runtime.load(art), other.load(art)]
        outs = [f.run(inputs) for f in fusions]
        best = [[math.inf, math.inf], [math.inf, math.inf]]
        for _ in range(args.rounds):
            for k, f in enumerate(fusions):
                best[k][0] = min(best[k][0], per_call_us(lambda: f.run(inputs, outputs=outs[k]), args.calls))
                best[k][1] = min(best[k][1], per_call_us(lambda: f.run(inputs), args.calls))
        (a, aa), (b, ba) = best
        print(f"{stem:24} {a:7.1f} {b:7.1f} {a / b:6.2f}   {aa:7.1f} {ba:7.1f} {aa / ba:6.2f}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusions", nargs="+", required=True)
    p.add_argument("--artifacts", required=True, help="DIR with DIR/<stem>/manifest.json")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--runtime", default="", help="time this runtime.py instead of the repo's")
    p.add_argument("--against", default="", help="also time this runtime.py, side by side")
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    import torch
    runtime = harness.runtime
    if args.runtime:
        runtime = load_runtime(args.runtime, "fusiond_runtime_other")
        print(f"runtime: {args.runtime}")
    if args.against:
        return side_by_side(args, runtime, load_runtime(args.against, "fusiond_runtime_against"))
    print(f"{'fusion':24} {'shape':14} {'ours us':>8} {'ours+alloc':>10} {'eager us':>9}")
    for i, path in enumerate(args.fusions):
        stem = os.path.splitext(os.path.basename(path))[0]
        art = os.path.join(args.artifacts, stem)
        if not os.path.isfile(os.path.join(art, "manifest.json")):
            print(f"{stem:24} no artifacts at {art}")
            continue
        script = harness.frontend.load_script(path)
        if not script.program.symbolic:
            print(f"{stem:24} static definition (its kernel runs at the file's sizes): skipped")
            continue
        inputs = script.make_inputs("cuda", seed=1, size_map=SMALL)
        fusion = runtime.load(art)
        outs = fusion.run(inputs)
        ours = per_call_us(lambda: fusion.run(inputs, outputs=outs), args.calls)
        alloc = per_call_us(lambda: fusion.run(inputs), args.calls)
        eager_fn = script.program.function("native")
        eager = per_call_us(lambda: eager_fn(*inputs), max(args.calls // 10, 50))
        shape = "x".join(str(d) for d in max((list(x.shape) for x in inputs if isinstance(x, torch.Tensor)),
                                             key=math.prod))
        print(f"{stem:24} {shape:14} {ours:8.1f} {alloc:10.1f} {eager:9.1f}")
        if args.profile and i == 0:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.calls):
                fusion.run(inputs, outputs=outs)
            prof.disable()
            torch.cuda.synchronize()
            pstats.Stats(prof).sort_stats("tottime").print_stats(18)
    return 0


if __name__ == "__main__":
    sys.exit(main())
