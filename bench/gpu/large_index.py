#!/usr/bin/env python3
"""One symbolic cubin over more than 2^31 elements: the 64-bit index path.

    python3 bench/gpu/large_index.py --fusion F.py --artifacts DIR \\
        --shapes '262147x8200,8200' '261900x8201,8201'

Each --shapes entry gives every tensor input's shape (comma-separated, dims
joined by x; dtypes as in the script's `inputs = [...]`). The artifact in
DIR/<stem> runs on random inputs of those shapes into outputs filled with NaN
first (so an element the kernel skips fails); each output is compared, a few
thousand rows at a time, with the script's float64 evaluation on the same
rows (bf16 within 1e-2, fp32 within 1e-4, as run.py). Meant for a pointwise
fusion with a broadcast operand (bias-GELU): its offsets are a div/mod
decomposition, 64-bit for symbolic sizes, that only spaces past 2^31
elements exercise; a row extent divisible by 8 takes the vector loop, any
other the element loop. Prints one line per shape; exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as harness  # noqa: E402  (frontend, runtime, checks, poisoned_outputs)

ROWS_PER_CHUNK = 8192


def parse_shapes(text):
    return [tuple(int(d) for d in s.split("x")) if s else () for s in text.split(",")]


def check(stem, script, fusion, shapes):
    import torch
    template = script.make_inputs("cuda", seed=0)  # the dtypes and which inputs are tensors
    tensors = [x for x in template if isinstance(x, torch.Tensor)]
    if len(tensors) != len(shapes):
        raise ValueError(f"{len(shapes)} shapes for {len(tensors)} tensor inputs")
    torch.manual_seed(1)
    it = iter(shapes)
    inputs = [torch.randn(next(it), dtype=x.dtype, device="cuda") if isinstance(x, torch.Tensor) else x
              for x in template]
    del template, tensors
    outs = harness.poisoned_outputs(fusion, inputs, "cuda")
    fusion.run(inputs, outputs=outs)
    torch.cuda.synchronize()
    f64 = script.program.function("float64")
    rows = inputs[0].shape[0]
    worst = [0.0] * len(outs)
    for r0 in range(0, rows, ROWS_PER_CHUNK):
        r1 = min(rows, r0 + ROWS_PER_CHUNK)
        # Inputs whose leading extent is the row count are sliced; the others
        # (the broadcast operands) are passed whole.
        part = [x[r0:r1] if isinstance(x, torch.Tensor) and x.dim() and x.shape[0] == rows else x
                for x in inputs]
        ref = list(f64(*part))
        # The harness's per-element measure, chunk by chunk, on the GPU.
        for i, (o, r) in enumerate(zip(outs, ref)):
            worst[i] = max(worst[i], harness.max_rel_error_on_device(o[r0:r1], r))
    limits = [harness.checks.tolerance(t.dtype) for t in fusion.manifest.outputs]
    ok = all(w <= lim for w, lim in zip(worst, limits))
    elements = inputs[0].numel()
    errs = ", ".join(f"{w:.1e}" for w in worst)
    print(f"  {stem} at {[list(s) for s in shapes]} "
          f"({elements} elements, {elements / 2**31:.3f} x 2^31): {'PASS' if ok else 'FAIL'} {errs}")
    del inputs, outs
    torch.cuda.empty_cache()
    return ok


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusion", required=True, help="the repro script")
    p.add_argument("--artifacts", required=True, help="DIR with DIR/<stem>/manifest.json")
    p.add_argument("--shapes", nargs="+", required=True, help="per run: the inputs' shapes, e.g. 262147x8200,8200")
    args = p.parse_args(argv)
    stem = os.path.splitext(os.path.basename(args.fusion))[0]
    script = harness.frontend.load_script(args.fusion)
    fusion = harness.runtime.load(os.path.join(args.artifacts, stem))
    ok = True
    for text in args.shapes:
        try:
            ok &= check(stem, script, fusion, parse_shapes(text))
        except Exception as e:  # noqa: BLE001  (report and go on to the next shape)
            print(f"  {stem} at {text}: FAIL {type(e).__name__}: {e}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
