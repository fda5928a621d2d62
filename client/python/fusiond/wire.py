"""A FusionDefinition in the wire form (fusion_pb2.FusionGraph), built in
Python: what a node without fusionc sends to FUSIOND_SERVER's daemon.

The daemon rebuilds the graph through the same checks as the C++ front end
(its messages name the node and the reason). Extents are written as the C++
front end writes them: a static size, or the axis of a graph input for a
symbolic one; an extent computed from sizes (`T0.size(0) * 2` as a shape
entry) has no such form here and is refused, naming fusionc instead.

The factory ops are lowered as compiler/frontend/factory_calls.cc lowers
them: full / zeros / ones become broadcast_in_dim of the (cast) fill scalar;
iota, uniform and normal are nodes of their own; rand_like / randn_like are
uniform(0, 1) / normal(0, 1) at their argument's shape and dtype; a random op
without rng_seed / rng_offset gets seed 0 and, as offset, how many unseeded
random ops came before it. lerp, addcmul, threshold, set, segment_set and
stride_order are lowered as compiler/frontend/composite_calls.cc lowers them
(_composite).
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from .definition import ARITH_SPELLINGS
from .definition import MATH_SPELLINGS as _MATH
from .definition import DataType, FusionDefinition, Tensor, Value, Vector, _DType
from .manifest import InvalidArgument
from .wire_math import elementwise_dtype as _elementwise_dtype
from .wire_math import lower_math as _math
from .wire_math import lower_triangle as _triangle

__all__ = ["to_graph"]

_PROTO_DTYPES = {"Bool": "BOOL", "Int32": "INT32", "Int": "INT64", "Half": "FLOAT16",
                 "BFloat16": "BFLOAT16", "Float": "FLOAT32", "Double": "FLOAT64",
                 "Float8_e4m3fn": "FLOAT8_E4M3FN", "Float8_e5m2": "FLOAT8_E5M2"}
_PARAMS = {  # the argument names the C++ front end binds, per op
    "cast": ("x", "dtype"), "size": ("x", "dim"),
    "sum": ("x", "dims", "keepdim", "dtype"), "max": ("x", "dims", "keepdim", "dtype"),
    "min": ("x", "dims", "keepdim", "dtype"), "prod": ("x", "dims", "keepdim", "dtype"),
    "var": ("x", "dims", "correction", "keepdim"), "var_mean": ("x", "dims", "correction", "keepdim"),
    "broadcast_in_dim": ("x", "shape", "broadcast_dims"), "broadcast": ("x", "is_broadcast_dim"),
    "expand": ("x", "shape"), "reshape": ("x", "new_shape"),
    "squeeze": ("x", "dims", "squeeze_expanded"), "permute": ("x", "dims"), "clamp": ("x", "min", "max"),
    "shape": ("arg",), "at": ("arg", "index"), "triu": ("x", "diagonal"), "tril": ("x", "diagonal"),
    "uniform": ("minval", "maxval", "shape", "rng_seed", "rng_offset", "dtype"),
    "normal": ("mean", "std", "shape", "rng_seed", "rng_offset", "dtype"),
    "rand_like": ("arg", "rng_seed", "rng_offset"), "randn_like": ("arg", "rng_seed", "rng_offset"),
    "iota": ("length", "start", "step", "dtype"),
    "full": ("shape", "fill_value", "dtype"), "zeros": ("shape", "dtype"), "ones": ("shape", "dtype"),
    "set": ("x",), "segment_set": ("x",), "stride_order": ("arg", "stride_order"),
    "lerp": ("start", "end", "weight"), "addcmul": ("x", "tensor1", "tensor2", "value"),
    "threshold": ("x", "threshold", "value"),
}
_COMPOSITES = ("set", "segment_set", "stride_order", "lerp", "addcmul", "threshold")
# Spellings fusionc's front end writes with IR ops that this form does not:
# to_graph raises InvalidArgument, and the client sends `fusionc parse`'s graph.
_FUSIONC_ONLY = ARITH_SPELLINGS + ("welford",)
_DTYPE_BYTES = {"Bool": 1, "Int32": 4, "Int": 8, "Half": 2, "BFloat16": 2, "Float": 4,
                "Double": 8, "Float8_e4m3fn": 1, "Float8_e5m2": 1}
_REDUCED_FLOATS = ("Half", "BFloat16", "Float8_e4m3fn", "Float8_e5m2")
_FACTORIES = ("uniform", "normal", "rand_like", "randn_like", "iota", "full", "zeros", "ones")
_SHAPE_OPS = ("broadcast_in_dim", "broadcast", "expand", "reshape", "squeeze", "permute")
_INTEGRAL = ("Int32", "Int")
_TERNARY = ("where", "clamp")
_REDUCTIONS = ("sum", "max", "min", "prod", "var", "var_mean")


def _dtype_name(d) -> str:
    return d.name if isinstance(d, _DType) else str(d)


def _dtype(pb, d) -> int:
    name = _dtype_name(d)
    if name not in _PROTO_DTYPES:
        raise InvalidArgument(f"DataType.{name} has no wire form")
    return pb.DataType.Value(_PROTO_DTYPES[name])


class _Builder:
    def __init__(self, pb):
        self.pb = pb
        self.inputs, self.constants, self.nodes, self.outputs = [], [], [], []
        self.handle: Dict[int, tuple] = {}      # id(Value) -> ("input"|"constant"|"node", i, k)
        self.extents: Dict[int, list] = {}      # id(Tensor) -> [("s", n) | ("in", input, axis)]
        self.ints: Dict[int, int] = {}          # id(Scalar) -> its integer constant's value
        self.sizes: Dict[Tuple[int, int], tuple] = {}
        self.dtypes: Dict[int, str] = {}        # id(Value) -> its dtype's name, where known
        self.unseeded = 0                       # random ops so far without rng_seed / rng_offset
        self.keep: List[Value] = []             # ids stay unique while looked up

    def note(self, v, handle, extents=None):
        self.keep.append(v)
        self.handle[id(v)] = handle
        if extents is not None:
            self.extents[id(v)] = extents

    def constant(self, value, dtype=None) -> tuple:
        if dtype is None:
            dtype = DataType.Double if isinstance(value, float) else (
                DataType.Bool if isinstance(value, bool) else DataType.Int)
        self.constants.append(self.pb.Constant(dtype=_dtype(self.pb, dtype), value=float(value)))
        return ("constant", len(self.constants) - 1, 0)

    def dtype_of(self, v):
        """The dtype name of an operand, or None where this builder does not track it."""
        if isinstance(v, Value):
            return "Int" if v._size is not None else self.dtypes.get(id(v))
        if isinstance(v, bool):
            return "Bool"
        return "Double" if isinstance(v, float) else "Int" if isinstance(v, int) else None

    def operand(self, v) -> tuple:
        if isinstance(v, Value):
            if v._size is not None:
                return self.size_node(*v._size)
            if id(v) not in self.handle and id(v) in self.ints:
                return self.constant(self.ints[id(v)])
            if id(v) not in self.handle:
                raise InvalidArgument(f"{v!r} is not defined in this definition")
            return self.handle[id(v)]
        if isinstance(v, (bool, int, float)):
            return self.constant(v)
        raise InvalidArgument(f"operand {v!r} is not a tensor, a scalar or a number")

    def size_node(self, tensor, axis) -> tuple:
        rank = len(self.extents.get(id(tensor), ()))
        axis = axis % rank if rank and -rank <= axis < rank else axis
        key = (id(tensor), axis)
        if key not in self.sizes:
            self.nodes.append((self.pb.Node(op=self.pb.OpKind.Value("SIZE"), axis=axis),
                               [self.operand(tensor)], 1))
            self.sizes[key] = ("node", len(self.nodes) - 1, 0)
        return self.sizes[key]

    def extent(self, item):
        if isinstance(item, bool):
            raise InvalidArgument(f"shape entry {item!r} is not a size")
        if isinstance(item, int):
            if item < 0:
                raise InvalidArgument(f"shape entry {item} is negative (the wire form needs sizes)")
            return ("s", item)
        if isinstance(item, Value) and item._size is not None:
            tensor, axis = item._size
            return self.extents[id(tensor)][axis]
        if isinstance(item, Value) and id(item) in self.ints:
            return ("s", self.ints[id(item)])
        raise InvalidArgument(f"shape entry {item!r} is computed from sizes: the Python wire form "
                              "has no such extent; compile this definition with fusionc")

    def shape(self, v) -> list:
        if isinstance(v, Vector):
            if isinstance(v._of, Tensor):
                return list(self.extents[id(v._of)])
            return [self.extent(x) for x in v._of]
        if isinstance(v, (list, tuple)):
            return [self.extent(x) for x in v]
        raise InvalidArgument(f"shape {v!r} is not a list, T.shape() or define_vector(...)")

    def proto_extents(self, extents) -> list:
        out = []
        for e in extents:
            if e[0] == "s":
                out.append(self.pb.Extent(static_size=e[1]))
            else:
                out.append(self.pb.Extent(input_axis=self.pb.InputAxis(input=e[1], axis=e[2])))
        return out


def _merge(shapes: List[list]) -> list:
    """Elementwise result extents: a static size other than 1 wins, then a
    symbolic one, then 1."""
    out = []
    for axis in zip(*shapes):
        static = [e for e in axis if e[0] == "s" and e[1] != 1]
        symbolic = [e for e in axis if e[0] == "in"]
        out.append(static[0] if static else symbolic[0] if symbolic else ("s", 1))
    return out


def _bind(name, args, kwargs) -> dict:
    from .definition import _BINARY, _UNARY
    params = _PARAMS.get(name) or (("x",) if name in _UNARY + _MATH else ("lhs", "rhs") if name in _BINARY
                                   else ("pred", "lhs", "rhs"))
    if len(args) > len(params):
        raise InvalidArgument(f"fd.ops.{name} takes at most {len(params)} arguments")
    bound = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params:
            raise InvalidArgument(f"fd.ops.{name} has no argument {k!r} (it takes {', '.join(params)})")
        bound[k] = v
    return bound


def _legacy_shape_call(name, args, kwargs) -> bool:
    """nvFuser's pre-2023 reshape(x, original_shape, new_shape) and
    squeeze(x, original_shape, dims), as definition_calls.cc recognizes them."""
    if name not in ("reshape", "squeeze"):
        return False
    return "original_shape" in kwargs or (name == "reshape" and len(args) == 3)


def _bind_legacy(b: _Builder, name, args, kwargs) -> dict:
    """The legacy call's arguments, original_shape checked against x's
    extents (its rank and each static extent) and dropped."""
    params = ("x", "original_shape", "new_shape" if name == "reshape" else "dims")
    if len(args) > 3:
        raise InvalidArgument(f"fd.ops.{name} takes at most 3 arguments")
    a = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params or k in a:
            raise InvalidArgument(f"fd.ops.{name}: argument {k!r} is unknown or given twice")
        a[k] = v
    if any(p not in a for p in params):
        raise InvalidArgument(f"fd.ops.{name} needs {', '.join(params)}")
    x, original = a.pop("x"), a.pop("original_shape")
    ext = b.extents.get(id(x)) if isinstance(x, Tensor) else None
    if (ext is None or not isinstance(original, (list, tuple)) or len(original) != len(ext) or
            any(isinstance(n, bool) or not isinstance(n, int) or n < 0 or
                (e[0] == "s" and e[1] != n) for n, e in zip(original, ext))):
        raise InvalidArgument(f"fd.ops.{name}'s original_shape {original!r} is not the shape of "
                              f"{x!r} (fusionc names the error)")
    a["x"] = x
    return a


def _shape_query(b: _Builder, name, a, out) -> None:
    """fd.ops.shape(T) (its sizes) and fd.ops.at(V, index), as composite_calls.cc
    reads them: nothing is emitted but a size node for a symbolic entry."""
    if name == "shape":
        if not isinstance(a.get("arg"), Tensor) or id(a["arg"]) not in b.extents:
            raise InvalidArgument(f"fd.ops.shape of {a.get('arg')!r}: it takes a tensor")
        b.keep.append(out)
        return
    vec, index = a.get("arg"), a.get("index")
    if not isinstance(vec, Vector) or isinstance(index, bool) or not isinstance(index, int):
        raise InvalidArgument(f"fd.ops.at({vec!r}, {index!r}): a shape and an integer index")
    items = vec._of if isinstance(vec._of, (list, tuple)) else None
    n = len(items) if items is not None else len(b.extents.get(id(vec._of), ()))
    if not -n <= index < n:
        raise InvalidArgument(f"fd.ops.at({vec!r}, {index}): index out of range")
    if items is None and out._size is not None:  # fd.ops.shape(T)'s entry: T.size(axis)
        return
    item = items[index] if items is not None else b.extents[id(vec._of)][index]
    if items is None:  # T.shape()'s entry: a static extent is its number (symbolic: refused)
        if item[0] != "s":
            raise InvalidArgument(f"fd.ops.at of a symbolic entry of {vec._expr} (fusionc names "
                                  "the error)")
        item = item[1]
    if isinstance(item, Value) and id(item) in b.ints:
        item = b.ints[id(item)]
    if isinstance(item, bool) or not isinstance(item, int):
        # define_vector's entries are extents: only a static one is a number.
        raise InvalidArgument(f"fd.ops.at of a symbolic entry of {vec._expr} (fusionc names "
                              "the error)")
    b.ints[id(out)] = item  # a number: a constant only where used as an operand
    b.dtypes[id(out)] = "Int"
    b.keep.append(out)


def _op(b: _Builder, name, args, kwargs, outs) -> None:
    pb = b.pb
    if name in _FUSIONC_ONLY:
        raise InvalidArgument(f"fd.ops.{name}: the Python wire form leaves it to fusionc")
    if _legacy_shape_call(name, args, kwargs):
        a = _bind_legacy(b, name, args, kwargs)
    else:
        a = _bind(name, args, kwargs)
    if name in _MATH:
        _math(b, name, a, outs[0])
        return
    if name in ("triu", "tril"):
        _triangle(b, name, a, outs[0])
        return
    if name in ("shape", "at"):
        _shape_query(b, name, a, outs[0])
        return
    if name in _COMPOSITES:
        _composite(b, name, a, outs[0])
        return
    if name == "size":
        x = a["x"]
        b.note(outs[0], b.size_node(x, int(a["dim"])))
        return
    if name in _FACTORIES:
        _factory(b, name, a, outs[0])
        return
    if name == "div" and _integer_tensor_division(b, a):
        # compiler/frontend/arith_calls.cc truncates it (nvFuser's integer
        # division) in nodes this form does not write: fusionc parse does.
        raise InvalidArgument("fd.ops.div of integer tensors truncates; the Python wire form "
                              "leaves it to fusionc")
    node = pb.Node(op=pb.OpKind.Value(name.upper()))
    if name == "squeeze" and not isinstance(a.get("squeeze_expanded", False), bool):
        raise InvalidArgument("fd.ops.squeeze: squeeze_expanded is not a bool")
    if name == "clamp":
        operands = [a.get("x"), a.get("min"), a.get("max")]
    elif name in _PARAMS and name not in ("cast",):
        operands = [a["x"]]
    elif name == "cast":
        operands = [a["x"]]
        node.dtype = _dtype(pb, a["dtype"])
    else:
        operands = [a[p] for p in (("x",) if len(a) == 1 and "x" in a else
                                   ("pred", "lhs", "rhs") if name in _TERNARY else ("lhs", "rhs"))]
    handles = [b.operand(v) for v in operands]
    tensors = [b.extents[id(v)] for v in operands if isinstance(v, Tensor) and v._size is None]
    x_ext = b.extents.get(id(operands[0]))
    if name in _REDUCTIONS:
        rank = len(x_ext)
        dims = sorted({int(d) % rank for d in a["dims"]})
        node.dims.extend(dims)
        keep = bool(a.get("keepdim", False))
        node.keepdim = keep
        if name in ("var", "var_mean"):
            node.correction = int(a.get("correction", 1))
        elif a.get("dtype") is not None and getattr(a["dtype"], "name", "") != "Null":
            node.dtype = _dtype(pb, a["dtype"])
        ext = [("s", 1) if k in dims else e for k, e in enumerate(x_ext) if keep or k not in dims]
    elif name in ("broadcast_in_dim", "expand", "reshape"):
        ext = b.shape(a["shape"] if "shape" in a else a["new_shape"])
        node.shape.extend(b.proto_extents(ext))
        if name == "broadcast_in_dim":
            node.broadcast_dims.extend(int(d) for d in a["broadcast_dims"])
    elif name == "broadcast":
        flags = [bool(f) for f in a["is_broadcast_dim"]]
        node.is_broadcast_dim.extend(flags)
        it = iter(x_ext)
        ext = [("s", 1) if f else next(it) for f in flags]
    elif name == "squeeze":
        rank = len(x_ext)
        dims = sorted({int(d) % rank for d in a["dims"]})
        node.dims.extend(dims)
        ext = [e for k, e in enumerate(x_ext) if k not in dims]
    elif name == "permute":
        dims = [int(d) for d in a["dims"]]
        node.dims.extend(dims)
        ext = [x_ext[d] for d in dims]
    else:
        ext = _merge(tensors) if tensors else None
    b.nodes.append((node, handles, len(outs)))
    for k, v in enumerate(outs):
        b.note(v, ("node", len(b.nodes) - 1, k), ext if isinstance(v, Tensor) else None)
    known = (_dtype_name(a["dtype"]) if name == "cast" else
             b.dtype_of(operands[0]) if name in _SHAPE_OPS else
             _elementwise_dtype(b, name, operands) if name not in _REDUCTIONS else None)
    if known is not None:
        b.dtypes[id(outs[0])] = known


def _integer_tensor_division(b: _Builder, a) -> bool:
    operands = [a.get("lhs"), a.get("rhs")]
    types = [b.dtype_of(v) for v in operands]
    return (any(isinstance(v, Tensor) and v._size is None for v in operands)
            and all(t in ("Int", "Int32") for t in types))


def _promote(a: str, b: str) -> str:
    """compiler/ir/dtype.cc's PromoteTypes on dtype names."""
    if a == b or b == "Bool":
        return a
    if a == "Bool":
        return b
    fa, fb = a not in _INTEGRAL, b not in _INTEGRAL
    if fa != fb:
        return a if fa else b
    if not fa:
        return a if _DTYPE_BYTES[a] >= _DTYPE_BYTES[b] else b
    if _DTYPE_BYTES[a] == _DTYPE_BYTES[b]:
        return "Float"
    return a if _DTYPE_BYTES[a] > _DTYPE_BYTES[b] else b


