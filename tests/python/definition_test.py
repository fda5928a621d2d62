"""Tests of fusiond.FusionDefinition (the nvFuser-frontend drop-in) that need
no GPU: every corpus definition recorded through it compiles to the same
canonical graph as the original script; errors name the op or carry the
compiler's message. Run as a script (ctest does):

    python3 tests/python/definition_test.py

Needs fusionc (FUSIOND_FUSIONC, else PATH, else a build*/ of this checkout)
for the compiling tests, which are skipped without it; the corpus folder is
FUSIOND_CORPUS_DIR (default tests/corpus/fusions).
"""

import ast
import glob
import json
import os
import re
import sys
import tempfile
import types
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))
if os.environ.get("FUSIOND_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(_SOURCE, "client", "python"))

import fusiond  # noqa: E402
from fusiond import DataType, FusionDefinition, compiler  # noqa: E402

CORPUS = os.environ.get("FUSIOND_CORPUS_DIR", os.path.join(_SOURCE, "tests", "corpus", "fusions"))


def definition_only(path):
    """The script without its torch parts (`import torch`, `inputs = [...]`,
    `fd.execute(inputs)`): what runs here, where torch is missing."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path)
    keep = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import) and [a.name for a in stmt.names] == ["torch"]:
            continue
        if isinstance(stmt, ast.Assign) and getattr(stmt.targets[0], "id", "") == "inputs":
            continue
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and getattr(stmt.value.func, "attr", "") == "execute"):
            continue
        keep.append(stmt)
    return compile(ast.Module(body=keep, type_ignores=[]), path, "exec")


def run_with_fusiond(code):
    """Executes a script whose `from nvfuser import ...` gets fusiond; returns its fd."""
    saved = sys.modules.get("nvfuser")
    sys.modules["nvfuser"] = types.SimpleNamespace(FusionDefinition=FusionDefinition,
                                                   DataType=DataType)
    try:
        ns = {"__name__": "__corpus__"}
        exec(code, ns)  # noqa: S102
    finally:
        if saved is None:
            del sys.modules["nvfuser"]
        else:
            sys.modules["nvfuser"] = saved
    return ns["fd"]


# The composite spellings as nvFuser's printer writes them (stride_order on
# inputs, ops and outputs; set / segment_set copies), with fd.execute's inputs.
COMPOSITES_SCRIPT = """\
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 1])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    S2 = fd.define_scalar(None, dtype=DataType.Double)
    T3 = fd.ops.lerp(T0, T1, S2)
    T4 = fd.ops.set(T3)
    T5 = fd.ops.addcmul(T4, T0, T1, value=0.5)
    T6 = fd.ops.segment_set(T5)
    T7 = fd.ops.cast(T6, dtype=DataType.Float)
    T8 = fd.ops.threshold(T7, 0.0, 1.0)
    T9 = fd.ops.stride_order(T8, stride_order=[0, 1])
    fd.add_output(T9, stride_order=[0, 1])


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn((64, 256), dtype=torch.bfloat16, device='cuda:0').as_strided((64, 256), (1, 64)),
    torch.randn((64, 256), dtype=torch.bfloat16, device='cuda:0'),
    0.3,
]
fd.execute(inputs)
"""


def have_fusionc():
    try:
        compiler.find_fusionc()
        return True
    except fusiond.manifest.FusionError:
        return False


def fusionc_json(path, shapes=None):
    args = ["compile", path, "--json", "--no-codegen", "--no-cache"]
    if shapes:
        args += ["--shapes", shapes]
    return json.loads(compiler.run_fusionc(args, path).stdout)


class RecordingTest(unittest.TestCase):
    def test_version(self):
        self.assertRegex(fusiond.__version__, r"^\d+\.\d+\.\d+")

    def test_text_of_a_definition(self):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, 8], contiguity=[True, True], dtype=DataType.BFloat16)
            s1 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
            t2 = fd.ops.cast(t0, dtype=DataType.Float)
            t3 = fd.ops.maximum(t2, s1)
            var, mean = fd.ops.var_mean(t3, dims=[1], correction=0, keepdim=False)
            v = fd.define_vector([t0.size(0), 1], dtype=DataType.Int)
            fd.add_output(fd.ops.broadcast_in_dim(mean, shape=v, broadcast_dims=[0]) + var * 2.0)
        text = fd.definition_text()
        self.assertIn("fd.define_tensor(shape=[-1, 8], contiguity=[True, True], "
                      "dtype=DataType.BFloat16, is_cpu=False)", text)
        self.assertIn('fd.define_scalar(float("-inf"), dtype=DataType.Double)', text)
        self.assertRegex(text, r"T\d+, T\d+ = fd\.ops\.var_mean\(T\d+, dims=\[1\], correction=0")
        self.assertIn("fd.define_vector([T1.size(0), 1], dtype=DataType.Int)", text)
        self.assertRegex(text, r"fd\.ops\.mul\(T\d+, 2\.0\)")

    def test_cpu_scalar_tensor(self):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
            step = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True,
                                    stride_order=[])
            fd.add_output(fd.ops.mul(t0, fd.ops.sub(1.0, fd.ops.pow(0.9, step))))
        self.assertIn("fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, "
                      "is_cpu=True, stride_order=[])", fd.definition_text())
        self.assertEqual(fd._inputs, ["tensor", "scalar"])
        with FusionDefinition() as fd:
            fd.define_tensor(shape=[-1], dtype=DataType.Float)
            with self.assertRaisesRegex(fusiond.manifest.InvalidArgument,
                                        r"input 1 is a CPU tensor \(is_cpu=True\) of rank 1"):
                fd.define_tensor(shape=[4], dtype=DataType.Float, is_cpu=True)

    def test_composite_spellings_are_recorded(self):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half, stride_order=[0, 1])
            t1 = fd.ops.segment_set(fd.ops.set(t0))
            t2 = fd.ops.threshold(fd.ops.addcmul(t1, t0, t0), 0.0, 1.0)
            fd.add_output(fd.ops.stride_order(fd.ops.lerp(t0, t2, 0.5), [1, 0]),
                          stride_order=[1, 0])
        text = fd.definition_text()
        for line in ("T2 = fd.ops.set(T1)", "T3 = fd.ops.segment_set(T2)",
                     "T4 = fd.ops.addcmul(T3, T1, T1)", "T5 = fd.ops.threshold(T4, 0.0, 1.0)",
                     "T6 = fd.ops.lerp(T1, T5, 0.5)", "T7 = fd.ops.stride_order(T6, [1, 0])",
                     "fd.add_output(T7, stride_order=[1, 0])"):
            self.assertIn(line, text)

    def test_direct_printer_spellings_are_recorded(self):
        """nvFuser's direct-bindings printer's names: element-wise ones give a
        tensor only from a tensor, welford three tensors."""
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
            s0 = fd.define_scalar(dtype=DataType.Double)
            avg, var_sum, n = fd.ops.welford(t0, dims=[1])
            s1 = fd.ops.fmax(s0, 1.0)
            t1 = fd.ops.truediv(fd.ops.where(fd.ops.signbit(t0), fd.ops.frac(t0), t0), s1)
            fd.add_output(fd.ops.add(t1, fd.ops.broadcast_in_dim(avg, t0.shape(), [0])))
            fd.add_output(var_sum)
            fd.add_output(n)
        self.assertIsInstance(s1, fusiond.definition.Scalar)
        text = fd.definition_text()
        for line in ("T3, T4, T5 = fd.ops.welford(T1, dims=[1])", "S6 = fd.ops.fmax(S2, 1.0)",
                     "T7 = fd.ops.signbit(T1)", "T8 = fd.ops.frac(T1)"):
            self.assertIn(line, text)
        if have_fusionc():  # the recorded text is what fusionc reads
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "direct.py")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                self.assertTrue(fusionc_json(path, "8x16;scalar")["canonical_hash"])

    def test_unsupported_op_is_named(self):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[4], dtype=DataType.Float)
            with self.assertRaisesRegex(fusiond.UnsupportedOpError, r"fd\.ops\.matmul is not supported"):
                fd.ops.matmul(t0, t0)
            fd.add_output(fd.ops.rand_like(t0))  # random numbers are supported
            fd.add_output(fd.ops.exp(t0))

    def test_values_of_another_definition_are_refused(self):
        with FusionDefinition() as other:
            t = other.define_tensor(shape=[4])
            other.add_output(t)
        with FusionDefinition() as fd:
            with self.assertRaisesRegex(fusiond.manifest.InvalidArgument, "another FusionDefinition"):
                fd.ops.exp(t)

    def test_complete_definition_is_closed(self):
        with FusionDefinition() as fd:
            fd.add_output(fd.define_tensor(shape=[4]))
        with self.assertRaisesRegex(fusiond.manifest.InvalidArgument, "complete"):
            fd.define_tensor(shape=[4])

    def test_subclass_definition(self):
        class Relu(FusionDefinition):
            def definition(self):
                t0 = self.define_tensor(shape=[-1], dtype=DataType.Float)
                self.add_output(self.ops.relu(t0))

        self.assertIn("fd.ops.relu(T1)", Relu().definition_text())

    def test_supported_ops_match_the_compiler(self):
        """fd.ops offers exactly the ops of compiler/ir/op.cc, plus set/segment_set
        and the spellings the front end lowers (each named in compiler/frontend)."""
        with open(os.path.join(_SOURCE, "compiler", "ir", "op.cc"), encoding="utf-8") as f:
            op_cc = f.read()
        names = set(re.findall(r'\{OpKind::k\w+, "(\w+)", OpCategory', op_cc))
        self.assertTrue(names)
        from fusiond.definition import FRONTEND_SPELLINGS
        self.assertEqual(names | {"set", "segment_set"} | set(FRONTEND_SPELLINGS),
                         set(fusiond.SUPPORTED_OPS))
        frontend = ""
        for path in glob.glob(os.path.join(_SOURCE, "compiler", "frontend", "*.cc")):
            with open(path, encoding="utf-8") as f:
                frontend += f.read()
        for spelling in FRONTEND_SPELLINGS:
            self.assertIn(f'"{spelling}"', frontend, spelling)

    def test_every_op_fusionc_accepts_is_offered(self):
        """The names the C++ front end dispatches on (composite_calls.cc,
        factory_calls.cc: `name == "..."`; math_calls.cc: its kNames table)
        are all fd.ops names: the two op lists cannot drift apart."""
        def read(name):
            with open(os.path.join(_SOURCE, "compiler", "frontend", name), encoding="utf-8") as f:
                return f.read()
        accepted = set()
        for name in ("composite_calls.cc", "factory_calls.cc", "math_calls.cc", "arith_calls.cc"):
            accepted |= set(re.findall(r'name == "(\w+)"', read(name)))
        table = re.search(r"kNames\[\] = \{([^}]*)\}", read("math_calls.cc"))
        self.assertIsNotNone(table, "math_calls.cc's kNames")
        math_names = set(re.findall(r'"(\w+)"', table.group(1)))
        self.assertTrue({"silu", "atanh"} <= math_names, math_names)
        from fusiond.definition import MATH_SPELLINGS
        self.assertEqual(math_names, set(MATH_SPELLINGS))
        self.assertEqual((accepted | math_names) - set(fusiond.SUPPORTED_OPS), set())


@unittest.skipUnless(have_fusionc(), "no fusionc (set FUSIOND_FUSIONC or build the fusionc target)")
class CompilerTest(unittest.TestCase):
    def test_corpus_through_fusiond_matches_the_scripts(self):
        """Every corpus script, run unchanged but for its torch lines against
        fusiond's FusionDefinition, gives the graph the script itself gives
        (same canonical hash, same kernels' schedulers)."""
        files = sorted(glob.glob(os.path.join(CORPUS, "*.py")))
        self.assertGreaterEqual(len(files), 9, CORPUS)
        for path in files:
            with self.subTest(fusion=os.path.basename(path)):
                fd = run_with_fusiond(definition_only(path))
                parsed = compiler.run_fusionc(["parse", path, "--inputs"], path).stdout
                shapes = re.search(r"# input shapes: (.*)", parsed).group(1)
                shapes = ";".join(s.strip("[]").replace(", ", "x") for s in shapes.split("] ["))
                want = fusionc_json(path, shapes)
                with tempfile.TemporaryDirectory() as tmp:
                    ours = os.path.join(tmp, "fusion.py")
                    with open(ours, "w", encoding="utf-8") as f:
                        f.write(fd.definition_text())
                    got = fusionc_json(ours, shapes)
                self.assertEqual(got["canonical_hash"], want["canonical_hash"])
                self.assertEqual([s["scheduler"] for s in got["segments"]],
                                 [s["scheduler"] for s in want["segments"]])

    def test_composite_script_through_fusiond_matches_the_script(self):
        """nvFuser's spellings of lerp, addcmul, threshold, set, segment_set
        and stride_order, recorded by fusiond, give the script's own graph."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "composites.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(COMPOSITES_SCRIPT)
            fd = run_with_fusiond(definition_only(path))
            ours = os.path.join(tmp, "fusion.py")
            with open(ours, "w", encoding="utf-8") as f:
                f.write(fd.definition_text())
            shapes = "64x256;64x256;scalar"
            self.assertEqual(fusionc_json(ours, shapes)["canonical_hash"],
                             fusionc_json(path, shapes)["canonical_hash"])

    def test_compiler_message_reaches_the_caller(self):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[4, 8], dtype=DataType.Float)
            t1 = fd.define_tensor(shape=[5], dtype=DataType.Float)
            fd.add_output(fd.ops.add(t0, t1))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(fd.definition_text())
            with self.assertRaises(compiler.CompileError) as ctx:
                compiler.run_fusionc(["parse", path], "parsing")
        self.assertRegex(str(ctx.exception), r"bad\.py:\d+:\d+: .*expected")


if __name__ == "__main__":
    unittest.main(verbosity=2)
