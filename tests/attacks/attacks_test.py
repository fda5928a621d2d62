#!/usr/bin/env python3
"""The real fusiond attacked as a hostile client would: malformed, truncated
and oversized messages, hostile graphs (huge or negative extents, codes out
of range, dangling and cyclic references, outputs listed a thousand times,
odd names), a storm of concurrent calls with 1 ms deadlines and cancels,
half-open connections, a CompileStream nobody reads, slow clients on the
metrics port, and a Redis holding an oversized value or speaking garbage.
Each case expects a clear status and a daemon that goes on serving.

    attacks_test.py [-v] [TestCase ...]

Needs FUSIOND_BIN, REDIS_BIN and PYTHONPATH=<build>/python (CTest sets them).
"""

import concurrent.futures
import os
import socket
import socketserver
import sys
import threading
import time
import unittest
import urllib.request

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "service"))
sys.path.insert(0, os.path.join(HERE, "..", "security"))
import certs  # noqa: E402
import daemon as d  # noqa: E402
import fusiond  # noqa: E402
import records  # noqa: E402
from fusiond import fusion_pb2 as fp  # noqa: E402
from fusiond import service_pb2, service_pb2_grpc  # noqa: E402

SHAPES = [[64, 256]]
# Codes a hostile request may end with: a clear refusal, never our bug.
REFUSALS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED}


def peak_rss_mb(pid):
    """VmHWM (the peak resident size) of `pid`, MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise AssertionError(f"no VmHWM for {pid}")


def children(pid):
    """Processes whose parent is `pid` (any of its threads)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append((int(entry), fields[0]))
    return found


def raw_method(channel, method, stream=False):
    make = channel.unary_stream if stream else channel.unary_unary
    return make(f"/fusiond.v1.FusionCompiler/{method}", request_serializer=lambda b: b,
                response_deserializer=lambda b: b)


def one_node(sizes=(8, 8), op=fp.NEG, dtype=fp.FLOAT32, outputs=(1,)):
    g = fp.FusionGraph(version=1)
    g.inputs.add(name="T0", dtype=dtype, is_tensor=True, sizes=list(sizes))
    g.nodes.add(op=op, operands=[0])
    g.outputs.extend(outputs)
    return g


def edit(graph, fn):
    fn(graph)
    return graph


def hostile_graphs():
    """(name, graph, shapes, expected code, a phrase the message must hold)."""
    ia, rx = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED
    many_inputs = fp.FusionGraph(version=1)
    for i in range(600):
        many_inputs.inputs.add(name=f"T{i}", dtype=fp.FLOAT32, is_tensor=True, sizes=[8])
    many_inputs.nodes.add(op=fp.NEG, operands=[599])
    many_inputs.outputs.append(600)
    return [
        ("extent 2^62", one_node((2**62, 8)), None, ia, "exceeds the limit"),
        ("extent -2", one_node((-2, 8)), None, ia, "negative"),
        ("extent -2^63", one_node((-2**63, 8)), None, ia, "negative"),
        ("signature 2^62 x 8", one_node((-1, 8)), [[2**62, 8]], ia, "64-bit count"),
        ("signature negative", one_node((-1, 8)), [[-5, 8]], ia, "negative"),
        ("signature of 50 inputs", one_node(), [[8, 8]] * 50, ia, "takes 1 inputs"),
        ("rank 100000", one_node((1,) * 100000), None, ia, "has 100000 sizes"),
        ("rank 9", one_node((1,) * 9), None, ia, "rank 9 exceeds the limit of 8"),
        ("dtype 99", one_node(dtype=99), None, ia, "unknown dtype 99"),
        ("dtype -1", one_node(dtype=-1), None, ia, "unknown dtype"),
        ("op 999", one_node(op=999), None, ia, "unknown op code 999"),
        ("op 0", one_node(op=0), None, ia, "unknown op code 0"),
        ("self reference", edit(one_node(), lambda g: g.nodes[0].operands.__setitem__(0, 1)),
         None, ia, "not defined before"),
        ("dangling operand", edit(one_node(), lambda g: g.nodes[0].operands.__setitem__(0, 77)),
         None, ia, "not defined before"),
        ("operand -2^31", edit(one_node(), lambda g: g.nodes[0].operands.__setitem__(0, -2**31)),
         None, ia, "not defined before"),
        ("dangling output", one_node(outputs=(99,)), None, ia, "output reference 99"),
        ("negative output", one_node(outputs=(-1,)), None, ia, "output reference -1"),
        ("no outputs", one_node(outputs=()), None, ia, "no outputs"),
        ("version 2^32-1", edit(one_node(), lambda g: setattr(g, "version", 2**32 - 1)),
         None, ia, "not supported"),
        ("1000 operands", edit(one_node(), lambda g: g.nodes[0].operands.extend([0] * 999)),
         None, ia, "takes 1 operand(s), got 1000"),
        ("sum axis 2^62", edit(one_node(op=fp.SUM), lambda g: g.nodes[0].dims.append(2**62)),
         None, ia, "out of range"),
        ("name of 257 bytes", edit(one_node(), lambda g: setattr(g.inputs[0], "name", "x" * 257)),
         None, ia, "at most 256 bytes"),
        ("arch ../../etc/passwd", one_node(), None, ia, "unknown architecture"),
        ("one output listed 1000 times", one_node(outputs=[1] * 1000), None, rx,
         "--max-graph-io"),
        ("600 inputs", many_inputs, None, rx, "--max-graph-io"),
        ("2,000,000 operands", edit(one_node(), lambda g: g.nodes[0].operands.extend(
            [0] * 2000000)), None, ia, "has 2000001 operands"),
        ("reduction over 100,000 dims", edit(one_node(op=fp.SUM), lambda g: g.nodes[0].dims.extend(
            range(100000))), None, ia, "has 100000 dims"),
        ("200,000 constants", edit(one_node(), lambda g: g.constants.extend(
            [fp.Constant(name="c", dtype=fp.FLOAT64, value=1.0)] * 200000)), None, rx,
         "200000 constants"),
    ]


