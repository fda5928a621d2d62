"""Tests of the torch.compile backend (fusiond.partition, fusiond.torch_backend).

    python3 tests/python/torch_backend_test.py

Without torch: partitioning and lowering of aten graphs given as plain data
(fusiond.partition), and the lowered fusions compiled by fusionc (no GPU).
With torch (the GPU host): the fx adapter on real AOTAutograd graphs (CPU
tensors are never fused: the partitions fall back, saying why); with CUDA
also the backend's results against eager. Skipped, saying why, where a
piece is missing.
"""

import logging
import os
import sys
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))
if os.environ.get("FUSIOND_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(_SOURCE, "client", "python"))

from fusiond import compiler  # noqa: E402
from fusiond.manifest import FusionError  # noqa: E402
from fusiond.partition import GraphNode, Ref, lower, partition, supported  # noqa: E402

try:
    import torch
    _NO_TORCH = None if hasattr(torch, "compile") else \
        f"torch {torch.__version__} has no torch.compile (2.0 or later)"
except ImportError:
    torch = None
    _NO_TORCH = "torch is not installed (the GPU host has it)"


def have_fusionc():
    try:
        compiler.find_fusionc()
        return True
    except FusionError:
        return False


def P(shape, dtype="bfloat16", name=""):
    return GraphNode("placeholder", shape=tuple(shape), dtype=dtype, name=name)


def C(target, *args, shape, dtype="float32", **kwargs):
    return GraphNode("call", target, tuple(args), kwargs, tuple(shape), dtype)


def rmsnorm_block():
    """x -> RMSNorm(w) -> mm -> relu -> + x, as AOTAutograd gives it."""
    R = Ref
    return [
        P([8, 64], name="x"),                                                        # 0
        P([64], name="w"),                                                           # 1
        P([64, 64], name="W"),                                                       # 2
        C("prims.convert_element_type.default", R(0), "float32", shape=[8, 64]),     # 3
        C("aten.pow.Tensor_Scalar", R(3), 2, shape=[8, 64]),                         # 4
        C("aten.mean.dim", R(4), [-1], True, shape=[8, 1]),                          # 5
        C("aten.add.Tensor", R(5), 1e-6, shape=[8, 1]),                              # 6
        C("aten.rsqrt.default", R(6), shape=[8, 1]),                                 # 7
        C("aten.mul.Tensor", R(3), R(7), shape=[8, 64]),                             # 8
        C("prims.convert_element_type.default", R(8), "bfloat16", shape=[8, 64], dtype="bfloat16"),  # 9
        C("aten.mul.Tensor", R(9), R(1), shape=[8, 64], dtype="bfloat16"),           # 10
        C("aten.mm.default", R(10), R(2), shape=[8, 64], dtype="bfloat16"),          # 11
        C("aten.relu.default", R(11), shape=[8, 64], dtype="bfloat16"),              # 12
        C("aten.add.Tensor", R(12), R(0), shape=[8, 64], dtype="bfloat16"),          # 13
        GraphNode("output", "output", ((R(13), R(7)),)),                             # 14
    ]


def softmax_and_layernorm():
    R = Ref
    return [
        P([4, 32], "float32"),                                                       # 0
        C("aten.amax.default", R(0), [-1], True, shape=[4, 1]),                      # 1
        C("aten.sub.Tensor", R(0), R(1), shape=[4, 32]),                             # 2
        C("aten.exp.default", R(2), shape=[4, 32]),                                  # 3
        C("aten.sum.dim_IntList", R(3), [-1], True, shape=[4, 1]),                   # 4
        C("aten.div.Tensor", R(3), R(4), shape=[4, 32]),                             # 5
        GraphNode("call", "aten.var_mean.correction", (R(5), [1]),
                  {"correction": 0, "keepdim": True},
                  outputs=[((4, 1), "float32"), ((4, 1), "float32")]),              # 6
        C("operator.getitem", R(6), 0, shape=[4, 1]),                                # 7
        C("operator.getitem", R(6), 1, shape=[4, 1]),                                # 8
        C("aten.add.Tensor", R(7), 1e-5, shape=[4, 1]),                              # 9
        C("aten.rsqrt.default", R(9), shape=[4, 1]),                                 # 10
        C("aten.sub.Tensor", R(5), R(8), shape=[4, 32]),                             # 11
        C("aten.mul.Tensor", R(11), R(10), shape=[4, 32]),                           # 12
        C("aten.unsqueeze.default", R(12), 0, shape=[1, 4, 32]),                     # 13
        C("aten.gelu.default", R(13), shape=[1, 4, 32]),                             # 14 (not decomposed)
        GraphNode("output", "output", ((R(14), R(8), R(10)),)),                     # 15
    ]


class PartitionTest(unittest.TestCase):
    def test_rmsnorm_block_groups(self):
        nodes = rmsnorm_block()
        self.assertIsNone(supported(nodes, 8))
        self.assertIn("aten.mm is not an op fusiond compiles", supported(nodes, 11))
        self.assertEqual(partition(nodes), [[3, 4, 5, 6, 7, 8, 9, 10], [12, 13]])

    def test_no_group_leaves_and_reenters(self):
        """a -> mm -> c and a -> c: a and c cannot be one fusion."""
        R = Ref
        nodes = [P([4, 4], "float32"),
                 C("aten.exp.default", R(0), shape=[4, 4]),                  # 1: a
                 C("aten.mm.default", R(1), R(1), shape=[4, 4]),            # 2: outside
                 C("aten.add.Tensor", R(1), R(2), shape=[4, 4]),            # 3: c
                 C("aten.neg.default", R(1), shape=[4, 4]),                  # 4: joins a
                 GraphNode("output", "output", ((R(3), R(4)),))]
        self.assertEqual(partition(nodes), [[1, 4], [3]])

    def test_random_graphs_give_disjoint_acyclic_groups(self):
        """On random DAGs: groups are disjoint, hold only supported nodes,
        cover every supported node, and none can be left and re-entered
        (checked by brute-force reachability)."""
        import random
        rng = random.Random(33)
        for _ in range(300):
            n = rng.randint(2, 24)
            nodes = [P([4], "float32")]
            for i in range(1, n):
                ins = rng.sample(range(i), k=min(i, rng.randint(1, 2)))
                target = "aten.mm.default" if rng.random() < 0.3 else "aten.add.Tensor"
                args = [Ref(j) for j in ins] + [1.0] * (2 - len(ins))
                nodes.append(C(target, *args, shape=[4]))
            groups = partition(nodes)
            reach = [set() for _ in nodes]  # descendants
            for i in reversed(range(n)):
                for j in range(i + 1, n):
                    if any(isinstance(a, Ref) and a.index == i for a in nodes[j].args):
                        reach[i] |= {j} | reach[j]
            seen = set()
            for g in groups:
                members = set(g)
                self.assertFalse(members & seen)
                seen |= members
                for m in g:
                    self.assertIsNone(supported(nodes, m))
                for x in set(range(n)) - members:
                    into = any(x in reach[m] for m in members)
                    back = any(m in reach[x] for m in members)
                    self.assertFalse(into and back, (g, x))
            supported_nodes = {i for i in range(n) if supported(nodes, i) is None}
            self.assertEqual(seen, supported_nodes)

    def test_views_alone_are_not_fused(self):
        R = Ref
        nodes = [P([4, 4], "float32"), C("aten.mm.default", R(0), R(0), shape=[4, 4]),
                 C("aten.permute.default", R(1), [1, 0], shape=[4, 4]),
                 C("aten.mm.default", R(2), R(0), shape=[4, 4]),
                 GraphNode("output", "output", ((R(3),),))]
        self.assertEqual(partition(nodes), [])

    def test_unsupported_dtypes_and_symbolic_sizes(self):
        R = Ref
        nodes = [P([4], "int64"), C("aten.neg.default", R(0), shape=[4], dtype="int64"),
                 GraphNode("placeholder", name="s0"),
                 P([4], "float32"), C("aten.mul.Tensor", R(3), R(2), shape=[4])]
        self.assertIn("dtype int64", supported(nodes, 1))
        self.assertIn("symbolic size", supported(nodes, 4))

    def test_views_fuse_only_when_extent_one_axes_come_or_go(self):
        R = Ref
        nodes = [P([4, 8], "float32"),
                 C("aten.view.default", R(0), [32], shape=[32]),
                 C("aten.view.default", R(0), [4, 1, 8], shape=[4, 1, 8]),
                 C("aten.permute.default", R(0), [1, 0], shape=[8, 4]),
                 C("aten.squeeze.dim", R(2), 1, shape=[4, 8])]
        self.assertIn("not adding or dropping extent-1 axes", supported(nodes, 1))
        self.assertIsNone(supported(nodes, 2))
        self.assertIn("aten.permute is not an op", supported(nodes, 3))
        text = lower(nodes, [2, 4], outputs=[(4, None)]).fd.definition_text()
        self.assertIn("broadcast_dims=[0, 2]", text)
        self.assertIn("fd.ops.squeeze(", text)

    def test_one_value_read_under_two_names_is_one_output(self):
        R = Ref
        nodes = [P([4, 4], "float32"),
                 C("aten.exp.default", R(0), shape=[4, 4]),
                 C("aten.view.default", R(1), [4, 4], shape=[4, 4]),
                 C("aten.view.default", R(0), [4, 4], shape=[4, 4]),
                 GraphNode("output", "output", ((R(1), R(2), R(3)),))]
        lowered = lower(nodes, [1, 2, 3])
        self.assertEqual(lowered.sources, [("fusion", 0), ("fusion", 0), ("input", 0)])
        self.assertEqual(lowered.fd.definition_text().count("fd.add_output"), 1)

    def test_softmax_and_var_mean_are_one_group(self):
        nodes = softmax_and_layernorm()
        self.assertEqual(partition(nodes), [list(range(1, 14))])
        lowered = lower(nodes, range(1, 14))
        text = lowered.fd.definition_text()
        self.assertIn("fd.ops.var_mean(", text)
        self.assertIn("fd.ops.max(", text)
        self.assertEqual(lowered.inputs, [0])
        self.assertEqual(lowered.sources, [("fusion", 0), ("fusion", 1), ("fusion", 2)])

    def test_lowering_casts_16bit_to_float_and_outputs_back(self):
        nodes = rmsnorm_block()
        lowered = lower(nodes, [12, 13])
        text = lowered.fd.definition_text()
        self.assertEqual(lowered.inputs, [11, 0])
        self.assertIn("fd.ops.cast(T1, dtype=DataType.Float)", text)
        self.assertRegex(text, r"fd\.ops\.cast\(T\d+, dtype=DataType\.BFloat16\)\n    fd\.add_output")
        # mean over the last axis: a sum times 1/64; the weight broadcast to the rows.
        text = lower(nodes, [3, 4, 5, 6, 7, 8, 9, 10]).fd.definition_text()
        self.assertIn("0.015625", text)
        self.assertIn("broadcast_dims=[1]", text)


@unittest.skipUnless(have_fusionc(), "no fusionc (set FUSIOND_FUSIONC or build the fusionc target)")
class LoweredCompilesTest(unittest.TestCase):
    """fusionc accepts every lowered group (compiling needs no GPU)."""

    def compile(self, nodes, members):
        lowered = lower(nodes, members)
        shapes = [nodes[i].shape for i in lowered.inputs]
        fusion = compiler.compile_definition(lowered.fd.definition_text(), shapes, False)
        return lowered, fusion.manifest

    def test_rmsnorm_block(self):
        nodes = rmsnorm_block()
        for group in partition(nodes):
            lowered, manifest = self.compile(nodes, group)
            self.assertEqual(len(manifest.outputs), len(lowered.sources))
            self.assertEqual(len(manifest.kernels), 1, lowered.fd.definition_text())

    def test_softmax_and_layernorm(self):
        nodes = softmax_and_layernorm()
        lowered, manifest = self.compile(nodes, partition(nodes)[0])
        self.assertEqual([t.dtype for t in manifest.outputs], ["float32"] * 3)
        self.assertEqual([len(t.shape) for t in manifest.outputs], [2, 2, 3])  # nodes 8, 10, 13


@unittest.skipIf(torch is None, "torch is not installed (the GPU host has it)")
class OldTorchTest(unittest.TestCase):
    def test_torch_without_compile_is_named(self):
        """torch before 2.0 (Debian 12's 1.13) has no Dynamo: the backend
        says which torch it needs instead of failing on a missing module."""
        from fusiond import torch_backend
        saved = getattr(torch, "compile", None)
        if saved is not None:
            del torch.compile
        try:
            with self.assertRaisesRegex(ImportError, r"torch 2\.0 or later.*this torch is "):
                torch_backend.register()
        finally:
            if saved is not None:
                torch.compile = saved


@unittest.skipIf(_NO_TORCH, _NO_TORCH)
class FxAdapterTest(unittest.TestCase):
    def test_backend_is_discoverable(self):
        from fusiond import torch_backend
        torch_backend.register()
        self.assertIn("fusiond", torch._dynamo.list_backends(exclude_tags=()))

    def test_cpu_graph_falls_back_and_matches_eager(self):
        """CPU tensors are not fused; the step still runs and matches eager."""
        from fusiond import torch_backend

        def f(x, w):
            return torch.softmax(x @ w, dim=-1) * 2.0

        x = torch.randn(8, 16, requires_grad=True)
        w = torch.randn(16, 16, requires_grad=True)
        with self.assertLogs("fusiond.torch_backend", level=logging.INFO):
            compiled = torch.compile(f, backend=torch_backend.fusiond_backend)
            y = compiled(x, w)
            y.sum().backward()
        torch.testing.assert_close(y, f(x, w))

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device")
    def test_cuda_block_fuses_and_matches_eager(self):
        from fusiond import torch_backend
        torch_backend.reset_report()

        def f(x, w, g):
            h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g
            return torch.nn.functional.gelu(h @ w) + x

        args = [torch.randn(64, 128, device="cuda", requires_grad=True),
                torch.randn(128, 128, device="cuda", requires_grad=True),
                torch.randn(128, device="cuda", requires_grad=True)]
        compiled = torch.compile(f, backend="fusiond")
        out = compiled(*args)
        out.sum().backward()
        grads = [a.grad.clone() for a in args]
        for a in args:
            a.grad = None
        ref = f(*args)
        ref.sum().backward()
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
        for g, a in zip(grads, args):
            torch.testing.assert_close(g, a.grad, rtol=1e-3, atol=1e-3)
        ran = [r for r in torch_backend.report() if r["calls"] and not r["fallback"]]
        self.assertTrue(ran, torch_backend.report())

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device")
    def test_dynamic_batch_sizes(self):
        """dynamic=True: one graph with a symbolic batch size; each batch
        size gets its fusion (lowered at its first call) and matches eager."""
        from fusiond import torch_backend
        torch_backend.reset_report()

        def f(x, g):
            return torch.softmax(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g, -1)

        g = torch.randn(256, device="cuda")
        compiled = torch.compile(f, backend="fusiond", dynamic=True)
        for rows in (32, 48, 32, 100):
            x = torch.randn(rows, 256, device="cuda")
            torch.testing.assert_close(compiled(x, g), f(x, g), rtol=1e-4, atol=1e-5)
        groups = torch_backend.report()
        symbolic = [r for r in groups if r["symbolic"] and r["calls"] and not r["fallback"]]
        self.assertTrue(symbolic, groups)
        self.assertEqual(len(symbolic[0]["group"].by_signature), 3)


if __name__ == "__main__":
    unittest.main(verbosity=2)
