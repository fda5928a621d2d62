#!/usr/bin/env python3
"""A compile lease is renewed only while this daemon still needs the
compile: a real redis-server and a real fusiond on loopback.

The test plays the other daemon of the cluster: it holds a fusion's lease
in Redis itself, so the daemon's miss of that fusion is parked. When the
test drops the lease (its holder died without a record), the parked miss
takes it over and goes back to the compile pool, whose only thread is busy
(its compile worker stopped with SIGSTOP). While the taken-over miss's
caller waits, the lease stays this daemon's; once the caller cancels, the
lease must be released (within a renewal period), not renewed until the
next miss of that fusion, so another daemon can take the key.

Run by CTest (tests/lease/CMakeLists.txt): lease_release_test.py -v
"""

import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "service"))
import daemon as d  # noqa: E402
from fusiond.client import make_request, service_pb2  # noqa: E402
from key_gate_test import chain_graph, worker_pids  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from records import RawRedis  # noqa: E402

LEASE_MS = 1500  # renewed every 500 ms
WAIT_S = 10
OTHER_OWNER = b"another-daemon#0"


class LeaseReleaseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-lease-release-")
        self.addCleanup(self.tmp.cleanup)
        self.stopped = []
        self.addCleanup(self.resume_workers)

    def resume_workers(self):
        for pid in self.stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.stopped = []

    def cache_key(self, graph):
        """The fusion's cache key, from a daemon without Redis (the key does
        not depend on the shared tier)."""
        probe = d.Daemon(os.path.join(self.tmp.path, "probe"), metrics=False)
        try:
            probe.start()
            return probe.client.compile(graph, timeout=120).response.cache_key
        finally:
            probe.stop()

    def test_lease_released_when_the_taken_over_miss_is_unwanted(self):
        graph, blocker = chain_graph(2, "T0"), chain_graph(4, "T0")
        key = self.cache_key(graph)
        lease_key = b"fusiond:lease:" + key.encode()
        record_key = b"fusiond:kc:" + key.encode()

        redis = d.Redis(self.tmp.path).start()
        self.addCleanup(redis.stop)
        r = RawRedis(redis.port)
        self.addCleanup(r.close)
        # One compile thread, so a taken-over miss waits in the queue.
        daemon = d.Daemon(os.path.join(self.tmp.path, "cache"),
                          ["--redis", redis.address, "--redis-insecure-unsigned", "true",
                           "--redis-lease-ms", str(LEASE_MS), "--compile-threads", "1",
                           "--compile-timeout-s", "0"])
        self.addCleanup(daemon.stop)
        daemon.start()
        stub = daemon.client._stub

        def metric(name):
            return d.metric(daemon.metrics_text(), name)

        def stats():
            return daemon.client.stats(timeout=WAIT_S)

        # Another daemon holds the lease: the miss is parked, off the pool.
        self.assertEqual(r.command("SET", lease_key, OTHER_OWNER, "PX", 120000), b"OK")
        parked = stub.Compile.future(make_request(graph), timeout=120)
        d.wait_until(lambda: metric("fusiond_lease_waits_total") == 1, WAIT_S,
                     "the miss to find the other daemon's lease", interval=0.05)
        d.wait_until(lambda: stats()["in_flight"] == 0, WAIT_S, "the miss to be parked",
                     interval=0.05)
        # The only compile thread busy with another fusion that cannot finish.
        for pid in worker_pids(daemon.proc.pid):
            os.kill(pid, signal.SIGSTOP)
            self.stopped.append(pid)
        self.assertTrue(self.stopped, "the daemon runs compile workers")
        busy = stub.Compile.future(make_request(blocker), timeout=120)
        d.wait_until(lambda: stats()["in_flight"] == 1, WAIT_S, "the blocker to compile",
                     interval=0.05)

        # The holder dies without a record: the parked miss takes the lease
        # over and waits for the compile thread.
        self.assertEqual(r.command("DEL", lease_key), 1)
        d.wait_until(lambda: metric("fusiond_lease_takeovers_total") == 1, WAIT_S,
                     "the parked miss to take the lease over", interval=0.05)
        self.assertEqual(stats()["queue_depth"], 1)
        owner = r.command("GET", lease_key)
        self.assertIsNotNone(owner)
        self.assertNotEqual(owner, OTHER_OWNER)
        # While its caller waits, the lease is renewed: still ours after two
        # lifetimes.
        time.sleep(2 * LEASE_MS / 1000)
        self.assertEqual(r.command("GET", lease_key), owner, "renewed while a caller waits")
        self.assertFalse(parked.done())

        # The caller leaves; nothing compiles the fusion: the lease goes
        # within a renewal period (a third of its lifetime; 4 lifetimes
        # allowed), though the miss still sits in the compile queue.
        parked.cancel()
        start = time.monotonic()
        d.wait_until(lambda: r.command("EXISTS", lease_key) == 0, 4 * LEASE_MS / 1000,
                     "the lease of a miss no caller wants to be released", interval=0.05)
        released_s = time.monotonic() - start
        self.assertFalse(busy.done())

        # The blocker finishes; the queued miss then ends without compiling,
        # and nobody takes the lease again.
        self.resume_workers()
        self.assertEqual(busy.result(timeout=60).cache, service_pb2.MISS)
        d.wait_until(lambda: stats()["in_flight"] == 0 and stats()["queue_depth"] == 0, WAIT_S,
                     "the cancelled miss to leave the queue", interval=0.05)
        self.assertEqual(r.command("EXISTS", lease_key), 0)
        self.assertEqual(r.command("EXISTS", record_key), 0, "the fusion was not compiled")
        self.assertEqual(stats()["compiles"], 1, "the blocker only")

        # Another daemon can take the key now (SET NX succeeds), and this
        # daemon, asked again, compiles and publishes the fusion.
        self.assertEqual(r.command("SET", lease_key, OTHER_OWNER, "NX", "PX", 100), b"OK")
        time.sleep(0.3)
        again = daemon.client.compile(graph, timeout=120)
        self.assertEqual(again.response.cache_key, key)
        self.assertEqual(r.command("EXISTS", record_key), 1)
        d.wait_until(lambda: r.command("EXISTS", lease_key) == 0, WAIT_S,
                     "the lease released after the publish", interval=0.05)
        print(f"lease released {released_s:.2f} s after the caller left", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
