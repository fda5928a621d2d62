#!/usr/bin/env python3
"""medians.py on made-up run.sh reports: per-fusion medians of cold and CPU
time over the runs, a fusion that failed in a run left out of its medians,
and the loads listed."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def run_report(path, load, fusions):
    rows = [{"fusion": n, "cold_total_us": c * 1e3, "cold_cpu_us": u * 1e3} for n, c, u in fusions]
    rows.append({"fusion": "broken", "error": "compile: no"})
    with open(path, "w") as f:
        json.dump({"loadavg_1min_at_start": load, "loadavg_1min_at_end": load, "cores": 2,
                   "fusions": rows}, f)


class MediansTest(unittest.TestCase):
    def test_medians_per_fusion(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, (cold, cpu) in enumerate([(140, 120), (300, 130), (150, 125)]):
                paths.append(os.path.join(d, f"r{i}.json"))
                run_report(paths[-1], f"{i}.5", [("rms", cold, cpu), ("soft", 50 + i, 40)])
            out = subprocess.run([sys.executable, os.path.join(HERE, "medians.py")] + paths,
                                 capture_output=True, text=True, check=True).stdout
        rms = next(l for l in out.splitlines() if l.startswith("rms "))
        self.assertEqual(rms.split()[-1], "125.0")  # CPU median
        self.assertEqual(rms.split()[-5], "150.0")  # cold median
        soft = next(l for l in out.splitlines() if l.startswith("soft "))
        self.assertEqual(soft.split()[-5], "51.0")
        self.assertNotIn("broken", out)
        self.assertIn("0.5/0.5, 1.5/1.5, 2.5/2.5 (2 cores)", out)


if __name__ == "__main__":
    unittest.main()
