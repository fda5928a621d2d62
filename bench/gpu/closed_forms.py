#!/usr/bin/env python3
"""Closed forms of every corpus fusion in numpy float64 (no torch), written
from the math each file's comment describes, as tests/corpus/closed_forms.cc
is: a reference that shares nothing with the Python float64 evaluation of
the definitions (client/python/fusiond/frontend_torch.py) which run.py checks
against. bench/gpu/run_test.py holds that evaluation to these.

    python3 bench/gpu/closed_forms.py --help

FORMS[stem](inputs) takes the file's inputs in order (numpy arrays, values
already of their dtypes) and returns its outputs in order, unrounded except
where the definition rounds an intermediate (rmsnorm_bwd_thunder's bf16 rstd
and reduction).
"""

from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402  (bf16 rounding; numpy only when called)


def _np():
    import numpy as np
    return np


def _bf16(x):
    return checks.round_to("bfloat16", x)


def rmsnorm_fwd(x, w):
    np = _np()
    rstd = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5)
    return [x * rstd * w, rstd]


def rmsnorm_bwd_manual(x, rms, g, w):
    wg = w * g
    mean_dot = (wg * x).mean(axis=1, keepdims=True)
    return [wg / rms - x * mean_dot / rms ** 3, (g * x / rms).sum(axis=0)]


def rmsnorm_bwd_thunder(w, g, x, rstd):
    r16 = _bf16(rstd)
    wg = w * g
    dot16 = _bf16((wg * x).sum(axis=1, keepdims=True))
    gx = r16 * wg - x * rstd ** 3 * dot16 / x.shape[1]
    return [(g * x * r16).sum(axis=0), gx]


def layernorm_bwd_thunder(x, g, w, mean, rstd):
    xhat = (x - mean) * rstd
    wg = w * g
    gx = rstd * (wg - wg.mean(axis=1, keepdims=True) - xhat * (wg * xhat).mean(axis=1, keepdims=True))
    return [gx, (g * xhat).sum(axis=0), g.sum(axis=0)]


def batchnorm_bwd_thunder(x, g, w, mean, invstd):
    m, s, wc = (a.reshape(1, -1, 1) for a in (mean, invstd, w))
    xhat = (x - m) * s
    count = x.shape[0] * x.shape[2]
    sum_g = g.sum(axis=(0, 2), keepdims=True)
    sum_gx = (g * xhat).sum(axis=(0, 2), keepdims=True)
    gx = wc * s * (g - sum_g / count - xhat * sum_gx / count)
    return [gx, sum_gx.reshape(-1), sum_g.reshape(-1)]


def layernorm_fwd(x, w, b):
    np = _np()
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    return [(x - mean) * rstd * w + b, mean, rstd]


def softmax_fwd(x):
    np = _np()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return [e / e.sum(axis=1, keepdims=True)]


def softmax_bwd(y, dy):
    return [y * (dy - (dy * y).sum(axis=1, keepdims=True))]


def bias_gelu_fwd(x, bias):
    np = _np()
    z = x + bias
    return [0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z ** 3)))]


FORMS = {f.__name__: f for f in (rmsnorm_fwd, rmsnorm_bwd_manual, rmsnorm_bwd_thunder, layernorm_bwd_thunder,
                                 batchnorm_bwd_thunder, layernorm_fwd, softmax_fwd, softmax_bwd, bias_gelu_fwd)}


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.parse_args(argv)
    print("closed forms: " + ", ".join(sorted(FORMS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
