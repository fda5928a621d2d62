#!/usr/bin/env python3
"""option_compare.py on made-up run.py reports: a loss over the limit, a
failed check and a missing fusion fail; the best round of each side counts."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def report(path, fusions):
    rows = []
    for name, ours in fusions.items():
        rows.append({"fusion": name, "ours": ours})
    with open(path, "w") as f:
        json.dump({"fusions": rows}, f)
    return path


def ok(us, steady):
    return {"pass": True, "us": us + 5, "prealloc_us": us, "steady_us": steady}


class OptionCompareTest(unittest.TestCase):
    def run_compare(self, base, option, *flags):
        with tempfile.TemporaryDirectory() as d:
            b = [report(os.path.join(d, f"b{i}.json"), r) for i, r in enumerate(base)]
            o = [report(os.path.join(d, f"o{i}.json"), r) for i, r in enumerate(option)]
            p = subprocess.run([sys.executable, os.path.join(HERE, "option_compare.py"), *flags,
                                "--base", *b, "--option", *o], capture_output=True, text=True)
            return p.returncode, p.stdout

    def test_within_the_limit_passes(self):
        rc, out = self.run_compare([{"a": ok(100, 80)}], [{"a": ok(100.5, 80.2)}])
        self.assertEqual(rc, 0, out)
        self.assertIn("option check: PASS", out)

    def test_a_loss_over_the_limit_fails_either_timing(self):
        rc, out = self.run_compare([{"a": ok(100, 80)}], [{"a": ok(101.5, 80)}])
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL a: do_bench +1.50%", out)
        rc, out = self.run_compare([{"a": ok(100, 80)}], [{"a": ok(100, 81)}])
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL a: steady", out)
        rc, out = self.run_compare([{"a": ok(100, 80)}], [{"a": ok(101.5, 80)}], "--loss-pct", "2")
        self.assertEqual(rc, 0, out)

    def test_best_round_of_each_side(self):
        # A disturbed option round (110) does not count against a clean one.
        rc, out = self.run_compare([{"a": ok(100, 80)}, {"a": ok(104, 81)}],
                                   [{"a": ok(110, 90)}, {"a": ok(100.2, 80.1)}])
        self.assertEqual(rc, 0, out)

    def test_failed_check_and_missing_fusion_fail(self):
        rc, out = self.run_compare([{"a": ok(100, 80), "b": ok(50, 40)}],
                                   [{"a": {"pass": False, "us": 90}}])
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL a: option kernels: check failed", out)
        self.assertIn("FAIL b: no option timing", out)
        rc, out = self.run_compare([{"a": ok(100, 80)}], [{"a": {"error": "launch failed"}}])
        self.assertEqual(rc, 1, out)
        self.assertIn("launch failed", out)

    def test_unreadable_reports_fail(self):
        rc, out = self.run_compare([{"a": ok(100, 80)}], [{"a": ok(100, 80)}])
        self.assertEqual(rc, 0, out)
        p = subprocess.run([sys.executable, os.path.join(HERE, "option_compare.py"), "--base",
                            "/nonexistent/gpu-base.json", "--option", "/nonexistent/gpu-option.json"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("cannot read the report /nonexistent/gpu-base.json", p.stdout)
        self.assertIn("option check: FAIL", p.stdout)


if __name__ == "__main__":
    unittest.main()
