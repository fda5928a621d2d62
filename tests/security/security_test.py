"""Security of the real daemon on loopback (issue 32): bearer tokens and TLS
(server certificates, client certificates) for every compile RPC, settings
that would expose the daemon refused at start, and a shared tier (a real
redis-server) that never serves a poisoned record and keeps most of its
miss throughput when Redis hangs or dies.

Certificates are made at test time with the openssl CLI (certs.py)."""

import concurrent.futures
import os
import signal
import subprocess
import sys
import time
import unittest

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "service"))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402
from fusiond import cache_pb2  # noqa: E402

import certs  # noqa: E402
import records  # noqa: E402

FUSIONC_BIN = os.environ.get("FUSIONC_BIN", "fusionc")
SHAPES = [[64, 256]]
TOKEN = "token-for-the-tests-0123456789"


def rpc_codes(client):
    """The status code of each compile RPC (OK when it succeeded)."""
    codes = {}
    g = d.scaled_graph(1.5)
    calls = {
        "Compile": lambda: client.compile(g, SHAPES),
        "Lookup": lambda: client.lookup(g, SHAPES),
        "Stats": lambda: client.stats(),
        "CompileStream": lambda: list(client.compile_stream([fusiond.make_request(g, SHAPES)])),
    }
    for name, call in calls.items():
        try:
            call()
            codes[name] = grpc.StatusCode.OK
        except fusiond.FusionError as e:
            codes[name] = e.code
    return codes


class SecureDaemonCase(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-security-")
        self.addCleanup(self.tmp.cleanup)
        self.certs = certs.make_certificates(os.path.join(self.tmp.path, "pki"))
        self.token_file = certs.write_secret(os.path.join(self.tmp.path, "tokens"),
                                             f"# clients\n{TOKEN}\nsecond-token-abcdef\n")

    def start(self, args, **client_kwargs):
        daemon = d.Daemon(os.path.join(self.tmp.path, f"cache{len(args)}"), args,
                          client_kwargs=client_kwargs)
        self.addCleanup(daemon.stop)
        return daemon.start()

    def client(self, daemon, **kwargs):
        c = fusiond.FusionClient(daemon.target, timeout=60, **kwargs)
        self.addCleanup(c.close)
        return c

    def fusionc(self, daemon, *flags, env=None):
        f = os.path.join(self.tmp.path, "f.py")
        with open(f, "w") as out:
            out.write("from nvfuser import FusionDefinition, DataType\n\n\n"
                      "def nvfuser_fusion_id0(fd: FusionDefinition) -> None:\n"
                      "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
                      "dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])\n"
                      "    T1 = fd.ops.mul(T0, T0)\n"
                      "    fd.add_output(T1)\n")
        return subprocess.run([FUSIONC_BIN, "compile", f, "--server", daemon.target, *flags],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, **(env or {})})


class TokenTest(SecureDaemonCase):
    """Plaintext on loopback with a token file."""

    def test_every_compile_rpc_needs_a_valid_token(self):
        daemon = self.start(["--token-file", self.token_file], token=TOKEN)
        unauth = grpc.StatusCode.UNAUTHENTICATED
        for kwargs in ({}, {"token": "wrong"}, {"token": TOKEN + "x"}):
            codes = rpc_codes(self.client(daemon, **kwargs))
            self.assertEqual(codes, {k: unauth for k in codes}, kwargs)
        for token in (TOKEN, "second-token-abcdef"):
            codes = rpc_codes(self.client(daemon, token=token))
            self.assertEqual(codes["Compile"], grpc.StatusCode.OK)
            self.assertEqual(codes["Stats"], grpc.StatusCode.OK)
            self.assertEqual(codes["Lookup"], grpc.StatusCode.OK)  # a hit after Compile
        # Health needs no token (probes); the refusals were counted as errors.
        self.assertEqual(self.client(daemon).health(), "SERVING")
        self.assertIn('code="UNAUTHENTICATED"', daemon.metrics_text())

    def test_fusionc_token_file_and_env(self):
        daemon = self.start(["--token-file", self.token_file], token=TOKEN)
        refused = self.fusionc(daemon)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("UNAUTHENTICATED", refused.stderr + refused.stdout)
        ok = self.fusionc(daemon, "--token-file", self.token_file)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        ok = self.fusionc(daemon, env={"FUSIOND_TOKEN_FILE": self.token_file})
        self.assertEqual(ok.returncode, 0, ok.stderr)


