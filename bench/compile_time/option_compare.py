#!/usr/bin/env python3
"""Baseline kernels against the same kernels compiled with an NVRTC option.

    option_compare.py [--loss-pct 1] --base GPU.json... --option GPU.json...

Reads bench/gpu/run.py reports (several rounds of each side) and compares,
per fusion, our kernels' best round under two timings: do_bench with
preallocated outputs (prealloc_us, else us) and steady state (steady_us).
The best round is the least disturbed one on both sides. Prints one row per
fusion; exit status 1 when the option's time exceeds the baseline's by more
than --loss-pct percent under either timing, when an option kernel fails
its check, or when a fusion timed on the baseline has no option timing.
"""

from __future__ import annotations

import argparse
import json
import sys

TIMINGS = (("do_bench", ("prealloc_us", "us")), ("steady", ("steady_us",)))


def best_times(paths, unread):
    """{fusion: {"do_bench": us, "steady": us, "fail": reason or ""}} over the
    reports; a report that cannot be read is appended to `unread`."""
    out = {}
    for path in paths:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            unread.append(f"{path}: {e}")
            continue
        for row in report.get("fusions", []):
            ours = row.get("ours", {})
            entry = out.setdefault(row["fusion"], {"fail": ""})
            if "error" in ours or not ours.get("pass", False):
                entry["fail"] = ours.get("error", "check failed")[:120]
                continue
            for name, keys in TIMINGS:
                us = next((ours[k] for k in keys if isinstance(ours.get(k), (int, float))), None)
                if us is not None:
                    entry[name] = min(entry.get(name, float("inf")), us)
    return out


def compare(base, option, loss_pct):
    """(rows, failures): one printable row per fusion and why the check fails."""
    rows, failures = [], []
    for fusion in sorted(base):
        b, o = base[fusion], option.get(fusion)
        if b["fail"]:
            failures.append(f"{fusion}: baseline kernels: {b['fail']}")
        if o is None:
            failures.append(f"{fusion}: no option timing")
            continue
        if o["fail"]:
            failures.append(f"{fusion}: option kernels: {o['fail']}")
        cells = []
        for name, _ in TIMINGS:
            if name not in b:
                continue
            if name not in o:
                failures.append(f"{fusion}: no option {name} timing")
                continue
            change = 100.0 * (o[name] / b[name] - 1.0)
            cells.append(f"{name} {b[name]:9.2f} -> {o[name]:9.2f} us ({change:+5.2f}%)")
            if change > loss_pct:
                failures.append(f"{fusion}: {name} {change:+.2f}% (limit +{loss_pct}%)")
        rows.append(f"{fusion:24s} " + "   ".join(cells))
    return rows, failures


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", nargs="+", required=True, help="run.py reports of the baseline kernels")
    p.add_argument("--option", nargs="+", required=True, help="run.py reports of the option's")
    p.add_argument("--loss-pct", type=float, default=1.0, help="largest slowdown allowed, percent")
    args = p.parse_args(argv)
    unread = []
    base, option = best_times(args.base, unread), best_times(args.option, unread)
    for u in unread:
        print("FAIL cannot read the report " + u)
    if not base:
        print("option check: FAIL (no fusions in the baseline reports)")
        return 1
    rows, failures = compare(base, option, args.loss_pct)
    failures += [f"unreadable report {u}" for u in unread]
    print(f"best of {len(args.base)} baseline and {len(args.option)} option rounds per fusion:")
    print("\n".join(rows))
    for f in failures:
        print("FAIL " + f)
    print(f"option check: {'FAIL' if failures else 'PASS'} ({len(failures)} failures, "
          f"loss limit {args.loss_pct}%)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
