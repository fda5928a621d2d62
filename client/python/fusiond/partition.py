"""What the torch.compile backend fuses, without torch: which aten ops fusiond
compiles, the maximal acyclic groups of them in a graph, and the lowering of
one group to a FusionDefinition.

Graphs come in as plain data (fusiond.torch_backend converts torch.fx graphs):
a node is a `GraphNode` with its op as text ("aten.add.Tensor"), its
arguments (other nodes by index, numbers, lists), and its output's shape and
dtype name ("bfloat16"). Everything here is unit-testable with no torch and
no GPU (tests/python/torch_backend_test.py).

Numerics follow Inductor's: 16-bit floating inputs are computed in float32,
intermediates stay float32, and an output is cast to the dtype the graph
gives it; an explicit cast in the graph (convert_element_type) rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .definition import DataType, FusionDefinition, Value

__all__ = ["GraphNode", "Ref", "supported", "partition", "group_outputs", "lower", "Lowered",
           "Unsupported"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_DTYPES = {"bool": DataType.Bool, "int32": DataType.Int32, "int64": DataType.Int,
           "float16": DataType.Half, "bfloat16": DataType.BFloat16, "float32": DataType.Float,
           "float64": DataType.Double}


class Unsupported(Exception):
    """A node (or group) fusiond does not compile; the message says why."""


@dataclass(frozen=True)
class Ref:
    """An argument that is another node's output (index into the node list)."""
    index: int


@dataclass
class GraphNode:
    """One node. kind: "placeholder", "call" or "output"; target: the op's
    text ("aten.mul.Tensor", "operator.getitem"); shape/dtype: its output's
    (a tuple of (shape, dtype) per element for ops with several outputs)."""
    kind: str
    target: str = ""
    args: Tuple = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)
    shape: Optional[Tuple[int, ...]] = None
    dtype: Optional[str] = None
    outputs: Optional[List[Tuple[Tuple[int, ...], str]]] = None
    name: str = ""


# ----------------------------------------------------------------------------
# Which ops: aten overload (without ".default") -> lowering category.

_UNARY = {f"aten.{n}": n for n in (
    "abs", "neg", "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin",
    "cos", "tanh", "sigmoid", "erf", "erfc", "relu", "floor", "ceil", "logical_not")}
_BINARY = {}
for _n in ("add", "sub", "mul", "div", "maximum", "minimum", "fmod", "eq", "ne", "lt", "le", "gt",
           "ge", "logical_and", "logical_or", "pow"):
    for _overload in ("Tensor", "Scalar", "Tensor_Scalar", "Tensor_Tensor", ""):
        _BINARY[f"aten.{_n}.{_overload}".rstrip(".")] = _n
_REDUCTIONS = {"aten.sum.dim_IntList": "sum", "aten.sum": "sum", "aten.amax": "max",
               "aten.amin": "min", "aten.mean.dim": "mean", "aten.mean": "mean",
               "aten.var_mean.correction": "var_mean", "aten.var.correction": "var"}
_CASTS = ("prims.convert_element_type", "aten._to_copy", "aten.to.dtype")
# Views fuse when they only add or drop extent-1 axes (or broadcast); other
# reshapes and permutations stay aten views, free outside a kernel.
# (clone stays aten: a fused identity would hand back its input, not a copy.)
_VIEWS = ("aten.expand", "aten.unsqueeze", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze",
          "aten.view", "aten._unsafe_view", "aten.reshape")
_SIZE_ONE_VIEWS = ("aten.unsqueeze", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze",
                   "aten.view", "aten._unsafe_view", "aten.reshape")
_OTHER = ("aten.where.self", "aten.rsub.Scalar", "aten.clamp_min", "aten.clamp_max",
          "operator.getitem")
# Ops that only move or reshape data: a group of these alone is not worth a kernel.
_NON_COMPUTE = set(_VIEWS) | {"operator.getitem"}


def _base(target: str) -> str:
    return target[:-len(".default")] if target.endswith(".default") else target


