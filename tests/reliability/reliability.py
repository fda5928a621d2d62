#!/usr/bin/env python3
"""The daemon's reliability acceptance (issue 32): the real fusiond on
loopback, attacked as a careless or hostile client would, and its cache
damaged on disk. Prints one JSON object of figures per section and exits
non-zero when any check fails.

    reliability.py [--quick] [--sections a,b,...] [--out FILE]

Sections: overhead (added latency of a compile in a worker process), lookups
(a hit while 12 clients look up large new graphs), graphs
(15,000- / 100,000- / 1,000,000-op chains, wide fan-in graphs), malformed
(every tests/malformed/cases script through `fusionc compile --server`),
limit (a pathological compile cut at --compile-timeout-s), load (clients
mixing hits, misses and pathological compiles), corruption (the storage
fault matrix, each case twice), kill9 (kill -9 during heavy writes), drain
(SIGTERM with a running compile and idle clients). --quick runs short
versions (CTest). Needs FUSIOND_BIN, FUSIOND_CACHE_TOOL, FUSIONC_BIN and
PYTHONPATH=<build>/python (the CTest entry sets them).
"""

import argparse
import concurrent.futures
import glob
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "service"))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402
from fusiond import fusion_pb2  # noqa: E402

FUSIONC_BIN = os.environ.get("FUSIONC_BIN", "fusionc")
MALFORMED_DIR = os.path.join(HERE, "..", "malformed", "cases")
SHAPES = [[64, 256]]
# Codes a request may end with under load besides OK: the documented limits.
LIMIT_CODES = {grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED}
# Pause of each load client between calls, seconds.
THINK_S = 0.02

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr, flush=True)
    return ok


def pct(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100.0 * len(values)))]


def rss_mb(pid):
    """Resident memory of `pid` and its children (the compile workers), MB."""
    total = 0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024.0, 1)


def chain_graph(ops, kind="neg", constant=2.0):
    """`ops` unary ops in a chain over float32[64, 256] (built as a proto
    directly: a million nodes through GraphBuilder take too long)."""
    g = fusion_pb2.FusionGraph(version=1)
    g.inputs.add(name="T0", dtype=fusion_pb2.DataType.Value("FLOAT32"), is_tensor=True,
                 sizes=[64, 256])
    g.constants.add(name="c", dtype=fusion_pb2.DataType.Value("FLOAT64"), value=constant)
    kinds = [fusion_pb2.OpKind.Value(k.upper()) for k in kind.split(",")]
    value = 0
    for i in range(ops):
        g.nodes.add(op=kinds[i % len(kinds)], operands=[value])
        value = 2 + i
    g.nodes.add(op=fusion_pb2.OpKind.Value("MUL"), operands=[value, 1])
    g.outputs.append(2 + ops)
    return g


def fan_in_graph(inputs, tree=False):
    """`inputs` tensors added into one: a wide fan-in (a chain of adds, or a
    balanced tree of them)."""
    b = fusiond.GraphBuilder()
    xs = [b.define_tensor([64, 256], "float32", name=f"T{i}") for i in range(inputs)]
    if tree:
        while len(xs) > 1:
            xs = [b.op("add", xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i]
                  for i in range(0, len(xs), 2)]
        acc = xs[0]
    else:
        acc = xs[0]
        for x in xs[1:]:
            acc = b.op("add", acc, x)
    b.add_output(acc)
    return b.build()


def pathological_graph(constant=7.0):
    """Legal (under every compiler limit) but slow: NVRTC takes minutes."""
    return chain_graph(450, kind="sin,cos", constant=constant)


