"""One compile per cluster (issue 35): a real redis-server and three real
fusiond on loopback sharing it. N distinct fusions (default 200) are
requested 10 times each, concurrently, spread over the three daemons:
exactly N NVRTC compiles in total (fusiond_compiles_total of the three),
every request succeeds. Then again with N new fusions and Redis killed
halfway: every request still succeeds; the compiles are printed.

FUSIOND_LEASE_FUSIONS sets N (CTest runs a short version)."""

import concurrent.futures
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "service"))
import daemon as d  # noqa: E402

FUSIONS = int(os.environ.get("FUSIOND_LEASE_FUSIONS", "200"))
REPEATS = 10
SHAPES = [[64, 256]]


def metric_sum(daemons, name):
    return sum(d.metric(x.metrics_text(), name) for x in daemons)


class OneCompilePerClusterTest(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-lease-")
        self.addCleanup(self.tmp.cleanup)
        self.redis = d.Redis(self.tmp.path).start()
        self.addCleanup(self.redis.stop)
        secret = os.path.join(self.tmp.path, "secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex())
        self.daemons = []
        for name in ("a", "b", "c"):
            x = d.Daemon(os.path.join(self.tmp.path, name),
                         ["--redis", self.redis.address, "--redis-secret-file", secret,
                          "--max-queue", "1024"])
            self.addCleanup(x.stop)
            self.daemons.append(x.start())

    def run_requests(self, first_constant, on_half=None):
        """FUSIONS fusions x REPEATS requests, each fusion's requests together
        and spread over the daemons; returns the number of failures."""
        graphs = [d.scaled_graph(first_constant + i / 64.0) for i in range(FUSIONS)]
        jobs = [(f, j) for f in range(FUSIONS) for j in range(REPEATS)]
        done = [0]
        lock = threading.Lock()
        errors = []

        def one(job):
            f, j = job
            daemon = self.daemons[(f + j) % len(self.daemons)]
            try:
                daemon.client.compile(graphs[f], SHAPES)
            except Exception as e:  # counted, reported below
                errors.append(f"fusion {f} on {daemon.target}: {e}")
            with lock:
                done[0] += 1
                if on_half and done[0] == len(jobs) // 2:
                    on_half()

        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(3 * REPEATS) as pool:
            list(pool.map(one, jobs))
        return errors, time.monotonic() - start

    def test_each_new_fusion_compiles_once_in_the_cluster(self):
        errors, seconds = self.run_requests(1000.0)
        compiles = metric_sum(self.daemons, "fusiond_compiles_total")
        waits = metric_sum(self.daemons, "fusiond_lease_waits_total")
        takeovers = metric_sum(self.daemons, "fusiond_lease_takeovers_total")
        acquired = metric_sum(self.daemons, "fusiond_lease_acquired_total")
        print(f"{FUSIONS} fusions x {REPEATS} requests over 3 daemons in {seconds:.1f} s: "
              f"{compiles:.0f} compiles, {acquired:.0f} leases taken, {waits:.0f} lease waits, "
              f"{takeovers:.0f} takeovers, {len(errors)} errors", flush=True)
        self.assertEqual(errors, [])
        self.assertEqual(compiles, FUSIONS)

        # Again with new fusions, Redis killed halfway: every request succeeds.
        before = compiles
        errors, seconds = self.run_requests(5000.0, on_half=self.redis.stop)
        compiles = metric_sum(self.daemons, "fusiond_compiles_total") - before
        print(f"redis killed halfway: {FUSIONS} new fusions x {REPEATS} requests in "
              f"{seconds:.1f} s: {compiles:.0f} compiles, {len(errors)} errors", flush=True)
        self.assertEqual(errors[:5], [])
        self.assertGreaterEqual(compiles, FUSIONS)


if __name__ == "__main__":
    unittest.main()
