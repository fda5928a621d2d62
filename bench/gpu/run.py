#!/usr/bin/env python3
"""GPU harness: our kernels vs PyTorch eager vs torch.compile, one run.

    python3 bench/gpu/run.py --fusions F1.py F2.py ... [--artifacts DIR] [--out DIR]

For every repro script F (the fd.ops text form of tests/corpus/fusions), executed
through the torch front end (client/python/fusiond/frontend_torch.py):

* eager: the definition run op by op in PyTorch;
* compile: torch.compile of the same function;
* ours: the kernels `fusionc compile F --out DIR/<stem>` produced, launched
  by client/python/fusiond/runtime.py (skipped when DIR/<stem> is missing);
* reference: the same definition in float64 (casts to bf16/fp16 rounded).

Correctness (bench/gpu/checks.py): per output, the per-element relative
error with a floor of 1e-3 times the output's largest value (the C++
MaxRelativeError); bf16 outputs pass at <= 2e-2, fp16 at <= 2e-3, fp32 at
<= 1e-4; a NaN or infinity the reference lacks fails; the output's dtype must
be eager's (torch's type promotion of the same definition). Our outputs are
filled with NaN before each checked launch, so an element the kernels never
write fails.

Timing: triton.testing.do_bench median (it clears L2 between repetitions),
after a warm-up. All three allocate their outputs in the timed call (ours
through the runtime's allocation, as eager and torch.compile do); ours with
preallocated outputs is reported beside it (prealloc_us). Bytes moved =
every input read once + every output written once; achieved bandwidth is
reported as a fraction of the device-to-device copy bandwidth measured in
the same run (bytes read + written / time of a 1 GiB copy_). A copy_ of
the fusion's own byte count, timed the same way, is printed beside it: at
100 MB the launch, the tail and the dirty lines the L2 flush leaves behind
cost a copy too, so it is the ceiling at that size.

Steady state (--no-steady skips it): every implementation and the same-size
copy also run as one CUDA graph of 48 launches over rotated input (and
output) sets, together larger than the L2, with no flush in between; time
per launch = graph time / launches (median of 15 replays). That is what a
training step sees back to back, and it charges each launch only its own
bytes (the flush's dirty lines are the previous launch's outputs instead).

Also "one cubin, three shapes": each symbolic definition with artifacts is
run by its one compiled artifact at three other shapes and checked.

Writes a table to stdout, gpu-<date>.json and gpu-<date>.png under --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
import traceback

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# The fusiond package from this tree (its __init__ imports the gRPC client
# only on first use, so torch alone is enough here).
sys.path.insert(0, os.path.join(_ROOT, "client", "python"))
from fusiond import frontend_torch as frontend  # noqa: E402
from fusiond import runtime  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402  (the error measure, numpy only)
from report import plot, print_table, three_shapes_failed  # noqa: E402,F401  (merge_reports.py too)

# Other shapes for the "one cubin, three shapes" check: old extent -> new.
THREE_SHAPES = [
    {2048: 1024, 8192: 4096, 4096: 1024, 16384: 4096},
    {2048: 4096, 8192: 1024, 4096: 8192, 16384: 768},
    {2048: 333, 8192: 5000, 4096: 777, 16384: 3000},
]


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def to_numpy(t):
    """A tensor's values as a float64 numpy array on the host."""
    import torch
    return t.detach().to(torch.float64).cpu().numpy()


def check_outputs(outs, refs, want_dtypes=None):
    """checks.check_output per output (the per-element measure, the dtype
    against want_dtypes: eager's, i.e. torch's type promotion of the same
    definition); a missing or extra output is a failed row."""
    rows = []
    for i, (o, r) in enumerate(zip(outs, refs)):
        want = want_dtypes[i] if want_dtypes is not None and i < len(want_dtypes) else None
        rows.append(checks.check_output(to_numpy(o), to_numpy(r), dtype_name(o), want))
    if len(outs) != len(refs):
        rows.append({"dtype": "?", "shape": [], "max_rel_err": float("inf"), "pass": False,
                     "why": f"{len(outs)} outputs, expected {len(refs)}"})
    return rows


DEVICE = "cuda"


