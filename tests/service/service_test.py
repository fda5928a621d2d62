#!/usr/bin/env python3
"""Integration tests of the real fusiond: cache hits and misses across
restarts, 1,000 entries after a restart, single flight, corrupt records,
limits, and a real Prometheus scraping the daemon's metrics.

Run by CTest (tests/service/CMakeLists.txt sets FUSIOND_BIN,
FUSIOND_CACHE_TOOL, PROMETHEUS_BIN and PYTHONPATH=<build>/python):
    service_test.py [TestCase[.test_name] ...]
"""

import concurrent.futures
import os
import signal
import sys
import threading
import time
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402

SHAPES = [[64, 256]]
ENTRIES = int(os.environ.get("FUSIOND_TEST_ENTRIES", "1000"))


class DaemonTestCase(unittest.TestCase):
    extra_args = ()

    def setUp(self):
        self.tmp = d.TempDir("fusiond-test-")
        self.cache_dir = os.path.join(self.tmp.path, "cache")
        self.daemon = d.Daemon(self.cache_dir, self.extra_args)
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(self.daemon.stop)
        self.daemon.start()

    @property
    def client(self):
        return self.daemon.client


class HitMissTest(DaemonTestCase):
    def test_second_request_hits_and_survives_restart_and_kill9(self):
        g = d.scaled_graph(1.5)
        first = self.client.compile(g, SHAPES, source=True, report=True)
        self.assertEqual(first.cache, "miss")
        self.assertGreaterEqual(len(first.segments), 1)
        self.assertGreater(len(first.segment_graph(0).nodes), 0)
        self.assertTrue(first.compiled.manifest_json)
        self.assertTrue(all(k.binary for k in first.kernels), "cubins (or PTX) for every kernel")
        report = first.report()
        self.assertEqual(report["cache"], "miss")
        self.assertIn("segments", report)
        second = self.client.compile(g, SHAPES, source=True, report=True)
        self.assertEqual(second.cache, "hit")
        self.assertEqual(second.compiled, first.compiled)
        self.assertEqual(self.client.stats()["compiles"], 1)
        # Without source and report (the default): the same kernels and
        # manifests, fewer bytes, on the parsed and on the raw hit path.
        for _ in range(2):
            lean = self.client.compile(g, SHAPES)
            self.assertEqual(lean.cache, "hit")
            self.assertEqual([k.binary for k in lean.kernels], [k.binary for k in first.kernels])
            self.assertEqual(lean.compiled.manifest_json, first.compiled.manifest_json)
            self.assertEqual(lean.manifests(), first.manifests())
            self.assertTrue(all(not k.cuda_source for k in lean.kernels))
            self.assertEqual(lean.compiled.report_json, "")
            with self.assertRaises(ValueError):
                lean.report()
        print(f"hit reply: {second.response.ByteSize()} bytes with source and report, "
              f"{lean.response.ByteSize()} without", flush=True)
        self.assertLess(lean.response.ByteSize(), second.response.ByteSize())

        self.assertEqual(self.daemon.restart().stop(), 0, "SIGTERM must exit cleanly")
        self.daemon.start()
        third = self.client.compile(g, SHAPES, source=True, report=True)
        self.assertEqual(third.cache, "hit")
        self.assertEqual(third.compiled, first.compiled)
        stats = self.client.stats()
        self.assertEqual((stats["compiles"], stats["hits"], stats["misses"]), (0, 1, 0))

        # A record written before a kill -9 is still there afterwards.
        g2 = d.scaled_graph(2.5)
        self.assertEqual(self.client.compile(g2, SHAPES).cache, "miss")
        self.daemon.kill9()
        self.daemon.start()
        self.assertEqual(self.client.compile(g2, SHAPES).cache, "hit")
        self.assertEqual(self.client.compile(g, SHAPES).cache, "hit")
        self.assertEqual(self.client.stats()["compiles"], 0)

    def test_symbolic_shapes_share_an_entry_or_the_kernel(self):
        b = fusiond.GraphBuilder()
        x = b.define_tensor([-1, -1, -1], "float32")
        b.add_output(b.op("mul", x, b.define_constant(3.0)))
        g = b.build()
        first = self.client.compile(g, [[4, 32, 256]])
        # Same [outer, inner] = [128, 256] iteration space: the same parameters.
        same = self.client.compile(g, [[8, 16, 256]])
        other = self.client.compile(g, [[16, 16, 256]])
        self.assertEqual((first.cache, same.cache, other.cache), ("miss", "hit", "miss"))
        self.assertEqual(same.response.cache_key, first.response.cache_key)
        self.assertEqual([k.binary for k in same.kernels], [k.binary for k in first.kernels])
        self.assertNotEqual(other.response.cache_key, first.response.cache_key)
        self.assertEqual(self.client.stats()["compiles"], 2)
        # The other entry's kernel has the same text (sizes are arguments):
        # its compile took NVRTC's output from the first one.
        if first.kernels[0].binary:
            self.assertEqual([k.binary for k in other.kernels], [k.binary for k in first.kernels])
            self.assertEqual(d.metric(self.daemon.metrics_text(), "fusiond_nvrtc_reuses_total"), 1)
            self.assertEqual(self.client.stats()["nvrtc_reuses"], 1)
            # After a restart the kernel is found in the stored records.
            self.daemon.restart()
            fourth = self.client.compile(g, [[32, 16, 256]])
            self.assertEqual(fourth.cache, "miss")
            self.assertEqual([k.binary for k in fourth.kernels], [k.binary for k in first.kernels])
            self.assertEqual(d.metric(self.daemon.metrics_text(), "fusiond_nvrtc_reuses_total"), 1)

    def test_persistent_kernels_are_for_their_shapes_unless_general(self):
        # Row sums of a symbolic [M, N]: a kernel that keeps the row on chip,
        # specialized to the sizes compiled for: its manifest says which rows
        # it runs (requires: N = 1024), and [8, 1024] and [16, 512] (the same [outer,
        # inner]) are entries of their own. --general: no requires, another
        # entry.
        b = fusiond.GraphBuilder()
        x = b.define_tensor([-1, -1], "float32")
        b.add_output(b.op("sum", x, dims=[1]))
        g = b.build()
        spec = self.client.compile(g, [[8, 1024]])
        same_space = self.client.compile(g, [[16, 512]])
        general = self.client.compile(g, [[8, 1024]], general_kernels=True)
        self.assertEqual((spec.cache, same_space.cache, general.cache), ("miss", "miss", "miss"))
        self.assertEqual(len({spec.response.cache_key, same_space.response.cache_key,
                              general.response.cache_key}), 3)
        [k] = spec.manifests()
        self.assertIn({"expr": "s1", "equals": 1024}, k.get("requires", []), k)
        [gk] = general.manifests()
        self.assertNotIn("requires", gk)
        self.assertEqual(self.client.compile(g, [[8, 1024]], general_kernels=True).cache, "hit")

    def test_lookup_never_compiles(self):
        g = d.scaled_graph(3.25)
        self.assertIsNone(self.client.lookup(g, SHAPES))
        self.assertEqual(self.client.stats()["compiles"], 0)
        self.client.compile(g, SHAPES)
        found = self.client.lookup(g, SHAPES)
        self.assertIsNotNone(found)
        self.assertEqual(found.cache, "hit")

    def test_bad_graph_is_invalid_argument(self):
        with self.assertRaises(fusiond.FusionError) as e:
            self.client.compile(d.invalid_graph())
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(self.client.stats()["entries"], 0)

    def test_health_and_reflection(self):
        self.assertEqual(self.client.health(), "SERVING")
        channel = grpc.insecure_channel(self.daemon.target)
        try:
            info = channel.stream_stream(
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                request_serializer=lambda b: b, response_deserializer=lambda b: b)
            # ServerReflectionRequest{list_services: ""} (field 7, a string).
            replies = list(info(iter([b"\x3a\x00"]), timeout=10))
        finally:
            channel.close()
        self.assertEqual(len(replies), 1)
        self.assertIn(b"fusiond.v1.FusionCompiler", replies[0])
        self.assertIn(b"grpc.health.v1.Health", replies[0])


