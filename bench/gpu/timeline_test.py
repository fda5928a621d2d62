"""CPU tests of bench/gpu/timeline.py's source instrumentation (no GPU).

    python3 bench/gpu/timeline_test.py
"""
import importlib.util
import os
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("timeline", os.path.join(_HERE, "timeline.py"))
timeline = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(timeline)

# The shape of an inner-outer kernel as the generator writes it.
SOURCE = """typedef unsigned long long u64;
__device__ void helper() {
}
extern "C" __global__ void __launch_bounds__(512, 1) k0(const void* __restrict__ in0_, long long s0) {
  const int tx = threadIdx.x;
  for (i64 it = 0; it < iters; ++it) {
    if (fits) {
    }
  }
  if (fits) {
    store();
  }
  fz_grid_sync(bar);
  {
    epilogue();
  }
}
"""


class InstrumentTest(unittest.TestCase):
    def test_default_probes_in_order(self):
        out, n = timeline.instrument(SOURCE, "k0", timeline.DEFAULT_PROBES)
        self.assertEqual(n, len(timeline.DEFAULT_PROBES) + 2)  # start, probes, SM id
        lines = out.split("\n")
        head = next(i for i, l in enumerate(lines) if l.startswith('extern "C"'))
        self.assertTrue(lines[head].endswith("long long s0, u64* fz_tl) {"), lines[head])
        # The block's SM id in the last slot, right after the start stamp.
        self.assertIn("%%smid", lines[head + 2])
        self.assertIn(f"* {n} + {n - 1}] = fz_sm;", lines[head + 2])
        stamps = [i for i, l in enumerate(lines) if "= fz_t;" in l]
        self.assertEqual(len(stamps), n - 1)
        # Each probe i writes slot i and sits right before the line it names.
        follows = [lines[s + 1].strip() for s in stamps]
        self.assertEqual(follows, ["if (threadIdx.x == 0 && threadIdx.y == 0) { unsigned fz_sm; "
                                   "asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(fz_sm)); "
                                   f"fz_tl[((u64)blockIdx.y * gridDim.x + blockIdx.x) * {n} + {n - 1}] = fz_sm; }}",
                                   "for (i64 it = 0; it < iters; ++it) {",
                                   "if (fits) {", "fz_grid_sync(bar);", "{", "}"])
        for i, s in enumerate(stamps):
            self.assertIn(f"* {n} + {i}] = fz_t;", lines[s])
        self.assertEqual(lines[stamps[-1] + 1], "}")  # the kernel's own closing brace
        self.assertEqual(out.count("helper() {\n}"), 1)  # other functions untouched

    def test_missing_probe_is_a_clear_error(self):
        with self.assertRaises(SystemExit) as e:
            timeline.instrument(SOURCE, "k0", [("nowhere", r"no such line")])
        self.assertIn("probe nowhere", str(e.exception))


if __name__ == "__main__":
    unittest.main()
