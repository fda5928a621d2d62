# Runs generated cubins on the GPU: correctness against a float64 evaluation
# of the same definition, and timing (median of triton do_bench).
import ctypes, json, math, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import nvfuser
from cuda.bindings import driver as cu
import triton.testing

COPY_BW = 4.25e12
OUT = os.environ.get("OUT", "/tmp")
torch.manual_seed(0)
torch.zeros(1, device="cuda")
results = []

def load_def(path):
    ns = {"__name__": "corpus"}
    src = open(path).read()
    exec(compile(src, path, "exec"), ns)
    fn = [v for k, v in ns.items() if callable(v) and getattr(v, "__module__", None) == "corpus" and k != "FusionDefinition"][0]
    return fn, ns["inputs"]

def expr(e, env):
    e = str(e).replace("/", "//")
    return int(eval(e, {"ceil_div": lambda a, b: -(-a // b), "min": min, "max": max}, dict(env)))

DT = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
      "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}

def run_case(d, fusion, shapes, bench=True):
    man = json.load(open(os.path.join(d, "manifest.json")))
    fn, orig = load_def(fusion)
    ins = []
    for i, t in enumerate(orig):
        shp = shapes[i] if shapes else list(t.shape)
        if float(t.float().min()) > 0:
            ins.append((torch.rand(shp, device="cuda") + 0.5).to(t.dtype))
        else:
            ins.append(torch.randn(shp, device="cuda").to(t.dtype))
    ref = nvfuser.evaluate(fn, ins)
    env = {}
    for s in man["symbols"]:
        env[s["name"]] = ins[s["input"]].shape[s["axis"]]
    outs = [torch.empty([expr(x, env) for x in o["shape"]], dtype=DT[o["dtype"]], device="cuda") for o in man["outputs"]]
    wss = [torch.full((max(1, expr(w["bytes"], env)),), 0x7f, dtype=torch.uint8, device="cuda") for w in man["workspaces"]]
    wz = [w for w, m in zip(wss, man["workspaces"]) if m.get("zero", True)]
    launches = []
    for k in man["kernels"]:
        data = open(os.path.join(d, k["binary"]), "rb").read()
        err, mod = cu.cuModuleLoadData(data)
        assert err == cu.CUresult.CUDA_SUCCESS, err
        err, f = cu.cuModuleGetFunction(mod, k["name"].encode())
        assert err == cu.CUresult.CUDA_SUCCESS, err
        vals, types = [], []
        for p in k["params"]:
            if p["kind"] == "input": vals.append(ins[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
            elif p["kind"] == "output": vals.append(outs[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
            elif p["kind"] == "workspace": vals.append(wss[p["index"]].data_ptr()); types.append(ctypes.c_void_p)
            elif p["kind"] == "size": vals.append(env[p["symbol"]]); types.append(ctypes.c_longlong)
            else: raise RuntimeError(p)
        grid = [expr(x, env) for x in k["grid"]]; block = [expr(x, env) for x in k["block"]]
        launches.append((f, grid, block, (tuple(vals), tuple(types)), k.get("cooperative", False), mod))
    stream = cu.CUstream(torch.cuda.current_stream().cuda_stream)
    def launch():
        for w in wz: w.zero_()
        for f, g, b, args, coop, _ in launches:
            if coop:
                err, = cu.cuLaunchCooperativeKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, stream, args)
            else:
                err, = cu.cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, stream, args, 0)
            if err != cu.CUresult.CUDA_SUCCESS: raise RuntimeError(str(err))
    launch(); torch.cuda.synchronize()
    errs = []
    ok = True
    for o, (rv, rdt) in zip(outs, ref):
        a = o.double(); b = rv.double().expand_as(a) if rv.dim() else rv.double()
        scale = max(float(b.abs().max()), 1e-6)
        e = float(((a - b).abs() / (b.abs() + 0.01 * scale)).max())
        tol = 1e-4 if o.dtype == torch.float32 else 2e-2
        bad = not math.isfinite(e) or e > tol
        ok &= not bad
        errs.append(round(e, 6))
    r = {"case": os.path.basename(d), "shapes": [list(x.shape) for x in ins], "ok": ok, "rel_err": errs,
         "grid": [l[1] for l in launches], "block": [l[2] for l in launches]}
    if bench:
        ms = triton.testing.do_bench(launch, warmup=50, rep=300, return_mode="median")
        nbytes = sum(x.numel() * x.element_size() for x in ins) + sum(x.numel() * x.element_size() for x in outs)
        r["us"] = round(ms * 1000, 2)
        r["floor_us"] = round(nbytes / COPY_BW * 1e6, 2)
        r["frac_of_copy"] = round(nbytes / COPY_BW * 1e6 / (ms * 1000), 3)
    print(json.dumps(r), flush=True)
    results.append(r)

cases = json.load(open(sys.argv[1]))
for c in cases:
    try:
        run_case(c["dir"], c["fusion"], c.get("shapes"), c.get("bench", True))
    except Exception as ex:
        print(json.dumps({"case": c["dir"], "error": repr(ex)[:500]}), flush=True)
        results.append({"case": c["dir"], "error": repr(ex)[:500]})
json.dump(results, open(os.path.join(OUT, "results.json"), "w"), indent=1)
