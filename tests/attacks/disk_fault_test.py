#!/usr/bin/env python3
"""The real fusiond over a cache directory that fails under it: a small
tmpfs filled up (at start-up, and while serving), a read-only bind mount,
and a directory another daemon holds. Each must end in a clear error or in
compiles served without storing them; never a crash, never a cache moved
aside or a stored entry lost. A cache that filled up while serving stores
again, without a restart, once space is freed.

The mounts need a private mount namespace: the script runs itself again
under `unshare -m` (as root) or `unshare -rm` (a user namespace), and exits
77 (CTest: skipped) where the kernel allows neither.

    disk_fault_test.py [-v] [TestCase ...]

Needs FUSIOND_BIN and PYTHONPATH=<build>/python (CTest sets them).
"""

import os
import shutil
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "service"))
_INSIDE = "FUSIOND_DISK_FAULT_NAMESPACE"

if __name__ == "__main__" and os.environ.get(_INSIDE) != "1":
    unshare = shutil.which("unshare")
    flags = "-m" if os.geteuid() == 0 else "-rm"
    if unshare is None or subprocess.run([unshare, flags, "true"]).returncode != 0:
        print(f"SKIP: no private mount namespace here (unshare {flags} failed)")
        sys.exit(77)
    env = dict(os.environ, **{_INSIDE: "1"})
    sys.exit(subprocess.run([unshare, flags, sys.executable, *sys.argv], env=env).returncode)

import daemon as d  # noqa: E402
import fusiond  # noqa: E402

SHAPES = [[64, 256]]


def mount(*args):
    subprocess.run(["mount", *args], check=True, capture_output=True)