class Session:
    """One daemon with a hot entry whose hit latency is checked after each case."""

    def __init__(self, name, extra_args=()):
        self.tmp = d.TempDir(f"fusiond-rel-{name}-")
        self.cache_dir = os.path.join(self.tmp.path, "cache")
        self.daemon = d.Daemon(self.cache_dir, list(extra_args))
        self.daemon.start()
        self.hot = d.scaled_graph(1.25)
        self.daemon.client.compile(self.hot, SHAPES)

    @property
    def client(self):
        return self.daemon.client

    def hit_ms(self):
        """Alive and serving: the hot entry's latency, ms (best of 3)."""
        best = None
        for _ in range(3):
            start = time.monotonic()
            r = self.client.compile(self.hot, SHAPES, timeout=10)
            ms = (time.monotonic() - start) * 1e3
            check(r.cache == "hit", "the hot entry is a hit")
            best = ms if best is None else min(best, ms)
        return round(best, 2)

    def close(self):
        code = self.daemon.stop()
        self.tmp.cleanup()
        return code


def call(fn, *args, **kwargs):
    """(status code name, details, seconds) of one client call."""
    start = time.monotonic()
    try:
        fn(*args, **kwargs)
        code, details = grpc.StatusCode.OK, ""
    except fusiond.FusionError as e:
        code, details = e.code, e.details
    return code, details, time.monotonic() - start


def section_overhead(quick):
    """Median Compile RPC of small misses with and without worker processes."""
    n = 6 if quick else 20
    out = {}
    for workers in ("false", "true"):
        s = Session(f"overhead-{workers}", ["--compile-workers", workers])
        times = []
        for i in range(n):
            start = time.monotonic()
            r = s.client.compile(d.scaled_graph(100.0 + i), SHAPES)
            times.append((time.monotonic() - start) * 1e3)
            check(r.cache == "miss", "overhead: a miss")
        out[f"miss_ms_median_workers_{workers}"] = round(pct(times, 50), 2)
        # A Lookup of a new request runs only the front half (a millisecond):
        # the worker's round trip shows there, not lost in NVRTC's noise.
        times = []
        for i in range(4 * n):
            start = time.monotonic()
            check(s.client.lookup(d.scaled_graph(900.0 + i), SHAPES) is None, "overhead: miss")
            times.append((time.monotonic() - start) * 1e3)
        out[f"new_lookup_ms_median_workers_{workers}"] = round(pct(times, 50), 3)
        s.close()
    out["added_ms_per_compile"] = round(out["miss_ms_median_workers_true"] -
                                        out["miss_ms_median_workers_false"], 2)
    out["added_ms_per_worker_job"] = round(out["new_lookup_ms_median_workers_true"] -
                                           out["new_lookup_ms_median_workers_false"], 3)
    return out


def section_graphs(quick):
    s = Session("graphs", ["--compile-timeout-s", "20"])
    cases = [("chain_15000", lambda: chain_graph(15000), 1),
             ("chain_100000", lambda: chain_graph(100000), 1),
             ("fan_in_400", lambda: fan_in_graph(400), 400),
             ("fan_in_5000", lambda: fan_in_graph(5000), 5000),
             ("fan_in_tree_5000", lambda: fan_in_graph(5000, tree=True), 5000)]
    if not quick:
        cases.insert(2, ("chain_1000000", lambda: chain_graph(1000000), 1))
    out = {}
    for name, make, inputs in cases:
        g = make()
        code, details, seconds = call(s.client.compile, g, SHAPES * inputs, timeout=120)
        hit = s.hit_ms()
        out[name] = {"code": code.name, "seconds": round(seconds, 2), "message": details[:160],
                     "hit_ms_after": hit}
        check(code == grpc.StatusCode.OK or bool(details), f"{name}: a clear status")
        check(code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNKNOWN),
              f"{name}: not {code.name}")
        check(hit < 10, f"{name}: hit after it in {hit} ms (< 10)")
    out["rss_mb"] = rss_mb(s.daemon.proc.pid)
    check(s.close() == 0, "graphs: clean exit")
    return out


