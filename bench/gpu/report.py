"""The GPU harness's table and chart (bench/gpu/run.py, merge_reports.py):
plain Python, matplotlib for the chart only."""

from __future__ import annotations

import math


def three_shapes_failed(results):
    """A failed shape, or none checked (every one refused)."""
    return bool(results) and (any(t["pass"] is False for t in results)
                              or all(t["pass"] is None for t in results))


def fmt_us(v):
    return f"{v:9.1f}" if isinstance(v, (int, float)) and v == v and v is not None else "      n/a"


def print_table(rows, copy_bw):
    print(f"\ncopy bandwidth (D2D, read+write): {copy_bw / 1e12:.2f} TB/s")
    head = (f"{'fusion':24} {'shape':18} {'floor us':>9} {'eager us':>9} {'compile us':>10} "
            f"{'ours us':>9} {'ours/compile':>12} {'ours %bw':>8} {'cmp %bw':>8} {'ours err':>9} "
            f"{'result':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['fusion']:24} ERROR {r['error']}")
            continue
        tensor_shapes = [s for s in r["shapes"] if isinstance(s, list)]
        biggest = max(tensor_shapes, key=lambda s: math.prod(s)) if tensor_shapes else []
        shape = "x".join(str(d) for d in biggest)
        e, c, o = r.get("eager", {}), r.get("compile", {}), r.get("ours", {})
        speed = "%.2fx" % (c["us"] / o["us"]) if "us" in c and "us" in o else "n/a"
        result = ("PASS" if o.get("pass") else "FAIL") if "us" in o else "n/a"
        o_bw = "%.0f%%" % o["pct_copy_bw"] if "us" in o else "n/a"
        c_bw = "%.0f%%" % c["pct_copy_bw"] if "us" in c else "n/a"
        o_err = "%.1e" % o["max_rel_err"] if "us" in o else "n/a"
        print(f"{r['fusion']:24} {shape:18} {r['floor_us']:9.1f} {fmt_us(e.get('us'))} "
              f"{fmt_us(c.get('us')):>10} {fmt_us(o.get('us'))} {speed:>12} {o_bw:>8} {c_bw:>8} "
              f"{o_err:>9} {result:>6}")
    print("\nbaseline checks (max rel err vs float64; eager / compile):")
    for r in rows:
        if "error" in r:
            continue
        parts = []
        for impl in ("eager", "compile"):
            x = r.get(impl, {})
            parts.append(f"{impl} {x['max_rel_err']:.1e} {'ok' if x['pass'] else 'FAIL'}" if "us" in x
                         else f"{impl} {x.get('error', 'n/a')[:80]}")
        print(f"  {r['fusion']:24} " + "; ".join(parts))
        if "copy_same_us" in r:
            pct = [f"{impl} {100.0 * r['copy_same_us'] / r[impl]['us']:.0f}%" for impl in ("compile", "ours")
                   if "us" in r.get(impl, {})]
            print(f"  {'':24} same-size copy {r['copy_same_us']:.1f} us "
                  f"({100.0 * r['floor_us'] / r['copy_same_us']:.0f}% of the 1 GiB rate)"
                  + (": " + ", ".join(pct) + " of it" if pct else ""))
        graph = [f"{impl} {r[impl]['graph_us']:.1f}" for impl in ("eager", "compile", "ours")
                 if "graph_us" in r.get(impl, {})]
        if graph:
            print(f"  {'':24} CUDA-graph replay us: " + ", ".join(graph))
        if "steady_us" in r.get("ours", {}) or "copy_same_steady_us" in r:
            st = [f"{impl} {r[impl]['steady_us']:.1f}" for impl in ("eager", "compile", "ours")
                  if "steady_us" in r.get(impl, {})]
            o, c = r.get("ours", {}), r.get("compile", {})
            extra = []
            if "steady_us" in o:
                extra.append(f"ours {o['steady_pct_copy_bw']:.0f}% of copy")
                if "steady_us" in c:
                    extra.append(f"ours/compile {c['steady_us'] / o['steady_us']:.2f}x")
                if "copy_same_steady_us" in r:
                    extra.append(f"same-size copy {r['copy_same_steady_us']:.1f} "
                                 f"({100.0 * r['floor_us'] / r['copy_same_steady_us']:.0f}%)")
            print(f"  {'':24} steady state ({r.get('steady_sets', '?')} rotated sets) us: " + ", ".join(st)
                  + ("; " + ", ".join(extra) if extra else ""))
        for impl in ("eager", "compile", "ours"):
            for key in ("graph_error", "steady_error"):
                if key in r.get(impl, {}):
                    print(f"  {'':24} {impl} {key.replace('_', ' ')}: {r[impl][key][:120]}")
        if "steady_error" in r:
            print(f"  {'':24} {r['steady_error'][:120]}")
        if "error" in r.get("ours", {}):
            print(f"  {'':24} ours: {r['ours']['error'][:200]}")
        for t in r.get("three_shapes", []):
            if "outside" in t:
                print(f"  {'':24} one cubin at {t['shapes'][0]}: outside its shape class, refused "
                      f"before launch ({t['outside'].split(';')[0]})")
                continue
            print(f"  {'':24} one cubin at {t['shapes'][0]}: {'PASS' if t['pass'] else 'FAIL'} "
                  + (t.get("error", "") or ", ".join(f"{c['max_rel_err']:.1e}" + (f" ({c['why']})" if
                                                      c.get("why") else "") for c in t["check"])))
        if three_shapes_failed(r.get("three_shapes", [])) and all(
                t["pass"] is None for t in r["three_shapes"]):
            print(f"  {'':24} one cubin at other shapes: FAIL (every shape refused: nothing checked)")
        if "prealloc_us" in r.get("ours", {}):
            print(f"  {'':24} ours with preallocated outputs: {r['ours']['prealloc_us']:.1f} us")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if "error" not in r]
    impls = [("eager", "PyTorch eager"), ("compile", "torch.compile"), ("ours", "fusiond")]
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(rows)), 5))
    width = 0.27
    for k, (impl, label) in enumerate(impls):
        vals = [r.get(impl, {}).get("pct_copy_bw", 0.0) for r in rows]
        bars = ax.bar([i + (k - 1) * width for i in range(len(rows))], vals, width, label=label)
        for b, r in zip(bars, rows):
            x = r.get(impl, {})
            if "us" in x:
                ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 1, f"{x['us']:.0f}",
                        ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["fusion"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("% of D2D copy bandwidth (labels: median us)")
    ax.axhline(100, color="gray", lw=0.5)
    ax.legend()
    ax.set_title("fusiond vs PyTorch on the same definitions")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
