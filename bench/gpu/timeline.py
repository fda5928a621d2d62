#!/usr/bin/env python3
"""Where a generated kernel's time goes, block by block (run on the GPU machine).

Takes the artifacts fusiond_cgdev wrote for one kernel (the .cu and
manifest.json), inserts timestamp probes before chosen lines of the source,
compiles it with cupy's NVRTC and launches it on random inputs at the given
sizes. Thread (0, 0) of every block records %globaltimer (ns, comparable
across SMs) at each probe; the table gives, per probe, the median and max
over blocks of the time since the earliest block started, and the kernel's
own time from CUDA events (median of --rep launches; no L2 flush unless
--flush).

  python3 bench/gpu/timeline.py ARTIFACT_DIR s0=2048 s1=8192 [--probe NAME=REGEX ...] [--cu EDITED.cu]
                                 [--by-sm PROBE]

Default probes fit the inner-outer persistent kernels: loop (the main loop
starts), partials (the column partials are stored), sync (the grid barrier),
epilogue (after it), end. A probe goes before the first line matching its
regex after the previous probe's line. A diagnostic, not a benchmark: the
probes cost a few instructions each. --by-sm PROBE also prints, per group of
8 SM ids (%smid), how many blocks ran there and the mean and max of that
probe, and the ten latest blocks: whether the same SMs are always late.
"""
import argparse
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "client", "python"))
from fusiond.runtime import Expr  # noqa: E402

DEFAULT_PROBES = [
    ("loop", r"for \(i64 it = 0;"),
    ("partials", r"^  if \(fits\) \{$"),
    ("sync", r"fz_grid_sync\(bar\);"),
    ("epilogue", r"^  \{$"),
    ("end", r"^\}$"),
]
STAMP = ("if (threadIdx.x == 0 && threadIdx.y == 0) {{ u64 fz_t; "
         "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(fz_t)); "
         "fz_tl[((u64)blockIdx.y * gridDim.x + blockIdx.x) * {n} + {i}] = fz_t; }}")
# The block's SM, in the row's last slot.
SMID = ("if (threadIdx.x == 0 && threadIdx.y == 0) {{ unsigned fz_sm; "
        "asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(fz_sm)); "
        "fz_tl[((u64)blockIdx.y * gridDim.x + blockIdx.x) * {n} + {i}] = fz_sm; }}")