def bench(fn, warmup_ms, rep_ms):
    """Median time of fn in microseconds."""
    if DEVICE == "cuda":
        from triton.testing import do_bench
        return do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median") * 1e3
    times = []  # --device cpu: a smoke test of the harness itself
    for _ in range(5):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return sorted(times)[len(times) // 2]


def synchronize():
    import torch
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def copy_bandwidth(warmup_ms, rep_ms):
    """Device-to-device copy bandwidth in bytes/s (read + write)."""
    import torch
    n = 1 << 30 if DEVICE == "cuda" else 1 << 24
    src = torch.empty(n, dtype=torch.uint8, device=DEVICE).random_()
    dst = torch.empty_like(src)
    us = bench(lambda: dst.copy_(src), warmup_ms, rep_ms)
    return 2 * n / (us * 1e-6)


def copy_elems(nbytes):
    """The bytes a same-size copy reads: half of nbytes, rounded down to a
    multiple of 4 KiB (at most 4 KiB less). A CUDA graph's memcpy node of a
    size that is not one ran at 64% of the copy rate on the H200 (154141312
    bytes: 113.2 us; 4 KiB less: 73.8 us; under do_bench both 77-80 us)."""
    half = max(nbytes // 2, 1)
    return half // 4096 * 4096 if half >= 4096 else half


def same_size_copy_us(nbytes, warmup_ms, rep_ms):
    """do_bench median of a copy_ moving nbytes (half read, half written):
    the ceiling a kernel of this size reaches under the same timing (launch,
    the L2 flush's dirty lines, the tail), unlike the 1 GiB copy rate."""
    import torch
    n = copy_elems(nbytes)
    src = torch.empty(n, dtype=torch.uint8, device=DEVICE).random_()
    dst = torch.empty_like(src)
    return bench(lambda: dst.copy_(src), warmup_ms, rep_ms)


L2_BYTES = 60 << 20  # H200 (GPU.md)


def rotations(nbytes):
    """Buffer sets to rotate through so that two uses of one set are
    separated by at least twice the L2's worth of traffic (each launch moves
    nbytes)."""
    return max(2, math.ceil(2 * L2_BYTES / max(nbytes, 1)) + 1)


def rotated_sets(inputs, nbytes):
    """The inputs plus rotations(nbytes) - 1 clones."""
    import torch
    sets = [list(inputs)]
    for _ in range(rotations(nbytes) - 1):
        sets.append([x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    return sets


def steady_us(calls, launches=48, replays=15):
    """Steady-state time per launch: one CUDA graph runs calls[0], calls[1],
    ... in turn (each on its own input and output buffers, larger together
    than the L2) until `launches` launches; the median over replays of
    graph time / launches. No L2 flush: what a launch finds in the L2 is what
    the previous launches of the same kind left, as in a training step."""
    import torch
    if DEVICE != "cuda":
        return bench(calls[0], 0, 0)
    # Warm-up on the capture stream, outside the capture: compiles,
    # allocates, and lets our runtime keep its per-stream barrier workspace
    # (else the graph would zero a fresh one before every launch).
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in calls:
            c()
    torch.cuda.synchronize()
    n = max(1, math.ceil(launches / len(calls))) * len(calls)
    g = torch.cuda.CUDAGraph()
    keep = []  # outputs stay alive, so no launch writes into the last one's memory
    with torch.cuda.stream(s):
        with torch.cuda.graph(g, stream=s):
            for i in range(n):
                keep.append(calls[i % len(calls)]())
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / n)
    del keep, g
    return sorted(times)[len(times) // 2]


def steady_copy_us(nbytes):
    """steady_us of a copy_ moving nbytes (half read, half written)."""
    import torch
    n = copy_elems(nbytes)
    pairs = []
    for _ in range(rotations(nbytes)):
        src = torch.empty(n, dtype=torch.uint8, device=DEVICE).random_()
        pairs.append((src, torch.empty_like(src)))
    return steady_us([lambda p=p: p[1].copy_(p[0]) for p in pairs])


def tensor_bytes(ts):
    import torch
    return sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))


def max_rel_error_on_device(out, ref, floor=checks.FLOOR):
    """checks.max_rel_error computed by torch where the tensors are (for
    outputs too large to copy to the host in float64)."""
    import torch
    o, r = out.to(torch.float64), ref.to(device=out.device, dtype=torch.float64)
    if o.shape != r.shape:
        return math.inf
    if r.numel() == 0:
        return 0.0
    if bool((torch.isnan(o) != torch.isnan(r)).any()):
        return math.inf
    if bool(((torch.isinf(o) | torch.isinf(r)) & (o != r)).any()):
        return math.inf
    fin = torch.isfinite(r)
    scale = float(r[fin].abs().max()) if bool(fin.any()) else 0.0
    both = fin & torch.isfinite(o)
    if not bool(both.any()):
        return 0.0
    err = (o[both] - r[both]).abs() / r[both].abs().clamp(min=max(floor * scale, 1e-30))
    return float(err.max())


def poisoned_outputs(fusion, inputs, device=DEVICE):
    """The fusion's outputs for `inputs`, filled with what no kernel writes
    by chance: NaN for floating types, the largest value for integers, True
    for bool, so an element the kernels leave unwritten fails the check."""
    import torch
    plan = fusion.plan([tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs])
    outs = []
    for shape, spec in zip(plan.output_shapes, fusion.manifest.outputs):
        dtype = runtime._torch_dtype(spec.dtype)
        if dtype.is_floating_point:
            fill = float("nan")
        elif dtype == torch.bool:
            fill = True
        else:
            fill = torch.iinfo(dtype).max
        outs.append(torch.full(shape, fill, dtype=dtype, device=device))
    return outs


def run_ours(fusion, inputs, ref, want_dtypes=None):
    """One checked launch into poisoned outputs; returns (outputs, checks)."""
    outs = poisoned_outputs(fusion, inputs)
    fusion.run(inputs, outputs=outs)
    synchronize()
    return outs, check_outputs(outs, ref, want_dtypes)


def variant_notes(artifacts):
    """What a variant's artifacts were built with (bench/gpu/variants.sh
    prepare): the hand-set HeuristicParams fields (OVERRIDES; empty: the
    pipeline's choice) and the parameters fusiond_cgdev reported (cgdev.log).
    {} for artifacts that are no variant."""
    notes = {}
    path = os.path.join(artifacts, "OVERRIDES") if artifacts else ""
    if path and os.path.isfile(path):
        with open(path) as f:
            notes["overrides"] = [w for w in f.read().split() if w]
    log = os.path.join(artifacts, "cgdev.log") if artifacts else ""
    if log and os.path.isfile(log):
        with open(log) as f:
            notes["params"] = [line.strip().removeprefix("params: ") for line in f
                               if line.startswith(("kind=", "params: "))]
    return notes


def bench_fusion(path, args, copy_bw):
    import torch
    stem = os.path.splitext(os.path.basename(path))[0]
    row = {"fusion": stem, "file": os.path.basename(path)}
    script = frontend.load_script(path)
    row["symbolic"] = script.program.symbolic
    inputs = script.make_inputs(DEVICE, seed=1, size_map=args.size_map if script.program.symbolic else None)
    row["shapes"] = [list(x.shape) if isinstance(x, torch.Tensor) else "scalar" for x in inputs]
    row["dtypes"] = [dtype_name(x) if isinstance(x, torch.Tensor) else "scalar" for x in inputs]
    eager = script.program.function("native")
    ref = [r for r in script.program.function("float64")(*inputs)]
    outs = eager(*inputs)
    row["bytes"] = tensor_bytes(inputs) + tensor_bytes(outs)
    row["floor_us"] = row["bytes"] / copy_bw * 1e6
    row["copy_same_us"] = same_size_copy_us(row["bytes"], args.warmup, args.rep)
    want = [dtype_name(o) for o in outs]  # torch's dtypes for the definition
    row.update(variant_notes(args.artifacts))
    row["eager"] = {"check": check_outputs(outs, ref)}
    row["eager"]["us"] = bench(lambda: eager(*inputs), args.warmup, args.rep)
    if not args.no_compile:
        try:
            # Each definition is a new function; without a reset dynamo's
            # cache limit makes the ninth one silently fall back to eager.
            torch._dynamo.reset()
            t0 = time.time()
            compiled = torch.compile(eager, dynamic=False)
            couts = compiled(*inputs)
            synchronize()
            row["compile"] = {"compile_s": time.time() - t0, "check": check_outputs(couts, ref, want)}
            row["compile"]["us"] = bench(lambda: compiled(*inputs), args.warmup, args.rep)
        except Exception as e:  # noqa: BLE001 - report and go on
            row["compile"] = {"error": f"{type(e).__name__}: {e}"}
    art = os.path.join(args.artifacts, stem) if args.artifacts else None
    if art and os.path.isfile(os.path.join(art, "manifest.json")):
        try:
            fusion = runtime.load(art)
            for _ in range(2):  # two poisoned, checked launches
                ours_out, verdicts = run_ours(fusion, inputs, ref, want)
            row["ours"] = {"check": verdicts, "kernels": [
                {"name": k.name, "scheduler": k.scheduler, "cooperative": k.cooperative}
                for k in fusion.manifest.kernels]}
            # Timed as eager and torch.compile are: outputs allocated in the call.
            row["ours"]["us"] = bench(lambda: fusion.run(inputs), args.warmup, args.rep)
            row["ours"]["prealloc_us"] = bench(lambda: fusion.run(inputs, outputs=ours_out), args.warmup,
                                               args.rep)
            if stem in args.three_shapes or (args.three_shapes == ["all-symbolic"] and script.program.symbolic):
                row["three_shapes"] = three_shapes(script, fusion, args.other_shapes, want)
        except Exception as e:  # noqa: BLE001
            row["ours"] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=3)}
    else:
        row["ours"] = {"error": f"no artifacts at {art}" if art else "no --artifacts"}
    # Launch-bound fusions: also time CUDA-graph replays (no launch overhead
    # on the host side for any of the three). Last, since a failed capture
    # can disturb what follows.
    if DEVICE == "cuda" and row["floor_us"] < args.graph_below_us:
        fns = {"eager": lambda: eager(*inputs)}
        if "us" in row.get("compile", {}):
            fns["compile"] = lambda: compiled(*inputs)
        if "us" in row.get("ours", {}):
            fns["ours"] = lambda: fusion.run(inputs, outputs=ours_out)
        for impl, fn in fns.items():
            try:
                from triton.testing import do_bench_cudagraph
                row[impl]["graph_us"] = do_bench_cudagraph(fn, rep=args.rep, return_mode="median") * 1e3
            except Exception as e:  # noqa: BLE001
                row[impl]["graph_error"] = f"{type(e).__name__}: {e}"[:300]
                torch.cuda.synchronize()
    if args.steady and DEVICE == "cuda":
        steady_timing(row, args, inputs, eager, compiled if "us" in row.get("compile", {}) else None,
                      fusion if "us" in row.get("ours", {}) else None)
    for impl in ("eager", "compile", "ours"):
        r = row.get(impl, {})
        if "steady_us" in r:
            r["steady_pct_copy_bw"] = 100.0 * row["floor_us"] / r["steady_us"]
        if "us" in r:
            r["pct_copy_bw"] = 100.0 * row["floor_us"] / r["us"]
            r["pass"] = all(c["pass"] for c in r["check"])
            r["max_rel_err"] = max(c["max_rel_err"] for c in r["check"])
    return row