class ThousandEntriesTest(DaemonTestCase):
    def test_all_entries_served_after_restart_without_recompiles(self):
        requests = [fusiond.make_request(d.scaled_graph(1000.0 + i), SHAPES)
                    for i in range(ENTRIES)]
        warmed = {}
        for index, result in self.client.compile_stream(requests, timeout=900):
            self.assertIsInstance(result, fusiond.CompileResult, f"request {index}: {result}")
            self.assertEqual(result.cache, "miss")
            warmed[index] = result.response.cache_key
        self.assertEqual(len(warmed), ENTRIES)
        self.assertEqual(len(set(warmed.values())), ENTRIES, "distinct fusions, distinct keys")
        stats = self.client.stats()
        self.assertEqual((stats["compiles"], stats["entries"]), (ENTRIES, ENTRIES))

        self.daemon.restart()
        for index, result in self.client.compile_stream(requests, timeout=300):
            self.assertIsInstance(result, fusiond.CompileResult, f"request {index}: {result}")
            self.assertEqual(result.cache, "hit", f"request {index}")
            self.assertEqual(result.response.cache_key, warmed[index])
        # The unary path too, for a sample.
        for i in range(0, ENTRIES, max(1, ENTRIES // 50)):
            self.assertEqual(self.client.compile_request(requests[i]).cache, "hit")
        stats = self.client.stats()
        self.assertEqual(stats["compiles"], 0)
        self.assertEqual(stats["misses"], 0)
        self.assertGreaterEqual(stats["hits"], ENTRIES)


class SingleFlightTest(DaemonTestCase):
    def test_64_concurrent_identical_requests_compile_once(self):
        g = d.scaled_graph(42.0)
        barrier = threading.Barrier(64)

        def call(_):
            barrier.wait(timeout=30)
            return self.client.compile(g, SHAPES)

        with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
            results = list(pool.map(call, range(64)))
        keys = {r.response.cache_key for r in results}
        self.assertEqual(len(keys), 1)
        stats = self.client.stats()
        self.assertEqual(stats["compiles"], 1, stats)
        self.assertEqual(stats["hits"] + stats["misses"], 64)
        self.assertEqual(stats["rejected"], 0)
        for r in results[1:]:
            self.assertEqual(r.compiled, results[0].compiled, "every caller gets the same artifacts")


class CorruptRecordTest(DaemonTestCase):
    def test_corrupt_record_is_recompiled_once_and_counted(self):
        g = d.scaled_graph(-7.0)
        good = self.client.compile(g, SHAPES)
        self.assertEqual(good.cache, "miss")
        key = good.response.cache_key
        self.daemon.stop()
        out = d.cache_tool(self.cache_dir, "corrupt", key)
        self.assertEqual(out.returncode, 0, out.stderr + out.stdout)
        self.assertIn("corrupted 1 record", out.stdout)
        self.daemon.start()

        again = self.client.compile(g, SHAPES)
        self.assertEqual(again.cache, "miss")
        self.assertEqual(again.compiled.canonical_hash, good.compiled.canonical_hash)
        self.assertEqual([k.binary for k in again.kernels], [k.binary for k in good.kernels])
        self.assertEqual([s.params for s in again.segments], [s.params for s in good.segments])
        stats = self.client.stats()
        self.assertEqual((stats["corrupt_records"], stats["compiles"]), (1, 1), stats)
        self.assertEqual(self.client.compile(g, SHAPES).cache, "hit")
        self.assertEqual(self.client.stats()["corrupt_records"], 1)
        self.assertIn("fusiond_cache_corrupt_records_total 1", self.daemon.metrics_text())


class LimitsTest(DaemonTestCase):
    extra_args = ("--compile-threads", "1", "--max-queue", "1")

    def test_full_queue_is_resource_exhausted(self):
        graphs = [d.scaled_graph(500.0 + i) for i in range(6)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
            futures = [pool.submit(self.client.compile, g, SHAPES) for g in graphs]
            codes = []
            for f in futures:
                try:
                    f.result()
                    codes.append(grpc.StatusCode.OK)
                except fusiond.FusionError as e:
                    codes.append(e.code)
        self.assertIn(grpc.StatusCode.RESOURCE_EXHAUSTED, codes, codes)
        self.assertIn(grpc.StatusCode.OK, codes, codes)
        self.assertEqual(self.client.stats()["rejected"], codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED))

    def test_deadline_is_honoured_and_the_compile_still_lands(self):
        g = d.scaled_graph(0.125)
        with self.assertRaises(fusiond.FusionError) as e:
            self.client.compile(g, SHAPES, timeout=0.001)
        self.assertEqual(e.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        d.wait_until(lambda: self.client.lookup(g, SHAPES) is not None or
                     self.client.stats()["compiles"] == 0 and self.client.stats()["in_flight"] == 0
                     and self.client.stats()["queue_depth"] == 0, 60, "the compile to settle")
        self.assertEqual(self.client.compile(g, SHAPES, report=True).report()["cache"]
                         in ("hit", "miss"), True)

    def test_too_many_nodes_is_resource_exhausted(self):
        self.daemon.stop()
        self.daemon.extra_args = ["--max-graph-nodes", "3"]
        self.daemon.start()
        b = fusiond.GraphBuilder()
        x = b.define_tensor([4, 4])
        for _ in range(5):
            x = b.op("neg", x)
        b.add_output(x)
        with self.assertRaises(fusiond.FusionError) as e:
            self.client.compile(b.build())
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)


class EvictionTest(DaemonTestCase):
    extra_args = ("--cache-max-bytes", "60000")

    def test_size_cap_evicts_least_recently_used(self):
        graphs = [d.scaled_graph(700.0 + i) for i in range(8)]
        self.client.compile(graphs[0], SHAPES)
        for g in graphs[1:]:
            self.client.compile(g, SHAPES)
            # graphs[0] stays the most recently used: touch it after each insert.
            self.assertEqual(self.client.compile(graphs[0], SHAPES).cache, "hit")
        stats = self.client.stats()
        self.assertGreater(stats["evictions"], 0, stats)
        self.assertLessEqual(stats["bytes"], 60000, stats)
        self.assertEqual(stats["entries"], 8 - stats["evictions"], stats)
        self.assertIsNotNone(self.client.lookup(graphs[0], SHAPES), "the hot entry survives")
        self.assertIsNotNone(self.client.lookup(graphs[7], SHAPES), "the newest entry survives")
        self.assertIsNone(self.client.lookup(graphs[1], SHAPES), "the coldest entry went first")
        # The cap holds across a restart, and what is left is still served.
        self.daemon.restart()
        self.assertEqual(self.client.compile(graphs[7], SHAPES).cache, "hit")
        self.assertLessEqual(self.client.stats()["bytes"], 60000)


def chain_graph(ops, constant=2.0):
    """sin/cos alternating `ops` deep over float32[64, 256], times `constant`:
    a few hundred ops keep NVRTC busy for many seconds."""
    b = fusiond.GraphBuilder()
    x = b.define_tensor([64, 256], "float32", name="T0")
    for i in range(ops):
        x = b.op("cos" if i % 2 else "sin", x)
    b.add_output(b.op("mul", x, b.define_constant(constant, "float64")))
    return b.build()


class RobustnessTest(DaemonTestCase):
    """Compile limits, cancellation, malformed RPCs and long strings."""
    # 5 s: ten times a normal compile on a loaded 2-core machine; chain_graph(450) takes minutes.
    extra_args = ("--compile-timeout-s", "5", "--compile-threads", "2")

    def test_slow_compile_is_cut_at_its_limit_while_hits_are_served(self):
        hot = d.scaled_graph(4.5)
        self.client.compile(hot, SHAPES)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            slow = pool.submit(self.client.compile, chain_graph(450))
            d.wait_until(lambda: self.client.stats()["in_flight"] == 1, 10, "the slow compile")
            start = time.monotonic()
            self.assertEqual(self.client.compile(hot, SHAPES).cache, "hit")
            self.assertLess(time.monotonic() - start, 1.0)  # not queued behind the slow one
            with self.assertRaises(fusiond.FusionError) as e:
                slow.result(timeout=30)
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("--compile-timeout-s", e.exception.details)
        text = self.daemon.metrics_text()
        self.assertEqual(d.metric(text, "fusiond_compile_timeouts_total"), 1)
        self.assertEqual(self.client.compile(d.scaled_graph(4.75), SHAPES).cache, "miss")

    def test_a_compile_nobody_waits_for_is_stopped(self):
        with self.assertRaises(fusiond.FusionError) as e:
            self.client.compile(chain_graph(450, 3.0), timeout=0.5)
        self.assertEqual(e.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        d.wait_until(lambda: d.metric(self.daemon.metrics_text(),
                                      "fusiond_compiles_cancelled_total") == 1,
                     5, "the worker to be stopped")
        self.assertEqual(self.client.stats()["in_flight"], 0)

    def test_garbage_to_every_rpc_is_invalid_argument_with_a_message(self):
        channel = grpc.insecure_channel(self.daemon.target)
        self.addCleanup(channel.close)
        raw = dict(request_serializer=lambda b: b, response_deserializer=lambda b: b)
        for method in ("Compile", "Lookup", "Stats"):
            call = channel.unary_unary(f"/fusiond.v1.FusionCompiler/{method}", **raw)
            with self.assertRaises(grpc.RpcError) as e:
                call(b"\xff\xff\xff\xff", timeout=10)
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, method)
            self.assertIn("not a fusiond.v1.", e.exception.details())
        stream = channel.unary_stream("/fusiond.v1.FusionCompiler/CompileStream", **raw)
        with self.assertRaises(grpc.RpcError) as e:
            list(stream(b"\xff\xff\xff\xff", timeout=10))
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("CompileStreamRequest", e.exception.details())

    def test_huge_strings_are_not_echoed(self):
        with self.assertRaises(fusiond.FusionError) as e:
            self.client.compile(d.scaled_graph(9.5), SHAPES, arch="x" * (1 << 20))
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT, e.exception.details)
        self.assertLess(len(e.exception.details), 1100)
        g = d.scaled_graph(9.75)
        g.inputs[0].name = "n" * (1 << 20)
        with self.assertRaises(fusiond.FusionError) as e:
            self.client.compile(g, SHAPES)
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("names are at most", e.exception.details)


class DrainTest(DaemonTestCase):
    """SIGTERM: NOT_SERVING, new work refused, a running compile cancelled
    at the grace, idle clients ignored, exit 0."""
    extra_args = ("--shutdown-grace-s", "2", "--compile-timeout-s", "0")

    def test_sigterm_with_a_running_compile_and_idle_clients(self):
        idle = [fusiond.FusionClient(self.daemon.target) for _ in range(3)]
        for c in idle:
            self.assertEqual(c.health(), "SERVING")
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            slow = pool.submit(self.client.compile, chain_graph(450, 5.0))
            d.wait_until(lambda: self.client.stats()["in_flight"] == 1, 10, "the slow compile")
            start = time.monotonic()
            self.daemon.proc.send_signal(signal.SIGTERM)
            d.wait_until(lambda: idle[0].health(timeout=1) == "NOT_SERVING", 1.5,
                         "health to say NOT_SERVING")
            with self.assertRaises(fusiond.FusionError) as e:
                idle[1].compile(d.scaled_graph(6.5), SHAPES, timeout=5)
            self.assertEqual(e.exception.code, grpc.StatusCode.UNAVAILABLE)
            code = self.daemon.proc.wait(timeout=10)
            elapsed = time.monotonic() - start
            with self.assertRaises(fusiond.FusionError) as e:
                slow.result(timeout=10)
        self.assertIn(e.exception.code, (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED))
        self.assertEqual(code, 0)
        self.assertLess(elapsed, 2 + 1.5, "exit within the grace")
        for c in idle:
            c.close()

    def test_sigterm_when_idle_exits_at_once(self):
        idle = fusiond.FusionClient(self.daemon.target)
        self.assertEqual(idle.health(), "SERVING")
        start = time.monotonic()
        self.daemon.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.daemon.proc.wait(timeout=10), 0)
        self.assertLess(time.monotonic() - start, 1.5)
        idle.close()


