"""Fills torch.compile's on-disk caches for a list of definitions, in parallel.

    python3 bench/gpu/warm_compile.py [--jobs N] F1.py F2.py ...

bench/gpu/run.py compiles each definition with torch.compile one after
another, and on a fresh GPU host that compile (Inductor, then triton) is
most of a run's time. This compiles the same functions on the same inputs
(seed 1, the script's own sizes) in N processes at once, so the timed run
finds Inductor's FX graph cache and triton's kernel cache filled. It changes
nothing that is timed: the run still compiles, from the caches. A definition
that fails here is reported and left to the run. Exit status 0 unless the
arguments are wrong.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def compile_one(path):
    """(path, seconds, error or '') after torch.compile of PATH's definition ran once."""
    t0 = time.time()
    try:
        import torch
        sys.path.insert(0, os.path.join(_ROOT, "client", "python"))
        from fusiond import frontend_torch as frontend
        script = frontend.load_script(path)
        inputs = script.make_inputs("cuda", seed=1)
        torch._dynamo.reset()
        torch.compile(script.program.function("native"), dynamic=False)(*inputs)
        torch.cuda.synchronize()
        return path, time.time() - t0, ""
    except Exception as e:  # noqa: BLE001 - the timed run reports it again
        return path, time.time() - t0, f"{type(e).__name__}: {e}"[:300]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("fusions", nargs="+", help="repro scripts")
    p.add_argument("--jobs", type=int, default=8, help="processes compiling at once")
    args = p.parse_args(argv)
    # One compile thread a process: the processes are the parallelism.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    t0 = time.time()
    failed = 0
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for path, seconds, error in pool.imap_unordered(compile_one, args.fusions):
            failed += bool(error)
            print(f"[{seconds:6.1f}s] {os.path.basename(path)}{'  ' + error if error else ''}", flush=True)
    print(f"warm_compile: {len(args.fusions) - failed} of {len(args.fusions)} compiled in "
          f"{time.time() - t0:.0f} s ({args.jobs} processes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
