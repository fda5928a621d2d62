#!/usr/bin/env python3
"""Per-fusion medians over several bench/compile_time/run.sh JSON files.

    python3 bench/compile_time/medians.py RUN.json...

Prints, per fusion, the cold end-to-end time and the cold compile's CPU time
of every run and their medians, then each run's 1-minute load average at its
start and end: other work inflates wall time, not CPU time, so a median taken
on a busy machine says so beside it.
"""
import json
import statistics
import sys


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    if not runs:
        print("usage: medians.py RUN.json...", file=sys.stderr)
        return 2
    names = [f["fusion"] for f in runs[0]["fusions"] if "error" not in f]
    print(f"{'fusion':24} {'cold ms (each run)':>30} {'median':>8}   {'cpu ms (each run)':>24} {'median':>8}")
    for name in names:
        rows = [f for r in runs for f in r["fusions"] if f.get("fusion") == name and "error" not in f]
        cold = [f["cold_total_us"] / 1e3 for f in rows]
        cpu = [f["cold_cpu_us"] / 1e3 for f in rows]
        print(f"{name:24} {', '.join(f'{c:.1f}' for c in cold):>30} {statistics.median(cold):8.1f}   "
              f"{', '.join(f'{c:.1f}' for c in cpu):>24} {statistics.median(cpu):8.1f}")
    print("1-min load average at start/end of each run: " +
          ", ".join(f"{r['loadavg_1min_at_start']}/{r['loadavg_1min_at_end']}" for r in runs) +
          f" ({runs[0].get('cores', '?')} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
