#!/usr/bin/env python3
"""Shared-tier benchmark: what a daemon's cold cache costs with and without
the cluster's Redis, in one run on this machine.

Starts a real redis-server and two real fusiond daemons (separate RocksDB
caches, both --redis) on loopback. Daemon A compiles N distinct fusions
(misses: the full pipeline with NVRTC). Daemon B then asks for the same N:
each is a local miss served from the shared tier. B asks again: local hits.
Prints the medians side by side with their ratios and writes
bench/results/shared-tier-<date>.json. Not a test.

    PYTHONPATH=<build>/python FUSIOND_BIN=<build>/server/fusiond \\
        /usr/bin/python3 bench/service/shared_tier_bench.py [--fusions N]
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(_ROOT, "tests", "service"))
import daemon as d  # noqa: E402

SHAPES = [[64, 256]]


def timed(client, graph):
    t = time.perf_counter()
    r = client.compile(graph, SHAPES)
    return (time.perf_counter() - t) * 1e3, r.cache


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fusions", type=int, default=20, help="distinct fusions (default 20)")
    p.add_argument("--results-dir", default=os.path.join(_ROOT, "bench", "results"))
    args = p.parse_args()
    tmp = d.TempDir("fusiond-shared-bench-")
    redis = d.Redis(tmp.path)
    daemons = [d.Daemon(os.path.join(tmp.path, n)) for n in ("a", "b")]
    try:
        redis.start()
        secret = os.path.join(tmp.path, "cluster-secret")  # signs the records
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex())
        for x in daemons:
            x.extra_args = ["--redis", redis.address, "--redis-secret-file", secret]
            x.start()
        a, b = daemons
        graphs = [d.scaled_graph(1.0 + i / 8.0) for i in range(args.fusions)]
        rows = {"compile on A (miss)": [], "B from the shared tier": [], "B local hit": []}
        for g in graphs:
            ms, cache = timed(a.client, g)
            assert cache == "miss", cache
            rows["compile on A (miss)"].append(ms)
        for g in graphs:
            ms, cache = timed(b.client, g)
            assert cache == "hit", cache
            rows["B from the shared tier"].append(ms)
        for g in graphs:
            ms, cache = timed(b.client, g)
            assert cache == "hit", cache
            rows["B local hit"].append(ms)
        shared_hits = d.metric(b.metrics_text(), "fusiond_shared_tier_hits_total")
        compiles_b = d.metric(b.metrics_text(), "fusiond_compiles_total")
    finally:
        for x in daemons:
            x.stop()
        redis.stop()
        tmp.cleanup()
    medians = {k: statistics.median(v) for k, v in rows.items()}
    miss = medians["compile on A (miss)"]
    print(f"{args.fusions} distinct fusions, Compile RPC wall time (ms, median), loopback, "
          f"{os.cpu_count()} cores")
    print(f"{'':28} {'median ms':>10} {'p90 ms':>8} {'vs compile':>11}")
    for k, v in rows.items():
        p90 = sorted(v)[int(0.9 * (len(v) - 1))]
        print(f"{k:28} {medians[k]:10.2f} {p90:8.2f} {miss / medians[k]:10.1f}x")
    print(f"daemon B: shared-tier hits {shared_hits:.0f}, compiles {compiles_b:.0f}")
    os.makedirs(args.results_dir, exist_ok=True)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = os.path.join(args.results_dir, f"shared-tier-{date}.json")
    with open(out, "w") as f:
        json.dump({"date": date, "fusions": args.fusions, "cpu_count": os.cpu_count(),
                   "ms": rows, "median_ms": medians, "b_shared_hits": shared_hits,
                   "b_compiles": compiles_b}, f, indent=1)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
