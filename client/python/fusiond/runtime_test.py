"""Tests of fusiond/runtime.py and fusiond/manifest.py. Run as a script (ctest does):

    python3 client/python/fusiond/runtime_test.py

The expression, manifest and plan tests need nothing; the GPU tests need
torch with CUDA and the nvcc-built test kernels (FUSIOND_RUNTIME_TESTDATA,
default <build>/client/runtime/testdata) and are skipped, saying why, without.
The package's __init__ imports the gRPC client only on first use, so this
needs neither grpcio nor the generated protobuf modules.
"""

import json
import os
import sys
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", "..", ".."))


sys.path.insert(0, os.path.dirname(_HERE))
from fusiond import runtime as rt  # noqa: E402

DOC_EXAMPLE = {
    "manifest_version": 1, "fusion": "rmsnorm_bwd_manual", "canonical_hash": "9f1c", "arch": "sm_90",
    "symbols": [{"name": "s0", "input": 0, "axis": 0}, {"name": "s1", "input": 0, "axis": 1}],
    "inputs": [{"name": "T4", "dtype": "bfloat16", "shape": ["s0", "s1"]},
               {"name": "T5", "dtype": "float32", "shape": ["s0", "1"]},
               {"name": "S2", "dtype": "float64", "shape": [], "scalar": True}],
    "outputs": [{"name": "T63", "dtype": "bfloat16", "shape": ["s0", "s1"]}],
    "intermediates": [{"name": "I0", "dtype": "float32", "shape": ["s0"]}],
    "workspaces": [{"bytes": "s1 * 4 * 264 + 64", "zero": True}],
    "kernels": [{
        "name": "fusion_9f1c_k0", "binary": "fusion_9f1c_k0.cubin",
        "scheduler": "inner_outer_persistent", "cooperative": True,
        "block": ["256", "1", "1"], "grid": ["min(264, s0)", "1", "1"], "smem_bytes": "0",
        "params": [{"kind": "input", "index": 0}, {"kind": "input", "index": 1},
                   {"kind": "output", "index": 0}, {"kind": "workspace", "index": 0},
                   {"kind": "intermediate", "index": 0}, {"kind": "scalar", "index": 2},
                   {"kind": "size", "symbol": "s0"}]}],
}


class ExprTest(unittest.TestCase):
    def ev(self, text, **symbols):
        return rt.Expr(text)(symbols)

    def test_arithmetic(self):
        self.assertEqual(self.ev("2 + 3 * 4"), 14)
        self.assertEqual(self.ev("(2 + 3) * 4"), 20)
        self.assertEqual(self.ev("10 - 3 - 2"), 5)
        self.assertEqual(self.ev("100 / 10 / 5"), 2)
        self.assertEqual(self.ev("7 / 2"), 3)
        self.assertEqual(self.ev("-7 / 2"), -3)  # truncates toward zero
        self.assertEqual(self.ev("2 * -3"), -6)
        self.assertEqual(self.ev(" 42 "), 42)
        self.assertEqual(rt.Expr(5)({}), 5)

    def test_functions_and_symbols(self):
        self.assertEqual(self.ev("ceil_div(7, 2)"), 4)
        self.assertEqual(self.ev("ceil_div(8, 2)"), 4)
        self.assertEqual(self.ev("ceil_div(-7, 2)"), -3)
        self.assertEqual(self.ev("min(264, s0)", s0=2048), 264)
        balanced = "ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), 264))"
        self.assertEqual(self.ev(balanced, s0=2048), 256)  # 256 blocks of 8 rows
        self.assertEqual(self.ev(balanced, s0=16384), 261)  # 63 rounds, not 62 and a few
        self.assertEqual(self.ev(balanced, s0=100), 100)
        self.assertEqual(self.ev("max(1, s0 / 4096)", s0=2048), 1)
        self.assertEqual(self.ev("s1 * 4 * 264 + 64", s1=8192), 8192 * 4 * 264 + 64)
        e = rt.Expr("ceil_div(s1, 8) + s0")
        self.assertEqual(e.symbols, {"s0", "s1"})
        self.assertEqual(e({"s0": 1, "s1": 9}), 3)
        self.assertEqual(e({"s0": 5, "s1": 16}), 7)

    def test_errors(self):
        for text, fragment in [("", "expected a number"), ("1 +", "expected a number"),
                               ("(1 + 2", "expected ')'"), ("1 2", "trailing"),
                               ("foo(1, 2)", "unknown function 'foo'"), ("min(1)", "expected ','"),
                               ("3 % 2", "trailing"), ("__import__", None),
                               ("99999999999999999999", "does not fit")]:
            if fragment is None:
                with self.assertRaises(rt.InvalidArgument):
                    rt.Expr(text)({})
                continue
            with self.assertRaises(rt.InvalidArgument) as cm:
                rt.Expr(text)
            self.assertIn(fragment, str(cm.exception), text)
        with self.assertRaisesRegex(rt.InvalidArgument, "unbound symbol 's9'"):
            rt.Expr("s9 + 1")({})
        with self.assertRaisesRegex(rt.InvalidArgument, "division by zero"):
            rt.Expr("4 / (2 - 2)")({})
        with self.assertRaises(rt.InvalidArgument):
            rt.Expr("(" * 300)