def supported(nodes: Sequence[GraphNode], i: int) -> Optional[str]:
    """None when node i can be fused, else why not."""
    n = nodes[i]
    if n.kind != "call":
        return "not an op"
    t = _base(n.target)
    known = t in _UNARY or t in _BINARY or t in _REDUCTIONS or t in _CASTS or t in _VIEWS or t in _OTHER
    if not known:
        return f"{t} is not an op fusiond compiles"
    dtypes = [d for _, d in n.outputs] if n.outputs else [n.dtype]
    for a in _flat(n.args) + _flat(list(n.kwargs.values())):
        if isinstance(a, Ref):
            src = nodes[a.index]
            if src.outputs and t != "operator.getitem":
                return "an operand with several outputs"
            if not src.outputs:
                dtypes.append(src.dtype)
                if src.shape is None:
                    return "a non-tensor operand computed in the graph (a symbolic size)"
    for d in dtypes:
        if d not in _FLOATS and d != "bool":
            return f"dtype {d} (fusiond fuses floating and bool tensors)"
    if t in _SIZE_ONE_VIEWS:
        src = nodes[n.args[0].index] if n.args and isinstance(n.args[0], Ref) else None
        if src is None or src.shape is None or n.shape is None or not (
                _is_insertion(src.shape, n.shape) or _is_insertion(n.shape, src.shape)):
            return f"{t} that is not adding or dropping extent-1 axes"
    if t == "operator.getitem":
        src = n.args[0]
        if not isinstance(src, Ref) or not nodes[src.index].outputs:
            return "getitem of a non-tuple"
    if t in _CASTS and t != "prims.convert_element_type":
        extra = set(n.kwargs) - {"dtype", "device", "layout", "memory_format"}
        if extra or n.kwargs.get("memory_format") not in (None, "torch.preserve_format"):
            return f"{t} with {sorted(extra) or 'a memory format'}"
    if t in ("aten.add.Tensor", "aten.sub.Tensor", "aten.rsub.Scalar") and n.kwargs.get("alpha", 1) != 1:
        if not isinstance(n.kwargs["alpha"], (int, float)):
            return "a non-number alpha"
    if t in ("aten.sum.dim_IntList", "aten.mean.dim", "aten.sum", "aten.mean") and n.kwargs.get("dtype"):
        return "a reduction with dtype="
    return None


def _flat(args) -> list:
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out.extend(_flat(a))
        else:
            out.append(a)
    return out


def _inputs_of(n: GraphNode) -> List[int]:
    return sorted({a.index for a in _flat(list(n.args) + list(n.kwargs.values())) if isinstance(a, Ref)})


# ----------------------------------------------------------------------------
# Partitioning: maximal groups of supported nodes with no path leaving a
# group and coming back into it (the fused group must run as one call).

def partition(nodes: Sequence[GraphNode], is_supported: Optional[Callable[[int], bool]] = None
              ) -> List[List[int]]:
    """Groups of node indices (each in graph order), largest merges first.
    A node joins the groups of its operands when that creates no cycle;
    groups with no compute op (views only) are dropped."""
    if is_supported is None:
        def is_supported(i):
            return supported(nodes, i) is None
    n = len(nodes)
    inputs = [_inputs_of(x) for x in nodes]
    anc = [0] * n  # bit j set: node j is an ancestor of node i
    for i in range(n):
        for p in inputs[i]:
            anc[i] |= anc[p] | (1 << p)
    desc = [0] * n
    for i in reversed(range(n)):
        for p in inputs[i]:
            desc[p] |= desc[i] | (1 << i)

    def cyclic(members: int) -> bool:
        # A node outside the group that is both fed by it and feeds it.
        outside_between = 0
        m = members
        while m:
            low = m & -m
            j = low.bit_length() - 1
            outside_between |= desc[j]
            m ^= low
        outside_between &= ~members
        while outside_between:
            low = outside_between & -outside_between
            j = low.bit_length() - 1
            if anc[j] & members and desc[j] & members:
                return True
            outside_between ^= low
        return False

    group_of: Dict[int, int] = {}
    groups: Dict[int, int] = {}  # id -> member bits
    next_id = 0
    for i in range(n):
        if not is_supported(i):
            continue
        members = 1 << i
        merged = []
        candidates = sorted({group_of[p] for p in inputs[i] if p in group_of},
                            key=lambda g: -bin(groups[g]).count("1"))
        for g in candidates:
            trial = members | groups[g]
            if not cyclic(trial):
                members = trial
                merged.append(g)
        for g in merged:
            del groups[g]
        groups[next_id] = members
        m = members
        while m:
            low = m & -m
            group_of[low.bit_length() - 1] = next_id
            m ^= low
        next_id += 1
    out = []
    for bits in groups.values():
        members = [j for j in range(n) if bits >> j & 1]
        if any(_base(nodes[j].target) not in _NON_COMPUTE for j in members):
            out.append(members)
    out.sort(key=lambda g: g[0])
    return out


