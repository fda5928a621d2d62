"""Issue 5's acceptance list, item by item, from one full run's reports
(bench/gpu/full_run.sh: the corpus table, the issue-5 shapes' variants and
the wide-row check), under both timings the harness takes: do_bench (L2
cleared before every launch) and steady state (rotated inputs in one CUDA
graph; GPU.md's method allows either). % copy = the run's floor / time.

  python3 bench/gpu/acceptance_check.py CORPUS.json SHAPES.json [WIDE.json] [--corpus-dir DIR]

CORPUS.json: run.py's report of the corpus (device_run.sh); SHAPES.json:
variants.sh's merged report of the larger shapes and the 4-D batch norm
(bench/gpu/variants/larger-shapes.txt); WIDE.json: the wide-row
report (rows of 64K+ columns). --corpus-dir (default tests/corpus/fusions
beside the project) names which corpus rows are the corpus's own files.
Prints one line per item and method, PASS or FAIL with the figures (and
where a copy of the same bytes stands under that timing, the ceiling a
percent goal is read against); the exit status is 0 either way (a report,
not a gate)."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

NORM_BWD = [("rmsnorm_bwd_thunder", "2048x8192"), ("rmsnorm_bwd_manual", "2048x8192"),
            ("rmsnorm_bwd_manual", "16384x4096"), ("rmsnorm_bwd_manual", "4096x16384"),
            ("layernorm_bwd_thunder", "2048x8192"), ("layernorm_bwd_thunder", "16384x4096"),
            ("layernorm_bwd_thunder", "4096x16384")]
FORWARD = [("rmsnorm_fwd", "2048x8192"), ("layernorm_fwd", "2048x8192"), ("softmax_fwd", "4096x16384"),
           ("softmax_bwd", "4096x16384"), ("rmsnorm_fwd", "16384x4096"), ("layernorm_fwd", "16384x4096"),
           ("softmax_fwd", "16384x4096"), ("softmax_bwd", "16384x4096")]
METHODS = (("do_bench", "us"), ("steady", "steady_us"))


def row_key(row):
    """(definition, shape) of a report row: the fusion's name without a
    `_NxM` suffix (variants compiled `as=` a static shape) or a merged
    report's shape and variant, and its largest
    input's shape (the weight comes first in some definitions)."""
    # merge_reports.py names a variant's row 'fusion shape [variant]'.
    name = re.sub(r"_\d+(x\d+)+$", "", row["fusion"].split()[0])
    shape = max(row["shapes"], key=len)
    return name, "x".join(str(d) for d in shape)


def index(reports):
    """{(definition, shape): row}; a later report's row replaces an earlier
    one's only where the earlier has no timing of ours."""
    rows = {}
    for report in reports:
        for row in report["fusions"]:
            key = row_key(row)
            if key not in rows or "us" not in rows[key].get("ours", {}):
                rows[key] = row
    return rows


def figures(row, field):
    """(ours us, % copy, compile us or None) under one timing, or None."""
    ours = row.get("ours", {}).get(field)
    if ours is None:
        return None
    return ours, 100.0 * row["floor_us"] / ours, row.get("compile", {}).get(field)


def copy_note(row, field):
    """', same-size copy N%': where a copy of the row's bytes stands under
    the same timing (run.py's copy_same_us / copy_same_steady_us), the
    ceiling a percent goal is read against; '' without it."""
    copy = row.get({"us": "copy_same_us", "steady_us": "copy_same_steady_us"}[field])
    return f", same-size copy {100.0 * row['floor_us'] / copy:.0f}%" if copy else ""


def one_kernel_correct(row):
    ours = row.get("ours", {})
    return bool(ours.get("pass")) and len(ours.get("kernels", [])) == 1


