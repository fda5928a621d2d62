#!/usr/bin/env python3
"""The compile limits as flags, and fusionc's script size limit.

fusiond --max-graph-depth / --max-kernel-ops / --max-partition-nodes /
--max-graph-nodes reach the compile worker processes: a graph over a lowered
limit is RESOURCE_EXHAUSTED naming the limit, a graph under it compiles, and
a kernel cached under the default limits is still served (the limits only
refuse, so they are not part of the cache key). fusionc takes the same flags
(exit 2 naming the limit) and refuses a script larger than
--max-script-bytes before reading it.

Run by CTest (tests/limits/CMakeLists.txt sets FUSIOND_BIN, FUSIONC_BIN and
PYTHONPATH=<build>/python):
    limit_flags_test.py [TestCase[.test_name] ...]
"""

import os
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "service"))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402

FUSIONC = os.environ["FUSIONC_BIN"]
SHAPES = [[64, 256]]
HEADER = ["from nvfuser import FusionDefinition, DataType", "", "",
          "def fusion(fd: FusionDefinition) -> None:",
          "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
          "dtype=DataType.Float, is_cpu=False)"]
FOOTER = ["", "", "with FusionDefinition() as fd:", "    fusion(fd)", ""]


def chain_script(n, op="sin"):
    """T0 -> n ops in a chain: depth n, one pointwise kernel of n ops."""
    body = [f"    T{i} = fd.ops.{op}(T{i - 1})" for i in range(1, n + 1)]
    return "\n".join(HEADER + body + [f"    fd.add_output(T{n})"] + FOOTER)


def row_col_script(rounds):
    """Alternating row and column sums of [64, 256]: no scheduler takes the
    whole graph, so the segmenter partitions 2 * rounds compute nodes."""
    body, x, k = [], "T0", 1
    for i in range(rounds):
        dim = i % 2
        body += [f"    T{k} = fd.ops.sum({x}, dims=[{dim}], keepdim=False)",
                 f"    T{k + 1} = fd.ops.broadcast_in_dim(T{k}, shape=[64, 256], "
                 f"broadcast_dims=[{1 - dim}])",
                 f"    T{k + 2} = fd.ops.add(T{k + 1}, {x})"]
        x, k = f"T{k + 2}", k + 3
    return "\n".join(HEADER + body + [f"    fd.add_output({x})"] + FOOTER)


def fusionc(*args, stdin=None):
    return subprocess.run([FUSIONC, *args], input=stdin, capture_output=True, text=True,
                          timeout=300)


class Scripts:
    """Repro scripts written to a temporary folder and their wire form."""

    def __init__(self, tmp):
        self.tmp = tmp

    def path(self, name, text):
        p = os.path.join(self.tmp, name + ".py")
        with open(p, "w") as f:
            f.write(text)
        return p

    def graph(self, name, text):
        pb = os.path.join(self.tmp, name + ".pb")
        r = fusionc("parse", self.path(name, text), "--out", pb)
        if r.returncode != 0:
            raise AssertionError(r.stderr)
        with open(pb, "rb") as f:
            return f.read()


class DaemonLimitFlagsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-limits-")
        self.addCleanup(self.tmp.cleanup)
        self.scripts = Scripts(self.tmp.path)
        self.daemon = d.Daemon(os.path.join(self.tmp.path, "cache"), metrics=False)
        self.addCleanup(self.daemon.stop)

    def start(self, *flags):
        self.daemon.stop()
        # Workers explicitly: the limits must cross into the worker processes.
        self.daemon.extra_args = ["--compile-workers", "true", *flags]
        self.daemon.start()

    def worker_count(self):
        """The daemon's compile worker processes (its children run --compile-worker)."""
        pid, count = self.daemon.proc.pid, 0
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    worker = b"--compile-worker" in f.read()
            except (OSError, ValueError, IndexError):
                continue
            count += ppid == pid and worker
        return count

    def refused(self, graph, *words, lookup=False):
        with self.assertRaises(fusiond.FusionError) as e:
            if lookup:
                self.daemon.client.lookup(graph, SHAPES)
            else:
                self.daemon.client.compile(graph, SHAPES)
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED, str(e.exception))
        for w in words:
            self.assertIn(w, str(e.exception))

    def test_lowered_limits_refuse_and_name_the_limit(self):
        self.start("--max-graph-depth", "6", "--max-kernel-ops", "4", "--max-graph-nodes", "60")
        self.refused(self.scripts.graph("deep", chain_script(8)), "--max-graph-depth",
                     "over the limit of 6")
        self.refused(self.scripts.graph("deep", chain_script(8)), "--max-graph-depth", lookup=True)
        # Depth 5 passes; its one kernel of 5 ops does not (checked before codegen).
        self.refused(self.scripts.graph("wide", chain_script(5)), "--max-kernel-ops",
                     "over the limit of 4")
        self.refused(self.scripts.graph("many", chain_script(70)), "70 nodes", "limit is 60")
        ok = self.daemon.client.compile(self.scripts.graph("small", chain_script(3)), SHAPES)
        self.assertEqual(ok.cache, "miss")
        self.assertGreater(self.worker_count(), 0, "compiles ran in worker processes")
        # 12 compute nodes (18 deep) to partition: under the default depth limit.
        rows = self.scripts.graph("rows", row_col_script(6))
        self.start("--max-partition-nodes", "10")
        self.refused(rows, "--max-partition-nodes", "over the limit of 10")
        self.start("--max-partition-nodes", "0")
        self.assertEqual(self.daemon.client.compile(rows, SHAPES).cache, "miss")

    def test_kernel_params_limit(self):
        self.start("--max-kernel-params", "2")
        # One input and two outputs: 3 parameters in one pointwise kernel.
        two_out = "\n".join(HEADER + ["    T1 = fd.ops.sin(T0)", "    T2 = fd.ops.cos(T0)",
                                       "    fd.add_output(T1)", "    fd.add_output(T2)"] + FOOTER)
        self.refused(self.scripts.graph("two_out", two_out), "--max-kernel-params",
                     "over the limit of 2")
        ok = self.daemon.client.compile(self.scripts.graph("one_out", chain_script(3)), SHAPES)
        self.assertEqual(ok.cache, "miss")

    def test_limits_are_not_part_of_the_cache_key(self):
        self.start()
        graph = self.scripts.graph("five", chain_script(5))
        self.assertEqual(self.daemon.client.compile(graph, SHAPES).cache, "miss")
        # Restarted with a limit the graph is over: the kernel compiled before is served.
        self.start("--max-kernel-ops", "4")
        self.assertEqual(self.daemon.client.compile(graph, SHAPES).cache, "hit")
        # A new fusion over the limit is still refused.
        self.refused(self.scripts.graph("five_cos", chain_script(5, "cos")), "--max-kernel-ops")

    def test_bad_limit_flags_stop_the_daemon_at_start(self):
        for flag in (["--max-kernel-ops", "-1"], ["--max-graph-depth", "deep"]):
            r = subprocess.run([d.FUSIOND_BIN, *flag], capture_output=True, text=True, timeout=30)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(flag[0].strip("-") if flag[1] == "deep" else "positive", r.stderr)
        r = subprocess.run([d.FUSIOND_BIN, "--help"], capture_output=True, text=True, timeout=30)
        for flag in ("--max-graph-depth", "--max-kernel-ops", "--max-partition-nodes",
                     "--max-kernel-params"):
            self.assertIn(flag, r.stdout)


class FusioncLimitFlagsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="fusionc-limits-")
        self.addCleanup(self.tmp.cleanup)
        self.scripts = Scripts(self.tmp.name)

    def assertRefused(self, r, *words):
        self.assertEqual(r.returncode, 2, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)

    def test_compile_limits(self):
        deep = self.scripts.path("deep", chain_script(8))
        cache = os.path.join(self.tmp.name, "cache")
        self.assertRefused(fusionc("compile", deep, "--no-cache", "--max-graph-depth", "6"),
                           "--max-graph-depth", "over the limit of 6")
        self.assertRefused(fusionc("compile", deep, "--cache-dir", cache, "--max-kernel-ops", "4"),
                           "--max-kernel-ops", "over the limit of 4")
        rows = self.scripts.path("rows", row_col_script(6))
        self.assertRefused(fusionc("compile", rows, "--no-cache", "--no-codegen",
                                   "--max-partition-nodes", "10"), "--max-partition-nodes")
        ok = fusionc("compile", deep, "--cache-dir", cache, "--max-kernel-ops", "0")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertRefused(fusionc("compile", deep, "--no-cache", "--max-graph-depth", "-3"),
                           "--max-graph-depth")
        self.assertRefused(fusionc("compile", deep, "--server", "127.0.0.1:1",
                                   "--max-kernel-ops", "4"), "the daemon's own apply")

    def test_large_script_refused_before_reading(self):
        big = os.path.join(self.tmp.name, "big.py")
        with open(big, "w") as f:  # 1 GiB, sparse: reading it would take seconds
            f.truncate(1 << 30)
        # A fresh interpreter measures fusionc alone (ru_maxrss of its children).
        probe = ("import resource, subprocess, sys, time; t = time.monotonic(); "
                 "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                 "print(r.returncode, time.monotonic() - t, "
                 "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(r.stderr)")
        for cmd in ("parse", "compile", "eval"):
            out = subprocess.run([sys.executable, "-c", probe, FUSIONC, cmd, big],
                                 capture_output=True, text=True, timeout=120).stdout
            code, seconds, rss_kb = out.split("\n")[0].split()
            self.assertEqual(int(code), 2, out)
            self.assertIn(f"the script {big} is {1 << 30} bytes, over the limit of {16 << 20}", out)
            self.assertLess(float(seconds), 5.0, out)
            self.assertLess(int(rss_kb), 200 * 1024, out)
        # A generated script over a lowered limit, as a file and through a pipe.
        text = chain_script(2000)
        path = self.scripts.path("long", text)
        self.assertRefused(fusionc("parse", path, "--max-script-bytes", "10000"),
                           f"is {len(text)} bytes, over the limit of 10000")
        self.assertRefused(fusionc("parse", "/dev/stdin", "--max-script-bytes", "10000", stdin=text),
                           "more than 10000 bytes")
        self.assertEqual(fusionc("parse", "/dev/stdin", stdin=text).returncode, 0)
        self.assertRefused(fusionc("parse", path, "--max-script-bytes", str(1 << 30)),
                           "--max-script-bytes")
        start = time.monotonic()
        self.assertEqual(fusionc("parse", path, "--max-script-bytes", str(len(text))).returncode, 0)
        self.assertLess(time.monotonic() - start, 30)


if __name__ == "__main__":
    unittest.main(verbosity=2)
