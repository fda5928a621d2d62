#!/usr/bin/env python3
"""New batch sizes of a symbolic definition: what a daemon's compile costs
the first time, for each further batch size (a new cache record whose kernel
text the daemon compiled before: NvrtcOutputCache), and for a repeat (a
hit), side by side in one run on this machine.

Starts a real fusiond on loopback (fresh cache) and asks it, through
`fusionc --server`, for rmsnorm_bwd_manual (the corpus) at several batch
sizes, then for each again, then restarts it and asks for three more
sizes (found in the stored records). Prints the daemon's own compile time (its
"compiled" log events) and fusionc's wall time per request, medians with
their ratios to the first compile, and writes
bench/results/batch-size-<date>.json. Not a test.

    PYTHONPATH=<build>/python FUSIOND_BIN=<build>/server/fusiond \\
    FUSIONC_BIN=<build>/client/fusionc/fusionc \\
        /usr/bin/python3 bench/service/batch_size_bench.py
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(_ROOT, "tests", "service"))
import daemon as d  # noqa: E402

ROWS = [2048, 1024, 3000, 4096, 512, 8192, 6144, 2500]
AFTER_RESTART = [1536, 5000, 7000]


def compile_once(fusionc, target, path, rows, cols):
    shapes = f"{rows}x{cols};{rows}x1;{rows}x{cols};{cols}"
    t = time.perf_counter()
    out = subprocess.run([fusionc, "--server", target, "compile", path, "--shapes", shapes, "--json"],
                         capture_output=True, text=True, check=True).stdout
    wall = (time.perf_counter() - t) * 1e3
    report = json.loads(out[:out.rindex("}") + 1])
    return wall, report["cache"]


def compiled_events(log_text):
    events = []
    for line in log_text.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "compiled":
            events.append(e["micros"] / 1e3)
    return events


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fusion", default=os.path.join(_ROOT, "tests", "corpus", "fusions", "rmsnorm_bwd_manual.py"))
    p.add_argument("--cols", type=int, default=8192)
    p.add_argument("--results-dir", default=os.path.join(_ROOT, "bench", "results"))
    args = p.parse_args()
    fusionc = os.environ.get("FUSIONC_BIN", "fusionc")
    tmp = d.TempDir("fusiond-batch-bench-")
    daemon = d.Daemon(os.path.join(tmp.path, "cache"))
    rows = {"first batch size (NVRTC)": [], "new batch size": [], "repeat (hit)": [],
            "new size after a restart": []}
    try:
        daemon.start()
        target = daemon.target

        def walls_of(sizes, expected):
            out = []
            for r in sizes:
                wall, cache = compile_once(fusionc, target, args.fusion, r, args.cols)
                assert cache == expected, (r, cache)
                out.append(wall)
            return out

        walls = walls_of(ROWS, "miss")
        hits = walls_of(ROWS, "hit")
        reuses = d.metric(daemon.metrics_text(), "fusiond_nvrtc_reuses_total")
        # A new process: the kernel is found in the stored records.
        daemon.restart()
        restarted = walls_of(AFTER_RESTART, "miss")
        reuses_after = d.metric(daemon.metrics_text(), "fusiond_nvrtc_reuses_total")
        with open(daemon.log_path, errors="replace") as f:
            compiled = compiled_events(f.read())
    finally:
        daemon.stop()
        tmp.cleanup()
    assert len(compiled) == len(ROWS) + len(AFTER_RESTART), compiled
    rows["first batch size (NVRTC)"] = [(compiled[0], walls[0])]
    rows["new batch size"] = list(zip(compiled[1:len(ROWS)], walls[1:]))
    rows["repeat (hit)"] = [(0.0, w) for w in hits]
    rows["new size after a restart"] = list(zip(compiled[len(ROWS):], restarted))
    first_ms, first_wall = rows["first batch size (NVRTC)"][0]
    print(f"{os.path.basename(args.fusion)} x {args.cols} columns at {len(ROWS)} batch sizes "
          f"({', '.join(map(str, ROWS))}); {os.cpu_count()} cores")
    print(f"{'':26} {'daemon compile ms':>18} {'vs first':>9} {'fusionc wall ms':>16} {'vs first':>9}")
    medians = {}
    for k, v in rows.items():
        c = statistics.median(x for x, _ in v)
        w = statistics.median(y for _, y in v)
        medians[k] = {"daemon_compile_ms": c, "fusionc_wall_ms": w}
        ratio = f"{first_ms / c:8.0f}x" if c > 0 else f"{'-':>9}"
        print(f"{k:26} {c:18.2f} {ratio} {w:16.2f} {first_wall / w:8.1f}x")
    print(f"fusiond_nvrtc_reuses_total {reuses:.0f} (of {len(ROWS) - 1} new batch sizes), after the restart "
          f"{reuses_after:.0f} (of {len(AFTER_RESTART)}); fusionc's wall includes its process start")
    os.makedirs(args.results_dir, exist_ok=True)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = os.path.join(args.results_dir, f"batch-size-{date}.json")
    with open(out, "w") as f:
        json.dump({"date": date, "fusion": os.path.basename(args.fusion), "cols": args.cols, "rows": ROWS,
                   "after_restart": AFTER_RESTART, "cpu_count": os.cpu_count(), "ms": rows, "median": medians,
                   "nvrtc_reuses": reuses, "nvrtc_reuses_after_restart": reuses_after},
                  f, indent=1)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