def steady_timing(row, args, inputs, eager, compiled, fusion):
    """Adds steady_us (rotated inputs, one CUDA graph; see steady_us) for the
    same-size copy and every implementation that ran."""
    import torch
    sets = rotated_sets(inputs, row["bytes"])
    row["steady_sets"] = len(sets)
    try:
        row["copy_same_steady_us"] = steady_copy_us(row["bytes"])
    except Exception as e:  # noqa: BLE001
        row["steady_error"] = f"copy: {type(e).__name__}: {e}"[:300]
    fns = {"eager": eager}
    if compiled is not None:
        fns["compile"] = compiled
    for impl, fn in fns.items():
        try:
            row[impl]["steady_us"] = steady_us([lambda x=x, fn=fn: fn(*x) for x in sets])
        except Exception as e:  # noqa: BLE001
            row[impl]["steady_error"] = f"{type(e).__name__}: {e}"[:300]
            torch.cuda.synchronize()
    if fusion is not None:
        try:
            calls = []
            for x in sets:
                plan = fusion.plan([tuple(t.shape) if isinstance(t, torch.Tensor) else None for t in x])
                outs = [torch.empty(sh, dtype=runtime._torch_dtype(t.dtype), device=DEVICE)
                        for sh, t in zip(plan.output_shapes, fusion.manifest.outputs)]
                calls.append(lambda x=x, outs=outs: fusion.run(x, outputs=outs))
            row["ours"]["steady_us"] = steady_us(calls)
        except Exception as e:  # noqa: BLE001
            row["ours"]["steady_error"] = f"{type(e).__name__}: {e}"[:300]
            torch.cuda.synchronize()
    del sets