def section_malformed(quick):
    s = Session("malformed")
    cases = sorted(glob.glob(os.path.join(MALFORMED_DIR, "*.py")))
    codes, worst_hit = {}, 0.0
    for path in cases:
        r = subprocess.run([FUSIONC_BIN, "compile", path, "--server", s.daemon.target],
                           capture_output=True, text=True, timeout=120)
        message = (r.stderr or r.stdout).strip()
        codes[r.returncode] = codes.get(r.returncode, 0) + 1
        check(r.returncode in (0, 1, 2), f"{os.path.basename(path)}: fusionc exit {r.returncode}")
        check(r.returncode == 0 or bool(message), f"{os.path.basename(path)}: a message")
        check("internal error" not in message.lower(),
              f"{os.path.basename(path)}: 'internal error': {message[:200]}")
        worst_hit = max(worst_hit, s.hit_ms())
    check(worst_hit < 10, f"malformed: worst hit {worst_hit} ms (< 10)")
    check(s.close() == 0, "malformed: clean exit")
    return {"cases": len(cases), "fusionc_exit_codes": codes, "worst_hit_ms_after": worst_hit}


def section_limit(quick):
    s = Session("limit", ["--compile-timeout-s", "3"])
    code, details, seconds = call(s.client.compile, pathological_graph(), timeout=60)
    hit = s.hit_ms()
    check(code == grpc.StatusCode.RESOURCE_EXHAUSTED, f"limit: {code.name}")
    check("--compile-timeout-s" in details, "limit: the message names the flag")
    check(seconds < 3 + 2, f"limit: cut after {seconds:.1f} s")
    stats = s.client.stats()
    check(s.close() == 0, "limit: clean exit")
    return {"code": code.name, "seconds": round(seconds, 2), "message": details[:160],
            "hit_ms_after": hit, "in_flight_after": stats["in_flight"]}


def section_load(quick):
    clients, seconds = (16, 8) if quick else (64, 60)
    s = Session("load", ["--compile-timeout-s", "5", "--max-queue", "16"])
    hot = [d.scaled_graph(10.0 + i) for i in range(20)]
    for g in hot:
        s.client.compile(g, SHAPES)
    codes, hit_ms, lock = {}, [], threading.Lock()
    counter = [0]
    rss = []
    stop = time.monotonic() + seconds

    def worker(k):
        c = fusiond.FusionClient(s.daemon.target, timeout=30)
        rng = random.Random(k)
        try:
            while time.monotonic() < stop:
                roll = rng.random()
                start = time.monotonic()
                if roll < 0.90:
                    code, _, _ = call(c.compile, hot[rng.randrange(len(hot))], SHAPES)
                    kind = "hit"
                elif roll < 0.995:
                    with lock:
                        counter[0] += 1
                        n = counter[0]
                    code, _, _ = call(c.compile, d.scaled_graph(5000.0 + n), SHAPES)
                    kind = "miss"
                else:
                    code, _, _ = call(c.compile, pathological_graph(9.0 + k), timeout=20)
                    kind = "pathological"
                ms = (time.monotonic() - start) * 1e3
                with lock:
                    codes[(kind, code.name)] = codes.get((kind, code.name), 0) + 1
                    if kind == "hit" and code == grpc.StatusCode.OK:
                        hit_ms.append(ms)
                # A training job asks between steps; without a pause 64
                # Python threads measure their own GIL queue, not the daemon.
                time.sleep(THINK_S)
        finally:
            c.close()

    def sample():
        while time.monotonic() < stop:
            rss.append(rss_mb(s.daemon.proc.pid))
            time.sleep(1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(worker, range(clients)))
    sampler.join()
    bad = {f"{k[0]}:{k[1]}": n for k, n in codes.items()
           if k[1] != "OK" and grpc.StatusCode[k[1]] not in LIMIT_CODES}
    check(not bad, f"load: errors other than RESOURCE_EXHAUSTED/DEADLINE_EXCEEDED: {bad}")
    p99 = pct(hit_ms, 99)
    check(p99 is not None and p99 < 50, f"load: hit p99 {p99} ms (< 50)")
    check(s.close() == 0, "load: clean exit")
    return {"clients": clients, "seconds": seconds, "cores": os.cpu_count(), "think_s": THINK_S,
            "requests": sum(codes.values()),
            "codes": {f"{k[0]}:{k[1]}": n for k, n in sorted(codes.items())},
            "hit_ms_p50": round(pct(hit_ms, 50), 2), "hit_ms_p99": round(p99, 2),
            "rss_mb_max": max(rss) if rss else None, "rss_mb_last": rss[-1] if rss else None}


