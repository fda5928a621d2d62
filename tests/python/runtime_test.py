"""Tests of fusiond/runtime.py and fusiond/manifest.py. Run as a script (ctest does):

    python3 tests/python/runtime_test.py

The expression, manifest and plan tests need nothing; the GPU tests need
torch with CUDA and the nvcc-built test kernels (FUSIOND_RUNTIME_TESTDATA,
default <build>/client/runtime/testdata) and are skipped, saying why, without.
The package's __init__ imports the gRPC client only on first use, so this
needs neither grpcio nor the generated protobuf modules.
"""

import importlib.util
import json
import os
import re
import sys
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))


if os.environ.get("FUSIOND_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(_SOURCE, "client", "python"))
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

# DOC_EXAMPLE as version 2: a kernel specialized to rows of at most 8192
# elements, a multiple of 8, with 16-byte aligned row pointers.
V2_EXAMPLE = json.loads(json.dumps(DOC_EXAMPLE))
V2_EXAMPLE["manifest_version"] = 2
V2_EXAMPLE["kernels"][0]["requires"] = [{"expr": "s1", "multiple_of": 8},
                                        {"expr": "s1", "at_most": 8192}]
V2_EXAMPLE["kernels"][0]["params"][0]["align"] = 16
V2_EXAMPLE["kernels"][0]["params"][2]["align"] = 16


def _hint(expr, value):
    # DOC_EXAMPLE's symbols: s0 and s1 are axes 0 and 1 of input T4.
    given = [f"{s} is input T4 axis {a}" for a, s in enumerate(("s0", "s1"))
             if re.search(rf"\b{s}\b", expr)]
    return (f"; these inputs give {expr} = {value} ({', '.join(given)}): "
            f"compile the fusion for these shapes "
            f"(fusionc compile --shapes, or a daemon request with this signature), "
            f"or with --general for kernels that run every shape")


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

        bad(lambda d: d.update(manifest_version=4), "manifest_version 4 is not supported (this runtime reads 1 to 3)")
        bad(lambda d: d.update(manifest_version=0), "this runtime reads 1 to 3")
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
        bases = [DOC_EXAMPLE, V2_EXAMPLE]
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


class RequiresTest(unittest.TestCase):
    """Manifest version 2: kernels' "requires" and params' "align"."""

    def doc(self, mutate=None):
        d = json.loads(json.dumps(V2_EXAMPLE))
        if mutate is not None:
            mutate(d)
        return d

    def parse(self, mutate=None):
        return rt.parse_manifest(json.dumps(self.doc(mutate)))

    def test_exported(self):
        from fusiond import manifest as mf
        self.assertIs(rt.FailedPrecondition, mf.FailedPrecondition)
        self.assertIn("FailedPrecondition", rt.__all__)
        self.assertIn("FailedPrecondition", mf.__all__)
        self.assertTrue(issubclass(rt.FailedPrecondition, rt.FusionError))
        self.assertTrue(issubclass(rt.FailedPrecondition, ValueError))
        self.assertFalse(issubclass(rt.FailedPrecondition, rt.InvalidArgument))
        self.assertEqual(rt.FailedPrecondition.code, "FAILED_PRECONDITION")

    def test_parses_requires_and_align(self):
        m = self.parse()
        self.assertEqual(m.version, 2)
        k = m.kernels[0]
        self.assertEqual([(c.expr.text, c.kind, c.n) for c in k.requires],
                         [("s1", "multiple_of", 8), ("s1", "at_most", 8192)])
        self.assertEqual([p.align for p in k.params], [16, 0, 16, 0, 0, 0, 0])
        self.assertEqual(m.required_alignments("input"), [(16, k.name), (1, ""), (1, "")])
        self.assertEqual(m.required_alignments("output"), [(16, k.name)])
        # Expressions, integers, negative bounds; the largest align of the
        # params bound to an input wins, naming the kernel asking.
        m = self.parse(lambda d: (
            d["kernels"][0].update(requires=[{"expr": "ceil_div(s1, 8) * 2 + s0", "multiple_of": 1},
                                             {"expr": 7, "at_most": -3}, {"expr": "s0", "at_most": 0}]),
            d["kernels"][0]["params"][1].update(align=256),
            d["kernels"][0]["params"].append({"kind": "input", "index": 1, "align": 1}),
            d["kernels"].append(dict(d["kernels"][0], name="k1", requires=[],
                                     params=[{"kind": "input", "index": 1, "align": 4},
                                             {"kind": "output", "index": 0, "align": 64}]))))
        self.assertEqual([(c.expr.text, c.kind, c.n) for c in m.kernels[0].requires],
                         [("ceil_div(s1, 8) * 2 + s0", "multiple_of", 1), ("7", "at_most", -3),
                          ("s0", "at_most", 0)])
        self.assertEqual(m.kernels[1].requires, [])
        self.assertEqual(m.required_alignments("input"), [(16, "fusion_9f1c_k0"), (256, "fusion_9f1c_k0"),
                                                         (1, "")])
        self.assertEqual(m.required_alignments("output"), [(64, "k1")])
        # Every power of two from 1 to 256 bytes.
        for b in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            self.assertEqual(self.parse(lambda d: d["kernels"][0]["params"][0].update(align=b))
                             .kernels[0].params[0].align, b)

    def test_version_1_and_missing_fields(self):
        m = rt.parse_manifest(json.dumps(DOC_EXAMPLE))
        self.assertEqual(m.version, 1)
        self.assertEqual(m.kernels[0].requires, [])
        self.assertEqual([p.align for p in m.kernels[0].params], [0] * 7)
        self.assertEqual(m.required_alignments("input"), [(1, "")] * 3)
        self.assertEqual(m.required_alignments("output"), [(1, "")])
        m = self.parse(lambda d: (d["kernels"][0].pop("requires"), d["kernels"][0]["params"][0].pop("align")))
        self.assertEqual((m.version, m.kernels[0].requires, m.kernels[0].params[0].align), (2, [], 0))
        self.assertEqual(self.parse(lambda d: d["kernels"][0].update(requires=[])).kernels[0].requires, [])
        for name in ("center", "coop"):  # the version 1 test manifests read as before
            with open(os.path.join(_SOURCE, "client/runtime/testdata", name, "manifest.json")) as f:
                m = rt.parse_manifest(f.read())
            self.assertTrue(all(not k.requires for k in m.kernels))

    def test_rejects_bad_requires(self):
        """InvalidArgument at load time naming the kernel and the condition."""
        def bad(requires, index, fragment):
            with self.assertRaises(rt.InvalidArgument, msg=repr(requires)) as cm:
                self.parse(lambda d: d["kernels"][0].update(requires=requires))
            msg = str(cm.exception)
            where = "kernels[0] (fusion_9f1c_k0).requires" + ("" if index is None else f"[{index}]")
            self.assertIn(f"manifest: {where}", msg)
            self.assertIn(fragment, msg)

        ok = {"expr": "s1", "multiple_of": 8}
        bad({"expr": "s1", "multiple_of": 8}, None, "expected a list of conditions")
        bad("s1 % 8", None, "expected a list of conditions")
        bad([ok, "s1"], 1, "expected an object")
        bad([ok, ok, {"expr": "s1", "multiple_of": 8, "note": 1}], 2, 'unknown key "note"')
        bad([{"expr": "s1", "multipleOf": 8}], 0, 'unknown key "multipleOf"')
        bad([{"expr": "s0", "equals": 8, "at_most": 9}], 0, 'exactly one of')
        bad([ok, {"expr": "s1", "multiple_of": 8, "at_most": 9}], 1, 'exactly one of "multiple_of", "at_most", "equals"')
        bad([{"expr": "s1"}], 0, 'exactly one of "multiple_of", "at_most", "equals"')
        bad([{"multiple_of": 8}], 0, 'missing "expr"')
        bad([ok, {"expr": "s1", "multiple_of": 0}], 1, '"multiple_of" must be positive, got 0')
        bad([{"expr": "s1", "multiple_of": -8}], 0, '"multiple_of" must be positive, got -8')
        for n in ("8", 8.0, True, None, [8], 2**63):
            bad([{"expr": "s1", "multiple_of": n}], 0, '"multiple_of" must be an integer')
            bad([ok, {"expr": "s1", "at_most": n}], 1, '"at_most" must be an integer')
            bad([{"expr": "s0", "equals": n}], 0, '"equals" must be an integer')
        bad([ok, {"expr": "s1 +", "at_most": 8}], 1, "expected a number")
        bad([{"expr": "sqrt(s1)", "at_most": 8}], 0, "unknown function 'sqrt'")
        bad([{"expr": None, "at_most": 8}], 0, "expression must be a string or an integer")
        bad([ok, ok, {"expr": "s1 * s7", "at_most": 8}], 2, "undeclared symbol 's7'")

    def test_rejects_bad_align(self):
        def bad(param, value, fragment):
            with self.assertRaises(rt.InvalidArgument, msg=f"{param} {value!r}") as cm:
                self.parse(lambda d: d["kernels"][0]["params"][param].update(align=value))
            self.assertIn(f"kernels[0].params[{param}]", str(cm.exception))
            self.assertIn(fragment, str(cm.exception))

        for value in (0, 3, 12, 512, -16, "16", 16.0, True, None):
            bad(0, value, '"align" must be a power of two from 1 to 256')
            bad(2, value, '"align" must be a power of two from 1 to 256')
        # Other kinds' pointers are the runtime's own (or not pointers): their
        # "align" is ignored, as the C++ runtime does.
        for param in (3, 4, 5, 6):
            m = self.parse(lambda d: d["kernels"][0]["params"][param].update(align=3))
            self.assertEqual(m.kernels[0].params[param].align, 0)

    def test_plan_checks_requires(self):
        m = self.parse()
        for rows, cols in [(2048, 8192), (1, 8), (100, 64), (7, 4096)]:
            p = rt.plan_launch(m, [(rows, cols), (rows, 1), None])
            self.assertEqual(p.output_shapes, [(rows, cols)])
        head = "kernel fusion_9f1c_k0 (inner_outer_persistent) was compiled for shapes where "
        with self.assertRaises(rt.FailedPrecondition) as cm:
            rt.plan_launch(m, [(2048, 4100), (2048, 1), None])
        self.assertEqual(str(cm.exception), head + "s1 is a multiple of 8" + _hint("s1", 4100))
        self.assertIsInstance(cm.exception, ValueError)
        self.assertNotIsInstance(cm.exception, rt.InvalidArgument)
        for cols in (8200, 16384):
            with self.assertRaises(rt.FailedPrecondition) as cm:
                rt.plan_launch(m, [(2048, cols), (2048, 1), None])
            self.assertEqual(str(cm.exception), head + "s1 <= 8192" + _hint("s1", cols))
        # The first failing condition, kernels and conditions in order.
        with self.assertRaises(rt.FailedPrecondition) as cm:
            rt.plan_launch(m, [(2048, 8193), (2048, 1), None])
        self.assertEqual(str(cm.exception), head + "s1 is a multiple of 8" + _hint("s1", 8193))

    def test_plan_checks_equals(self):
        """Version 3: a kernel compiled for exactly these sizes."""
        m = self.parse(lambda d: (d.update(manifest_version=3), d["kernels"][0].update(
            requires=[{"expr": "s0", "equals": 2048}, {"expr": "s1", "equals": 8192}])))
        self.assertEqual(m.version, 3)
        self.assertEqual(rt.plan_launch(m, [(2048, 8192), (2048, 1), None]).output_shapes, [(2048, 8192)])
        head = "kernel fusion_9f1c_k0 (inner_outer_persistent) was compiled for shapes where "
        for rows, cols, condition, failing, value in [(4096, 8192, "s0 == 2048", "s0", 4096),
                                                      (2048, 4096, "s1 == 8192", "s1", 4096)]:
            with self.assertRaises(rt.FailedPrecondition) as cm:
                rt.plan_launch(m, [(rows, cols), (rows, 1), None])
            self.assertEqual(str(cm.exception), head + condition + _hint(failing, value))

    def test_plan_requires_expressions_and_order(self):
        def cond(requires, scheduler="inner_persistent"):
            return self.parse(lambda d: d["kernels"].append(
                dict(d["kernels"][0], name="k1", scheduler=scheduler, requires=requires)))

        m = cond([{"expr": "ceil_div(s1, 8) * s0", "multiple_of": 4}, {"expr": "s0 - s1", "at_most": -1}])
        rt.plan_launch(m, [(4, 8), (4, 1), None])  # 4 and -4
        with self.assertRaises(rt.FailedPrecondition) as cm:
            rt.plan_launch(m, [(3, 56), (3, 1), None])
        self.assertEqual(str(cm.exception),
                         "kernel k1 (inner_persistent) was compiled for shapes where ceil_div(s1, 8) * s0 "
                         "is a multiple of 4" + _hint("ceil_div(s1, 8) * s0", 21))
        with self.assertRaises(rt.FailedPrecondition) as cm:
            rt.plan_launch(m, [(16, 8), (16, 1), None])
        self.assertEqual(str(cm.exception), "kernel k1 (inner_persistent) was compiled for shapes where "
                                            "s0 - s1 <= -1" + _hint("s0 - s1", 8))
        # Checked before the launch dimensions: a grid that is out of range
        # at shapes the kernel was not compiled for is a FailedPrecondition.
        m = self.parse(lambda d: d["kernels"][0].update(grid=["s1 / 8 - 1023"]))
        self.assertEqual(rt.plan_launch(m, [(2, 8192), (2, 1), None]).launches[0][0], (1, 1, 1))
        with self.assertRaises(rt.FailedPrecondition):
            rt.plan_launch(m, [(2, 8000 + 4), (2, 1), None])
        # Shapes that disagree with the manifest stay InvalidArgument.
        with self.assertRaises(rt.InvalidArgument):
            rt.plan_launch(self.parse(), [(2048, 4100), (1024, 1), None])
        # No scheduler in the manifest: the message keeps its shape.
        m = self.parse(lambda d: d["kernels"][0].pop("scheduler"))
        with self.assertRaisesRegex(rt.FailedPrecondition, r"^kernel fusion_9f1c_k0 \(\) was compiled"):
            rt.plan_launch(m, [(2, 12), (2, 1), None])

    def test_loaded_fusion_plan_raises_and_caches_nothing(self):
        f = rt.LoadedFusion(self.parse(), {})  # no GPU needed until a run
        with self.assertRaises(rt.FailedPrecondition):
            f.plan([(2048, 4100), (2048, 1), None])
        self.assertEqual(f._plans, {})
        self.assertEqual(f.plan([(2048, 8192), (2048, 1), None]).output_shapes, [(2048, 8192)])


class CpuScalarTest(unittest.TestCase):
    """Scalar inputs given as 0-dim CPU tensors (the manifest's cpu_tensor)."""

    def manifest(self, **step):
        d = json.loads(json.dumps(DOC_EXAMPLE))
        d["inputs"][2].update(step)
        return json.dumps(d)

    def test_manifest_says_which_scalar_is_a_cpu_tensor(self):
        m = rt.parse_manifest(self.manifest(cpu_tensor=True))
        self.assertTrue(m.inputs[2].cpu_tensor)
        self.assertFalse(m.inputs[0].cpu_tensor)
        self.assertFalse(rt.parse_manifest(self.manifest()).inputs[2].cpu_tensor)
        for bad in (self.manifest(cpu_tensor=1), self.manifest(cpu_tensor="yes")):
            with self.assertRaisesRegex(rt.InvalidArgument, "cpu_tensor"):
                rt.parse_manifest(bad)
        d = json.loads(json.dumps(DOC_EXAMPLE))
        d["inputs"][0]["cpu_tensor"] = True
        with self.assertRaisesRegex(rt.InvalidArgument, r"inputs\[0\].*only on a scalar input"):
            rt.parse_manifest(json.dumps(d))

    def test_numbers_pass_as_doubles(self):
        spec = rt.parse_manifest(self.manifest(cpu_tensor=True)).inputs[2]
        self.assertEqual(rt.scalar_argument(spec, 2, 3), 3.0)
        self.assertEqual(rt.scalar_argument(spec, 2, True), 1.0)
        with self.assertRaisesRegex(rt.InvalidArgument, "S2 .index 2. must be a number or a 0-dim CPU"):
            rt.scalar_argument(spec, 2, "3")

    @unittest.skipIf(importlib.util.find_spec("torch") is None, "torch is not installed")
    def test_cpu_tensor_item(self):
        import torch
        spec = rt.parse_manifest(self.manifest(cpu_tensor=True, dtype="float32")).inputs[2]
        self.assertEqual(rt.scalar_argument(spec, 2, torch.tensor(0.1, dtype=torch.float32)),
                         float(torch.tensor(0.1, dtype=torch.float32).item()))
        with self.assertRaisesRegex(rt.InvalidArgument, "0-dim CPU tensor in the fusion, got shape .1,."):
            rt.scalar_argument(spec, 2, torch.ones(1))
        with self.assertRaisesRegex(rt.InvalidArgument, "is torch.float64, the fusion wants float32"):
            rt.scalar_argument(spec, 2, torch.tensor(3.0, dtype=torch.float64))
        plain = rt.parse_manifest(self.manifest()).inputs[2]  # any one-element tensor
        self.assertEqual(rt.scalar_argument(plain, 2, torch.full((1, 1), 2.5)), 2.5)
        with self.assertRaisesRegex(rt.InvalidArgument, "is a scalar, got a tensor of shape"):
            rt.scalar_argument(plain, 2, torch.ones(2))
        if torch.cuda.is_available():
            with self.assertRaisesRegex(rt.InvalidArgument, "on cuda"):
                rt.scalar_argument(spec, 2, torch.tensor(3.0, device="cuda"))


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

    def _center_v2(self, mutate):
        """The center test fusion with its manifest made version 2 by mutate."""
        directory = os.path.join(_testdata(), "center")
        with open(os.path.join(directory, "manifest.json")) as f:
            doc = json.load(f)
        doc["manifest_version"] = 2
        mutate(doc)
        m = rt.parse_manifest(json.dumps(doc))
        binaries = {}
        for k in m.kernels:
            with open(os.path.join(directory, k.binary), "rb") as f:
                binaries[k.binary] = f.read()
        return rt.LoadedFusion(m, binaries, directory)

    def test_alignment(self):
        """Misaligned inputs are copied; misaligned out= tensors refused."""
        import torch

        def align16(doc):
            for k in doc["kernels"]:
                for p in k["params"]:
                    if p["kind"] in ("input", "output"):
                        p["align"] = 16

        f = self._center_v2(align16)
        rows, cols = 100, 33
        base = torch.randn(rows * cols + 1, device="cuda")
        x = base[1:].view(rows, cols)
        self.assertTrue(x.is_contiguous())
        self.assertEqual(x.data_ptr() % 16, 4)
        kept = x.clone()
        want = x.double() - x.double().mean(1, keepdim=True)
        out, count = f(x, 1.0)
        self.assertEqual(out.data_ptr() % 16, 0)
        self.assertLess((out.double() - want).abs().max().item(), 1e-4)
        self.assertEqual(count.item(), (rows + 3) // 4)
        self.assertTrue(torch.equal(x, kept))
        # Misaligned and non-contiguous at once.
        xt = torch.randn(cols * rows + 1, device="cuda")[1:].view(cols, rows).t()
        self.assertFalse(xt.is_contiguous())
        out, _ = f(xt, 1.0)
        want = xt.double() - xt.double().mean(1, keepdim=True)
        self.assertLess((out.double() - want).abs().max().item(), 1e-4)
        # out=: aligned works, misaligned is refused before anything runs.
        o = torch.full((rows, cols), float("nan"), device="cuda")
        f.run([x, 1.0], outputs=[o, torch.empty(1, device="cuda")])
        self.assertLess((o.double() - (x.double() - x.double().mean(1, keepdim=True))).abs().max().item(), 1e-4)
        o = torch.full((rows * cols + 1,), float("nan"), device="cuda")[1:].view(rows, cols)
        with self.assertRaises(rt.InvalidArgument) as cm:
            f.run([x, 1.0], outputs=[o, torch.empty(1, device="cuda")])
        self.assertEqual(str(cm.exception), f"output 0 at 0x{o.data_ptr():x} is not 16-byte aligned, "
                                            f"which kernel rt_center needs")
        torch.cuda.synchronize()
        self.assertTrue(bool(torch.isnan(o).all()))

    def test_requires(self):
        import torch
        f = self._center_v2(lambda d: d["kernels"][0].update(requires=[{"expr": "s1", "multiple_of": 32}]))
        out = torch.full((100, 33), float("nan"), device="cuda")
        count = torch.full((1,), float("nan"), device="cuda")
        with self.assertRaises(rt.FailedPrecondition) as cm:
            f.run([torch.randn(100, 33, device="cuda"), 1.0], outputs=[out, count])
        self.assertEqual(str(cm.exception),
                         "kernel rt_row_sum (test) was compiled for shapes where s1 is a multiple of 32"
                         + _hint("s1", 33))
        torch.cuda.synchronize()
        self.assertTrue(bool(torch.isnan(out).all()) and bool(torch.isnan(count).all()))  # nothing ran
        x = torch.randn(100, 64, device="cuda")
        out, _ = f(x, 1.0)
        self.assertLess((out.double() - (x.double() - x.double().mean(1, keepdim=True))).abs().max().item(),
                        1e-4)


if __name__ == "__main__":
    unittest.main(verbosity=2)