def _composite(b: _Builder, name, a, out) -> None:
    """set, segment_set, stride_order, lerp, addcmul and threshold, as
    compiler/frontend/composite_calls.cc lowers them: the first three are
    their operand; lerp and addcmul compute 16- and 8-bit float tensors in
    float32 and cast the result to the promoted type once."""
    params = _PARAMS[name]
    for p in params[:1 if name in ("set", "segment_set") else 2 if name == "stride_order" else 3]:
        if a.get(p) is None:
            raise InvalidArgument(f"fd.ops.{name} needs {p}")
    if name in ("set", "segment_set", "stride_order"):
        x = a[params[0]]
        handle = b.operand(x)
        ext = b.extents.get(id(x))
        if name == "stride_order":
            order = [int(d) for d in a["stride_order"]]
            if ext is None or sorted(order) != list(range(len(ext))):
                raise InvalidArgument(f"fd.ops.stride_order({x!r}, {order}): not a tensor and a "
                                      "permutation of its axes")
        b.note(out, handle, ext)
        if b.dtype_of(x) is not None:
            b.dtypes[id(out)] = b.dtype_of(x)
        return
    vals = []  # (handle, extents or None for a scalar)
    for p in params:
        v = a.get(p)
        if v is None:  # addcmul's value
            vals.append((b.constant(1, DataType.Double), None))
            continue
        vals.append((b.operand(v), b.extents.get(id(v)) if isinstance(v, Tensor) and
                     v._size is None else None))

    def emit(op, operands, dtype=None):
        node = b.pb.Node(op=b.pb.OpKind.Value(op))
        if dtype is not None:
            node.dtype = _dtype(b.pb, dtype)
        b.nodes.append((node, [h for h, _ in operands], 1))
        tensors = [e for _, e in operands if e is not None]
        return ("node", len(b.nodes) - 1, 0), _merge(tensors) if tensors else None

    def const(v):
        return (b.constant(v, DataType.Double), None)

    target = None
    if name == "threshold":
        le = emit("LE", vals[:2])
        r = emit("WHERE", [le, vals[2], vals[0]])
    else:
        for k, p in enumerate(params):
            if vals[k][1] is None:
                continue
            have = b.dtype_of(a[p])
            if have is None:
                raise InvalidArgument(f"fd.ops.{name}: the Python wire form does not know the "
                                      f"dtype of {a[p]!r} (computed by an op it does not type); "
                                      "compile with fusionc")
            target = have if target is None else _promote(target, have)
            if have in _REDUCED_FLOATS:
                vals[k] = emit("CAST", [vals[k]], DataType.Float)
        if name == "addcmul":
            m = emit("MUL", [vals[3], vals[1]])
            r = emit("ADD", [vals[0], emit("MUL", [m, vals[2]])])
        else:
            start, end, weight = vals
            diff = emit("SUB", [end, start])
            small = emit("LT", [emit("ABS", [weight]), const(0.5)])
            lo = emit("ADD", [start, emit("MUL", [weight, diff])])
            rest = emit("SUB", [const(1.0), weight])
            hi = emit("SUB", [end, emit("MUL", [diff, rest])])
            r = emit("WHERE", [small, lo, hi])
        if target in _REDUCED_FLOATS:
            r = emit("CAST", [r], target)
            b.dtypes[id(out)] = target
    b.note(out, r[0], r[1])