class DaemonCase(unittest.TestCase):
    extra_args = ()

    def setUp(self):
        self.tmp = d.TempDir("fusiond-attack-")
        self.addCleanup(self.tmp.cleanup)
        self.daemon = d.Daemon(os.path.join(self.tmp.path, "cache"), list(self.extra_args))
        self.addCleanup(self.daemon.stop)
        self.daemon.start()
        self.hot = d.scaled_graph(1.25)
        self.daemon.client.compile(self.hot, SHAPES)

    def assert_serving(self, within_ms=1000):
        self.assertIsNone(self.daemon.proc.poll(), f"fusiond died: {self.daemon.log()}")
        start = time.monotonic()
        r = self.daemon.client.compile(self.hot, SHAPES, timeout=10)
        ms = (time.monotonic() - start) * 1e3
        self.assertEqual(r.cache, "hit")
        self.assertLess(ms, within_ms, "the hot entry's hit after the attack")


class WireAttackTest(DaemonCase):
    def test_malformed_messages_on_every_method(self):
        good = fusiond.make_request(self.hot, SHAPES).SerializeToString()
        cases = {
            "garbage": bytes(range(256)) * 4,
            "truncated": good[: len(good) // 2],
            "one byte short": good[:-1],
            "varint of 11 bytes": b"\xff" * 10 + b"\x01",
            "groups nested 100000 deep": b"\x0b" * 100000 + b"\x0c" * 100000,
            "length past the end": b"\x0a\xff\xff\xff\xff\x0f",
            "65 MiB": b"\x0a\x80\x80\x80\x21" + b"x" * (65 << 20),
        }
        channel = grpc.insecure_channel(self.daemon.target,
                                        options=[("grpc.max_send_message_length", 128 << 20)])
        self.addCleanup(channel.close)
        for name, body in cases.items():
            for method in ("Compile", "Lookup", "Stats", "CompileStream"):
                call = raw_method(channel, method, stream=method == "CompileStream")
                with self.assertRaises(grpc.RpcError, msg=f"{name} to {method}") as caught:
                    result = call(body, timeout=30)
                    if method == "CompileStream":
                        list(result)
                code, details = caught.exception.code(), caught.exception.details()
                self.assertIn(code, REFUSALS, f"{name} to {method}: {code} {details}")
                self.assertTrue(details, f"{name} to {method}: an empty message")
                if name == "65 MiB":
                    self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED)
                else:
                    self.assertIn(f"{len(body)} bytes do not parse", details, name)
        self.assert_serving()

    def test_hostile_graphs_get_a_clear_refusal(self):
        client = self.daemon.client
        for name, graph, shapes, code, phrase in hostile_graphs():
            arch = "../../etc/passwd" if name.startswith("arch") else "sm_90"
            for call in (client.compile, client.lookup):
                start = time.monotonic()
                with self.assertRaises(fusiond.FusionError, msg=f"{name}: {call.__name__}") as c:
                    call(graph, shapes, arch=arch, timeout=60)
                seconds = time.monotonic() - start
                self.assertEqual(c.exception.code, code, f"{name}: {c.exception}")
                self.assertIn(phrase, c.exception.details, name)
                self.assertLess(seconds, 5, f"{name}: refused after {seconds:.1f} s")
        self.assert_serving()

    def test_odd_names_and_repeated_outputs_compile(self):
        odd = one_node(outputs=(1, 1, 0))
        odd.inputs[0].name = "T\x00\u202e\U0001F600\"}\n{"
        odd.nodes[0].output_names.extend(["a\x00b", "x" * 256])
        r = self.daemon.client.compile(odd, None)
        self.assertEqual(r.cache, "miss")
        self.assertEqual(self.daemon.client.compile(odd, None).cache, "hit")
        self.assert_serving()

    def test_storm_of_calls_with_deadlines_and_cancels(self):
        channels = [grpc.insecure_channel(self.daemon.target) for _ in range(8)]
        for c in channels:
            self.addCleanup(c.close)
        stubs = [service_pb2_grpc.FusionCompilerStub(c) for c in channels]
        futures = []
        for i in range(1500):
            stub, kind = stubs[i % 8], i % 5
            if kind == 0:
                request, timeout = fusiond.make_request(self.hot, SHAPES), 30
            elif kind == 1:  # 1 ms deadlines on a few new fusions
                request, timeout = fusiond.make_request(d.scaled_graph(1000.0 + i % 20), SHAPES), 0.001
            elif kind == 2:  # many callers of a few new fusions
                request, timeout = fusiond.make_request(d.scaled_graph(2000.0 + i % 10), SHAPES), 60
            elif kind == 3:  # more new fusions than the queue holds, short deadlines
                request, timeout = fusiond.make_request(d.scaled_graph(3000.0 + i), SHAPES), 0.3
            else:  # cancelled mid-compile
                request, timeout = fusiond.make_request(d.scaled_graph(4000.0 + i % 5), SHAPES), 60
            method = stub.Lookup if i % 11 == 0 else stub.Compile
            future = method.future(request, timeout=timeout)
            if kind == 4 and i % 3 == 0:
                threading.Timer(0.01 + (i % 50) / 100.0, future.cancel).start()
            futures.append(future)
        allowed = REFUSALS | {grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED,
                              grpc.StatusCode.CANCELLED, grpc.StatusCode.NOT_FOUND}
        codes = {}
        for f in futures:
            try:
                f.result()
                code = grpc.StatusCode.OK
            except grpc.FutureCancelledError:
                code = grpc.StatusCode.CANCELLED
            except grpc.RpcError as e:
                code = e.code()
            codes[code] = codes.get(code, 0) + 1
        print(f"storm: {({c.name: n for c, n in codes.items()})}", flush=True)
        self.assertTrue(set(codes) <= allowed, codes)
        self.assertGreater(codes.get(grpc.StatusCode.OK, 0), 300)
        d.wait_until(lambda: (lambda s: s["in_flight"] == 0 and s["queue_depth"] == 0)(
            self.daemon.client.stats()), 60, "the compile pool to drain")
        # Cancelled compiles' workers were killed and reaped, not piled up.
        workers = children(self.daemon.proc.pid)
        print(f"storm: {len(workers)} worker processes after it", flush=True)
        self.assertLessEqual(len(workers), 2 * (os.cpu_count() or 1) + 2, workers)
        self.assertNotIn("Z", [state for _, state in workers], "unreaped workers")
        self.assert_serving()

    def test_half_open_connections(self):
        sockets = []
        self.addCleanup(lambda: [s.close() for s in sockets])
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", self.daemon.port))
            s.sendall(b"PRI * HTTP/2.0\r\n")  # half a connection preface, then nothing
            sockets.append(s)
        with fusiond.FusionClient(self.daemon.target) as fresh:
            start = time.monotonic()
            self.assertEqual(fresh.compile(self.hot, SHAPES, timeout=10).cache, "hit")
            self.assertLess(time.monotonic() - start, 2)
        self.assert_serving()