class ManifestTest(unittest.TestCase):
    def test_doc_example(self):
        m = rt.parse_manifest(json.dumps(DOC_EXAMPLE))
        self.assertEqual(m.fusion, "rmsnorm_bwd_manual")
        self.assertEqual([s[0] for s in m.symbols], ["s0", "s1"])
        self.assertEqual(m.inputs[0].dtype, "bfloat16")
        self.assertTrue(m.inputs[2].scalar)
        self.assertTrue(m.kernels[0].cooperative)
        self.assertEqual([p.kind for p in m.kernels[0].params],
                         ["input", "input", "output", "workspace", "intermediate", "scalar", "size"])
        self.assertEqual(m.kernels[0].block[1].text, "1")
        self.assertEqual(m.workspaces[0][1:], (True, False))  # zero, not keep
        d = json.loads(json.dumps(DOC_EXAMPLE))
        d["workspaces"][0]["keep"] = True
        self.assertEqual(rt.parse_manifest(json.dumps(d)).workspaces[0][1:], (True, True))

    def test_plan_at_three_shapes(self):
        m = rt.parse_manifest(json.dumps(DOC_EXAMPLE))
        for rows, cols in [(2048, 8192), (100, 64), (16384, 4096)]:
            p = rt.plan_launch(m, [(rows, cols), (rows, 1), None])
            self.assertEqual(p.output_shapes, [(rows, cols)])
            self.assertEqual(p.intermediate_shapes, [(rows,)])
            self.assertEqual(p.workspace_bytes, [cols * 4 * 264 + 64])
            self.assertEqual(p.launches[0], ((min(264, rows), 1, 1), (256, 1, 1), 0))

    def test_plan_rejects_disagreeing_shapes(self):
        m = rt.parse_manifest(json.dumps(DOC_EXAMPLE))
        with self.assertRaisesRegex(rt.InvalidArgument, "axis 0 is 1024"):
            rt.plan_launch(m, [(2048, 8192), (1024, 1), None])
        for shapes in ([(2048, 8192), (2048, 2), None], [(2048, 8192, 1), (2048, 1), None],
                       [(2048, 8192), (2048, 1)], [(0, 8192), (0, 1), None]):
            with self.assertRaises(rt.InvalidArgument, msg=str(shapes)):
                rt.plan_launch(m, shapes)

    def test_testdata_manifests(self):
        for name in ("center", "coop"):
            with open(os.path.join(_SOURCE, "client/runtime/testdata", name, "manifest.json")) as f:
                m = rt.parse_manifest(f.read())
            self.assertTrue(m.kernels)
        with open(os.path.join(_SOURCE, "client/runtime/testdata/center/manifest.json")) as f:
            m = rt.parse_manifest(f.read())
        p = rt.plan_launch(m, [(1000, 33), None])
        self.assertEqual(p.launches[0][0], (250, 1, 1))
        self.assertEqual(p.launches[1][0], (129, 1, 1))

    def test_rejects_inconsistent_manifests(self):
        def bad(mutate, fragment):
            doc = json.loads(json.dumps(DOC_EXAMPLE))
            mutate(doc)
            with self.assertRaises(rt.FusionError) as cm:
                rt.parse_manifest(json.dumps(doc))
            self.assertIn(fragment, str(cm.exception))

        bad(lambda d: d.update(manifest_version=2), "manifest_version 2")
        bad(lambda d: d["inputs"][0].update(dtype="bfloat17"), "unknown dtype 'bfloat17'")
        bad(lambda d: d["kernels"][0].update(grid=["min(264, s7)"]), "undeclared symbol 's7'")
        bad(lambda d: d["kernels"][0].update(grid=["min(264 s0)"]), "expected ','")
        bad(lambda d: d["kernels"][0]["params"].append({"kind": "output", "index": 3}), "index 3 out of range")
        bad(lambda d: d["kernels"][0]["params"].append({"kind": "input", "index": 2}), "is a scalar")
        bad(lambda d: d["kernels"][0]["params"].append({"kind": "spare", "index": 0}), "unknown param kind")
        bad(lambda d: d["symbols"][1].update(axis=5), "axis 5 out of range")
        bad(lambda d: d["kernels"][0].update(binary="../x.cubin"), "plain file name")
        bad(lambda d: d["kernels"][0].pop("block"), 'missing "block"')
        with self.assertRaises(rt.InvalidArgument):
            rt.parse_manifest("{")

    def test_mutated_manifests_fail_cleanly(self):
        """A corrupted or hand-edited manifest raises FusionError (with a
        message), never KeyError, TypeError or the like: the doc example
        and the test manifests with values replaced or dropped, lists
        grown (deterministic seed), parsed and planned at a few shapes."""
        import copy
        import random
        rng = random.Random(20261130)
        bases = [DOC_EXAMPLE]
        for name in ("center", "coop"):
            with open(os.path.join(_SOURCE, "client/runtime/testdata", name, "manifest.json")) as f:
                bases.append(json.load(f))
        values = [None, 0, -1, 1, 2**40, 1.5, "x", "", "s0", "s9", "1/0", "ceil_div(s0, 0)", "min(",
                  "s0 * s1 * s0 * s1 * 99999", [], {}, [1], True, "-s0", "(" * 300 + "1" + ")" * 300]

        def mutate(o):
            """Drops, replaces or (in lists) repeats an entry, or mutates inside it."""
            if not isinstance(o, (dict, list)) or not o:
                return
            k = rng.choice(sorted(o) if isinstance(o, dict) else range(len(o)))
            r = rng.random()
            if r < 0.2:
                del o[k]
            elif r < 0.55:
                o[k] = copy.deepcopy(rng.choice(values))
            elif r < 0.65 and isinstance(o, list):
                o.append(copy.deepcopy(o[k]))
            else:
                mutate(o[k])

        outcomes = {"parsed": 0, "refused": 0}
        for _ in range(3000):
            doc = copy.deepcopy(rng.choice(bases))
            for _ in range(rng.randint(1, 3)):
                mutate(doc)
            text = json.dumps(doc)
            try:
                m = rt.parse_manifest(text)
                outcomes["parsed"] += 1
                shapes = [None if t.scalar else [rng.choice([0, 1, 7, 2048, 2**31]) for _ in t.shape]
                          for t in m.inputs]
                rt.plan_launch(m, shapes)
            except rt.FusionError as e:
                self.assertTrue(str(e), text)
                outcomes["refused"] += 1
        self.assertGreater(outcomes["parsed"], 50)  # both outcomes occur
        self.assertGreater(outcomes["refused"], 50)

    def test_missing_directory_is_not_found(self):
        with self.assertRaises(rt.NotFound):
            rt.load("/nonexistent/fusion")


