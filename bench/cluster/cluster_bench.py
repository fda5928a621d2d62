#!/usr/bin/env python3
"""Cluster benchmark: one compile per cluster, and what waiting costs.

For each N x M configuration: a real redis-server and N real fusiond on
loopback sharing it (compile leases on, the default), then M new fusions sent
at once to every daemon (N x M Compile calls released together). Prints per
configuration the compiles per fusion (fusiond_compiles_total of the N
daemons over M), the lease waits and takeovers, and the Compile latency of
the daemon that compiled each fusion against that of the daemons that waited
for its record (median and p95 of each, and of waiter minus compiler per
fusion). The compiling daemon of a fusion is the one whose log has its
`compiled` line. Not a test; CTest runs a tiny size with --check.

    PYTHONPATH=<build>/python FUSIOND_BIN=<build>/server/fusiond \\
        /usr/bin/python3 bench/cluster/cluster_bench.py [--configs 2x10,3x20,4x40]
        [--out FILE] [--check]
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import sys
import threading
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(_ROOT, "tests", "service"))
import daemon as d  # noqa: E402

SHAPES = [[64, 256]]


def parse_configs(text):
    configs = []
    for item in text.split(","):
        try:
            n, m = (int(v) for v in item.strip().lower().split("x"))
        except ValueError:
            raise SystemExit(f"--configs: '{item}' is not NxM (e.g. 3x20)") from None
        if n < 1 or m < 1:
            raise SystemExit(f"--configs: '{item}' needs at least one daemon and one fusion")
        configs.append((n, m))
    return configs


def percentile(values, q):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 100)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(values):
    if not values:
        return "n/a"
    return f"median {percentile(values, 50):8.1f}  p95 {percentile(values, 95):8.1f}"


def compiled_keys(daemon):
    """Cache keys this daemon logged as compiled by itself."""
    keys = set()
    with open(daemon.log_path, errors="replace") as f:
        for line in f:
            if '"compiled"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "compiled":
                keys.add(entry.get("key"))
    return keys


def run_config(n, m, first_constant, workdir):
    redis = d.Redis(workdir)
    daemons = []
    try:
        redis.start()
        secret = os.path.join(workdir, "cluster-secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex())
        for i in range(n):
            x = d.Daemon(os.path.join(workdir, f"d{i}"),
                         ["--redis", redis.address, "--redis-secret-file", secret,
                          "--max-queue", str(max(64, 2 * m))])
            daemons.append(x)
            x.start()
        graphs = [d.scaled_graph(first_constant + i / 64.0) for i in range(m)]
        calls = [(f, j) for f in range(m) for j in range(n)]
        barrier = threading.Barrier(len(calls))
        results = {}

        def one(call):
            f, j = call
            barrier.wait()
            start = time.perf_counter()
            try:
                r = daemons[j].client.compile(graphs[f], SHAPES)
                results[call] = ((time.perf_counter() - start) * 1e3, r.response.cache_key, None)
            except Exception as e:  # counted and printed below
                results[call] = ((time.perf_counter() - start) * 1e3, None, str(e)[:200])

        wall = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
            list(pool.map(one, calls))
        wall = time.perf_counter() - wall
        texts = [x.metrics_text() for x in daemons]
        total = {name: sum(d.metric(t, name) for t in texts)
                 for name in ("fusiond_compiles_total", "fusiond_lease_acquired_total",
                              "fusiond_lease_waits_total", "fusiond_lease_takeovers_total")}
        owners = {}
        for j, x in enumerate(daemons):
            for key in compiled_keys(x):
                owners.setdefault(key, []).append(j)
    finally:
        for x in daemons:
            x.stop()
        redis.stop()

    errors = [e for (_, _, e) in results.values() if e]
    compiler_ms, waiter_ms, extra_ms = [], [], []
    for f in range(m):
        keys = {results[(f, j)][1] for j in range(n)} - {None}
        owner = owners.get(next(iter(keys)), []) if len(keys) == 1 else []
        if len(owner) != 1:
            continue  # compiled more than once (or failed): not a waiter/compiler pair
        own = results[(f, owner[0])][0]
        compiler_ms.append(own)
        for j in range(n):
            if j != owner[0] and results[(f, j)][2] is None:
                waiter_ms.append(results[(f, j)][0])
                extra_ms.append(results[(f, j)][0] - own)
    return {
        "n": n, "m": m, "wall_s": wall, "errors": errors,
        "compiles": total["fusiond_compiles_total"],
        "leases": total["fusiond_lease_acquired_total"],
        "waits": total["fusiond_lease_waits_total"],
        "takeovers": total["fusiond_lease_takeovers_total"],
        "paired": len(compiler_ms),
        "compiler_ms": compiler_ms, "waiter_ms": waiter_ms, "extra_ms": extra_ms,
    }


def report(r):
    lines = [
        f"{r['n']} daemons x {r['m']} new fusions at once ({r['n'] * r['m']} calls, "
        f"{r['wall_s']:.2f} s): {r['compiles']:.0f} compiles = "
        f"{r['compiles'] / r['m']:.2f} per fusion; leases {r['leases']:.0f}, "
        f"waits {r['waits']:.0f}, takeovers {r['takeovers']:.0f}; "
        f"errors {len(r['errors'])}",
        f"  compiling daemon     (ms, {len(r['compiler_ms']):4d} calls): {summary(r['compiler_ms'])}",
        f"  waiting daemons      (ms, {len(r['waiter_ms']):4d} calls): {summary(r['waiter_ms'])}",
        f"  waiter - compiler    (ms, same fusion):  {summary(r['extra_ms'])}",
    ]
    for e in r["errors"][:5]:
        lines.append(f"  error: {e}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default="2x10,3x20,4x40",
                   help="comma-separated NxM: N daemons, M new fusions (default 2x10,3x20,4x40)")
    p.add_argument("--out", help="also write the output to this file")
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless every call succeeded and each fusion compiled once")
    args = p.parse_args()
    configs = parse_configs(args.configs)
    header = (f"cluster_bench {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
              f"{platform.node()} ({os.cpu_count()} cores, {platform.machine()}), "
              f"fusiond {d.FUSIOND_BIN}; pointwise fusions at {SHAPES}, compile leases on")
    out = [header]
    print(header, flush=True)
    failed = False
    for i, (n, m) in enumerate(configs):
        tmp = d.TempDir("fusiond-cluster-bench-")
        try:
            r = run_config(n, m, 7000.0 + 1000.0 * i, tmp.path)
        finally:
            tmp.cleanup()
        text = report(r)
        print(text, flush=True)
        out.append(text)
        if r["errors"] or r["compiles"] != m:
            failed = True
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(out) + "\n")
    if args.check and failed:
        print("FAIL: a call failed or a fusion compiled more than once", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
