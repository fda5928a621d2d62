"""Tests of bench/gpu/acceptance_check.py on small synthetic reports (no GPU):
the row keys of plain and merged reports, each threshold on either side,
items without a figure, and which definitions are the corpus.

    python3 bench/gpu/acceptance_check_test.py
"""
import importlib.util
import os
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("acceptance_check", os.path.join(_HERE, "acceptance_check.py"))
ic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ic)


def row(fusion, shape, floor, ours, compile_us=None, steady=None, kernels=1, ok=True, file=None):
    r = {"fusion": fusion, "shapes": [[shape[-1]], list(shape)], "floor_us": floor,
         "ours": {"us": ours, "pass": ok, "kernels": [{}] * kernels}, "file": file or fusion + ".py"}
    if steady is not None:
        r["ours"]["steady_us"] = steady
    if compile_us is not None:
        r["compile"] = {"us": compile_us}
    return r


def verdicts(rows, wide=(), names=()):
    return {(item, method): ok for item, method, ok, _ in ic.check(ic.index([{"fusions": rows}]), list(wide), set(names))}


class Issue5CheckTest(unittest.TestCase):
    def test_row_key_of_plain_static_and_merged_rows(self):
        self.assertEqual(ic.row_key(row("rmsnorm_bwd_thunder", (2048, 8192), 1, 1)),
                         ("rmsnorm_bwd_thunder", "2048x8192"))
        self.assertEqual(ic.row_key(row("layernorm_bwd_thunder_4096x16384 4096x16384 [lbw]", (4096, 16384), 1, 1)),
                         ("layernorm_bwd_thunder", "4096x16384"))

    def test_thresholds_on_either_side(self):
        item80 = ("rmsnorm_bwd_thunder 2048x8192: >= 80% of copy, faster than compile, >= 1.5x at 2048x8192",
                  "do_bench")
        # 80% of copy and 1.5x: pass; 79% or 1.49x: fail.
        self.assertTrue(verdicts([row("rmsnorm_bwd_thunder", (2048, 8192), 80, 100, 150)])[item80])
        self.assertFalse(verdicts([row("rmsnorm_bwd_thunder", (2048, 8192), 79, 100, 150)])[item80])
        self.assertFalse(verdicts([row("rmsnorm_bwd_thunder", (2048, 8192), 80, 100, 149)])[item80])
        item85 = ("layernorm_bwd_thunder 4096x16384: >= 85% of copy, faster than compile", "do_bench")
        self.assertTrue(verdicts([row("layernorm_bwd_thunder_4096x16384", (4096, 16384), 85, 100, 101)])[item85])
        self.assertFalse(verdicts([row("layernorm_bwd_thunder_4096x16384", (4096, 16384), 85, 100, 100)])[item85])
        fwd = ("softmax_bwd 4096x16384: >= 85% of copy, not slower than compile", "do_bench")
        self.assertTrue(verdicts([row("softmax_bwd", (4096, 16384), 95, 100, 100)])[fwd])
        self.assertFalse(verdicts([row("softmax_bwd", (4096, 16384), 95, 100, 99)])[fwd])

    def test_missing_figures_and_steady_timing(self):
        v = verdicts([row("rmsnorm_fwd", (2048, 8192), 85, 100, 100)])
        item = ("rmsnorm_fwd 2048x8192: >= 85% of copy, not slower than compile", "steady")
        self.assertIsNone(v[item])  # no steady figure
        self.assertIsNone(v[("batchnorm_bwd_4d 256x64x56x56 >= 70% of copy", "do_bench")])
        r = row("rmsnorm_fwd", (2048, 8192), 85, 120, 100, steady=100)
        r["compile"]["steady_us"] = 100
        self.assertTrue(verdicts([r])[item])

    def test_same_size_copy_note(self):
        r = row("softmax_bwd", (4096, 16384), 95, 100, 99)
        r["copy_same_us"] = 100
        details = {(i, m): d for i, m, _, d in ic.check(ic.index([{"fusions": [r]}]), [], set())}
        self.assertIn("same-size copy 95%",
                      details[("softmax_bwd 4096x16384: >= 85% of copy, not slower than compile", "do_bench")])
        self.assertNotIn("same-size copy",
                         details[("softmax_bwd 4096x16384: >= 85% of copy, not slower than compile", "steady")])

    def test_thunder_and_manual_within_five_percent(self):
        item = ("rmsnorm backward thunder and manual 2048x8192 within 5%", "do_bench")
        self.assertTrue(verdicts([row("rmsnorm_bwd_thunder", (2048, 8192), 1, 100),
                                  row("rmsnorm_bwd_manual", (2048, 8192), 1, 105)])[item])
        self.assertFalse(verdicts([row("rmsnorm_bwd_thunder", (2048, 8192), 1, 100),
                                   row("rmsnorm_bwd_manual", (2048, 8192), 1, 105.1)])[item])

    def test_one_kernel_and_correct(self):
        item = ("every corpus fusion one kernel and correct", "-")
        self.assertTrue(verdicts([row("softmax_fwd", (4096, 16384), 1, 1)], names={"softmax_fwd.py"})[item])
        self.assertFalse(verdicts([row("softmax_fwd", (4096, 16384), 1, 1, kernels=2)])[item])
        self.assertFalse(verdicts([row("softmax_fwd", (4096, 16384), 1, 1, ok=False)])[item])
        # Rows that are not the corpus's own files do not count.
        self.assertTrue(verdicts([row("softmax_fwd", (4096, 16384), 1, 1),
                                  row("mine", (8, 8), 1, 1, kernels=3)], names={"softmax_fwd.py"})[item])
        wide = ("rows of 65536+ one kernel, correct", "-")
        self.assertTrue(verdicts([], wide=[row("softmax_fwd", (512, 65536), 1, 1)])[wide])
        self.assertFalse(verdicts([], wide=[row("softmax_fwd", (512, 65536), 1, 1, kernels=2)])[wide])
        self.assertIsNone(verdicts([])[wide])

    def test_corpus_names_from_a_bundle_or_a_folder(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for n in ("softmax_fwd.py", "bn4d.py", "README.md"):
                open(os.path.join(d, n), "w").close()
            self.assertEqual(ic.corpus_names(d), {"softmax_fwd.py", "bn4d.py"})
            # A bundle's CORPUS file names the corpus among the variants' definitions.
            with open(os.path.join(d, "CORPUS"), "w") as f:
                f.write("softmax_fwd.py\n")
            self.assertEqual(ic.corpus_names(d), {"softmax_fwd.py"})
            self.assertEqual(ic.corpus_names(os.path.join(d, "missing")), set())


if __name__ == "__main__":
    unittest.main()