class TlsTest(SecureDaemonCase):
    """TLS with the server certificate and tokens."""

    def test_plaintext_and_tokenless_calls_are_refused(self):
        tls = ["--tls-cert", self.certs["server.pem"], "--tls-key", self.certs["server.key"],
               "--token-file", self.token_file]
        daemon = self.start(tls, ca_file=self.certs["ca.pem"], token=TOKEN)
        plain = rpc_codes(self.client(daemon, token=TOKEN))
        self.assertNotIn(grpc.StatusCode.OK, plain.values(), "plaintext must not get through")
        tokenless = rpc_codes(self.client(daemon, ca_file=self.certs["ca.pem"]))
        self.assertEqual(set(tokenless.values()), {grpc.StatusCode.UNAUTHENTICATED})
        good = rpc_codes(self.client(daemon, ca_file=self.certs["ca.pem"], token=TOKEN))
        self.assertEqual(good["Compile"], grpc.StatusCode.OK)
        # fusionc and the C++ client: --tls-ca and the token.
        ok = self.fusionc(daemon, "--tls-ca", self.certs["ca.pem"], "--token-file", self.token_file)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        no_ca = self.fusionc(daemon, "--token-file", self.token_file)
        self.assertNotEqual(no_ca.returncode, 0)
        ok = self.fusionc(daemon, env={"FUSIOND_TLS_CA": self.certs["ca.pem"],
                                       "FUSIOND_TOKEN_FILE": self.token_file})
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_client_certificates(self):
        mtls = ["--tls-cert", self.certs["server.pem"], "--tls-key", self.certs["server.key"],
                "--tls-client-ca", self.certs["ca.pem"]]
        good = {"ca_file": self.certs["ca.pem"], "cert_file": self.certs["client.pem"],
                "key_file": self.certs["client.key"]}
        daemon = self.start(mtls, **good)
        self.assertEqual(rpc_codes(self.client(daemon, **good))["Compile"], grpc.StatusCode.OK)
        for kwargs in ({"ca_file": self.certs["ca.pem"]},
                       {"ca_file": self.certs["ca.pem"], "cert_file": self.certs["rogue-client.pem"],
                        "key_file": self.certs["rogue-client.key"]}):
            codes = rpc_codes(self.client(daemon, **kwargs))
            self.assertNotIn(grpc.StatusCode.OK, codes.values(), kwargs)
        ok = self.fusionc(daemon, "--tls-ca", self.certs["ca.pem"], "--tls-cert",
                          self.certs["client.pem"], "--tls-key", self.certs["client.key"])
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_health_listener_is_plain(self):
        health_port = d.free_port()
        tls = ["--tls-cert", self.certs["server.pem"], "--tls-key", self.certs["server.key"],
               "--token-file", self.token_file, "--health-listen", f"127.0.0.1:{health_port}"]
        self.start(tls, ca_file=self.certs["ca.pem"], token=TOKEN)
        probe = fusiond.FusionClient(f"127.0.0.1:{health_port}")
        self.addCleanup(probe.close)
        self.assertEqual(probe.health(), "SERVING")
        # Only health there: the compile service is not on that port.
        with self.assertRaises(fusiond.FusionError) as e:
            probe.stats()
        self.assertEqual(e.exception.code, grpc.StatusCode.UNIMPLEMENTED)


