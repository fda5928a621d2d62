"""One report from several of run.py's: `variants.sh run` has run.py write a
JSON report per variant, and a device call brings back at most eight files,
so a table of more variants than that comes back in pieces. This merges the
reports into one JSON whose rows carry their variant's name (the report's
--tag, from its file name gpu-DATE-TAG.json), and draws its chart with run.py's plot.

  python3 bench/gpu/merge_reports.py OUT_BASE REPORT.json [REPORT.json ...]

writes OUT_BASE.json and OUT_BASE.png (the chart needs matplotlib, as on the
GPU host; without it only the JSON is written)."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys


def merge(paths):
    """The reports at `paths` as one: the first's run metadata, every row,
    each named 'fusion shape [variant]' with its variant in row['variant']."""
    merged, rows = None, []
    for path in paths:
        report = json.load(open(path))
        merged = merged or {k: v for k, v in report.items() if k != "fusions"}
        m = re.match(r"gpu-\d{4}-\d\d-\d\d-?(.*)\.json$", os.path.basename(path))
        tag = m.group(1) if m and m.group(1) else os.path.basename(path)
        for row in report.get("fusions", []):
            shapes = [s for s in row.get("shapes", []) if isinstance(s, list)]
            shape = "x".join(map(str, max(shapes, key=math.prod))) if shapes else ""
            row["variant"] = tag
            row["fusion"] = f"{row['fusion']} {shape} [{tag}]".replace("  ", " ")
            rows.append(row)
    merged = merged or {}
    merged["merged_from"] = [os.path.basename(p) for p in paths]
    merged["fusions"] = rows
    return merged


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_base", help="OUT_BASE: writes OUT_BASE.json and OUT_BASE.png")
    p.add_argument("reports", nargs="+", help="run.py JSON reports")
    args = p.parse_args(argv)
    report = merge(args.reports)
    with open(args.out_base + ".json", "w") as f:
        json.dump(report, f, indent=1)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import report as chart  # noqa: E402  (the harness's plot)
        chart.plot(report["fusions"], args.out_base + ".png")
    except ImportError as e:
        print(f"merge_reports: no chart ({e})", file=sys.stderr)
    print(f"merged {len(report['fusions'])} rows from {len(args.reports)} reports into {args.out_base}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
