"""CPU tests of the GPU harness's own logic (bench/gpu/run.py): its checks
(bench/gpu/checks.py on tensors: per element, dtype, NaN never passes,
refused shapes are no pass), and a whole run with --device cpu (no triton,
no kernels of ours) writing its JSON and PNG, failing with --require-ours.
Skipped, saying why, without torch (checks_test.py covers the measure).

    python3 bench/gpu/run_test.py
"""

import glob
import importlib.util
import json
import os
import sys
import tempfile
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_CORPUS = os.environ.get("FUSIOND_CORPUS_DIR",
                         os.path.join(_HERE, "..", "..", "tests", "corpus", "fusions"))

try:
    import torch
    _SKIP = None
except ImportError:
    torch = None
    _SKIP = "torch is not installed"


def _load_run():
    spec = importlib.util.spec_from_file_location("bench_gpu_run", os.path.join(_HERE, "run.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_gpu_run"] = mod
    spec.loader.exec_module(mod)
    return mod


@unittest.skipIf(_SKIP is not None, _SKIP or "")
class HarnessTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.harness = _load_run()

    def test_checks_per_element_and_dtype(self):
        run = self.harness
        ref = torch.tensor([100.0, -2.0, 4.0], dtype=torch.float64)
        bf = torch.tensor([100.0, -2.0, 4.03], dtype=torch.bfloat16)
        f32 = torch.tensor([100.0, -2.0, 4.001], dtype=torch.float32)
        verdicts = run.check_outputs([bf, f32], [ref, ref])
        self.assertTrue(verdicts[0]["pass"])   # bf16: 4.03 rounds to 4.03125, err 0.0078 <= 1e-2
        self.assertFalse(verdicts[1]["pass"])  # fp32: 2.5e-4 > 1e-4
        # Per element: 2% off on a small element fails (max-norm error 4e-4).
        small = torch.tensor([100.0, -2.04, 4.0], dtype=torch.float32)
        self.assertFalse(run.check_outputs([small], [ref])[0]["pass"])
        poisoned = torch.full((3,), float("nan"), dtype=torch.bfloat16)
        self.assertFalse(run.check_outputs([poisoned], [ref])[0]["pass"])
        wrong = run.check_outputs([ref.to(torch.float32)], [ref], ["bfloat16"])[0]
        self.assertFalse(wrong["pass"])
        self.assertIn("expected bfloat16", wrong["why"])
        self.assertFalse(run.check_outputs([f32], [ref, ref])[-1]["pass"])  # an output missing

    def test_refused_shapes_are_not_passes(self):
        run = self.harness
        ok, refused, bad = {"pass": True}, {"pass": None}, {"pass": False}
        self.assertFalse(run.three_shapes_failed([ok, refused]))
        self.assertTrue(run.three_shapes_failed([refused, refused]))
        self.assertTrue(run.three_shapes_failed([ok, bad]))
        rows = [{"fusion": "a", "ours": {"error": "no artifacts at X"}},
                {"fusion": "b", "ours": {"us": 1.0, "pass": True, "check": []}, "three_shapes": [refused]}]
        self.assertEqual(run.failures(rows, require_ours=False), ["b (other shapes)"])
        self.assertEqual(len(run.failures(rows, require_ours=True)), 2)

    def test_float64_reference_matches_the_closed_forms(self):
        """The float64 evaluation of every corpus definition (what run.py
        checks ours against) against bench/gpu/closed_forms.py (numpy,
        written from the math): the strict limits of the output's dtype; the
        same forms on reversed inputs must fail."""
        import numpy as np
        import closed_forms  # beside run.py, on the path it set
        run = self.harness
        small = {2048: 48, 8192: 80, 4096: 24, 16384: 72}
        files = sorted(glob.glob(os.path.join(_CORPUS, "*.py")))
        self.assertEqual({os.path.basename(f)[:-3] for f in files}, set(closed_forms.FORMS))
        for path in files:
            stem = os.path.basename(path)[:-3]
            script = run.frontend.load_script(path)
            inputs = script.make_inputs("cpu", seed=3, size_map=small if script.program.symbolic else None)
            ref = script.program.function("float64")(*inputs)
            eager = script.program.function("native")(*inputs)
            arrays = [run.to_numpy(x) for x in inputs]
            forms = closed_forms.FORMS[stem](*arrays)
            self.assertEqual(len(forms), len(ref), stem)
            for k, (r, f) in enumerate(zip(ref, forms)):
                v = run.checks.check_output(run.to_numpy(r), f, run.dtype_name(eager[k]))
                self.assertTrue(v["pass"], f"{stem} output {k}: {v}")
            reversed_in = [np.ascontiguousarray(a.reshape(-1)[::-1]).reshape(a.shape) for a in arrays]
            other = closed_forms.FORMS[stem](*reversed_in)
            self.assertFalse(all(run.checks.check_output(run.to_numpy(r), f, run.dtype_name(e))["pass"]
                                 for r, f, e in zip(ref, other, eager)), stem)

    def test_rotated_sets_put_two_l2s_between_uses(self):
        run = self.harness
        x, w = torch.randn(4, 8), torch.randn(8)
        for nbytes, want in ((9 << 20, 15), (100 << 20, 3), (300 << 20, 2)):
            sets = run.rotated_sets([x, w, 2.0], nbytes)
            self.assertEqual(len(sets), want, nbytes)
            self.assertGreaterEqual((len(sets) - 1) * nbytes, 2 * run.L2_BYTES)
            self.assertIs(sets[0][0], x)                 # the originals first
            self.assertIsNot(sets[1][0], x)              # then copies
            self.assertTrue(torch.equal(sets[1][0], x))
            self.assertEqual(sets[1][2], 2.0)            # scalars as they are

    def test_size_maps(self):
        run = self.harness
        self.assertEqual(run.parse_size_map("2048:64, 8192:96"), {2048: 64, 8192: 96})
        self.assertEqual(run.parse_size_map(""), {})
        with self.assertRaises(ValueError):
            run.parse_size_map("2048")

    def test_cpu_run_writes_json_and_png(self):
        files = [os.path.join(_CORPUS, f) for f in ("softmax_fwd.py", "rmsnorm_bwd_manual.py")]
        if not all(os.path.exists(f) for f in files):
            self.fail(f"no corpus at {_CORPUS} (set FUSIOND_CORPUS_DIR)")
        out = tempfile.mkdtemp()
        rc = self.harness.main(["--device", "cpu", "--no-compile", "--fusions", *files,
                            "--size-map", "2048:32,8192:64,4096:16,16384:48", "--out", out])
        self.assertEqual(rc, 0)
        reports = glob.glob(os.path.join(out, "gpu-*.json"))
        self.assertEqual(len(reports), 1)
        with open(reports[0]) as f:
            report = json.load(f)
        rows = {r["fusion"]: r for r in report["fusions"]}
        self.assertEqual(set(rows), {"softmax_fwd", "rmsnorm_bwd_manual"})
        r = rows["rmsnorm_bwd_manual"]
        self.assertEqual(r["shapes"][0], [32, 64])
        # Bytes: x, rms, grad_out, weight read; grad_x, grad_weight written.
        self.assertEqual(r["bytes"], 2 * (32 * 64 * 2) + 32 * 4 + 64 * 2 + 32 * 64 * 2 + 64 * 2)
        self.assertTrue(r["eager"]["pass"])
        self.assertIn("no --artifacts", r["ours"]["error"])
        self.assertTrue(glob.glob(os.path.join(out, "gpu-*.png")) or "matplotlib" not in sys.modules)
        # The corpus run requires ours: without artifacts it fails.
        rc = self.harness.main(["--device", "cpu", "--no-compile", "--fusions", files[0], "--require-ours",
                                "--size-map", "2048:32,8192:64", "--out", out])
        self.assertEqual(rc, 1)


class MergeReportsTest(unittest.TestCase):
    """bench/gpu/merge_reports.py: variants.sh's per-variant reports as one
    (plain JSON, no torch)."""

    def test_rows_are_named_by_their_variant(self):
        spec = importlib.util.spec_from_file_location("merge_reports", os.path.join(_HERE, "merge_reports.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for tag, us in (("lbw", 116.0), ("lbw-o", 116.5)):
                paths.append(os.path.join(d, f"gpu-2026-11-30-{tag}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"device": "H200", "fusions": [{"fusion": "layernorm_bwd", "shapes": [
                        [4096, 16384], [16384], "scalar"], "ours": {"us": us}}]}, f)
            report = mod.merge(paths)
        self.assertEqual(report["device"], "H200")
        self.assertEqual([r["variant"] for r in report["fusions"]], ["lbw", "lbw-o"])
        self.assertEqual(report["fusions"][1]["fusion"], "layernorm_bwd 4096x16384 [lbw-o]")
        self.assertEqual(report["fusions"][1]["ours"]["us"], 116.5)
        self.assertEqual(len(report["merged_from"]), 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
