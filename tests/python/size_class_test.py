"""The Python runtime against the size-class conditions the compiler writes
(docs/manifest.md, "Size classes"; compiler/codegen/manifest.cc): a static
segment's literal symbols and a by-position placement's `sA - sB == 0`.
plan_launch must accept the sizes compiled for and the ones that vary as the
conditions allow, and refuse the rest before anything is allocated. Run as a
script (ctest does); needs no GPU.

    python3 tests/python/size_class_test.py
"""

import json
import os
import sys
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))
if os.environ.get("FUSIOND_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(_SOURCE, "client", "python"))
from fusiond import manifest as mf  # noqa: E402


def _manifest(requires):
    """Two inputs of their own symbols, [s0, s1] and [s2, s3], one pointwise
    kernel with the given conditions (as tests/runtime_e2e/size_class_test.cc
    compiles them)."""
    return {
        "manifest_version": 3, "fusion": "case", "canonical_hash": "0", "arch": "sm_90",
        "symbols": [{"name": "s0", "input": 0, "axis": 0}, {"name": "s1", "input": 0, "axis": 1},
                    {"name": "s2", "input": 1, "axis": 0}, {"name": "s3", "input": 1, "axis": 1}],
        "inputs": [{"name": "T0", "dtype": "float32", "shape": ["s0", "s1"]},
                   {"name": "T1", "dtype": "float32", "shape": ["s2", "s3"]}],
        "outputs": [{"name": "T2", "dtype": "float32", "shape": ["s2", "s3"]}],
        "intermediates": [], "workspaces": [],
        "kernels": [{"name": "k0", "binary": "k0.cubin", "scheduler": "pointwise",
                     "cooperative": False, "block": ["128", "1", "1"],
                     "grid": ["ceil_div(s2 * s3, 128)", "1", "1"], "smem_bytes": "0",
                     "params": [{"kind": "input", "index": 1}, {"kind": "output", "index": 0},
                                {"kind": "size", "symbol": "s2"}, {"kind": "size", "symbol": "s3"}],
                     "requires": requires}],
    }


class SizeClassTest(unittest.TestCase):
    def plan(self, requires, shapes):
        return mf.plan_launch(mf.parse_manifest(json.dumps(_manifest(requires))), shapes)

    def test_static_segment_runs_only_its_sizes(self):
        requires = [{"expr": s, "equals": n} for s, n in (("s0", 64), ("s1", 256), ("s2", 64),
                                                          ("s3", 256))]
        self.plan(requires, [(64, 256), (64, 256)])
        with self.assertRaises(mf.FailedPrecondition) as cm:
            self.plan(requires, [(128, 256), (128, 256)])
        self.assertIn("was compiled for shapes where s0 == 64; these inputs give s0 = 128 "
                      "(s0 is input T0 axis 0)",
                      str(cm.exception))

    def test_placement_by_position_runs_equal_extents(self):
        requires = [{"expr": "s2 - s0", "equals": 0}, {"expr": "s3 - s1", "equals": 0}]
        self.plan(requires, [(64, 256), (64, 256)])
        self.plan(requires, [(128, 256), (128, 256)])  # a new batch size of both
        with self.assertRaises(mf.FailedPrecondition) as cm:
            self.plan(requires, [(4, 4), (64, 256)])
        self.assertIn("where s2 - s0 == 0; these inputs give s2 - s0 = 60 "
                      "(s0 is input T0 axis 0, s2 is input T1 axis 0): compile", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