# ----------------------------------------------------------------------------
# Lowering one group to a FusionDefinition.

@dataclass
class Lowered:
    """A group as a fusion: `fd` takes the tensors of nodes `inputs` (in
    order); `sources` says where each group output comes from: ("fusion", k)
    the fusion's output k, or ("input", j) the fusion's input j unchanged."""
    fd: FusionDefinition
    inputs: List[int]
    sources: List[Tuple[str, int]]
    ops: List[str]


class _Lowering:
    def __init__(self, nodes: Sequence[GraphNode], members: Sequence[int]):
        self.nodes = nodes
        self.members = set(members)
        self.fd = FusionDefinition()
        self.values: Dict[int, Any] = {}   # node -> (fd value, dtype), or a list of them
        self.shapes: Dict[int, Tuple[int, ...]] = {}  # id(fd value) -> its shape
        self.inputs: List[int] = []
        self.alive: List[Value] = []

    def reg(self, x, shape):
        if isinstance(x, Value):
            self.shapes[id(x)] = tuple(shape)
            self.alive.append(x)  # ids stay unique while the shapes are looked up
        return x

    def value(self, a):
        """(fd value or number, dtype or None) of an argument."""
        if not isinstance(a, Ref):
            if isinstance(a, (bool, int, float)):
                return a, None
            raise Unsupported(f"argument {a!r}")
        i = a.index
        if i not in self.values:
            if i in self.members:
                raise Unsupported(f"node {i} used before it is defined")
            src = self.nodes[i]
            if src.shape is None or src.dtype not in _DTYPES:
                raise Unsupported(f"operand {src.name or i} is not a tensor fusiond reads")
            t = self.fd.define_tensor(shape=list(src.shape), contiguity=[True] * len(src.shape),
                                      dtype=_DTYPES[src.dtype])
            self.reg(t, src.shape)
            self.inputs.append(i)
            self.values[i] = (t, src.dtype)
        v = self.values[i]
        if isinstance(v, list):
            raise Unsupported("a tuple used as a tensor")
        return v

    def computed(self, v):
        """An operand in its compute type: 16-bit floats in float32."""
        x, d = v
        if d in ("float16", "bfloat16"):
            return self.reg(self.fd.ops.cast(x, dtype=DataType.Float), self.shapes[id(x)]), "float32"
        return x, d

    def expand_to(self, x, shape):
        """x broadcast (numpy rules) to `shape`; numbers stay numbers."""
        if not isinstance(x, Value):
            return x
        src = self.shapes[id(x)]
        if src == tuple(shape):
            return x
        k = len(shape) - len(src)
        out = self.fd.ops.broadcast_in_dim(x, shape=list(shape), broadcast_dims=list(range(k, len(shape))))
        return self.reg(out, shape)

    def lower(self, outputs: Sequence[Tuple[int, Optional[int]]]) -> Lowered:
        ops = []
        sources = []
        added: Dict[int, int] = {}
        with self.fd:
            for i in sorted(self.members):
                n = self.nodes[i]
                self.values[i] = self.node(n)
                ops.append(_base(n.target))
            k = 0
            for i, elem in outputs:
                v, n = self.values.get(i), self.nodes[i]
                if v is None:
                    raise Unsupported(f"output node {i} is not in the group")
                if elem is not None:
                    v, (shape, dtype) = v[elem], n.outputs[elem]
                else:
                    shape, dtype = n.shape, n.dtype
                x = self.output_value(v, dtype, shape)
                passed = [j for j, src in enumerate(self.inputs) if self.values[src][0] is x]
                if passed:
                    sources.append(("input", passed[0]))
                    continue
                if id(x) in added:  # one value read outside under two names: one output
                    sources.append(("fusion", added[id(x)]))
                    continue
                self.fd.add_output(x)
                added[id(x)] = k
                sources.append(("fusion", k))
                k += 1
        if not k:
            raise Unsupported("the group computes nothing")
        return Lowered(self.fd, self.inputs, sources, ops)

    def output_value(self, v, dtype, shape):
        x, d = v
        if not isinstance(x, Value):
            raise Unsupported("a number as an output")
        if d != dtype:
            x = self.reg(self.fd.ops.cast(x, dtype=_DTYPES[dtype]), self.shapes[id(x)])
        if self.shapes.get(id(x)) != tuple(shape):
            raise Unsupported(f"output shape {self.shapes.get(id(x))} is not the graph's {tuple(shape)}")
        return x

    def node(self, n: GraphNode):
        t = _base(n.target)
        result = _LOWER[_category(t)](self, n, t)
        if isinstance(result, list):
            for (x, _), (shape, _) in zip(result, n.outputs):
                self.reg(x, shape)
        else:
            self.reg(result[0], n.shape)
        return result