class SharedTierTest(unittest.TestCase):
    """Two daemons with separate caches sharing one real Redis: what one
    compiles, the other serves without compiling."""

    def test_second_daemon_serves_the_first_daemons_compile(self):
        tmp = d.TempDir("fusiond-shared-")
        self.addCleanup(tmp.cleanup)
        redis = d.Redis(tmp.path).start()
        self.addCleanup(redis.stop)
        secret = os.path.join(tmp.path, "cluster-secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex())
        tier = ["--redis", redis.address, "--redis-secret-file", secret]
        a = d.Daemon(os.path.join(tmp.path, "a"), tier)
        b = d.Daemon(os.path.join(tmp.path, "b"), tier)
        for daemon in (a, b):
            self.addCleanup(daemon.stop)
            daemon.start()
        g = d.scaled_graph(4.25)
        first = a.client.compile(g, SHAPES)
        self.assertEqual(first.cache, "miss")
        self.assertEqual(d.metric(a.metrics_text(), "fusiond_shared_tier_puts_total"), 1)

        second = b.client.compile(g, SHAPES)
        self.assertEqual(second.cache, "hit", "served from the shared tier, not compiled")
        self.assertEqual(second.compiled, first.compiled)
        self.assertEqual(b.client.stats()["compiles"], 0)
        text = b.metrics_text()
        self.assertEqual(d.metric(text, "fusiond_shared_tier_hits_total"), 1)
        self.assertEqual(d.metric(text, "fusiond_compiles_total"), 0)
        # Another batch size on b: a new record, its kernel found in the one
        # the shared tier gave b.
        third = b.client.compile(g, [[4096, 256]])
        self.assertEqual(third.cache, "miss")
        if first.kernels[0].binary:
            self.assertEqual(d.metric(b.metrics_text(), "fusiond_nvrtc_reuses_total"), 1)
            self.assertEqual([k.binary for k in third.kernels], [k.binary for k in first.kernels])

        # Redis gone: b still serves from its own cache; a new graph compiles.
        redis.stop()
        self.assertEqual(b.client.compile(g, SHAPES).cache, "hit")
        self.assertEqual(b.client.compile(d.scaled_graph(5.25), SHAPES).cache, "miss")
        self.assertGreaterEqual(d.metric(b.metrics_text(), "fusiond_shared_tier_errors_total"), 1)

    def test_bad_redis_address_is_refused(self):
        tmp = d.TempDir("fusiond-shared-")
        self.addCleanup(tmp.cleanup)
        daemon = d.Daemon(os.path.join(tmp.path, "c"), ["--redis", "no-port"])
        self.addCleanup(daemon.stop)
        with self.assertRaises(AssertionError) as e:
            daemon.start(timeout=10)
        self.assertIn("exited", str(e.exception))


class PrometheusTest(DaemonTestCase):
    def test_prometheus_sees_the_scripted_hits_and_misses(self):
        work = os.path.join(self.tmp.path, "prometheus")
        os.makedirs(work)
        prom = d.Prometheus(f"127.0.0.1:{self.daemon.metrics_port}", work)
        self.addCleanup(prom.stop)
        prom.start()
        # The script: 3 misses, 5 hits, 1 invalid request, 1 lookup miss.
        graphs = [d.scaled_graph(0.5 + i) for i in range(3)]
        for g in graphs:
            self.assertEqual(self.client.compile(g, SHAPES).cache, "miss")
        for i in range(5):
            self.assertEqual(self.client.compile(graphs[i % 3], SHAPES).cache, "hit")
        with self.assertRaises(fusiond.FusionError):
            self.client.compile(d.invalid_graph())
        self.assertIsNone(self.client.lookup(d.scaled_graph(99.0), SHAPES))

        expected = {
            'fusiond_cache_hits_total{job="fusiond"}': 5,
            'fusiond_cache_misses_total{job="fusiond"}': 3,
            'fusiond_compiles_total{job="fusiond"}': 3,
            'fusiond_cache_entries{job="fusiond"}': 3,
            'fusiond_cache_corrupt_records_total{job="fusiond"}': 0,
            'fusiond_errors_total{rpc="Compile",code="INVALID_ARGUMENT"}': 1,
            'fusiond_rpc_duration_seconds_count{rpc="Compile",result="hit"}': 5,
            'fusiond_rpc_duration_seconds_count{rpc="Compile",result="miss"}': 3,
            'fusiond_rpc_duration_seconds_count{rpc="Compile",result="error"}': 1,
            'fusiond_rpc_duration_seconds_count{rpc="Lookup",result="miss"}': 1,
            'sum(fusiond_segments_total)': None,  # >= 3, checked below
            'fusiond_fusion_segments_count': 3,
            'fusiond_compiles_in_flight': 0,
            'fusiond_compile_queue_depth': 0,
        }

        def all_seen():
            for expr, want in expected.items():
                got = prom.value(expr)
                if got is None or (want is not None and got != want):
                    return False
            return True

        try:
            d.wait_until(all_seen, 45, "Prometheus to scrape the expected values", interval=0.5)
        except AssertionError:
            seen = {expr: prom.query(expr) for expr in expected}
            raise AssertionError(f"Prometheus saw {seen}") from None
        self.assertGreaterEqual(prom.value("sum(fusiond_segments_total)"), 3)
        self.assertGreater(prom.value('fusiond_cache_bytes{job="fusiond"}'), 0)
        # Stage histograms: a miss ran the pipeline, every request did cache I/O.
        self.assertGreaterEqual(
            prom.value('fusiond_compile_stage_duration_seconds_count{stage="cache_io"}'), 8)
        self.assertGreaterEqual(
            prom.value('fusiond_compile_stage_duration_seconds_count{stage="passes"}'), 3)
        self.assertEqual(prom.value('up{job="fusiond"}'), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
