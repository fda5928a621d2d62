# Checks random-graph kernels (fusiond_random_bundle) on the GPU against the
# CPU reference's float64 outputs shipped with each case.
import ctypes, glob, json, math, os, sys
import numpy as np
import torch
from cuda.bindings import driver as cu

torch.zeros(1, device="cuda")
DT = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
      "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}
TOL = {"bfloat16": 2e-2, "float16": 5e-3, "float32": 1e-4, "float64": 1e-5}

def expr(e, env):
    return int(eval(str(e).replace("/", "//"), {"ceil_div": lambda a, b: -(-a // b), "min": min, "max": max}, dict(env)))

def close(a, b, dtype):
    a = a.double().cpu(); b = b.double()
    if dtype in ("bool", "int64", "int32"):
        return bool(torch.equal(a, b)), 0.0
    both_nan = torch.isnan(a) & torch.isnan(b)
    same_inf = torch.isinf(a) & torch.isinf(b) & (torch.sign(a) == torch.sign(b))
    ok = both_nan | same_inf
    fin = ~ok
    if torch.isnan(a[fin]).any() or torch.isnan(b[fin]).any() or torch.isinf(a[fin]).any() or torch.isinf(b[fin]).any():
        return False, float("inf")
    if fin.sum() == 0:
        return True, 0.0
    scale = max(float(b[fin].abs().max()), 1e-6)
    err = float(((a[fin] - b[fin]).abs() / (b[fin].abs() + 0.01 * scale)).max())
    return err <= TOL[dtype], err

res = {"pass": 0, "fail": []}
start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
dirs = sorted(glob.glob(sys.argv[1] + "/r*"))
for idx in range(start, len(dirs)):
    d = dirs[idx]
    open("/tmp/rr_next", "w").write(str(idx + 1))
    try:
        case = json.load(open(d + "/case.json")); man = json.load(open(d + "/manifest.json"))
        ins = []
        for t in case["inputs"]:
            v = torch.from_numpy(np.fromfile(os.path.join(d, t["file"]), dtype=np.float64)).reshape(t["shape"]) if t["shape"] else \
                torch.from_numpy(np.fromfile(os.path.join(d, t["file"]), dtype=np.float64)).reshape([])
            ins.append(v)
        env = {s["name"]: ins[s["input"]].shape[s["axis"]] for s in man["symbols"]}
        dev = [x.to(DT[t["dtype"]]).cuda().contiguous() if t["shape"] or True else None for x, t in zip(ins, case["inputs"])]
        outs = [torch.empty([expr(x, env) for x in o["shape"]], dtype=DT[o["dtype"]], device="cuda") for o in man["outputs"]]
        # Workspaces not marked zero start with garbage, as the runtime may give them.
        wss = [torch.full((max(1, expr(w["bytes"], env)),), 0x7f, dtype=torch.uint8, device="cuda") for w in man["workspaces"]]
        for w, m in zip(wss, man["workspaces"]):
            if m.get("zero", True): w.zero_()
        inter = [torch.empty([expr(x, env) for x in o["shape"]], dtype=DT[o["dtype"]], device="cuda") for o in man["intermediates"]]
        stream = cu.CUstream(torch.cuda.current_stream().cuda_stream)
        for k in man["kernels"]:
            err, mod = cu.cuModuleLoadData(open(os.path.join(d, k["binary"]), "rb").read()); assert err == 0, err
            err, f = cu.cuModuleGetFunction(mod, k["name"].encode()); assert err == 0, err
            vals, types = [], []
            for p in k["params"]:
                kind = p["kind"]
                if kind == "input":
                    if man["inputs"][p["index"]].get("scalar"):
                        vals.append(float(ins[p["index"]])); types.append(ctypes.c_double)
                    else:
                        vals.append(dev[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
                elif kind == "scalar": vals.append(float(ins[p["index"]])); types.append(ctypes.c_double)
                elif kind == "output": vals.append(outs[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
                elif kind == "workspace": vals.append(wss[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
                elif kind == "intermediate": vals.append(inter[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
                elif kind == "size": vals.append(env[p["symbol"]]); types.append(ctypes.c_longlong)
            g = [expr(x, env) for x in k["grid"]]; b = [expr(x, env) for x in k["block"]]
            fn = cu.cuLaunchCooperativeKernel if k.get("cooperative") else None
            if fn:
                err, = fn(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, stream, (tuple(vals), tuple(types)))
            else:
                err, = cu.cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, stream, (tuple(vals), tuple(types)), 0)
            assert err == 0, err
        torch.cuda.synchronize()
        bad = []
        for i, (o, t) in enumerate(zip(outs, case["outputs"])):
            ref = torch.from_numpy(np.fromfile(os.path.join(d, t["file"]), dtype=np.float64)).reshape(t["shape"])
            ok, e = close(o, ref, t["dtype"])
            if not ok: bad.append((i, t["dtype"], e))
        if bad: res["fail"].append({"case": os.path.basename(d), "sched": case["schedulers"], "bad": bad})
        else: res["pass"] += 1
    except Exception as ex:
        res["fail"].append({"case": os.path.basename(d), "error": repr(ex)[:200]})
        if "illegal" in repr(ex) or "CUDA" in repr(ex):
            print(json.dumps(res)); sys.exit(3)
print(json.dumps(res))
