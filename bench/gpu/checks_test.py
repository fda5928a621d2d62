#!/usr/bin/env python3
"""bench/gpu/checks.py fails known-wrong outputs and passes correct ones
(numpy only: runs in CI without torch or a GPU).

The wrong outputs are the issue's mutations of two corpus fusions, computed
the way a kernel would (float32, bf16 outputs): layernorm_bwd_thunder without
its mean-gradient term and rmsnorm_bwd_thunder without the bf16 round trip on
rstd; both pass the old max-norm measure (max|out - ref| / max|ref| <= 1e-2).
Also a NaN, a wrong dtype, a wrong shape and a changed integer.
"""

import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

M, N = 512, 8192  # the corpus files' rows are 8192 wide


def bf16(x):
    return checks.round_to("bfloat16", x)


def old_measure(out, ref):
    return float(np.abs(out - ref).max() / np.abs(ref).max())


def layernorm_bwd(x, g, w, mean, rstd, dt, mean_term=True):
    """grad_x, grad_w, grad_b of layernorm_bwd_thunder.py in dtype dt."""
    x, g, w, mean, rstd = (a.astype(dt) for a in (x, g, w, mean, rstd))
    xhat = (x - mean) * rstd
    wg = w * g
    mean_wg = wg.sum(axis=1, keepdims=True) / dt(N) if mean_term else dt(0)
    mean_wg_xhat = (wg * xhat).sum(axis=1, keepdims=True) / dt(N)
    gx = rstd * (wg - mean_wg - xhat * mean_wg_xhat)
    return [bf16(gx), bf16((g * xhat).sum(axis=0)), bf16(g.sum(axis=0))]


def rmsnorm_bwd(w, g, x, rstd, dt, round_rstd=True):
    """grad_w, grad_x of rmsnorm_bwd_thunder.py in dtype dt."""
    w, g, x, rstd = (a.astype(dt) for a in (w, g, x, rstd))
    r16 = bf16(rstd).astype(dt) if round_rstd else rstd
    wg = w * g
    dot = bf16((wg * x).sum(axis=1, keepdims=True)).astype(dt)
    gx = r16 * wg - x * rstd ** 3 * dot / dt(N)
    return [bf16((g * x * r16).sum(axis=0)), bf16(gx)]


class Mutations(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(5)
        cls.x = bf16(rng.standard_normal((M, N)))
        cls.g = bf16(rng.standard_normal((M, N)))
        cls.w = bf16(rng.standard_normal(N))
        cls.mean = rng.standard_normal((M, 1)).astype(np.float32).astype(np.float64)
        cls.rstd = (rng.random((M, 1)) + 0.5).astype(np.float32).astype(np.float64)

    def assert_verdicts(self, refs, good, bad, bad_output):
        for k, (o, r) in enumerate(zip(good, refs)):
            c = checks.check_output(o, r, "bfloat16", "bfloat16")
            self.assertTrue(c["pass"], f"a correct float32 kernel fails output {k}: {c}")
        o, r = bad[bad_output], refs[bad_output]
        c = checks.check_output(o, r, "bfloat16", "bfloat16")
        print(f"  mutated output {bad_output}: error {c['max_rel_err']:.2e} (old measure "
              f"{old_measure(o, r):.2e}); correct kernel "
              f"{checks.max_rel_error(good[bad_output], r):.2e}")
        self.assertFalse(c["pass"], c)
        self.assertLess(old_measure(o, r), 1e-2, "the old measure already failed this mutation")

    def test_layernorm_bwd_without_mean_gradient_fails(self):
        args = (self.x, self.g, self.w, self.mean, self.rstd)
        refs = layernorm_bwd(*args, np.float64)
        self.assert_verdicts(refs, layernorm_bwd(*args, np.float32),
                             layernorm_bwd(*args, np.float32, mean_term=False), 0)

    def test_rmsnorm_bwd_without_rstd_rounding_fails(self):
        args = (self.w, self.g, self.x, self.rstd)
        refs = rmsnorm_bwd(*args, np.float64)
        self.assert_verdicts(refs, rmsnorm_bwd(*args, np.float32),
                             rmsnorm_bwd(*args, np.float32, round_rstd=False), 1)


class Measure(unittest.TestCase):
    def test_nan_where_the_reference_has_none_fails(self):
        ref = np.linspace(-1, 1, 1000)
        out = ref.copy()
        out[500] = np.nan
        self.assertEqual(checks.max_rel_error(out, ref), math.inf)
        self.assertFalse(checks.check_output(out, ref, "float32")["pass"])
        self.assertTrue(checks.check_output(ref, ref, "float32")["pass"])

    def test_infinity_and_shape(self):
        ref = np.ones(4)
        self.assertEqual(checks.max_rel_error(np.array([1, 1, 1, np.inf]), ref), math.inf)
        self.assertEqual(checks.max_rel_error(np.ones(5), ref), math.inf)
        self.assertEqual(checks.max_rel_error(np.ones((2, 2)), ref), math.inf)
        self.assertEqual(checks.max_rel_error(np.array([np.nan, -np.inf]), np.array([np.nan, -np.inf])), 0.0)

    def test_wrong_dtype_fails_whatever_the_values(self):
        ref = np.linspace(-1, 1, 100)
        c = checks.check_output(ref, ref, "float32", "bfloat16")
        self.assertFalse(c["pass"])
        self.assertIn("dtype float32, expected bfloat16", c["why"])

    def test_per_element_floor(self):
        # Matches evaluate_test.cc's MaxRelativeError cases.
        ref = np.array([100.0, -2.0, 0.0])
        self.assertAlmostEqual(checks.max_rel_error([100, -2.02, 0], ref), 0.01, places=12)
        self.assertAlmostEqual(checks.max_rel_error([100, -2, 0.001], ref), 0.01, places=12)
        # A small element off by 2% fails although the tensor's max-norm
        # error is 4e-4.
        self.assertGreater(checks.max_rel_error([100, -2.04, 0], ref), 1e-2)

    def test_limits(self):
        ref = np.linspace(0.1, 3, 1000)
        self.assertTrue(checks.check_output(bf16(ref), ref, "bfloat16")["pass"])
        self.assertFalse(checks.check_output(ref * (1 + 2e-4), ref, "float32")["pass"])
        self.assertTrue(checks.check_output(ref * (1 + 5e-5), ref, "float32")["pass"])
        self.assertFalse(checks.check_output(np.array([1, 2, 4]), np.array([1, 2, 3]), "int64")["pass"])
        self.assertTrue(checks.check_output(np.array([1, 2, 3]), np.array([1, 2, 3]), "int64")["pass"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
