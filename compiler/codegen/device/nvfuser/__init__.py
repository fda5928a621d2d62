# A float64 evaluator of nvFuser-style fusion definitions (the reference
# for checking generated kernels): values are torch float64 tensors already
# rounded to their declared dtype.
import torch

class DataType:
    Float = torch.float32; BFloat16 = torch.bfloat16; Half = torch.float16
    Double = torch.float64; Int = torch.int64; Int32 = torch.int32; Bool = torch.bool; Null = None

def _rnd(x, dt):
    if dt in (torch.bfloat16, torch.float16, torch.float32):
        return x.to(dt).to(torch.float64)
    return x

_rank = {torch.bool: 0, torch.int32: 1, torch.int64: 2, torch.float16: 3, torch.bfloat16: 3, torch.float32: 4, torch.float64: 5}

class T:
    def __init__(self, v, dt, scalar=False):
        self.v, self.dt, self.scalar = v, dt, scalar
    def shape(self): return list(self.v.shape)
    def size(self, i): return T(torch.tensor(float(self.v.shape[i]), dtype=torch.float64), torch.int64, True)

def _dt(*xs):
    ts = [x for x in xs if isinstance(x, T) and not x.scalar]
    if ts:
        d = ts[0].dt
        for t in ts[1:]:
            if _rank[t.dt] > _rank[d] or (t.dt != d and _rank[t.dt] == _rank[d]): d = t.dt if _rank[t.dt] > _rank[d] else torch.float32
        ss = [x for x in xs if isinstance(x, T) and x.scalar]
        if any(s.dt in (torch.float64, torch.float32) for s in ss) and _rank[d] < 3: d = torch.float32
        return d
    return torch.float64

def _v(x): return x.v if isinstance(x, T) else torch.tensor(float(x), dtype=torch.float64)

def _pw(fn, floatonly=False):
    def op(*xs):
        d = _dt(*xs)
        if floatonly and _rank[d] < 3: d = torch.float32
        sc = all(isinstance(x, T) and x.scalar for x in xs)
        return T(_rnd(fn(*[_v(x) for x in xs]), d), d, sc)
    return op

class Ops:
    add = staticmethod(_pw(lambda a, b: a + b)); sub = staticmethod(_pw(lambda a, b: a - b))
    mul = staticmethod(_pw(lambda a, b: a * b)); div = staticmethod(_pw(lambda a, b: a / b))
    pow = staticmethod(_pw(lambda a, b: torch.pow(a, b)))
    neg = staticmethod(_pw(lambda a: -a)); abs = staticmethod(_pw(torch.abs))
    exp = staticmethod(_pw(torch.exp, True)); log = staticmethod(_pw(torch.log, True))
    tanh = staticmethod(_pw(torch.tanh, True)); sqrt = staticmethod(_pw(torch.sqrt, True))
    rsqrt = staticmethod(_pw(torch.rsqrt, True)); reciprocal = staticmethod(_pw(torch.reciprocal, True))
    sigmoid = staticmethod(_pw(torch.sigmoid, True)); erf = staticmethod(_pw(torch.erf, True))
    relu = staticmethod(_pw(torch.relu))
    maximum = staticmethod(_pw(torch.maximum)); minimum = staticmethod(_pw(torch.minimum))
    @staticmethod
    def cast(x, dtype): return T(_rnd(x.v, dtype), dtype, x.scalar)
    @staticmethod
    def broadcast_in_dim(x, shape, broadcast_dims):
        shape = [int(s.v.item()) if isinstance(s, T) else int(s) for s in (shape if isinstance(shape, list) else shape)]
        v = x.v
        view = [1] * len(shape)
        for i, d in enumerate(broadcast_dims): view[d] = v.shape[i]
        return T(v.reshape(view).expand(shape), x.dt)
    @staticmethod
    def _red(fn, x, dims, keepdim, dtype):
        d = dtype if dtype is not None else x.dt
        return T(_rnd(fn(x.v, dims, keepdim), d), d)
    @staticmethod
    def sum(x, dims, keepdim=False, dtype=None): return Ops._red(lambda v, d, k: v.sum(d, keepdim=k), x, dims, keepdim, dtype)
    @staticmethod
    def max(x, dims, keepdim=False, dtype=None): return Ops._red(lambda v, d, k: v.amax(d, keepdim=k), x, dims, keepdim, dtype)
    @staticmethod
    def var_mean(x, dims, correction=0, keepdim=False):
        var = x.v.var(dims, correction=correction, keepdim=keepdim); mean = x.v.mean(dims, keepdim=keepdim)
        return T(_rnd(var, x.dt), x.dt), T(_rnd(mean, x.dt), x.dt)

class FusionDefinition:
    def __init__(self): self.ops = Ops(); self.defs = []; self.outs = []; self.fn = None
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def define_tensor(self, shape, contiguity=None, dtype=torch.float32, is_cpu=False, stride_order=None):
        i = len(self.defs); self.defs.append(dtype)
        if getattr(self, "_inputs", None) is None:
            return T(torch.zeros([s if s >= 0 else 2 for s in shape], dtype=torch.float64), dtype)
        return T(self._inputs[i].to(torch.float64), dtype)
    def define_scalar(self, v, dtype=None): return T(torch.tensor(float(v), dtype=torch.float64), torch.float64, True)
    def define_vector(self, xs, dtype=None): return xs
    def add_output(self, t): self.outs.append(t)
    def execute(self, inputs):
        self.inputs = inputs
        return None

def evaluate(fn, inputs):
    fd = FusionDefinition(); fd._inputs = inputs
    fn(fd)
    return [(o.v, o.dt) for o in fd.outs]