def instrument(src, kernel, probes):
    lines = src.split("\n")
    head = next(i for i, l in enumerate(lines) if l.startswith('extern "C"') and kernel in l)
    n = len(probes) + 2  # start, the probes, the SM id
    lines[head] = lines[head].replace(") {", ", u64* fz_tl) {", 1)
    lines.insert(head + 1, STAMP.format(n=n, i=0))
    lines.insert(head + 2, SMID.format(n=n, i=n - 1))
    pos = head + 3
    # The last line of the kernel: the "end" probe must not match an inner brace.
    for i, (name, regex) in enumerate(probes, start=1):
        rx = re.compile(regex)
        at = next((j for j in range(pos, len(lines)) if rx.search(lines[j])), None)
        if name == "end":
            at = max(j for j in range(pos, len(lines)) if lines[j] == "}")
        if at is None:
            sys.exit(f"timeline: probe {name}: no line matches {regex!r} after line {pos}")
        lines.insert(at, STAMP.format(n=n, i=i))
        pos = at + 2
    return "\n".join(lines), n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifacts")
    ap.add_argument("sizes", nargs="*", help="SYMBOL=VALUE for every size symbol of the manifest")
    ap.add_argument("--probe", action="append", default=[], help="NAME=REGEX, in source order")
    ap.add_argument("--rep", type=int, default=20)
    ap.add_argument("--dump", help="write the instrumented source here")
    ap.add_argument("--cu", help="time this source (same kernel name and parameters) instead of the artifact's")
    ap.add_argument("--by-sm", metavar="PROBE", help="that probe's times by SM id (see above)")
    ap.add_argument("--flush", action="store_true",
                    help="zero a 256 MB buffer before every launch, as do_bench clears the L2")
    args = ap.parse_args()

    import cupy as cp
    import numpy as np

    m = json.load(open(os.path.join(args.artifacts, "manifest.json")))
    if len(m["kernels"]) != 1:
        sys.exit("timeline: one kernel per artifact only")
    k = m["kernels"][0]
    env = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in args.sizes}
    ev = lambda e: Expr(e)(env)  # noqa: E731
    probes = [tuple(p.split("=", 1)) for p in args.probe] or DEFAULT_PROBES
    cu = open(args.cu or os.path.join(args.artifacts, k["binary"].replace(".cubin", ".cu"))).read()
    src, n = instrument(cu, k["name"], probes)
    if args.dump:
        open(args.dump, "w").write(src)
    mod = cp.RawModule(code=src, options=("-std=c++17",), name_expressions=None)
    fn = mod.get_function(k["name"])
    smem = ev(k["smem_bytes"])
    # The opt-in covers static plus dynamic shared memory past 48 KiB: a
    # kernel with exactly 48 KiB of dynamic and a few bytes of static memory
    # needs it too (layernorm backward 16384x4096: CUDA_ERROR_INVALID_VALUE
    # without).
    if smem > 0:
        fn.max_dynamic_shared_size_bytes = smem

    rng = np.random.default_rng(0)

    def tensor(spec):
        shape = tuple(ev(s) for s in spec["shape"])
        a = rng.standard_normal(shape, dtype=np.float32) + 2.0  # away from zero: saved stats divide
        if spec["dtype"] == "bfloat16":
            return cp.asarray((a.view(np.uint32) >> 16).astype(np.uint16))
        if spec["dtype"] == "float16":
            return cp.asarray(a.astype(np.float16))
        return cp.asarray(a.astype({"float32": np.float32, "float64": np.float64}[spec["dtype"]]))

    ins = [tensor(s) for s in m["inputs"]]
    outs = [cp.empty(tuple(ev(s) for s in o["shape"]),
                     dtype={"bfloat16": cp.uint16, "float16": cp.float16, "float32": cp.float32}[o["dtype"]])
            for o in m["outputs"]]
    wss = [cp.zeros(max(ev(w["bytes"]), 1), dtype=cp.uint8) for w in m["workspaces"]]
    grid = tuple(ev(g) for g in k["grid"])
    block = tuple(ev(b) for b in k["block"])
    blocks = grid[0] * grid[1] * grid[2]
    tl = cp.zeros(blocks * n, dtype=cp.uint64)
    params = []
    for p in k["params"]:
        kind = p["kind"]
        if kind == "input":
            params.append(ins[p["index"]])
        elif kind == "output":
            params.append(outs[p["index"]])
        elif kind == "workspace":
            params.append(wss[p["index"]])
        elif kind == "size":
            params.append(np.int64(env[p["symbol"]]))
        else:
            sys.exit(f"timeline: parameter kind {kind} not handled")
    params.append(tl)
    params = tuple(params)

    flush = cp.empty(256 << 20, dtype=cp.uint8) if args.flush else None

    def launch():
        fn(grid, block, params, shared_mem=smem)

    for _ in range(3):
        launch()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(args.rep):
        if flush is not None:
            flush.fill(0)
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1000)
    raw = cp.asnumpy(tl).reshape(blocks, n).astype(np.int64)
    sm = raw[:, n - 1]
    t = raw[:, : n - 1].copy()
    t -= t[:, 0].min()
    names = ["start"] + [p[0] for p in probes]
    print(f"{m['fusion']} {env} grid {grid} block {block} smem {smem}: "
          f"{statistics.median(times):.1f} us per launch (events, median of {args.rep})")
    print(f"{'probe':<10} {'min us':>8} {'median us':>10} {'max us':>8}   (since the first block started, last launch)")
    for i, name in enumerate(names):
        col = t[:, i] / 1000
        print(f"{name:<10} {col.min():8.2f} {np.median(col):10.2f} {col.max():8.2f}")
    if args.by_sm:
        if args.by_sm not in names:
            sys.exit(f"timeline: --by-sm {args.by_sm}: not a probe ({', '.join(names)})")
        col = t[:, names.index(args.by_sm)] / 1000
        print(f"{args.by_sm} by SM id group: ids, blocks, mean us, max us")
        for g in range(0, int(sm.max()) + 1, 8):
            sel = (sm >= g) & (sm < g + 8)
            if sel.any():
                print(f"  {g:3d}-{g + 7:<3d} {int(sel.sum()):3d} {col[sel].mean():8.2f} {col[sel].max():8.2f}")
        per_sm = np.bincount(sm, minlength=int(sm.max()) + 1)
        for c in sorted(set(per_sm[per_sm > 0])):
            sel = per_sm[sm] == c
            print(f"  blocks on an SM with {c} block(s): {int(sel.sum())}, mean {col[sel].mean():.2f} us")
        late = np.argsort(col)[-10:][::-1]
        print("  latest blocks (block: SM, us): " + ", ".join(f"{b}: {sm[b]}, {col[b]:.2f}" for b in late))


if __name__ == "__main__":
    main()