def three_shapes(script, fusion, maps=None, want_dtypes=None):
    """Runs one compiled artifact at three shapes (or the size maps given);
    checks each. Extents a kernel has as literals (its manifest's "equals"
    requirements: a specialized kernel's row extents) are not mapped, so
    the other extents (the row counts) still vary. A shape outside a
    specialized kernel's class (its manifest's other "requires") is refused
    by the runtime before any launch: recorded as outside with "pass" None
    (checked nothing; three_shapes_failed fails a fusion none of whose
    shapes ran)."""
    import torch
    fixed = {r.n for k in fusion.manifest.kernels for r in k.requires if r.kind == "equals"}
    results = []
    for i, size_map in enumerate(maps or THREE_SHAPES):
        size_map = {old: new for old, new in size_map.items() if old not in fixed}
        inputs = script.make_inputs(DEVICE, size_map=size_map, seed=10 + i)
        ref = script.program.function("float64")(*inputs)
        try:
            _, verdicts = run_ours(fusion, inputs, ref, want_dtypes)
            results.append({"shapes": [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)],
                            "check": verdicts, "pass": all(c["pass"] for c in verdicts)})
        except runtime.FailedPrecondition as e:
            results.append({"shapes": [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)],
                            "outside": str(e), "pass": None})
        except Exception as e:  # noqa: BLE001
            results.append({"shapes": [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)],
                            "error": f"{type(e).__name__}: {e}", "pass": False})
    return results


