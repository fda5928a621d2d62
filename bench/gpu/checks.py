#!/usr/bin/env python3
"""The one error measure of every GPU check (numpy only; no torch, no GPU).

    python3 bench/gpu/checks.py --help

An output passes when its dtype is the one expected and

    max_i |out_i - ref_i| / max(|ref_i|, FLOOR * M),  M = max_j |ref_j| (finite)

is at most TOLERANCE[dtype]: the per-element relative error of
compiler/reference's MaxRelativeError, whose floor keeps values that are tiny
only by cancellation from dominating. NaN or infinity where the reference has
none (or a different shape) is +inf; NaN where the reference has NaN matches
(callers that fill outputs with NaN check unwritten elements another way).
bf16 limit 2e-2 (fp16 2e-3), about two steps of the type: the output's own
rounding plus one rounded intermediate of the definition (a reduction cast to
bf16) landing on the other side because the kernel sums in another order;
a lost term or a lost rounding scores 3e-2 or more and fails
(bench/gpu/checks_test.py). Integer and bool outputs must be equal.
"""

from __future__ import annotations

import math
import sys

FLOOR = 1e-3
TOLERANCE = {"bfloat16": 2e-2, "float16": 2e-3, "float32": 1e-4, "float64": 1e-4}
EXACT = ("bool", "int8", "int16", "int32", "int64", "uint8")


def max_rel_error(out, ref, floor=FLOOR):
    """The measure above over two array-likes (converted to float64)."""
    import numpy as np
    o = np.asarray(out, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if o.shape != r.shape:
        return math.inf
    if r.size == 0:
        return 0.0
    nan_o, nan_r = np.isnan(o), np.isnan(r)
    if (nan_o != nan_r).any():
        return math.inf
    inf_o, inf_r = np.isinf(o), np.isinf(r)
    if ((inf_o | inf_r) & (o != r)).any():
        return math.inf
    fin = np.isfinite(r)
    scale = float(np.abs(r[fin]).max()) if fin.any() else 0.0
    denom_floor = max(floor * scale, 1e-30)
    both = fin & np.isfinite(o)
    if not both.any():
        return 0.0
    err = np.abs(o[both] - r[both]) / np.maximum(np.abs(r[both]), denom_floor)
    return float(err.max())


def tolerance(dtype):
    """The limit for an output of dtype (a name such as "bfloat16")."""
    if dtype in EXACT:
        return 0.0
    return TOLERANCE.get(dtype, 1e-4)


def check_output(out, ref, dtype, want_dtype=None):
    """One output's verdict: {"dtype", "want_dtype", "shape", "max_rel_err",
    "limit", "pass", "why"}. out, ref: array-likes; dtype: out's dtype name;
    want_dtype: the dtype it must have (None: not checked)."""
    import numpy as np
    o = np.asarray(out)
    row = {"dtype": dtype, "want_dtype": want_dtype or dtype, "shape": list(o.shape),
           "limit": tolerance(dtype)}
    if want_dtype is not None and dtype != want_dtype:
        row.update(max_rel_err=math.inf, ok=False, why=f"dtype {dtype}, expected {want_dtype}")
    elif dtype in EXACT:
        r = np.asarray(ref, dtype=np.float64)
        same = o.shape == r.shape and bool(np.array_equal(o.astype(np.float64), r))
        row.update(max_rel_err=0.0 if same else math.inf, ok=same, why="" if same else "not equal")
    else:
        err = max_rel_error(o, ref)
        ok = err <= row["limit"]
        row.update(max_rel_err=err, ok=ok, why="" if ok else f"error {err:.3g} > {row['limit']:.0e}")
    row["pass"] = row.pop("ok")
    return row


def round_to(dtype, x):
    """x (float64 array-like) rounded to dtype's values, held in float64:
    bfloat16 by round-to-nearest-even on float32's bits, the rest by numpy."""
    import numpy as np
    a = np.asarray(x, dtype=np.float64)
    if dtype == "bfloat16":
        bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if dtype in ("float16", "float32"):
        return a.astype(dtype).astype(np.float64)
    return a


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.parse_args(argv)
    print("limits: " + ", ".join(f"{k} {v:.0e}" for k, v in TOLERANCE.items()) + f"; floor {FLOOR:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