def _node(b: _Builder, op, handles, out, ext, dtype) -> None:
    """Appends one node of one result with a shape attribute and a dtype."""
    node = b.pb.Node(op=b.pb.OpKind.Value(op), dtype=_dtype(b.pb, dtype))
    node.shape.extend(b.proto_extents(ext))
    b.nodes.append((node, handles, 1))
    b.note(out, ("node", len(b.nodes) - 1, 0), ext)
    b.dtypes[id(out)] = _dtype_name(dtype)


def _factory(b: _Builder, name, a, out) -> None:
    """full, zeros, ones, iota and the random ops, as the C++ front end lowers them."""
    for required in {"full": ("shape", "fill_value"), "iota": ("length",),
                     "rand_like": ("arg",), "randn_like": ("arg",)}.get(
                         name, ("shape",) if name in ("zeros", "ones") else
                         (_PARAMS[name][0], _PARAMS[name][1], "shape")):
        if a.get(required) is None:
            raise InvalidArgument(f"fd.ops.{name} needs {required}")
    if name in ("full", "zeros", "ones"):
        ext = b.shape(a["shape"])
        dtype = a.get("dtype")
        if name == "full":
            fill = a["fill_value"]
            if isinstance(fill, Tensor):
                raise InvalidArgument(f"fd.ops.full: fill_value is {fill!r}, a tensor; "
                                      "it takes a number or a scalar")
            handle, have = b.operand(fill), b.dtype_of(fill)
        else:
            dtype = dtype if dtype is not None else DataType.Float
            handle, have = b.constant(1 if name == "ones" else 0, dtype), _dtype_name(dtype)
        if dtype is not None and have != _dtype_name(dtype):
            b.nodes.append((b.pb.Node(op=b.pb.OpKind.Value("CAST"), dtype=_dtype(b.pb, dtype)),
                            [handle], 1))
            handle, have = ("node", len(b.nodes) - 1, 0), _dtype_name(dtype)
        node = b.pb.Node(op=b.pb.OpKind.Value("BROADCAST_IN_DIM"))
        node.shape.extend(b.proto_extents(ext))
        b.nodes.append((node, [handle], 1))
        b.note(out, ("node", len(b.nodes) - 1, 0), ext)
        if have is not None:
            b.dtypes[id(out)] = have
        return
    if name == "iota":
        dtype = a.get("dtype") if a.get("dtype") is not None else DataType.Int
        integral = _dtype_name(dtype) in _INTEGRAL
        handles = [b.operand(a[k]) if a.get(k) is not None else
                   b.constant(d if integral else float(d), DataType.Int if integral else DataType.Double)
                   for k, d in (("start", 0), ("step", 1))]
        _node(b, "IOTA", handles, out, [b.extent(a["length"])], dtype)
        return
    like = name in ("rand_like", "randn_like")
    op = "UNIFORM" if name in ("uniform", "rand_like") else "NORMAL"
    if like:
        x = a["arg"]
        if not isinstance(x, Tensor) or id(x) not in b.extents:
            raise InvalidArgument(f"fd.ops.{name} of {x!r}: it takes a tensor of this definition")
        dtype = b.dtype_of(x)
        if dtype is None:
            raise InvalidArgument(
                f"fd.ops.{name}({x._expr}): the Python wire form does not know the dtype of "
                f"{x._expr} (computed by an op it does not type); write "
                f"fd.ops.{'uniform' if op == 'UNIFORM' else 'normal'}(0.0, 1.0, "
                f"shape={x._expr}.shape(), dtype=...) or compile with fusionc")
        ext = list(b.extents[id(x)])
        handles = [b.constant(0.0, DataType.Double), b.constant(1.0, DataType.Double)]
    else:
        params = _PARAMS[name]
        handles = [b.operand(a[params[0]]), b.operand(a[params[1]])]
        ext = b.shape(a["shape"])
        dtype = a.get("dtype") if a.get("dtype") is not None else DataType.Float
    seed, offset = a.get("rng_seed"), a.get("rng_offset")
    if (seed is None) != (offset is None):
        raise InvalidArgument(f"fd.ops.{name} has only one of rng_seed, rng_offset; "
                              "give both (integer scalars) or neither")
    if seed is None:
        handles += [b.constant(0, DataType.Int), b.constant(b.unseeded, DataType.Int)]
        b.unseeded += 1
    else:
        handles += [b.operand(seed), b.operand(offset)]
    _node(b, op, handles, out, ext, dtype)