def _files(cache_dir, pred):
    return [os.path.join(cache_dir, f) for f in sorted(os.listdir(cache_dir)) if pred(f)]


def _flip(path, where=0.5, count=8):
    size = os.path.getsize(path)
    if size == 0:
        return False
    with open(path, "r+b") as f:
        f.seek(int(size * where))
        data = f.read(count)
        f.seek(int(size * where))
        f.write(bytes(b ^ 0xA5 for b in data))
    return True


def _truncate(path, keep=0.5):
    os.truncate(path, int(os.path.getsize(path) * keep))
    return True


def _apply(cache_dir, kind):
    """Damages `cache_dir` (no daemon running) as `kind` says; False when the
    cache has no file of that kind."""
    sst = _files(cache_dir, lambda f: f.endswith(".sst"))
    blob = _files(cache_dir, lambda f: f.endswith(".blob"))
    wal = _files(cache_dir, lambda f: f.endswith(".log"))
    manifest = _files(cache_dir, lambda f: f.startswith("MANIFEST-"))
    options = _files(cache_dir, lambda f: f.startswith("OPTIONS-"))
    actions = {
        "flip_sst": lambda: sst and all(_flip(p) for p in sst),
        "flip_sst_footer": lambda: sst and all(_flip(p, where=0.99) for p in sst),
        "truncate_sst": lambda: sst and all(_truncate(p) for p in sst),
        "flip_blob": lambda: blob and all(_flip(p) for p in blob),
        "delete_blob": lambda: blob and all(os.remove(p) is None for p in blob),
        "flip_wal": lambda: wal and all(_flip(p) for p in wal),
        "truncate_wal": lambda: wal and all(_truncate(p, 0.3) for p in wal),
        "flip_manifest": lambda: manifest and all(_flip(p) for p in manifest),
        "truncate_manifest": lambda: manifest and all(_truncate(p) for p in manifest),
        "garbage_current": lambda: open(os.path.join(cache_dir, "CURRENT"), "w").write(
            "MANIFEST-garbage\x00\x01\n") > 0,
        "garbage_options": lambda: options and all(
            open(p, "w").write("[garbage") > 0 for p in options),
        "request_index": lambda: d.cache_tool(cache_dir, "corrupt-requests").returncode == 0,
        "records": lambda: d.cache_tool(cache_dir, "corrupt").returncode == 0,
    }
    return bool(actions[kind]())


def _signature(result):
    """What must never differ: each kernel's name, source and binary."""
    return [(k.kernel_name, k.cuda_source, k.binary) for k in result.kernels]


