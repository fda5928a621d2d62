#!/usr/bin/env python3
"""The key gate of the real fusiond: a request whose cache key another
request is compiling waits for that compile (single flight by key). Such a
waiter must leave when its own caller does (deadline or cancel), freeing its
compile thread, while the compile it waited for goes on and is stored.

The leader's compile is held still by stopping (SIGSTOP) the daemon's
compile worker processes, so no step depends on how long a compile takes.
Run by CTest (tests/service/CMakeLists.txt sets FUSIOND_BIN and
PYTHONPATH=<build>/python): key_gate_test.py [TestCase ...]
"""

import os
import signal
import sys
import time
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402
from fusiond.client import make_request, service_pb2  # noqa: E402

# Generous bounds for a loaded 2-core machine; nothing waits for them when
# the daemon behaves.
WAIT_S = 10


def chain_graph(ops, name):
    """float32[64, 256] named `name` through `ops` sin ops: renaming the
    input gives another request with the same cache key."""
    b = fusiond.GraphBuilder()
    x = b.define_tensor([64, 256], "float32", name=name)
    for _ in range(ops):
        x = b.op("sin", x)
    b.add_output(x)
    return b.build()


def worker_pids(daemon_pid):
    """The daemon's compile worker processes (its children run with
    --compile-worker)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != daemon_pid:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if b"--compile-worker" in f.read():
                    pids.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return pids


class KeyGateCase:
    def setUp(self):
        self.tmp = d.TempDir("fusiond-gate-")
        self.addCleanup(self.tmp.cleanup)
        # Two compile threads: the leader's and the waiter's. No compile time
        # limit: the stopped leader must not be cut.
        self.daemon = d.Daemon(os.path.join(self.tmp.path, "cache"),
                               ["--compile-threads", "2", "--compile-timeout-s", "0"])
        self.addCleanup(self.daemon.stop)
        self.daemon.start()
        self.stub = self.daemon.client._stub
        self.stopped = []
        self.addCleanup(self.resume_workers)

    def stop_workers(self):
        pids = worker_pids(self.daemon.proc.pid)
        self.assertTrue(pids, "the daemon runs compile workers")
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
            self.stopped.append(pid)

    def resume_workers(self):
        for pid in self.stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass  # killed by the daemon (an unwanted job)
        self.stopped = []

    def stats(self):
        return self.daemon.client.stats(timeout=WAIT_S)

    def metric(self, name):
        return d.metric(self.daemon.metrics_text(), name)

    def wait_in_flight(self, n, what):
        d.wait_until(lambda: self.stats()["in_flight"] == n, WAIT_S, what, interval=0.05)

    def finish_leader(self, leader, waiter_graph, compiles_before=0):
        """Resumes the workers: the leader's compile completes as a miss and
        is stored; the waiter's request is then a hit on the same key, and
        the fusion was compiled once."""
        self.resume_workers()
        reply = leader.result(timeout=60)
        self.assertEqual(reply.cache, service_pb2.MISS)
        self.assertTrue(reply.result.segments, "the leader got its kernels")
        hit = self.daemon.client.compile(waiter_graph, timeout=60)
        self.assertEqual(hit.cache, "hit")
        self.assertEqual(hit.response.cache_key, reply.cache_key)
        stats = self.stats()
        self.assertEqual(stats["compiles"], compiles_before + 1, stats)
        # The leader's task counts as running until just after its reply.
        self.wait_in_flight(0, "the leader's compile task to end")


class KnownKeyDeadlineTest(KeyGateCase, unittest.TestCase):
    """Both requests' keys are known (a Lookup resolved them), so the waiter
    waits on a compile thread of the daemon; it has a 3 s deadline."""

    def test_waiter_leaves_at_its_deadline(self):
        leader_graph, waiter_graph = chain_graph(3, "T0"), chain_graph(3, "renamed")
        self.assertIsNone(self.daemon.client.lookup(leader_graph))
        self.assertIsNone(self.daemon.client.lookup(waiter_graph))
        self.stop_workers()
        leader = self.stub.Compile.future(make_request(leader_graph), timeout=120)
        self.wait_in_flight(1, "the leader's compile to start")
        deadline_s = 3.0
        start = time.monotonic()
        waiter = self.stub.Compile.future(make_request(waiter_graph), timeout=deadline_s)
        self.wait_in_flight(2, "the waiter to wait for the leader's compile")
        self.assertLess(time.monotonic() - start, deadline_s,
                        "the waiter reached the key gate only after its deadline; "
                        "the machine is too loaded for this test")
        with self.assertRaises(grpc.RpcError) as e:
            waiter.result(timeout=WAIT_S + deadline_s)
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        # Its compile thread is free again while the leader still compiles.
        self.wait_in_flight(1, "the waiter to leave the key gate after its deadline")
        self.assertFalse(leader.done(), "the leader's compile goes on")
        self.assertEqual(self.stats()["compiles"], 0)
        self.finish_leader(leader, waiter_graph)


class NewRequestCancelTest(KeyGateCase, unittest.TestCase):
    """Neither request was seen before: each one's front half runs in a
    worker and puts the key it found to the gate (which answers the worker);
    the waiter's caller cancels."""

    def leader_and_waiter_at_gate(self, ops):
        """The leader compiling a fusion of `ops` ops and the waiter (a renamed
        copy) at the gate, the workers stopped; None when the leader finished
        before the waiter reached the gate (then try a larger fusion)."""
        leader_graph, waiter_graph = chain_graph(ops, "T0"), chain_graph(ops, f"renamed{ops}")
        resolutions = "fusiond_key_resolutions_total"
        before = self.metric(resolutions)
        leader = self.stub.Compile.future(make_request(leader_graph), timeout=120)
        d.wait_until(lambda: self.metric(resolutions) == before + 1, WAIT_S,
                     "the leader's key at the gate", interval=0.02)
        waiter = self.stub.Compile.future(make_request(waiter_graph), timeout=120)
        d.wait_until(lambda: self.metric(resolutions) == before + 2, WAIT_S,
                     "the waiter's key at the gate", interval=0.02)
        self.stop_workers()
        if not leader.done():
            return leader, waiter, waiter_graph
        self.resume_workers()
        waiter.result(timeout=120)
        return None

    def test_cancelled_waiter_leaves_the_gate(self):
        # sin chains: NVRTC takes a second or more for 8 (far more than a
        # front half), several for 24.
        for ops in (8, 24):
            compiles_before = self.stats()["compiles"]
            started = self.leader_and_waiter_at_gate(ops)
            if started:
                break
        else:
            self.fail("the leader always compiled before the waiter reached the gate")
        leader, waiter, waiter_graph = started
        self.wait_in_flight(2, "the leader compiling and the waiter at the gate")
        waiter.cancel()
        with self.assertRaises(grpc.FutureCancelledError):
            waiter.result(timeout=WAIT_S)
        self.wait_in_flight(1, "the cancelled waiter to leave the key gate")
        self.assertFalse(leader.done(), "the leader's compile goes on")
        self.assertEqual(self.stats()["compiles"], compiles_before)
        self.finish_leader(leader, waiter_graph, compiles_before)


if __name__ == "__main__":
    unittest.main()
