#!/usr/bin/env python3
"""The GPU half of issue 33 (from PyTorch), after pytorch_acceptance.sh's
install checks:

1. every corpus script runs unchanged with fusiond as its `nvfuser` (the text
   nvFuser's frontend executes: `fd.execute(inputs)` at its end), and its
   outputs match the float64 reference (bench/gpu/checks.py's measure);
   host time per call of `fd.execute` against torch.compile's dispatch of
   the same fusion (the torch front end's function, compiled) is reported;
2. the transformer example trains with the fusiond backend and passes its
   checks (examples/pytorch/transformer_train.py --compare).

Writes pytorch_acceptance.json to --out; exits 1 on any failure.
"""

import argparse
import glob
import json
import os
import statistics
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.abspath(os.path.join(_HERE, "..", ".."))
sys.path.insert(0, _HERE)
import checks  # noqa: E402  (bench/gpu/checks.py)

try:
    import fusiond  # the installed package, when there is one
except ImportError:
    sys.path.insert(0, os.path.join(_ROOT, "client", "python"))
    import fusiond
from fusiond import frontend_torch  # noqa: E402

torch = None  # imported by main(), after --help (scripts_test.sh runs --help without torch)


def host_us(fn, calls=200, rounds=5):
    """Host time per call: `calls` back-to-back calls, no waiting for the GPU."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(out)


def run_unchanged(path):
    """Executes the script as written, with `nvfuser` resolving to fusiond;
    returns its namespace (fd, inputs) and the seconds its execute took."""
    saved = sys.modules.get("nvfuser")
    sys.modules["nvfuser"] = fusiond
    try:
        with open(path, encoding="utf-8") as f:
            code = compile(f.read(), path, "exec")
        ns = {"__name__": "__corpus__"}
        torch.manual_seed(0)
        t0 = time.perf_counter()
        exec(code, ns)  # noqa: S102
        seconds = time.perf_counter() - t0
    finally:
        if saved is None:
            del sys.modules["nvfuser"]
        else:
            sys.modules["nvfuser"] = saved
    return ns, seconds


def corpus(paths, failures):
    rows = []
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        row = {"fusion": stem}
        try:
            ns, first_s = run_unchanged(path)
            fd, inputs = ns["fd"], ns["inputs"]
            outs = fd.execute(inputs)
            ref = frontend_torch.load_script(path).program.function("float64")(*inputs)
            row["first_call_s"] = first_s
            row["checks"] = [checks.check_output(o.detach().double().cpu().numpy(),
                                                 r.detach().double().cpu().numpy(),
                                                 str(o.dtype).replace("torch.", ""))
                             for o, r in zip(outs, ref)]
            ok = len(outs) == len(ref) and all(c["pass"] for c in row["checks"])
            row["ours_host_us"] = host_us(lambda: fd.execute(inputs))
            compiled = torch.compile(frontend_torch.load_script(path).program.function("native"))
            row["compile_host_us"] = host_us(lambda: compiled(*inputs))
        except Exception as e:  # noqa: BLE001 - a row that failed, with its reason
            ok = False
            row["error"] = f"{type(e).__name__}: {e}"
        row["pass"] = ok
        if not ok:
            failures.append(f"corpus {stem}: {row.get('error') or row.get('checks')}")
        rows.append(row)
        errs = " ".join(f"{c['max_rel_err']:.1e}" for c in row.get("checks", []))
        print(f"  {stem:<24} {'ok  ' if ok else 'FAIL'} max rel err {errs or '-':<24} host us/call: "
              f"fusiond {row.get('ours_host_us', float('nan')):6.1f}, torch.compile "
              f"{row.get('compile_host_us', float('nan')):6.1f}   {row.get('error', '')}")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="bench/out")
    p.add_argument("--corpus", default=os.path.join(_ROOT, "tests", "corpus", "fusions"))
    p.add_argument("--steps", type=int, default=300)
    args = p.parse_args(argv)
    global torch
    import torch
    os.makedirs(args.out, exist_ok=True)
    failures = []
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "fusiond": fusiond.__version__}

    print("== corpus through fusiond.FusionDefinition, unchanged (vs float64)")
    result["corpus"] = corpus(sorted(glob.glob(os.path.join(args.corpus, "*.py"))), failures)
    under = [r for r in result["corpus"] if r.get("ours_host_us", 1e9) <= r.get("compile_host_us", 0)]
    print(f"  host time per call at or under torch.compile's: {len(under)} of {len(result['corpus'])}")

    print(f"\n== transformer example ({args.steps} steps: eager, fusiond twice, Inductor)")
    sys.path.insert(0, os.path.join(_ROOT, "examples", "pytorch"))
    import transformer_train
    transformer_train.fusiond_backend.register()
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    ex = transformer_train.compare(argparse.Namespace(steps=args.steps, seed=0, rtol=2e-2))
    result["transformer"] = ex
    failures += ex["failures"]

    result["failures"] = failures
    with open(os.path.join(args.out, "pytorch_acceptance.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, default=str)
    for failure in failures:
        print(f"FAIL: {failure}")
    print("pytorch acceptance:", "FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
