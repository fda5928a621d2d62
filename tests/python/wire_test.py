"""FUSIOND_SERVER: definitions compiled by a real daemon (127.0.0.1).

    FUSIOND_BIN=<build>/server/fusiond python3 tests/python/wire_test.py

Every corpus script recorded through fusiond.FusionDefinition and sent in
the wire form built in Python (fusiond.wire) compiles to the canonical
graph that fusionc's own front end gives the original script; through
FUSIOND_SERVER, FusionDefinition's compile returns the daemon's kernels,
the factory and random ops (full, zeros, ones, iota, uniform, normal,
rand_like, randn_like) and the composite spellings (lerp, addcmul,
threshold, set, segment_set, stride_order) give fusionc's graph too, sent
without `fusionc parse`, and a definition the daemon refuses raises CompileError with its message.
Needs grpcio, the generated protobuf modules (installed with the package,
or FUSIOND_GENERATED_PYTHON=<build>/python) and fusiond (FUSIOND_BIN);
skipped, saying which is missing, without them. No GPU.
"""

import glob
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))
if os.environ.get("FUSIOND_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(_SOURCE, "client", "python"))
sys.path.insert(0, os.path.join(_SOURCE, "tests", "service"))
sys.path.insert(0, _HERE)

import fusiond  # noqa: E402
from fusiond import compiler  # noqa: E402

if os.environ.get("FUSIOND_GENERATED_PYTHON"):
    fusiond.__path__.append(os.path.join(os.environ["FUSIOND_GENERATED_PYTHON"], "fusiond"))
_MISSING = None
try:
    from fusiond import client, wire  # noqa: E402
except ImportError as e:
    _MISSING = f"no gRPC client modules ({e})"
_BIN = os.environ.get("FUSIOND_BIN") or shutil.which("fusiond")
if not _MISSING and not (_BIN and os.access(_BIN, os.X_OK)):
    _MISSING = "no fusiond binary (FUSIOND_BIN)"
if not _MISSING:
    try:
        compiler.find_fusionc()
    except fusiond.manifest.FusionError as e:
        _MISSING = str(e)
CORPUS = os.environ.get("FUSIOND_CORPUS_DIR", os.path.join(_SOURCE, "tests", "corpus", "fusions"))
OPS_FUSIONS = os.path.join(_SOURCE, "tests", "ops", "fusions")


def _text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@unittest.skipIf(_MISSING, _MISSING)
class WireFormTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ["FUSIOND_BIN"] = _BIN
        import daemon  # tests/service/daemon.py: the real daemon, always stopped
        cls.tmp = tempfile.mkdtemp(prefix="fusiond-wire-")
        cls.daemon = daemon.Daemon(os.path.join(cls.tmp, "cache"), metrics=False).start()

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def hash_of(self, graph, shapes):
        result = self.daemon.client.compile(graph, shapes=shapes, report=True)
        return result.report()["canonical_hash"]

    def test_corpus_wire_form_matches_fusionc(self):
        from definition_test import definition_only, run_with_fusiond
        for path in sorted(glob.glob(os.path.join(CORPUS, "*.py"))):
            with self.subTest(fusion=os.path.basename(path)):
                parsed = compiler.run_fusionc(["parse", path, "--inputs"], path).stdout
                text = re.search(r"# input shapes: (.*)", parsed).group(1)
                shapes = [[int(d) for d in s.strip("[]").split(", ")] for s in text.split("] [")]
                fd = run_with_fusiond(definition_only(path))
                ours = self.hash_of(wire.to_graph(fd), shapes)
                pb = os.path.join(self.tmp, "graph.pb")
                compiler.run_fusionc(["parse", path, "--out", pb], path)
                with open(pb, "rb") as f:
                    self.assertEqual(ours, self.hash_of(f.read(), shapes))

    def same_as_fusionc(self, fd, name, shapes):
        """The wire form of fd and fusionc's parse of fd's text: one canonical graph."""
        path = os.path.join(self.tmp, name + ".py")
        with open(path, "w") as f:
            f.write(fd.definition_text())
        pb = os.path.join(self.tmp, name + ".pb")
        compiler.run_fusionc(["parse", path, "--out", pb], path)
        with open(pb, "rb") as f:
            self.assertEqual(self.hash_of(wire.to_graph(fd), shapes), self.hash_of(f.read(), shapes))

    def test_cpu_scalar_tensor_matches_fusionc(self):
        DT = fusiond.DataType

        def build(cpu):
            with fusiond.FusionDefinition() as fd:
                t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Float)
                step = (fd.define_tensor(shape=[], contiguity=[], dtype=DT.Float, is_cpu=True,
                                         stride_order=[])
                        if cpu else fd.define_scalar(dtype=DT.Float))
                fd.add_output(fd.ops.mul(t0, fd.ops.sub(1.0, fd.ops.pow(0.9, step))))
            return fd

        fd, shapes = build(True), [[16, 32], []]
        self.assertTrue(wire.to_graph(fd).inputs[1].cpu_tensor)
        self.same_as_fusionc(fd, "cpu_scalar", shapes)
        # A define_scalar input gives the same kernels but another manifest: another hash.
        self.assertNotEqual(self.hash_of(wire.to_graph(fd), shapes),
                            self.hash_of(wire.to_graph(build(False)), shapes))

    def test_factory_and_random_ops_match_fusionc(self):
        from definition_test import definition_only, run_with_fusiond
        ops = ("uniform", "normal", "iota", "full", "zeros", "ones", "rand_like", "randn_like")
        scripts = [p for p in sorted(glob.glob(os.path.join(OPS_FUSIONS, "*.py")))
                   if any(f"fd.ops.{op}(" in _text(p) for op in ops)]
        self.assertGreaterEqual(len(scripts), 8, OPS_FUSIONS)
        for path in scripts:
            with self.subTest(fusion=os.path.basename(path)):
                parsed = compiler.run_fusionc(["parse", path, "--inputs"], path).stdout
                text = re.search(r"# input shapes: (.*)", parsed).group(1)
                shapes = [[int(d) for d in s.split(", ") if d]
                          for s in re.findall(r"\[([^\]]*)\]", text)]
                fd = run_with_fusiond(definition_only(path))
                self.same_as_fusionc(fd, "ops_" + os.path.basename(path)[:-3], shapes)
        DT = fusiond.DataType
        with fusiond.FusionDefinition() as fd:  # every spelling, unseeded random ops included
            t0 = fd.define_tensor(shape=[64, 128], contiguity=[True, True], dtype=DT.BFloat16)
            t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Float)
            s0 = fd.define_scalar(dtype=DT.Double)
            a = fd.ops.add(fd.ops.cast(t0, DT.Float), fd.ops.full(t0.shape(), 2.5, DT.Float))
            a = fd.ops.mul(a, fd.ops.ones(shape=[64, 128]))
            a = fd.ops.add(a, fd.ops.zeros([64, 128], dtype=DT.Float))
            a = fd.ops.add(a, fd.ops.full(shape=[64, 128], fill_value=s0))
            a = fd.ops.add(a, fd.ops.uniform(-1.0, 1.0, shape=[64, 128]))
            a = fd.ops.add(a, fd.ops.cast(fd.ops.rand_like(t0), DT.Float))
            b = fd.ops.add(t1, fd.ops.randn_like(t1))
            b = fd.ops.add(b, fd.ops.normal(0.0, s0, t1.shape(), dtype=DT.Float))
            pos = fd.ops.iota(t1.size(1), 0.0, 0.5, dtype=DT.Float)
            b = fd.ops.add(b, fd.ops.broadcast_in_dim(pos, shape=t1.shape(), broadcast_dims=[1]))
            idx = fd.ops.cast(fd.ops.iota(128), DT.Float)
            fd.add_output(fd.ops.add(a, fd.ops.broadcast_in_dim(idx, [64, 128], [1])))
            fd.add_output(b)
        self.same_as_fusionc(fd, "spellings", [[64, 128], [32, 256], []])

    def composite_definitions(self):
        """(name, definition, shapes) for each of lerp, addcmul, threshold,
        set, segment_set and stride_order, in the dtypes that take each path
        of composite_calls.cc (16-bit operands computed in float32, scalars)."""
        DT = fusiond.DataType
        out = []

        def define(name, shapes, body):
            with fusiond.FusionDefinition() as fd:
                body(fd)
            out.append((name, fd, shapes))

        def lerp_bf16(fd):
            a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.BFloat16)
            c = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.BFloat16)
            w = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DT.BFloat16)
            fd.add_output(fd.ops.lerp(a, c, w))

        def lerp_mixed(fd):  # bf16 with float32: the result is float32, no final cast
            a = fd.define_tensor(shape=[16, 64], contiguity=[True, True], dtype=DT.BFloat16)
            c = fd.define_tensor(shape=[16, 64], contiguity=[True, True], dtype=DT.Float)
            fd.add_output(fd.ops.lerp(a, c, fd.define_scalar(dtype=DT.Double)))
            fd.add_output(fd.ops.lerp(c, c, 0.25))

        def addcmul(fd):
            x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Half)
            t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Half)
            t2 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DT.Half)
            fd.add_output(fd.ops.addcmul(x, t1, t2, value=0.5))
            fd.add_output(fd.ops.addcmul(x, t1, t2))  # value defaults to 1
            s = fd.define_scalar(dtype=DT.Double)
            fd.add_output(fd.ops.addcmul(fd.ops.cast(x, DT.Float), t1, t2, s))

        def threshold(fd):
            x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Float)
            fd.add_output(fd.ops.threshold(fd.ops.exp(x), 1.5, 0.0))
            fd.add_output(fd.ops.threshold(x, fd.define_scalar(dtype=DT.Double), -1.0))

        def sets(fd):
            x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.BFloat16)
            y = fd.ops.segment_set(fd.ops.relu(fd.ops.set(fd.ops.cast(x, DT.Float))))
            fd.add_output(fd.ops.cast(fd.ops.set(y), DT.BFloat16))

        def stride_order(fd):
            x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True],
                                 dtype=DT.Float, stride_order=[0, 2, 1])
            y = fd.ops.stride_order(fd.ops.neg(x), stride_order=[2, 0, 1])
            fd.add_output(y, stride_order=[1, 2, 0])
            fd.add_output(fd.ops.sum(y, dims=[1]))

        define("lerp_bf16", [[32, 128], [32, 128], [32, 1]], lerp_bf16)
        define("lerp_mixed", [[16, 64], [16, 64], []], lerp_mixed)
        define("addcmul", [[8, 256], [8, 256], [1, 256], []], addcmul)
        define("threshold", [[64, 96], []], threshold)
        define("set", [[4, 512]], sets)
        define("stride_order", [[4, 8, 16]], stride_order)
        return out

    def test_composite_ops_match_fusionc(self):
        for name, fd, shapes in self.composite_definitions():
            with self.subTest(op=name):
                self.same_as_fusionc(fd, "composite_" + name, shapes)
        # lerp of bf16 tensors: float32 math, one cast back to bf16 at the end.
        graph = wire.to_graph(self.composite_definitions()[0][1])
        from fusiond import fusion_pb2
        casts = [n for n in graph.nodes if n.op == fusion_pb2.OpKind.Value("CAST")]
        self.assertEqual([fusion_pb2.DataType.Name(n.dtype) for n in casts],
                         ["FLOAT32"] * 3 + ["BFLOAT16"], graph)

    def test_composite_ops_compile_through_the_daemon_without_fusionc_parse(self):
        DT = fusiond.DataType
        with fusiond.FusionDefinition() as fd:
            a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.BFloat16,
                                 stride_order=[1, 0])
            c = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.BFloat16)
            w = fd.define_scalar(dtype=DT.Double)
            x = fd.ops.set(fd.ops.lerp(a, c, w))
            y = fd.ops.segment_set(fd.ops.addcmul(x, a, c, value=0.5))
            z = fd.ops.threshold(fd.ops.cast(y, DT.Float), 0.0, 1.0)
            fd.add_output(fd.ops.stride_order(z, [1, 0]), stride_order=[1, 0])
        before = self.daemon.client.stats()
        fusion = self.through_daemon_without_fusionc(fd, [[64, 256], [64, 256], []])
        self.assertEqual(len(fusion.manifest.inputs), 3)
        self.assertGreater(self.daemon.client.stats()["misses"], before["misses"])
        self.same_as_fusionc(fd, "composite_all", [[64, 256], [64, 256], []])
        # nvFuser's printed spellings, recorded by fusiond: the script's own graph.
        from definition_test import COMPOSITES_SCRIPT, definition_only, run_with_fusiond
        path = os.path.join(self.tmp, "composites_script.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(COMPOSITES_SCRIPT)
        pb = os.path.join(self.tmp, "composites_script.pb")
        compiler.run_fusionc(["parse", path, "--out", pb], path)
        fd = run_with_fusiond(definition_only(path))
        with open(pb, "rb") as f:
            self.assertEqual(self.hash_of(wire.to_graph(fd), [[64, 256], [64, 256], []]),
                             self.hash_of(f.read(), [[64, 256], [64, 256], []]))

    def through_daemon_without_fusionc(self, fd, shapes):
        """Compiles fd through the daemon from its Python wire form, failing if
        `fusionc parse` (the fallback) is called; returns the loaded fusion."""
        calls = []
        real = compiler.run_fusionc

        def recording(args, what):
            calls.append(list(args))
            return real(args, what)

        old = os.environ.get("FUSIOND_SERVER")
        os.environ["FUSIOND_SERVER"] = self.daemon.target
        compiler.run_fusionc = recording
        try:
            fusion = compiler.compile_definition(
                fd.definition_text(), [tuple(s) if s else None for s in shapes], True,
                wire_form=fd._wire_form)
            self.assertGreater(len(fusion.manifest.outputs), 0)
        finally:
            compiler.run_fusionc = real
            if old is None:
                del os.environ["FUSIOND_SERVER"]
            else:
                os.environ["FUSIOND_SERVER"] = old
        self.assertEqual(calls, [], "the definition went through `fusionc parse`")
        return fusion

    def math_definitions(self):
        """(name, definition, shapes): each math spelling of math_calls.cc on
        float32, bf16 (computed in float32, one cast back), int and a scalar."""
        from fusiond.definition import MATH_SPELLINGS
        DT = fusiond.DataType
        out = []
        for op in MATH_SPELLINGS:
            with fusiond.FusionDefinition() as fd:
                f = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Float)
                h = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.BFloat16)
                i = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DT.Int)
                s = fd.define_scalar(dtype=DT.Double)
                fn = getattr(fd.ops, op)
                fd.add_output(fn(f))
                fd.add_output(fn(h))
                pred = op.startswith("is_")  # is_neginf / is_posinf: bool results
                both = fd.ops.logical_or if pred else fd.ops.add
                fd.add_output(both(fn(fd.ops.mul(f, 0.5)), fn(i)))
                fd.add_output(fd.ops.where(fn(s), f, 1.0) if pred else fd.ops.mul(f, fn(s)))
            out.append((op, fd, [[8, 64], [8, 64], [8, 1], []]))
        return out

    def test_math_ops_match_fusionc_without_fusionc_parse(self):
        for name, fd, shapes in self.math_definitions():
            with self.subTest(op=name):
                self.through_daemon_without_fusionc(fd, shapes)
                self.same_as_fusionc(fd, "math_" + name, shapes)
        graph = wire.to_graph(self.math_definitions()[0][1])  # silu: bf16 is cast once each way
        from fusiond import fusion_pb2
        casts = [fusion_pb2.DataType.Name(n.dtype) for n in graph.nodes
                 if n.op == fusion_pb2.OpKind.Value("CAST")]
        self.assertEqual(casts, ["FLOAT32", "BFLOAT16", "FLOAT32"], graph)

    def test_triu_tril_match_fusionc_without_fusionc_parse(self):
        DT = fusiond.DataType
        with fusiond.FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True],
                                  dtype=DT.BFloat16)
            t1 = fd.define_tensor(shape=[16, 16], contiguity=[True, True], dtype=DT.Int)
            fd.add_output(fd.ops.triu(t0, diagonal=1))
            fd.add_output(fd.ops.tril(fd.ops.cast(t0, DT.Float), -2))
            fd.add_output(fd.ops.triu(t1))
        shapes = [[2, 16, 32], [16, 16]]
        self.through_daemon_without_fusionc(fd, shapes)
        self.same_as_fusionc(fd, "triangle", shapes)

    def test_legacy_shape_calls_shape_at_and_clamp_match_fusionc(self):
        """nvFuser's pre-2023 reshape / squeeze spellings (original_shape=),
        fd.ops.shape / fd.ops.at and clamp's keywords: sent without fusionc."""
        DT = fusiond.DataType
        with fusiond.FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[4, -1, 1], contiguity=[True, True, None], dtype=DT.Float)
            t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT.Float)
            a = fd.ops.squeeze(t0, original_shape=[4, 32, 1], dims=[2])
            b = fd.ops.reshape(a, original_shape=[4, 32], new_shape=[128])
            c = fd.ops.reshape(b, [128], [2, 64])
            v = fd.ops.shape(t1)
            n = fd.ops.at(v, -1)
            d = fd.ops.broadcast_in_dim(fd.ops.sum(c, dims=[0]), shape=[fd.ops.at(v, 0), 64],
                                        broadcast_dims=[1])
            e = fd.ops.clamp(fd.ops.add(t1, d), min=-1.0, max=fd.ops.cast(n, DT.Float))
            fd.add_output(fd.ops.mul(e, fd.ops.at(t0.shape(), 0)))
            listed = fd.define_vector([t1.size(0), 64], dtype=DT.Int)
            fd.add_output(fd.ops.mul(t1, fd.ops.at(listed, 1)))  # at(listed, 0): refused
            fd.add_output(fd.ops.squeeze(t0, [2], squeeze_expanded=True))
        shapes = [[4, 32, 1], [16, 64]]
        self.through_daemon_without_fusionc(fd, shapes)
        self.same_as_fusionc(fd, "legacy_shapes", shapes)
        with fusiond.FusionDefinition() as fd:  # a wrong original_shape: fusionc's message
            t0 = fd.define_tensor(shape=[4, 8], dtype=DT.Float)
            fd.add_output(fd.ops.reshape(t0, original_shape=[4, 9], new_shape=[32]))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument, r"original_shape"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:  # a symbolic define_vector entry: as fusionc
            t0 = fd.define_tensor(shape=[-1, 8], dtype=DT.Float)
            v = fd.define_vector([t0.size(0), 8], dtype=DT.Int)
            fd.add_output(fd.ops.mul(t0, fd.ops.at(v, 0)))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument, r"symbolic entry"):
            wire.to_graph(fd)

    def test_what_the_wire_form_cannot_express_names_the_op(self):
        DT = fusiond.DataType
        with fusiond.FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[8, 8], dtype=DT.Float)
            fd.add_output(fd.ops.rand_like(fd.ops.sum(t0, dims=[1])))  # reductions are untyped
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                    r"fd\.ops\.rand_like\(T\d+\): .* dtype .*fd\.ops\.uniform"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[8, 8], dtype=DT.Float)
            seed = fd.define_scalar(dtype=DT.Int)
            fd.add_output(fd.ops.add(t0, fd.ops.uniform(0.0, 1.0, t0.shape(), rng_seed=seed)))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                    r"fd\.ops\.uniform has only one of rng_seed, rng_offset"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:
            fd.add_output(fd.define_tensor(shape=[8, 8]), stride_order=[0, 0])
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                    r"stride_order=\[0, 0\]\): not a permutation"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:  # lerp's casts depend on an untyped dtype
            t0 = fd.define_tensor(shape=[8, 8], dtype=DT.Half)
            fd.add_output(fd.ops.lerp(fd.ops.sum(t0, dims=[0], keepdim=True), t0, 0.5))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                    r"fd\.ops\.lerp: .* dtype of Tensor\(T\d+\)"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:  # truncating integer division: fusionc writes it
            t0 = fd.define_tensor(shape=[8], dtype=DT.Int)
            fd.add_output(fd.ops.div(t0, fd.define_scalar(3, dtype=DT.Int)))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                    r"fd\.ops\.div of integer tensors truncates"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:  # written by fusionc's front end only
            t0 = fd.define_tensor(shape=[8], dtype=DT.Float)
            fd.add_output(fd.ops.signbit(t0))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                    r"fd\.ops\.signbit: the Python wire form leaves it to fusionc"):
            wire.to_graph(fd)
        with fusiond.FusionDefinition() as fd:  # an integer tensor over a float: true division
            t0 = fd.define_tensor(shape=[8], dtype=DT.Int)
            fd.add_output(fd.ops.div(t0, 2.0))
        wire.to_graph(fd)

    def test_definition_compiles_through_the_daemon(self):
        with fusiond.FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=fusiond.DataType.BFloat16)
            s = fd.define_scalar(dtype=fusiond.DataType.Double)
            y = fd.ops.mul(fd.ops.cast(x, fusiond.DataType.Float), s)
            fd.add_output(fd.ops.cast(fd.ops.sum(y, dims=[1], keepdim=True), fusiond.DataType.BFloat16))
        old = os.environ.get("FUSIOND_SERVER")
        os.environ["FUSIOND_SERVER"] = self.daemon.target
        try:
            before = self.daemon.client.stats()
            fusion = compiler.compile_definition(fd.definition_text(), [(64, 512), None], True,
                                                 wire_form=fd._wire_form)
            self.assertEqual(len(fusion.manifest.inputs), 2)
            self.assertGreater(self.daemon.client.stats()["misses"], before["misses"])
            with fusiond.FusionDefinition() as bad:
                t0 = bad.define_tensor(shape=[4, 8])
                bad.add_output(bad.ops.add(t0, bad.define_tensor(shape=[5])))
            with self.assertRaisesRegex(compiler.CompileError, "INVALID_ARGUMENT"):
                compiler.compile_definition(bad.definition_text(), [(4, 8), (5,)], False,
                                            wire_form=bad._wire_form)
        finally:
            if old is None:
                del os.environ["FUSIOND_SERVER"]
            else:
                os.environ["FUSIOND_SERVER"] = old


if __name__ == "__main__":
    unittest.main(verbosity=2)