def to_graph(fd: FusionDefinition):
    """fd as a fusion_pb2.FusionGraph (needs protobuf and the generated modules)."""
    from . import fusion_pb2 as pb
    fd._ensure_defined()
    b = _Builder(pb)
    for rec in fd._records:
        kind = rec[0]
        if kind == "tensor":
            _, t, sizes, contiguity, dtype, stride_order = rec
            index = len(b.inputs)
            inp = pb.Input(name=t._expr, dtype=_dtype(pb, dtype), is_tensor=True, sizes=sizes)
            if contiguity is not None:
                flags = contiguity if isinstance(contiguity, (list, tuple)) else [contiguity] * len(sizes)
                inp.contiguity.extend(-1 if c is None else int(bool(c)) for c in flags)
            if stride_order is not None:
                inp.stride_order.extend(int(s) for s in stride_order)
            b.inputs.append(inp)
            b.note(t, ("input", index, 0),
                   [("in", index, k) if d < 0 else ("s", d) for k, d in enumerate(sizes)])
            b.dtypes[id(t)] = _dtype_name(dtype)
        elif kind == "scalar_input":
            _, s, dtype, *cpu = rec  # cpu: [True] for a 0-dim CPU tensor (is_cpu=True)
            inp = pb.Input(name=s._expr, dtype=_dtype(pb, dtype or DataType.Double))
            if cpu:
                inp.cpu_tensor = True
            b.inputs.append(inp)
            b.note(s, ("input", len(b.inputs) - 1, 0))
            b.dtypes[id(s)] = _dtype_name(dtype or DataType.Double)
        elif kind == "constant":
            _, s, value, dtype = rec
            if isinstance(value, int) and not isinstance(value, bool):
                b.ints[id(s)] = value
            b.note(s, b.constant(value, dtype))
            b.dtypes[id(s)] = b.dtype_of(value) if dtype is None else _dtype_name(dtype)
        elif kind == "op":
            _op(b, *rec[1:])
        elif kind == "output":
            b.outputs.append(b.operand(rec[1]))
            order, ext = rec[2] if len(rec) > 2 else None, b.extents.get(id(rec[1]))
            if order is not None and (ext is None or sorted(int(d) for d in order) !=
                                      list(range(len(ext)))):
                # Not in the graph (outputs are contiguous); fusionc's front end names the error.
                raise InvalidArgument(f"add_output({rec[1]!r}, stride_order={list(order)}): "
                                      "not a permutation of the output's axes")
    return _assemble(b)


def _assemble(b: _Builder):
    pb = b.pb
    first = len(b.inputs) + len(b.constants)
    base = []
    for _, _, n in b.nodes:
        base.append(first)
        first += n

    def ref(h):
        kind, i, k = h
        return i if kind == "input" else len(b.inputs) + i if kind == "constant" else base[i] + k

    graph = pb.FusionGraph(version=1)
    graph.inputs.extend(b.inputs)
    graph.constants.extend(b.constants)
    for node, operands, _ in b.nodes:
        n = graph.nodes.add()
        n.CopyFrom(node)
        n.operands.extend(ref(h) for h in operands)
    graph.outputs.extend(ref(h) for h in b.outputs)
    return graph
