#!/usr/bin/env python3
"""The real fusiond under concurrent first compiles of new fusions split
into several kernels: each fusion sent at once by many clients, half of
them as a renamed copy (same cache key, other request bytes), under a
client deadline far above a compile's time. Every call must be answered
in time, with one compile per fusion; with compile workers (whose kernel
threads share one socket with the daemon) and in process.

Run by CTest (tests/service/CMakeLists.txt sets FUSIOND_BIN and
PYTHONPATH=<build>/python): compile_stress_test.py [TestCase ...]
"""

import concurrent.futures
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402

CLIENTS = 12
FUSIONS = 8
DEADLINE_S = 30


def split_graph(ops, name):
    """float32[64, 256] and float32[1000] inputs (the first named `name`),
    each through `ops` unary ops and out: two iteration domains, so two
    kernels."""
    b = fusiond.GraphBuilder()
    x = b.define_tensor([64, 256], "float32", name=name)
    y = b.define_tensor([1000], "float32", name="T1")
    for _ in range(ops):
        x = b.op("sin", x)
        y = b.op("cos", y)
    b.add_output(x)
    b.add_output(y)
    return b.build()


class StressCase:
    extra_args = ()

    def setUp(self):
        self.tmp = d.TempDir("fusiond-stress-")
        self.daemon = d.Daemon(os.path.join(self.tmp.path, "cache"), self.extra_args)
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(self.daemon.stop)
        self.daemon.start()

    def test_first_compiles_and_renamed_copies_answer_in_time(self):
        for ops in range(1, FUSIONS + 1):
            barrier = threading.Barrier(CLIENTS)

            def call(i, ops=ops, barrier=barrier):
                graph = split_graph(ops, "T0" if i % 2 else f"renamed{i}")
                barrier.wait(timeout=30)
                start = time.monotonic()
                try:
                    r = self.daemon.client.compile(graph, timeout=DEADLINE_S)
                    return time.monotonic() - start, r.response.cache_key, None
                except fusiond.FusionError as e:
                    return time.monotonic() - start, None, e

            with concurrent.futures.ThreadPoolExecutor(max_workers=CLIENTS) as pool:
                results = list(pool.map(call, range(CLIENTS)))
            errors = [(s, e) for s, _, e in results if e is not None]
            self.assertEqual(errors, [], f"{ops} ops; daemon log: {self.daemon.log()}")
            self.assertEqual(len({k for _, k, _ in results}), 1, "one cache key per fusion")
        stats = self.daemon.client.stats()
        self.assertEqual(stats["compiles"], FUSIONS, stats)
        self.assertEqual(stats["hits"] + stats["misses"], FUSIONS * CLIENTS, stats)
        hit = self.daemon.client.compile(split_graph(1, "T0"), timeout=DEADLINE_S)
        self.assertGreaterEqual(len(hit.segments), 2, "the fusions split into kernels")


class WorkersStressTest(StressCase, unittest.TestCase):
    extra_args = ("--compile-threads", "4", "--compile-timeout-s", "20")


class InProcessStressTest(StressCase, unittest.TestCase):
    extra_args = ("--compile-threads", "4", "--compile-workers", "false")


if __name__ == "__main__":
    unittest.main()