def check(rows, wide_rows, corpus_names, corpus_rows=None):
    """The items as (item, method, verdict, detail) tuples; verdict is
    True, False or None (no figure in these reports)."""
    out = []

    def add(item, method, ok, detail):
        out.append((item, method, ok, detail))

    # The corpus item looks at the corpus report's rows (corpus_rows) when given.
    corpus = [r for r in (corpus_rows if corpus_rows is not None else rows).values()
              if not corpus_names or r.get("file") in corpus_names]
    bad = [f"{r['fusion']} {row_key(r)[1]}" for r in corpus if not one_kernel_correct(r)]
    add("every corpus fusion one kernel and correct", "-", not bad and bool(corpus),
        f"{len(corpus)} fusions" + (f"; not: {', '.join(bad)}" if bad else ""))
    for method, field in METHODS:
        for name, shape in NORM_BWD:
            row = rows.get((name, shape))
            f = figures(row, field) if row else None
            item = f"{name} {shape}: >= {80 if shape == '2048x8192' else 85}% of copy, faster than compile" + (
                ", >= 1.5x at 2048x8192" if shape == "2048x8192" else "")
            if f is None:
                add(item, method, None, "no figure")
                continue
            ours, pct, comp = f
            need_pct = 80 if shape == "2048x8192" else 85
            need_x = 1.5 if shape == "2048x8192" else 1.0
            x = comp / ours if comp else None
            ok = pct >= need_pct and x is not None and (x >= need_x if need_x > 1 else x > 1.0)
            add(item, method, ok, f"{ours:.1f} us, {pct:.0f}%, " + (f"{x:.2f}x compile" if x else "no compile") +
                copy_note(row, field))
        row = rows.get(("batchnorm_bwd_thunder", "16x128x768"))
        f = figures(row, field) if row else None
        if f is None:
            add("batchnorm_bwd_thunder one kernel, >= 3x compile", method, None, "no figure")
        else:
            x = f[2] / f[0] if f[2] else None
            # The issue's ~120 us for torch.compile is its launch latency,
            # which the steady state's CUDA graph takes away.
            add("batchnorm_bwd_thunder one kernel, >= 3x compile", method,
                one_kernel_correct(row) and x is not None and x >= 3.0,
                f"{f[0]:.1f} us, " + (f"{x:.2f}x compile" if x else "no compile") +
                (" (torch.compile without its host latency)" if method == "steady" else ""))
        row = rows.get(("batchnorm_bwd_4d", "256x64x56x56"))
        f = figures(row, field) if row else None
        add("batchnorm_bwd_4d 256x64x56x56 >= 70% of copy", method, None if f is None else f[1] >= 70,
            "no figure" if f is None else f"{f[0]:.1f} us, {f[1]:.0f}%" + copy_note(row, field))
        for name, shape in FORWARD:
            row = rows.get((name, shape))
            f = figures(row, field) if row else None
            item = f"{name} {shape}: >= 85% of copy, not slower than compile"
            if f is None:
                add(item, method, None, "no figure")
                continue
            ours, pct, comp = f
            x = comp / ours if comp else None
            add(item, method, pct >= 85 and x is not None and x >= 1.0,
                f"{ours:.1f} us, {pct:.0f}%, " + (f"{x:.2f}x compile" if x else "no compile") +
                copy_note(row, field))
        a, b = rows.get(("rmsnorm_bwd_thunder", "2048x8192")), rows.get(("rmsnorm_bwd_manual", "2048x8192"))
        fa, fb = (figures(a, field) if a else None), (figures(b, field) if b else None)
        if fa is None or fb is None:
            add("rmsnorm backward thunder and manual 2048x8192 within 5%", method, None, "no figure")
        else:
            gap = abs(fa[0] - fb[0]) / min(fa[0], fb[0])
            add("rmsnorm backward thunder and manual 2048x8192 within 5%", method, gap <= 0.05,
                f"{fa[0]:.1f} / {fb[0]:.1f} us, {100 * gap:.1f}% apart")
    wide = [r for r in wide_rows if max(max(r["shapes"], key=len)) >= 65536 and "us" in r.get("ours", {})]
    bad = [f"{r['fusion']} {row_key(r)[1]}" for r in wide if not one_kernel_correct(r)]
    add("rows of 65536+ one kernel, correct", "-", (not bad and bool(wide)) if wide_rows else None,
        f"{len(wide)} row(s)" + (f"; not: {', '.join(bad)}" if bad else "") if wide_rows else "no wide report")
    return out


def corpus_names(folder):
    """The corpus definitions' file names: a bundle's fusions/ lists them in
    its CORPUS file (scripts/device_bundle.sh; bench/gpu/variants.sh adds
    other definitions beside them), tests/corpus/fusions is all of them; an
    empty set (every row counts) where the folder is missing."""
    listed = os.path.join(folder, "CORPUS")
    if os.path.isfile(listed):
        with open(listed) as f:
            return set(f.read().split())
    if os.path.isdir(folder):
        return {n for n in os.listdir(folder) if n.endswith(".py")}
    return set()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("shapes")
    ap.add_argument("wide", nargs="?")
    ap.add_argument("--corpus-dir", default=os.path.join(_HERE, "..", "..", "tests", "corpus", "fusions"),
                    help="the corpus definitions (tests/corpus/fusions), or a bundle's .devcarry/fusions "
                         "whose CORPUS file lists them")
    args = ap.parse_args()
    try:
        reports = [json.load(open(p)) for p in (args.corpus, args.shapes)]
        wide = json.load(open(args.wide))["fusions"] if args.wide else []
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"acceptance_check: cannot read a report: {e}")
    items = check(index(reports), wide, corpus_names(args.corpus_dir), corpus_rows=index(reports[:1]))
    verdict = {True: "PASS", False: "FAIL", None: "n/a "}
    for item, method, ok, detail in items:
        print(f"{verdict[ok]}  {method:<8}  {item}: {detail}")
    for method, _ in METHODS:
        n = [ok for _, m, ok, _ in items if m in (method, "-")]
        print(f"{method}: {n.count(True)} of {len(n)} items pass, {n.count(False)} fail, {n.count(None)} without a figure")


if __name__ == "__main__":
    main()