class RefusedConfigTest(SecureDaemonCase):
    """Settings that would expose the daemon or the shared tier: exit 2 at start."""

    def refused(self, args, expect):
        p = subprocess.run([d.FUSIOND_BIN, "--cache-dir", os.path.join(self.tmp.path, "c"),
                            "--metrics", "", *args], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(expect, p.stderr)

    def test_refusals(self):
        port = d.free_port()
        cert = ["--tls-cert", self.certs["server.pem"], "--tls-key", self.certs["server.key"]]
        self.refused(["--listen", f"0.0.0.0:{port}"], "reachable from other machines")
        self.refused(["--listen", f"0.0.0.0:{port}", *cert], "client authentication")
        self.refused(["--listen", f"0.0.0.0:{port}", "--token-file", self.token_file], "TLS")
        self.refused(["--tls-cert", self.certs["server.pem"]], "go together")
        self.refused(["--listen", f"127.0.0.1:{port}", "--redis", "127.0.0.1:6379"],
                     "cluster secret")
        self.refused(["--listen", f"127.0.0.1:{port}", "--redis", "10.1.2.3:6379",
                      "--redis-insecure-unsigned", "true"], "loopback")
        os.chmod(self.token_file, 0o666)
        self.refused(["--listen", f"127.0.0.1:{port}", "--token-file", self.token_file],
                     "writable by other users")


class SharedTierCase(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-tier-")
        self.addCleanup(self.tmp.cleanup)
        self.redis = d.Redis(self.tmp.path).start()
        self.addCleanup(self.redis.stop)
        self.secret = os.urandom(32).hex()
        self.secret_file = certs.write_secret(os.path.join(self.tmp.path, "secret"), self.secret)

    def daemon(self, name, extra=()):
        daemon = d.Daemon(os.path.join(self.tmp.path, name),
                          ["--redis", self.redis.address, "--redis-secret-file", self.secret_file,
                           *extra])
        self.addCleanup(daemon.stop)
        return daemon.start()


def binaries(result):
    return [k.binary for k in result.kernels]


class PoisonedSharedTierTest(SharedTierCase):
    def test_poisoned_records_are_never_served(self):
        a = self.daemon("a")
        x, y = d.scaled_graph(2.25), d.scaled_graph(3.25)
        rx, ry = a.client.compile(x, SHAPES), a.client.compile(y, SHAPES)
        raw = records.RawRedis(self.redis.port)
        self.addCleanup(raw.close)
        x_key = b"fusiond:kc:" + rx.response.cache_key.encode()
        y_value = raw.command("GET", b"fusiond:kc:" + ry.response.cache_key.encode())
        evil = cache_pb2.CompiledFusion.FromString(records.decode_shared_payload(
            raw.command("GET", x_key)))
        for segment in evil.segments:
            if segment.HasField("kernel"):
                segment.kernel.binary = b"\x7fELF planted kernel"
        poisons = {
            "altered cubin, CRC recomputed, wrong secret": records.encode_shared_record(
                b"a guessed secret", x_key, evil.SerializeToString()),
            "fusion Y's genuine record under X's key": y_value,
            "a bare record with a valid CRC": records.encode_record(evil.SerializeToString()),
            "garbage": b"garbage" * 10,
        }
        for i, (what, value) in enumerate(poisons.items()):
            raw.command("SET", x_key, value)
            b = self.daemon(f"b{i}")
            got = b.client.compile(x, SHAPES)
            self.assertEqual(got.cache, "miss", f"{what}: served as a hit")
            self.assertEqual(binaries(got), binaries(rx), what)
            self.assertEqual(b.client.stats()["compiles"], 1, what)
            text = b.metrics_text()
            refused = (d.metric(text, "fusiond_shared_tier_rejected_total") +
                       d.metric(text, "fusiond_shared_tier_corrupt_total"))
            self.assertEqual(refused, 1, what)
            self.assertEqual(d.metric(text, "fusiond_shared_tier_hits_total"), 0, what)
            # The compile republished a genuine record: the next daemon hits.
            c = self.daemon(f"c{i}")
            again = c.client.compile(x, SHAPES)
            self.assertEqual(again.cache, "hit", what)
            self.assertEqual(binaries(again), binaries(rx), what)
            print(f"poison refused: {what}", flush=True)


class RedisFailureTest(SharedTierCase):
    """Miss throughput with a healthy, a hung (SIGSTOP) and a dead Redis."""

    MISSES = int(os.environ.get("FUSIOND_SECURITY_MISSES", "64"))

    def misses_per_second(self, daemon, first_constant):
        graphs = [d.scaled_graph(first_constant + 0.125 * i) for i in range(self.MISSES)]
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda g: daemon.client.compile(g, SHAPES), graphs))
        elapsed = time.monotonic() - start
        self.assertTrue(all(r.cache == "miss" for r in results))
        return self.MISSES / elapsed

    def test_hung_and_dead_redis_keep_miss_throughput(self):
        daemon = self.daemon("a")
        self.misses_per_second(daemon, 100.0)  # warm-up: NVRTC, threads
        normal = self.misses_per_second(daemon, 200.0)
        self.redis.proc.send_signal(signal.SIGSTOP)
        try:
            hung = self.misses_per_second(daemon, 300.0)
            text = daemon.metrics_text()
        finally:
            self.redis.proc.send_signal(signal.SIGCONT)
        self.assertGreaterEqual(d.metric(text, "fusiond_shared_tier_breaker_trips_total"), 1)
        self.assertGreater(d.metric(text, "fusiond_shared_tier_short_circuited_total"), 0)
        self.redis.stop()
        dead = self.misses_per_second(daemon, 400.0)
        print(f"miss throughput ({self.MISSES} distinct fusions, 4 clients): "
              f"redis up {normal:.1f}/s, hung (SIGSTOP) {hung:.1f}/s = {hung / normal:.0%}, "
              f"dead {dead:.1f}/s = {dead / normal:.0%}", flush=True)
        self.assertGreaterEqual(hung / normal, 0.5)
        self.assertGreaterEqual(dead / normal, 0.5)


if __name__ == "__main__":
    unittest.main()