def _category(t: str) -> str:
    if t in _UNARY:
        return "unary"
    if t in _BINARY:
        return "binary"
    if t in _REDUCTIONS:
        return "reduction"
    if t in _CASTS:
        return "cast"
    if t in _VIEWS:
        return "view"
    return t


def _operand(lw: _Lowering, a):
    return lw.value(a)


def _lower_unary(lw, n, t):
    x, d = lw.computed(_operand(lw, n.args[0]))
    return getattr(lw.fd.ops, _UNARY[t])(x), d if n.dtype != "bool" else "bool"


def _binary_operands(lw, n, a, b):
    va, vb = _operand(lw, a), _operand(lw, b)
    xa, da = lw.computed(va)
    xb, db = lw.computed(vb)
    # A Python int beside a floating tensor is a float (aten's promotion).
    if isinstance(xa, int) and not isinstance(xa, bool) and db in _FLOATS:
        xa = float(xa)
    if isinstance(xb, int) and not isinstance(xb, bool) and da in _FLOATS:
        xb = float(xb)
    shape = tuple(n.shape)
    return lw.expand_to(xa, shape), lw.expand_to(xb, shape), da or db


def _lower_binary(lw, n, t):
    name = _BINARY[t]
    a, b = n.args[0], n.args[1]
    alpha = n.kwargs.get("alpha", 1)
    xa, xb, d = _binary_operands(lw, n, a, b)
    if alpha != 1 and name in ("add", "sub"):
        xb = lw.reg(lw.fd.ops.mul(xb, float(alpha)), lw.shapes.get(id(xb), ()))
    out = getattr(lw.fd.ops, name)(xa, xb)
    return out, ("bool" if n.dtype == "bool" else d or n.dtype)


def _lower_rsub(lw, n, t):
    xa, xb, d = _binary_operands(lw, n, n.args[0], n.args[1])
    alpha = n.kwargs.get("alpha", 1)
    if alpha != 1:
        xa = lw.reg(lw.fd.ops.mul(xa, float(alpha)), lw.shapes.get(id(xa), ()))
    return lw.fd.ops.sub(xb, xa), d


def _lower_clamp(lw, n, t):
    x, d = lw.computed(_operand(lw, n.args[0]))
    bound = n.args[1]
    if isinstance(bound, Ref):
        raise Unsupported("a tensor bound")
    op = lw.fd.ops.maximum if t == "aten.clamp_min" else lw.fd.ops.minimum
    return op(x, float(bound)), d


def _lower_where(lw, n, t):
    c, _ = _operand(lw, n.args[0])
    c = lw.expand_to(c, tuple(n.shape))
    xa, xb, d = _binary_operands(lw, n, n.args[1], n.args[2])
    return lw.fd.ops.where(c, xa, xb), d


def _dims(dims, rank) -> List[int]:
    if dims is None or dims == []:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank if rank else 0 for d in dims})