class PendingBytesTest(DaemonCase):
    # Any second request in progress passes a limit of 1 byte.
    extra_args = ("--max-pending-request-bytes", "1", "--compile-timeout-s", "0")

    def test_requests_in_progress_are_bounded_by_bytes(self):
        slow = fp.FusionGraph(version=1)  # legal, but NVRTC takes minutes
        slow.inputs.add(name="T0", dtype=fp.FLOAT32, is_tensor=True, sizes=[64, 256])
        for i in range(450):
            slow.nodes.add(op=fp.SIN if i % 2 else fp.COS, operands=[i])
        slow.outputs.append(450)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            running = pool.submit(self.daemon.client.compile, slow, None, timeout=4)
            d.wait_until(lambda: self.daemon.client.stats()["in_flight"] == 1, 20, "the compile")
            with self.assertRaises(fusiond.FusionError) as caught:
                self.daemon.client.compile(d.scaled_graph(7.5), SHAPES)
            self.assertEqual(caught.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertIn("--max-pending-request-bytes", caught.exception.details)
            self.assert_serving()  # hits are not counted
            with self.assertRaises(fusiond.FusionError):
                running.result()  # its deadline
        d.wait_until(lambda: self.daemon.client.stats()["in_flight"] == 0, 20, "the cancel")
        self.assertEqual(self.daemon.client.compile(d.scaled_graph(7.5), SHAPES).cache, "miss")


class StreamSlowReaderTest(DaemonCase):
    def test_unread_stream_holds_a_window_of_replies(self):
        entries = 10000
        request = fusiond.make_request(self.hot, SHAPES, source=True, report=True)
        self.daemon.client.compile_request(request)  # ~27 KB replies, all hits
        body = service_pb2.CompileStreamRequest(requests=[request] * entries).SerializeToString()
        channel = grpc.insecure_channel(self.daemon.target)
        self.addCleanup(channel.close)
        before = peak_rss_mb(self.daemon.proc.pid)
        stream = raw_method(channel, "CompileStream", stream=True)(body, timeout=120)
        first = next(stream)  # started; now read nothing more
        time.sleep(3)
        grown = peak_rss_mb(self.daemon.proc.pid) - before
        stream.cancel()
        print(f"unread stream of {entries} replies: peak RSS +{grown:.0f} MB", flush=True)
        self.assertTrue(first)
        # Every reply buffered would be ~270 MB; the window holds 8.
        self.assertLess(grown, 100)
        self.assert_serving()

    def test_a_read_stream_answers_every_entry_once(self):
        requests = [fusiond.make_request(self.hot, SHAPES)] * 12
        requests += [fusiond.make_request(d.scaled_graph(600.0 + i), SHAPES) for i in range(6)]
        requests.append(fusiond.make_request(one_node(outputs=(99,)), None))
        seen = {}
        for index, result in self.daemon.client.compile_stream(requests, timeout=120):
            seen[index] = result
        self.assertEqual(sorted(seen), list(range(len(requests))))
        self.assertIsInstance(seen[len(requests) - 1], fusiond.FusionError)
        self.assertTrue(all(isinstance(seen[i], fusiond.CompileResult)
                            for i in range(len(requests) - 1)))


class MetricsSlowClientTest(DaemonCase):
    def scrape(self, timeout=20):
        url = f"http://127.0.0.1:{self.daemon.metrics_port}/metrics"
        start = time.monotonic()
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read().decode()
        return body, time.monotonic() - start

    def test_slow_clients_do_not_stall_scrapes(self):
        sockets = []
        self.addCleanup(lambda: [s.close() for s in sockets])
        for _ in range(16):
            s = socket.create_connection(("127.0.0.1", self.daemon.metrics_port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # and never the end
            sockets.append(s)
        time.sleep(0.2)
        body, seconds = self.scrape()
        print(f"scrape beside 16 half-sent requests: {seconds:.2f} s", flush=True)
        self.assertIn("fusiond_rpc", body)
        self.assertLess(seconds, 6)  # was blocked for civetweb's 30 s with 2

    def test_concurrent_scrapes_while_compiling(self):
        def compile_some():
            for i in range(8):
                self.daemon.client.compile(d.scaled_graph(700.0 + i), SHAPES)
        worker = threading.Thread(target=compile_some)
        worker.start()
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            results = list(pool.map(lambda _: self.scrape()[0], range(200)))
        worker.join()
        self.assertTrue(all("fusiond_cache_entries" in r for r in results))
        self.assert_serving()


class ClientInputTest(unittest.TestCase):
    """The Python client's refusals of what it cannot send (no daemon)."""

    def test_a_bad_token_is_refused_without_echoing_it(self):
        for token in ("secret\nvalue", "secret value", "s\u00e9cret", "secret\x00"):
            with self.assertRaises(ValueError) as caught:
                fusiond.FusionClient("127.0.0.1:1", token=token)
            self.assertNotIn("secret", str(caught.exception))
            self.assertIn("printable ASCII", str(caught.exception))

    def test_bad_values_in_a_request(self):
        with self.assertRaisesRegex(ValueError, "out of range"):
            fusiond.make_request(one_node(), [[2**64, 8]])
        with self.assertRaisesRegex(ValueError, "OpKind"):
            fusiond.GraphBuilder().op("nosuchop")
        with self.assertRaisesRegex(Exception, "FusionGraph"):
            fusiond.make_request(b"\xff\xff\xff")


class _GarbageRedis(socketserver.BaseRequestHandler):
    """Answers every command with `reply` (bytes), or closes when None."""
    reply = b"garbage\r\n"

    def handle(self):
        try:
            while self.request.recv(65536):
                if self.reply is None:
                    return
                self.request.sendall(self.reply)
        except OSError:
            pass


class HostileRedisTest(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-attack-redis-")
        self.addCleanup(self.tmp.cleanup)
        self.secret = certs.write_secret(os.path.join(self.tmp.path, "secret"),
                                         os.urandom(32).hex())

    def daemon(self, name, address):
        dm = d.Daemon(os.path.join(self.tmp.path, name),
                      ["--redis", address, "--redis-secret-file", self.secret])
        self.addCleanup(dm.stop)
        return dm.start()

    def test_oversized_planted_value_is_not_read_whole(self):
        redis = d.Redis(self.tmp.path).start()
        self.addCleanup(redis.stop)
        a = self.daemon("a", redis.address)
        x = d.scaled_graph(2.25)
        rx = a.client.compile(x, SHAPES)
        a.stop()
        raw = records.RawRedis(redis.port)
        self.addCleanup(raw.close)
        raw.command("CONFIG", "SET", "proto-max-bulk-len", str(1 << 30))
        raw.command("SET", b"fusiond:kc:" + rx.response.cache_key.encode(), b"F" * (300 << 20))
        b = self.daemon("b", redis.address)
        before = peak_rss_mb(b.proc.pid)
        got = b.client.compile(x, SHAPES)
        grown = peak_rss_mb(b.proc.pid) - before
        print(f"300 MB value in Redis: peak RSS +{grown:.0f} MB", flush=True)
        self.assertEqual(got.cache, "miss")
        self.assertEqual([k.binary for k in got.kernels], [k.binary for k in rx.kernels])
        self.assertEqual(d.metric(b.metrics_text(), "fusiond_shared_tier_corrupt_total"), 1)
        self.assertLess(grown, 300)  # read whole it was +580 MB

    def test_redis_speaking_garbage(self):
        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
        server = Server(("127.0.0.1", 0), _GarbageRedis)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        address = f"127.0.0.1:{server.server_address[1]}"
        replies = [b"garbage\r\n", b"$99999999999\r\nabc", b"*-5\r\n", b"*1\r\n" * 1000 + b":1\r\n",
                   b":99999999999999999999999999\r\n", None]
        for i, reply in enumerate(replies):
            _GarbageRedis.reply = reply
            dm = self.daemon(f"g{i}", address)
            for j in range(3):
                r = dm.client.compile(d.scaled_graph(500.0 + j), SHAPES, timeout=60)
                self.assertEqual(r.cache, "miss", repr(reply))
            self.assertEqual(dm.stop(), 0, repr(reply))


if __name__ == "__main__":
    unittest.main()