def fill(path):
    """Writes zeros to `path` until the file system is full (unbuffered, in
    smaller and smaller blocks, so nothing is left)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for size in (1 << 20, 65536, 4096, 1):
            block = b"\0" * size
            try:
                while True:
                    os.write(fd, block)
            except OSError:
                pass
    finally:
        os.close(fd)


def unfill(path):
    os.remove(path)


class DiskCase(unittest.TestCase):
    def setUp(self):
        self.tmp = d.TempDir("fusiond-disk-")
        self.addCleanup(self.tmp.cleanup)
        self.mnt = os.path.join(self.tmp.path, "mnt")
        os.makedirs(self.mnt)
        self.cache = os.path.join(self.mnt, "cache")
        self.runs = 0

    def daemon(self):
        """A daemon over self.cache, logging outside the faulty file system."""
        self.runs += 1
        dm = d.Daemon(self.cache, [])
        dm.log_path = os.path.join(self.tmp.path, f"fusiond-{self.runs}.log")
        self.addCleanup(dm.stop)
        return dm

    def fill_cache(self, graphs):
        dm = self.daemon().start()
        kernels = [[k.binary for k in dm.client.compile(g, SHAPES).kernels] for g in graphs]
        self.assertEqual(dm.stop(), 0)
        return kernels

    def assert_hits(self, dm, graphs, kernels):
        for g, want in zip(graphs, kernels):
            r = dm.client.compile(g, SHAPES, timeout=60)
            self.assertEqual(r.cache, "hit")
            self.assertEqual([k.binary for k in r.kernels], want)

    def refused_start(self):
        """Starts fusiond over self.cache, expecting it to refuse: (exit code, log)."""
        self.runs += 1
        log_path = os.path.join(self.tmp.path, f"fusiond-{self.runs}.log")
        with open(log_path, "wb") as log:
            proc = d.start_server([d.FUSIOND_BIN, "--listen", f"127.0.0.1:{d.free_port()}",
                                   "--metrics", "", "--cache-dir", self.cache], log)
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = None
        with open(log_path, errors="replace") as f:
            return code, f.read()

    def assert_refused_to_start(self, phrase):
        code, log = self.refused_start()
        self.assertEqual(code, 1, f"a clean refusal, not a signal or a start: {log[-2000:]}")
        self.assertIn(phrase, log)
        self.assertIn("the cache is left as it is", log)
        self.assertNotIn("quarantine", log)
        self.assertFalse(os.path.exists(os.path.join(self.cache, "quarantine")))


class FullDiskTest(DiskCase):
    def setUp(self):
        super().setUp()
        mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", self.mnt)
        self.addCleanup(subprocess.run, ["umount", "-l", self.mnt], capture_output=True)
        self.filler = os.path.join(self.mnt, "filler")

    def test_full_at_start_up_refuses_cleanly_and_keeps_the_cache(self):
        graphs = [d.scaled_graph(70.0 + i) for i in range(3)]
        kernels = self.fill_cache(graphs)
        fill(self.filler)
        self.assert_refused_to_start("No space left on device")
        unfill(self.filler)
        dm = self.daemon().start()
        self.assert_hits(dm, graphs, kernels)

    def test_filling_up_while_serving(self):
        graphs = [d.scaled_graph(80.0 + i) for i in range(3)]
        kernels = self.fill_cache(graphs)
        dm = self.daemon().start()
        self.assert_hits(dm, graphs[:1], kernels[:1])
        fill(self.filler)
        # New fusions compile and are served; they cannot be stored.
        for i in range(4):
            r = dm.client.compile(d.scaled_graph(180.0 + i), SHAPES, timeout=60)
            self.assertEqual(r.cache, "miss")
            self.assertTrue(r.kernels)
        self.assert_hits(dm, graphs, kernels)
        self.assertGreater(d.metric(dm.metrics_text(), "fusiond_cache_write_errors_total"), 0)
        self.assertIsNone(dm.proc.poll(), dm.log())
        self.assertEqual(dm.stop(), 0)
        unfill(self.filler)
        dm = self.daemon().start()
        self.assert_hits(dm, graphs, kernels)


def log_text(dm):
    with open(dm.log_path, errors="replace") as f:
        return f.read()


class RecoveryTest(DiskCase):
    """Space freed under a running daemon: RocksDB resumes writes by itself
    once its largest write buffer (64 MiB) fits, so the tmpfs is larger."""

    def setUp(self):
        super().setUp()
        mount("-t", "tmpfs", "-o", "size=96m", "tmpfs", self.mnt)
        self.addCleanup(subprocess.run, ["umount", "-l", self.mnt], capture_output=True)
        self.filler = os.path.join(self.mnt, "filler")

    def wait_for_read_only(self, dm, want, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            value = d.metric(dm.metrics_text(), "fusiond_cache_read_only")
            if value == want or time.monotonic() > deadline:
                return value
            time.sleep(0.25)

    def test_stores_resume_once_space_is_freed(self):
        graphs = [d.scaled_graph(60.0 + i) for i in range(3)]
        kernels = self.fill_cache(graphs)
        dm = self.daemon().start()
        self.assertEqual(d.metric(dm.metrics_text(), "fusiond_cache_read_only"), 0)
        fill(self.filler)
        lost = [d.scaled_graph(160.0 + i) for i in range(4)]
        for g in lost:
            r = dm.client.compile(g, SHAPES, timeout=60)
            self.assertEqual(r.cache, "miss")
            self.assertTrue(r.kernels)
        stats = dm.client.stats()
        self.assertTrue(stats["cache_read_only"], stats)
        self.assertIn("No space left on device", stats["cache_error"])
        metrics = dm.metrics_text()
        self.assertEqual(d.metric(metrics, "fusiond_cache_read_only"), 1)
        # Every failed store is counted (a record and its request entry per
        # compile); the log says it once.
        self.assertGreaterEqual(d.metric(metrics, "fusiond_cache_write_errors_total"), len(lost))
        self.assertEqual(stats["cache_write_errors"],
                         d.metric(metrics, "fusiond_cache_write_errors_total"))
        self.assertEqual(log_text(dm).count("cache_read_only"), 1, dm.log())
        self.assert_hits(dm, graphs, kernels)  # hits are served meanwhile
        self.assertEqual(dm.client.compile(lost[0], SHAPES, timeout=60).cache, "miss")
        # Still full past RocksDB's next free-space check (5 s): still read-only,
        # and nothing more in the log than the one warning.
        time.sleep(6)
        self.assertEqual(d.metric(dm.metrics_text(), "fusiond_cache_read_only"), 1)
        self.assertEqual(log_text(dm).count('"level":"warning"'), 1, dm.log())

        unfill(self.filler)
        self.assertEqual(self.wait_for_read_only(dm, 0), 0, dm.log())
        self.assertIn("cache_writable", log_text(dm))
        stats = dm.client.stats()
        self.assertFalse(stats["cache_read_only"], stats)
        self.assertEqual(stats["cache_error"], "")
        self.assertEqual(stats["cache_recoveries"], 1)
        self.assertEqual(d.metric(dm.metrics_text(), "fusiond_cache_recoveries_total"), 1)
        inserts = d.metric(dm.metrics_text(), "fusiond_cache_inserts_total")
        fresh = d.scaled_graph(170.0)
        fresh_kernels = [k.binary for k in dm.client.compile(fresh, SHAPES, timeout=60).kernels]
        again = dm.client.compile(lost[0], SHAPES, timeout=60)
        self.assertEqual(again.cache, "miss", "not stored while the disk was full")
        self.assertGreater(d.metric(dm.metrics_text(), "fusiond_cache_inserts_total"), inserts)
        self.assert_hits(dm, [fresh], [fresh_kernels])
        self.assert_hits(dm, graphs, kernels)
        self.assertEqual(log_text(dm).count("cache_read_only"), 1)
        self.assertIsNone(dm.proc.poll(), dm.log())
        self.assertEqual(dm.stop(), 0)

        dm = self.daemon().start()
        self.assert_hits(dm, graphs + [fresh, lost[0]],
                         kernels + [fresh_kernels, [k.binary for k in again.kernels]])


class ReadOnlyAndBusyTest(DiskCase):
    def test_read_only_directory_refuses_cleanly(self):
        graphs = [d.scaled_graph(90.0 + i) for i in range(2)]
        kernels = self.fill_cache(graphs)
        mount("--bind", self.cache, self.cache)
        self.addCleanup(subprocess.run, ["umount", "-l", self.cache], capture_output=True)
        mount("-o", "remount,ro,bind", self.cache)
        self.assert_refused_to_start("Read-only file system")
        subprocess.run(["umount", self.cache], check=True)
        dm = self.daemon().start()
        self.assert_hits(dm, graphs, kernels)

    def test_directory_held_by_another_daemon(self):
        first = self.daemon().start()
        code, log = self.refused_start()
        self.assertEqual(code, 1, log[-2000:])
        self.assertIn("in use by another process", log)
        self.assertEqual(first.client.health(), "SERVING")


if __name__ == "__main__":
    unittest.main()