def failures(rows, require_ours):
    """What fails the run: our outputs (values or dtype) at the run's shape
    or at other shapes; with require_ours also a fusion whose artifacts
    are missing or did not run, and a row the harness could not run."""
    failed = []
    for r in rows:
        o = r.get("ours", {})
        if "us" in o:
            if not o["pass"]:
                bad = [c for c in o["check"] if not c["pass"]]
                failed.append(f"{r['fusion']} ({'; '.join(c.get('why', '') for c in bad)})")
            if three_shapes_failed(r.get("three_shapes", [])):
                failed.append(f"{r['fusion']} (other shapes)")
        elif require_ours:
            failed.append(f"{r['fusion']} ({r.get('error') or o.get('error', 'ours did not run')})"[:300])
    return failed


def parse_size_map(text):
    """'OLD:NEW,OLD:NEW' -> {OLD: NEW}."""
    return {int(a): int(b) for a, b in (kv.split(":") for kv in text.split(",") if kv.strip())}


def _finite(o):
    """JSON has no inf/NaN: write them as strings."""
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusions", nargs="+", required=True, help="repro scripts")
    p.add_argument("--artifacts", default="", help="DIR with DIR/<stem>/manifest.json per fusion")
    p.add_argument("--out", default=os.path.join(_ROOT, "bench", "results"), help="where JSON/PNG go")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--three-shapes", nargs="*", default=["all-symbolic"],
                   help="fusions (stems) to run at three other shapes with one artifact; "
                        "default: every symbolic one")
    p.add_argument("--other-shapes", default="",
                   help="the shapes of that check instead of the built-in three: size maps "
                        "OLD:NEW,... separated by ';' (e.g. '2048:64,8192:131072;2048:300,8192:50000')")
    p.add_argument("--warmup", type=float, default=25, help="do_bench warm-up, ms")
    p.add_argument("--rep", type=float, default=100, help="do_bench repetition time, ms")
    p.add_argument("--tag", default="", help="suffix for the output file names")
    p.add_argument("--graph-below-us", type=float, default=10.0,
                   help="also time CUDA-graph replays for fusions whose floor is under this (us)")
    p.add_argument("--no-steady", dest="steady", action="store_false",
                   help="skip the steady-state timing (rotated input sets in one CUDA graph, no L2 flush)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: a smoke test of the harness (no triton, no kernels of ours)")
    p.add_argument("--require-ours", action="store_true",
                   help="fail when a fusion's artifacts are missing or did not run (the corpus run)")
    p.add_argument("--size-map", default="", help="for symbolic definitions, replace extents of "
                   "the script's inputs: OLD:NEW,OLD:NEW (e.g. 2048:64,8192:96)")
    args = p.parse_args(argv)
    args.size_map = parse_size_map(args.size_map)
    args.other_shapes = [parse_size_map(m) for m in args.other_shapes.split(";") if m.strip()]
    global DEVICE
    DEVICE = args.device
    import torch
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    copy_bw = copy_bandwidth(args.warmup, args.rep)
    os.makedirs(args.out, exist_ok=True)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    base = os.path.join(args.out, f"gpu-{date}{('-' + args.tag) if args.tag else ''}")
    rows = []
    producer = ""
    if args.artifacts and os.path.isfile(os.path.join(args.artifacts, "PRODUCER")):
        with open(os.path.join(args.artifacts, "PRODUCER")) as f:
            producer = f.read().strip()
        print(f"artifacts: {args.artifacts} from {producer}")
    notes = variant_notes(args.artifacts)
    if "overrides" in notes:
        print("hand-set parameters: " + (" ".join(notes["overrides"]) or "none (the pipeline's choice)"))

    def write_report():  # after every fusion, so a cut-short run leaves its rows
        report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "device": torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu",
                  "torch": torch.__version__,
                  "copy_bandwidth_bytes_per_s": copy_bw,
                  "method": {"timing": "triton.testing.do_bench median (L2 cleared between reps)",
                             "steady": None if not args.steady else
                             "one CUDA graph of 48 launches over rotated input/output sets (> 2x L2 apart), "
                             "no flush; graph time / launches, median of 15 replays (steady_us)",
                             "warmup_ms": args.warmup, "rep_ms": args.rep,
                             "error": "per element |out-ref| / max(|ref|, 1e-3 max|ref|) vs float64 "
                                      "evaluation (bench/gpu/checks.py): " + ", ".join(
                                          f"{k} <= {v:g}" for k, v in checks.TOLERANCE.items())
                                      + "; dtype must be eager's",
                             "ours_timing": "us: outputs allocated in the call, as eager and compile; "
                                            "prealloc_us: preallocated outputs",
                             "bytes": "inputs read once + outputs written once"},
                  "artifacts": args.artifacts, "artifact_producer": producer,
                  **variant_notes(args.artifacts),
                  "fusions": rows}
        with open(base + ".json", "w") as f:
            json.dump(_finite(report), f, indent=1)

    for path in args.fusions:
        t0 = time.time()
        try:
            rows.append(bench_fusion(path, args, copy_bw))
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
            rows.append({"fusion": os.path.basename(path), "error": f"{type(e).__name__}: {e}",
                         "trace": traceback.format_exc(limit=4)})
        write_report()
        print(f"[{time.time() - t0:6.1f}s] {os.path.basename(path)}", flush=True)
    print_table(rows, copy_bw)
    try:
        plot(rows, base + ".png")
    except Exception as e:  # noqa: BLE001
        print(f"plot failed: {e}", file=sys.stderr)
    print(f"\nwrote {base}.json and {base}.png")
    failed = failures(rows, args.require_ours)
    checked = sum(1 for r in rows if "us" in r.get("ours", {}))
    if failed:
        print(f"FAILED: {len(failed)} of {len(rows)} fusions: " + ", ".join(failed))
        return 1
    print(f"PASSED: {checked} of {len(rows)} fusions' outputs checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