def section_corruption(quick):
    kinds = ["flip_sst", "flip_sst_footer", "truncate_sst", "flip_blob", "delete_blob",
             "flip_wal", "truncate_wal", "flip_manifest", "truncate_manifest",
             "garbage_current", "garbage_options", "request_index", "records"]
    entries = 6 if quick else 16
    rounds = 1 if quick else 2
    out = {}
    for kind in kinds:
        for round_ in range(rounds):
            tmp = d.TempDir("fusiond-rel-corrupt-")
            cache_dir = os.path.join(tmp.path, "cache")
            graphs = [d.scaled_graph(300.0 + i) for i in range(entries)]
            # Half the records flushed to table files, half only in the WAL.
            a = d.Daemon(cache_dir, ["--metrics", ""], metrics=False).start()
            reference = [_signature(a.client.compile(g, SHAPES)) for g in graphs[: entries // 2]]
            a.stop()
            a = d.Daemon(cache_dir, [], metrics=False).start()
            reference += [_signature(a.client.compile(g, SHAPES))
                          for g in graphs[entries // 2:]]
            a.kill9()
            applied = _apply(cache_dir, kind)
            b = d.Daemon(cache_dir, [], metrics=True)
            started, hits, misses, wrong, errors = True, 0, 0, 0, 0
            try:
                b.start()
            except AssertionError as e:
                started = False
                check(False, f"corruption {kind}: daemon did not start: {e}")
            if started:
                for g, want in zip(graphs, reference):
                    code, details, _ = call(b.client.compile, g, SHAPES)
                    if code != grpc.StatusCode.OK:
                        errors += 1
                        check(False, f"corruption {kind}: {code.name} {details[:200]}")
                        continue
                    r = b.client.compile(g, SHAPES)
                    if _signature(r) != want:
                        wrong += 1
                    hits += r.cache == "hit"
                # The first compile after damage may be a miss; the second is a hit.
                stats = b.client.stats()
                misses = stats["misses"]
                text = b.metrics_text()
                quarantined = d.metric(text, "fusiond_cache_quarantined_total")
                corrupt = (d.metric(text, "fusiond_cache_corrupt_records_total") +
                           d.metric(text, "fusiond_cache_corrupt_requests_total"))
                code = b.stop()
                check(code == 0, f"corruption {kind}: exit {code}")
            check(wrong == 0, f"corruption {kind}: {wrong} wrong kernels served")
            out[f"{kind}#{round_ + 1}"] = {
                "applied": applied, "started": started, "errors": errors, "wrong": wrong,
                "misses_then": misses if started else None,
                "quarantined": quarantined if started else None,
                "dropped": corrupt if started else None}
            tmp.cleanup()
    return out


def section_kill9(quick):
    cycles = 5 if quick else 50
    tmp = d.TempDir("fusiond-rel-kill9-")
    cache_dir = os.path.join(tmp.path, "cache")
    acked = {}  # constant -> kernel signature
    lost = wrong = 0
    counter = [0]
    lock = threading.Lock()
    for cycle in range(cycles):
        dm = d.Daemon(cache_dir, [], metrics=False).start()
        # Every acknowledged entry so far is served as a hit, unchanged.
        for constant, want in list(acked.items()):
            r = dm.client.lookup(d.scaled_graph(constant), SHAPES)
            if r is None:
                lost += 1
            elif _signature(r) != want:
                wrong += 1
        stop = time.monotonic() + random.uniform(0.5, 1.5)

        def writer(_):
            c = fusiond.FusionClient(dm.target, timeout=30)
            try:
                while time.monotonic() < stop:
                    with lock:
                        counter[0] += 1
                        constant = 20000.0 + counter[0]
                    try:
                        r = c.compile(d.scaled_graph(constant), SHAPES)
                    except fusiond.FusionError:
                        continue  # killed mid-call: not acknowledged
                    with lock:
                        acked[constant] = _signature(r)
            finally:
                c.close()

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(writer, k) for k in range(4)]
            time.sleep(max(0.0, stop - time.monotonic()))
            dm.kill9()
            for f in futures:
                f.result()
    dm = d.Daemon(cache_dir, [], metrics=False).start()
    for constant, want in list(acked.items()):
        r = dm.client.lookup(d.scaled_graph(constant), SHAPES)
        if r is None:
            lost += 1
        elif _signature(r) != want:
            wrong += 1
    dm.stop()
    tmp.cleanup()
    check(lost == 0, f"kill9: {lost} acknowledged entries lost")
    check(wrong == 0, f"kill9: {wrong} wrong kernels served")
    return {"cycles": cycles, "acknowledged": len(acked), "lost": lost, "wrong": wrong}


def section_drain(quick):
    grace = 3
    s = Session("drain", ["--shutdown-grace-s", str(grace), "--compile-timeout-s", "0"])
    idle = [fusiond.FusionClient(s.daemon.target) for _ in range(8)]
    for c in idle:
        c.health()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        slow = pool.submit(call, s.client.compile, pathological_graph(11.0), None, "sm_90",
                           False, 120)
        d.wait_until(lambda: s.client.stats()["in_flight"] == 1, 20, "the slow compile")
        start = time.monotonic()
        s.daemon.proc.send_signal(signal.SIGTERM)
        try:
            d.wait_until(lambda: idle[0].health(timeout=1) == "NOT_SERVING", 1.5, "NOT_SERVING")
            health = "NOT_SERVING"
        except AssertionError:
            health = idle[0].health(timeout=1)
        refused, _, _ = call(idle[1].compile, d.scaled_graph(2.5), SHAPES, timeout=5)
        code = s.daemon.proc.wait(timeout=grace + 30)
        seconds = time.monotonic() - start
        slow_code = slow.result()[0]
    for c in idle:
        c.close()
    s.tmp.cleanup()
    check(health == "NOT_SERVING", f"drain: health {health}")
    check(refused == grpc.StatusCode.UNAVAILABLE, f"drain: new work got {refused.name}")
    check(code == 0, f"drain: exit code {code}")
    check(seconds < grace + 1.5, f"drain: exit after {seconds:.2f} s (grace {grace})")
    return {"grace_s": grace, "exit_code": code, "exit_after_s": round(seconds, 2),
            "health_during": health, "new_work": refused.name, "running_compile": slow_code.name}


def section_lookups(quick):
    """12 clients look up large new graphs (each runs the front half, on the
    compile pool) while another times a hit: the hit never waits for them.
    The requests are built before the clock starts (building them in Python
    would starve the daemon of CPU on 2 cores)."""
    per_client = 4 if quick else 12
    s = Session("lookups", ["--compile-threads", "2"])
    requests = [[fusiond.make_request(fan_in_graph(300 + 10 * k + i, tree=True),
                                      SHAPES * (300 + 10 * k + i)).SerializeToString()
                 for i in range(per_client)] for k in range(12)]
    codes = {}
    lock = threading.Lock()

    def lookups(k):
        channel = grpc.insecure_channel(s.daemon.target)
        lookup = channel.unary_unary("/fusiond.v1.FusionCompiler/Lookup",
                                     request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)
        try:
            for raw in requests[k]:
                try:
                    lookup(raw, timeout=120)
                    code = grpc.StatusCode.OK
                except grpc.RpcError as e:
                    code = e.code()
                with lock:
                    codes[code.name] = codes.get(code.name, 0) + 1
        finally:
            channel.close()

    hits = []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        futures = [pool.submit(lookups, k) for k in range(12)]
        while not all(f.done() for f in futures):
            hits.append(s.hit_ms())
            time.sleep(0.05)
        for f in futures:
            f.result()
    seconds = time.monotonic() - start
    worst = max(hits)
    check(worst < 50, f"lookups: worst hit {worst} ms while 12 clients look up large graphs")
    bad = {c: n for c, n in codes.items() if c not in ("NOT_FOUND", "RESOURCE_EXHAUSTED")}
    check(not bad, f"lookups: unexpected codes {bad}")
    check(s.close() == 0, "lookups: clean exit")
    return {"concurrent_clients": 12, "lookups": sum(codes.values()), "lookup_codes": codes,
            "lookup_seconds": round(seconds, 1), "hits": len(hits),
            "hit_ms_p50": pct(hits, 50), "hit_ms_p99": pct(hits, 99), "hit_ms_max": worst}


SECTIONS = {"overhead": section_overhead, "lookups": section_lookups, "graphs": section_graphs,
            "malformed": section_malformed, "limit": section_limit, "load": section_load,
            "corruption": section_corruption, "kill9": section_kill9, "drain": section_drain}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short versions (CTest)")
    p.add_argument("--sections", default=",".join(SECTIONS),
                   help="comma-separated: " + ",".join(SECTIONS))
    p.add_argument("--out", help="also write the figures to this JSON file")
    args = p.parse_args()
    figures = {"quick": args.quick, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for name in args.sections.split(","):
        if name not in SECTIONS:
            p.error(f"unknown section {name}")
        start = time.monotonic()
        figures[name] = SECTIONS[name](args.quick)
        figures[name]["section_seconds"] = round(time.monotonic() - start, 1)
        print(json.dumps({name: figures[name]}, sort_keys=True), flush=True)
    figures["failures"] = failures
    if args.out:
        with open(args.out, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    print(f"{len(failures)} failure(s)" + "".join(f"\n  {f}" for f in failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