def _gpu_skip_reason():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device visible to torch"
    if not os.path.isdir(_testdata()):
        return f"no test kernels at {_testdata()}"
    return None


def _testdata():
    return os.environ.get("FUSIOND_RUNTIME_TESTDATA",
                          os.path.join(_SOURCE, "build-rt/client/runtime/testdata"))


@unittest.skipIf(_gpu_skip_reason() is not None, _gpu_skip_reason() or "")
class GpuTest(unittest.TestCase):
    def test_two_kernels_three_shapes_poisoned_outputs(self):
        import torch
        f = rt.load(os.path.join(_testdata(), "center"))
        for rows, cols in [(5, 7), (1000, 33), (4096, 1024)]:
            x = torch.randn(rows, cols, device="cuda")
            out = torch.full((rows, cols), float("nan"), device="cuda")
            count = torch.full((1,), float("nan"), device="cuda")
            f.run([x, 0.5], outputs=[out, count])
            want = 0.5 * (x.double() - x.double().sum(1, keepdim=True) / cols)
            self.assertFalse(torch.isnan(out).any().item())
            self.assertLess(((out.double() - want).abs().max() / want.abs().max()).item(), 1e-5)
            self.assertEqual(count.item(), (rows + 3) // 4)
            # Non-contiguous input, runtime-allocated outputs, a second run
            # (the zeroed workspace is zeroed again).
            xt = x.t().contiguous().t()
            self.assertFalse(xt.is_contiguous())
            out2, count2 = f(xt, -2.0)
            want2 = -2.0 * (x.double() - x.double().sum(1, keepdim=True) / cols)
            self.assertLess(((out2.double() - want2).abs().max() / want2.abs().max()).item(), 1e-5)
            self.assertEqual(count2.item(), (rows + 3) // 4)

    def test_cooperative(self):
        import torch
        f = rt.load(os.path.join(_testdata(), "coop"))
        for n in (100, 1 << 20, 3000001):
            x = torch.randn(n, device="cuda")
            total, per_block = f(x)
            self.assertEqual(per_block.shape[0], min(264, (n + 255) // 256))
            self.assertAlmostEqual(total.item(), x.double().sum().item(), delta=1e-3 * n ** 0.5)
            self.assertTrue(bool((per_block == total).all()))

    def test_on_a_side_stream(self):
        import torch
        f = rt.load(os.path.join(_testdata(), "center"))
        x = torch.randn(512, 256, device="cuda")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            out, _ = f(x, 1.0)
        torch.cuda.synchronize()
        want = x.double() - x.double().mean(1, keepdim=True)
        self.assertLess((out.double() - want).abs().max().item(), 1e-4)

    def test_bad_arguments(self):
        import torch
        f = rt.load(os.path.join(_testdata(), "center"))
        x = torch.randn(4, 4, device="cuda")
        with self.assertRaises(rt.InvalidArgument):
            f(x)
        with self.assertRaises(rt.InvalidArgument):
            f(x.to(torch.bfloat16), 1.0)
        with self.assertRaises(rt.InvalidArgument):
            f(x.cpu(), 1.0)
        with self.assertRaises(rt.InvalidArgument):
            f.run([x, 1.0], outputs=[torch.empty(4, 5, device="cuda"), torch.empty(1, device="cuda")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
