"""Tests of fusiond/frontend_torch.py (the torch implementation of fd.ops).

    python3 tests/python/frontend_torch_test.py

Needs torch (any version with torch.var_mean(correction=)); runs on the CPU.
Skipped, saying why, without torch. The corpus comes from FUSIOND_CORPUS_DIR
(default tests/corpus/fusions beside the repository).
"""

import glob
import importlib.util
import math
import os
import sys
import tempfile
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))
_CORPUS = os.environ.get("FUSIOND_CORPUS_DIR", os.path.join(_SOURCE, "tests", "corpus", "fusions"))

spec = importlib.util.spec_from_file_location("fusiond_frontend_torch", os.path.join(_SOURCE, "client", "python", "fusiond", "frontend_torch.py"))
ft = importlib.util.module_from_spec(spec)
sys.modules["fusiond_frontend_torch"] = ft
spec.loader.exec_module(ft)

try:
    import torch
    _SKIP = None
except ImportError:
    torch = None
    _SKIP = "torch is not installed"

# Small extents for the corpus' symbolic definitions (static ones keep theirs).
SMALL = {2048: 48, 8192: 80, 4096: 24, 16384: 72}


def _script(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    f.write(text)
    f.close()
    return f.name


@unittest.skipIf(_SKIP is not None, _SKIP or "")
class FrontendTorchTest(unittest.TestCase):
    def test_records_and_runs_a_definition(self):
        path = _script('''
import torch
from nvfuser import FusionDefinition, DataType

def f(fd):
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[1])
    S4 = fd.ops.reciprocal(T0.size(1))
    T5 = fd.ops.mul(fd.ops.add(T2, T3), S4)
    T6 = fd.ops.sum(T5, dims=[1], keepdim=True, dtype=DataType.Null)
    V7 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T8 = fd.ops.broadcast_in_dim(fd.ops.max(T2, dims=[1], keepdim=False, dtype=DataType.Null), shape=V7, broadcast_dims=[0])
    T9, T10 = fd.ops.var_mean(T2, dims=[1], correction=0, keepdim=False)
    fd.add_output(fd.ops.cast(T5, dtype=DataType.BFloat16))
    fd.add_output(T6)
    fd.add_output(T8)
    fd.add_output(T9)
    fd.add_output(T10)

with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((6, 10), dtype=torch.bfloat16, device="cuda:0"),
    torch.rand((10,), dtype=torch.float32, device="cuda:0") + 0.5,
]
fd.execute(inputs)
''')
        s = ft.load_script(path)
        self.assertTrue(s.program.symbolic)
        self.assertEqual(s.program.params, ["T0", "T1"])
        x, w = s.make_inputs("cpu", seed=3)
        self.assertEqual(x.dtype, torch.bfloat16)
        self.assertEqual(tuple(x.shape), (6, 10))
        self.assertGreaterEqual(w.min().item(), 0.5)  # rand(...) + 0.5 kept
        y, rowsum, rowmax, var, mean = s.program.function("native")(x, w)
        xf = x.float()
        want = (xf + w) / 10
        self.assertEqual(y.dtype, torch.bfloat16)
        self.assertTrue(torch.allclose(y.float(), want, rtol=1e-2, atol=1e-2))
        self.assertEqual(tuple(rowsum.shape), (6, 1))
        self.assertTrue(torch.allclose(rowsum, want.sum(1, keepdim=True), atol=1e-5))
        self.assertTrue(torch.equal(rowmax, xf.amax(1, keepdim=True)))
        self.assertTrue(torch.allclose(var, xf.var(1, unbiased=False), atol=1e-5))
        self.assertTrue(torch.allclose(mean, xf.mean(1), atol=1e-6))
        # float64 reference: float64 throughout, bf16 casts rounded.
        ry, rsum, _, _, _ = s.program.function("float64")(x, w)
        self.assertEqual(rsum.dtype, torch.float64)
        self.assertTrue(torch.equal(ry, ry.to(torch.bfloat16).to(torch.float64)))
        # Other shapes through size_map.
        x2, w2 = s.make_inputs("cpu", size_map={6: 3, 10: 7})
        self.assertEqual((tuple(x2.shape), tuple(w2.shape)), ((3, 7), (7,)))
        os.unlink(path)

    def test_special_math_ops(self):
        """asinh, acosh, lgamma, erfinv, is_neginf, is_posinf (special_math.cc),
        native and float64, against torch's own functions."""
        path = _script('''
import torch
from nvfuser import FusionDefinition, DataType

def f(fd):
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(0.5, dtype=DataType.Double)
    fd.add_output(fd.ops.asinh(T0))
    fd.add_output(fd.ops.acosh(fd.ops.add(fd.ops.abs(T0), 1.0)))
    fd.add_output(fd.ops.lgamma(T0))
    fd.add_output(fd.ops.erfinv(fd.ops.tanh(T0)))
    fd.add_output(fd.ops.is_neginf(fd.ops.log(fd.ops.abs(T0))))
    fd.add_output(fd.ops.is_posinf(fd.ops.reciprocal(T0)))
    fd.add_output(fd.ops.mul(T0, fd.ops.erfinv(S1)))

with FusionDefinition() as fd:
    f(fd)

inputs = [torch.tensor([0.0, -2.5, 0.3, 4.0], device="cuda:0")]
fd.execute(inputs)
''')
        s = ft.load_script(path)
        x = torch.tensor([0.0, -2.5, 0.3, 4.0])
        for mode, dt in (("native", torch.float32), ("float64", torch.float64)):
            out = s.program.function(mode)(x)
            xd = x.to(dt)
            want = [torch.asinh(xd), torch.acosh(xd.abs() + 1), torch.lgamma(xd),
                    torch.erfinv(torch.tanh(xd))]
            for got, w in zip(out[:4], want):
                self.assertTrue(torch.allclose(got.to(dt), w, rtol=1e-6, atol=1e-6), (mode, got, w))
            self.assertEqual(out[4].tolist(), [True, False, False, False])
            self.assertEqual(out[5].tolist(), [True, False, False, False])
            self.assertTrue(torch.allclose(out[6].double(), x.double() * 0.4769362762044699,
                                           rtol=1e-6))

    def test_triu_tril(self):
        path = _script('''
import torch
from nvfuser import FusionDefinition, DataType

def f(fd):
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False)
    fd.add_output(fd.ops.triu(T0, diagonal=1))
    fd.add_output(fd.ops.tril(T0, -1))

with FusionDefinition() as fd:
    f(fd)

inputs = [torch.randn((2, 3, 4), device="cuda:0")]
fd.execute(inputs)
''')
        s = ft.load_script(path)
        x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
        for mode in ("native", "float64"):
            up, low = s.program.function(mode)(x)
            self.assertTrue(torch.equal(up.float(), torch.triu(x, 1)), mode)
            self.assertTrue(torch.equal(low.float(), torch.tril(x, -1)), mode)

    def test_unsupported_op_is_reported(self):
        path = _script('''
from nvfuser import FusionDefinition, DataType
with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.frobnicate(T0))
''')
        with self.assertRaisesRegex(ft.UnsupportedOp, "frobnicate"):
            ft.load_script(path)
        os.unlink(path)

    def test_cpu_scalar_input(self):
        """is_cpu=True: a 0-dim CPU tensor, made on the CPU whatever the
        device, read as a number by both versions of the program."""
        path = os.path.join(_SOURCE, "tests", "frontends", "fusions", "adam_step_cpu_scalar.py")
        s = ft.load_script(path)
        self.assertEqual(s.program.param_kinds, ["tensor"] * 4 + ["cpu_scalar"])
        device = "cuda" if torch.cuda.is_available() else "cpu"
        inputs = s.make_inputs(device, size_map={4096: 24})
        step = inputs[4]
        self.assertEqual((step.dim(), step.device.type, step.dtype), (0, "cpu", torch.float32))
        self.assertEqual(inputs[0].device.type, device)
        new_param, _, exp_avg_sq = s.program.function("native")(*inputs)
        ref = s.program.function("float64")(*inputs)
        p, g, m, v = (x.double() for x in inputs[:4])
        m1 = m + 0.1 * (g - m)
        v1 = v * 0.999 + 0.001 * g * g
        want = p - m1 / ((v1.sqrt() / math.sqrt(1 - 0.999 ** 3)) + 1e-8) * (0.001 / (1 - 0.9 ** 3))
        self.assertLess((ref[0] - want).abs().max().item(), 1e-9)
        self.assertLess((new_param.double() - want).abs().max().item(), 1e-4)
        self.assertEqual(tuple(exp_avg_sq.shape), (24, 24))
        with self.assertRaisesRegex(ft.UnsupportedOp, "CPU tensor input T0 of rank 1"):
            ft.load_script(_script('''
from nvfuser import FusionDefinition, DataType
with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=True)
    fd.add_output(T0)
'''))

    def test_corpus_native_matches_float64_reference(self):
        files = sorted(glob.glob(os.path.join(_CORPUS, "*.py")))
        if not files:
            self.fail(f"no corpus at {_CORPUS} (set FUSIOND_CORPUS_DIR)")
        for path in files:
            name = os.path.basename(path)
            if "thunder" in name and "batchnorm" not in name:
                continue  # static 2048x8192: too slow for a CPU unit test
            with self.subTest(name):
                s = ft.load_script(path)
                inputs = s.make_inputs("cpu", size_map=SMALL if s.program.symbolic else None)
                native = s.program.function("native")(*inputs)
                ref = s.program.function("float64")(*inputs)
                self.assertEqual(len(native), len(ref))
                for a, r in zip(native, ref):
                    self.assertEqual(tuple(a.shape), tuple(r.shape))
                    err = ((a.double() - r).abs().max() / r.abs().max().clamp_min(1e-30)).item()
                    tol = 1e-2 if a.dtype in (torch.bfloat16, torch.float16) else 1e-4
                    self.assertLessEqual(err, tol, f"{name}: {a.dtype} {tuple(a.shape)}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
