"""Test helpers: start the real fusiond and a real Prometheus on 127.0.0.1,
with bounded waits, and always stop them."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import fusiond

FUSIOND_BIN = os.environ.get("FUSIOND_BIN", "fusiond")
CACHE_TOOL_BIN = os.environ.get("FUSIOND_CACHE_TOOL", "fusiond_cache_tool")
PROMETHEUS_BIN = os.environ.get("PROMETHEUS_BIN", "/usr/bin/prometheus")
REDIS_BIN = os.environ.get("REDIS_BIN", "/usr/bin/redis-server")


# setpriv (util-linux) sets the parent-death signal and execs the server: the
# kernel SIGKILLs it when the test process dies, however it dies, so no test
# leaves a server behind. (A preexec_fn would make Popen fork() a process
# that runs gRPC threads, whose fork handlers can deadlock.)
_SETPRIV = shutil.which("setpriv")


def start_server(args, log):
    """Popen for a server the tests own: output to `log`, no stdin, dies with us."""
    if _SETPRIV:
        args = [_SETPRIV, "--pdeathsig", "KILL", "--", *args]
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, what, interval=0.1):
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # the server may not be up yet
            last_error = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last error: {last_error})")


class Daemon:
    """One fusiond process on free loopback ports."""

    def __init__(self, cache_dir, extra_args=(), metrics=True, client_kwargs=None):
        self.cache_dir = cache_dir
        # FusionClient's TLS and token arguments (ca_file, token, ...).
        self.client_kwargs = dict(client_kwargs or {})
        self.port = free_port()
        self.metrics_port = free_port() if metrics else None
        self.extra_args = list(extra_args)
        self.proc = None
        self.log_path = os.path.join(cache_dir + ".logs", f"fusiond-{self.port}.log")
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self.client = None

    @property
    def target(self):
        return f"127.0.0.1:{self.port}"

    def start(self, timeout=30):
        args = [FUSIOND_BIN, "--listen", self.target, "--cache-dir", self.cache_dir,
                "--metrics", f"127.0.0.1:{self.metrics_port}" if self.metrics_port else ""]
        args += self.extra_args
        self._log = open(self.log_path, "ab")
        self.proc = start_server(args, self._log)

        # Wait for the port before making the client: a channel that finds
        # nothing listening backs off for a second or more.
        def listening():
            if self.proc.poll() is not None:
                raise AssertionError(f"fusiond exited with {self.proc.returncode}: {self.log()}")
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        wait_until(listening, timeout, "fusiond to listen", interval=0.02)
        self.client = fusiond.FusionClient(self.target, timeout=120, **self.client_kwargs)
        wait_until(lambda: self.client.health(timeout=2) == "SERVING", timeout, "fusiond to serve")
        return self

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.client:
            self.client.close()
            self.client = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        code = self.proc.returncode if self.proc else None
        self.proc = None
        if hasattr(self, "_log"):
            self._log.close()
        return code

    def kill9(self):
        return self.stop(sig=signal.SIGKILL)

    def restart(self):
        self.stop()
        return self.start()

    def log(self):
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def metrics_text(self):
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode()


def stop_server(server, timeout):
    """SIGTERM (then SIGKILL after `timeout` s) a helper server's process
    (server.proc) and close its log (server._log)."""
    if server.proc and server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait(timeout=10)
    server.proc = None
    if hasattr(server, "_log"):
        server._log.close()


def metric(text, name):
    """The value of an unlabelled metric in Prometheus' text format."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"metric {name} not exported")


class Redis:
    """A real redis-server on a free loopback port, without persistence."""

    def __init__(self, workdir):
        self.port = free_port()
        self.workdir = workdir
        self.proc = None

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def start(self, timeout=20):
        self._log = open(os.path.join(self.workdir, f"redis-{self.port}.log"), "ab")
        self.proc = start_server(
            [REDIS_BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no"], self._log)

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"redis-server exited with {self.proc.returncode}")
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        wait_until(ready, timeout, "redis-server to answer PING")
        return self

    def stop(self):
        stop_server(self, timeout=10)


class Prometheus:
    """A real Prometheus scraping one fusiond every second."""

    def __init__(self, scrape_target, workdir):
        self.port = free_port()
        self.workdir = workdir
        self.config = os.path.join(workdir, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: fusiond\n    scrape_interval: 1s\n"
                    f"    static_configs:\n      - targets: ['{scrape_target}']\n")
        self.proc = None

    def start(self, timeout=30):
        self._log = open(os.path.join(self.workdir, "prometheus.log"), "ab")
        self.proc = start_server(
            [PROMETHEUS_BIN, f"--config.file={self.config}",
             f"--storage.tsdb.path={os.path.join(self.workdir, 'data')}",
             f"--web.listen-address=127.0.0.1:{self.port}"], self._log)

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError("prometheus exited")
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                return r.status == 200
        wait_until(ready, timeout, "prometheus to be ready", interval=0.25)
        return self

    def query(self, expr):
        """Instant query -> list of (labels dict, float value)."""
        url = (f"http://127.0.0.1:{self.port}/api/v1/query?"
               + urllib.parse.urlencode({"query": expr}))
        with urllib.request.urlopen(url, timeout=5) as r:
            body = json.loads(r.read().decode())
        if body.get("status") != "success":
            raise AssertionError(f"query {expr} failed: {body}")
        return [(item["metric"], float(item["value"][1])) for item in body["data"]["result"]]

    def value(self, expr):
        result = self.query(expr)
        return result[0][1] if len(result) == 1 else None

    def stop(self):
        stop_server(self, timeout=15)


def cache_tool(cache_dir, *args):
    return subprocess.run([CACHE_TOOL_BIN, "--cache-dir", cache_dir, *args],
                          capture_output=True, text=True, timeout=60)


def scaled_graph(constant, rows=-1, cols=-1):
    """y = x * constant + x over float32[rows, cols]; distinct constants give
    distinct fusions."""
    b = fusiond.GraphBuilder()
    x = b.define_tensor([rows, cols], "float32", name="T0")
    k = b.define_constant(constant, "float64")
    y = b.op("mul", x, k)
    b.add_output(b.op("add", y, x))
    return b.build()


def invalid_graph():
    """A node that reads a value that does not exist."""
    b = fusiond.GraphBuilder()
    x = b.define_tensor([4, 4], "float32")
    b.add_output(b.op("neg", x))
    g = b.build()
    g.nodes[0].operands.append(77)
    return g


class TempDir:
    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)