def _lower_reduction(lw, n, t):
    kind = _REDUCTIONS[t]
    src = lw.nodes[n.args[0].index]
    x, d = lw.computed(_operand(lw, n.args[0]))
    rank = len(src.shape)
    dims = _dims(n.args[1] if len(n.args) > 1 else n.kwargs.get("dim"), rank)
    keepdim = bool(n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False))
    if kind in ("var", "var_mean"):
        correction = n.kwargs.get("correction", 1)
        correction = 1 if correction is None else correction
        if kind == "var":
            return lw.fd.ops.var(x, dims=dims, correction=int(correction), keepdim=keepdim), d
        var, mean = lw.fd.ops.var_mean(x, dims=dims, correction=int(correction), keepdim=keepdim)
        return [(var, d), (mean, d)]
    op = {"sum": "sum", "mean": "sum", "max": "max", "min": "min"}[kind]
    out = getattr(lw.fd.ops, op)(x, dims=dims, keepdim=keepdim)
    if kind == "mean":
        count = math.prod(src.shape[k] for k in dims)
        out = lw.fd.ops.mul(out, 1.0 / count) if count else lw.fd.ops.div(out, 0.0)
    return out, d


def _lower_cast(lw, n, t):
    x, d = _operand(lw, n.args[0])
    if n.dtype == d:
        return x, d
    return lw.fd.ops.cast(x, dtype=_DTYPES[n.dtype]), n.dtype


def _lower_view(lw, n, t):
    x, d = _operand(lw, n.args[0])
    src = lw.nodes[n.args[0].index]
    in_shape, out_shape = tuple(src.shape), tuple(n.shape)
    if t == "aten.expand":
        return lw.expand_to(x, out_shape), d
    # unsqueeze, squeeze, view, reshape: extent-1 axes come or go.
    if in_shape == out_shape:
        return x, d
    if _is_insertion(in_shape, out_shape):
        dims = _insertion_dims(in_shape, out_shape)
        return lw.fd.ops.broadcast_in_dim(x, shape=list(out_shape), broadcast_dims=dims), d
    if _is_insertion(out_shape, in_shape):
        keep = _insertion_dims(out_shape, in_shape)
        drop = [k for k in range(len(in_shape)) if k not in keep]
        return lw.fd.ops.squeeze(x, dims=drop), d
    raise Unsupported(f"{t} from {list(in_shape)} to {list(out_shape)}")


def _is_insertion(small, big) -> bool:
    return _insertion_dims(small, big) is not None


def _insertion_dims(small, big):
    """Where each axis of `small` sits in `big` when `big` is `small` with
    extent-1 axes inserted (None if it is not)."""
    dims, k = [], 0
    for j, s in enumerate(big):
        if k < len(small) and small[k] == s:
            dims.append(j)
            k += 1
        elif s != 1:
            return None
    return dims if k == len(small) else None


def _lower_getitem(lw, n, t):
    src = lw.values.get(n.args[0].index)
    if not isinstance(src, list):
        raise Unsupported("getitem of a value outside the group")
    return src[n.args[1]]


_LOWER = {"unary": _lower_unary, "binary": _lower_binary, "reduction": _lower_reduction,
          "cast": _lower_cast, "view": _lower_view, "aten.where.self": _lower_where,
          "aten.rsub.Scalar": _lower_rsub, "aten.clamp_min": _lower_clamp,
          "aten.clamp_max": _lower_clamp, "operator.getitem": _lower_getitem}


def group_outputs(nodes: Sequence[GraphNode], members: Sequence[int]) -> List[Tuple[int, Optional[int]]]:
    """The values of a group that nodes outside it read: (node, None), or
    (node, element) for each element of a tuple-valued node."""
    inside = set(members)
    read = set()
    for j, n in enumerate(nodes):
        if j not in inside:
            read.update(_inputs_of(n))
    out = []
    for i in sorted(inside & read):
        n = nodes[i]
        out.extend([(i, k) for k in range(len(n.outputs))] if n.outputs else [(i, None)])
    return out


def lower(nodes: Sequence[GraphNode], members: Sequence[int],
          outputs: Optional[Sequence[Tuple[int, Optional[int]]]] = None) -> Lowered:
    """The group `members` of `nodes` as a FusionDefinition (static shapes:
    the nodes' own) whose outputs are `outputs` (default group_outputs).
    Unsupported when a node cannot be expressed."""
    if outputs is None:
        outputs = group_outputs(nodes, members)
    return _Lowering(nodes, members).lower(outputs)
