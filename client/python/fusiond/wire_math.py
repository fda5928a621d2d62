"""The wire form of the unary math ops the IR has no node for (fusiond.wire):
each written with IR nodes in the order compiler/frontend/math_calls.cc
writes them, so the Python wire form and `fusionc parse` give one canonical
graph. Integer and bool operands are computed in float32 (double for an
integer scalar), 16- and 8-bit floats in float32 with one cast back."""

from __future__ import annotations

from .definition import DataType, Tensor
from .manifest import InvalidArgument

_FLOATS = ("Half", "BFloat16", "Float", "Double", "Float8_e4m3fn", "Float8_e5m2")
_REDUCED = ("Half", "BFloat16", "Float8_e4m3fn", "Float8_e5m2")


class _Emitter:
    """Appends nodes of one result; a handle is (builder handle, extents or None)."""

    def __init__(self, b):
        self.b = b

    def node(self, op, operands, dtype=None):
        from .wire import _dtype, _merge
        b = self.b
        node = b.pb.Node(op=b.pb.OpKind.Value(op))
        if dtype is not None:
            node.dtype = _dtype(b.pb, dtype)
        b.nodes.append((node, [h for h, _ in operands], 1))
        tensors = [e for _, e in operands if e is not None]
        return ("node", len(b.nodes) - 1, 0), _merge(tensors) if tensors else None

    def k(self, v):
        return (self.b.constant(float(v), DataType.Double), None)


def _body(e: _Emitter, name, x):
    """The IR ops of fd.ops.<name>(x) in the compute type (math_calls.cc's MathValue)."""
    if name == "silu":
        return e.node("MUL", [x, e.node("SIGMOID", [x])])
    if name == "atan":
        return e.node("ATAN2", [x, e.k(1)])
    if name == "tan":
        s = e.node("SIN", [x])
        return e.node("DIV", [s, e.node("COS", [x])])
    if name in ("sinh", "cosh"):
        f = "EXPM1" if name == "sinh" else "EXP"
        neg = e.node("NEG", [x])
        a = e.node(f, [x])
        s = e.node("SUB" if name == "sinh" else "ADD", [a, e.node(f, [neg])])
        return e.node("MUL", [s, e.k(0.5)])
    if name in ("asin", "acos"):
        lo = e.node("SUB", [e.k(1), x])
        hi = e.node("ADD", [e.k(1), x])
        c = e.node("SQRT", [e.node("MUL", [lo, hi])])
        return e.node("ATAN2", [x, c] if name == "asin" else [c, x])
    if name == "atanh":
        neg = e.node("NEG", [x])
        a = e.node("LOG1P", [x])
        d = e.node("SUB", [a, e.node("LOG1P", [neg])])
        return e.node("MUL", [d, e.k(0.5)])
    raise InvalidArgument(f"fd.ops.{name} has no wire form; compile with fusionc")


def lower_math(b, name, a, out) -> None:
    """fd.ops.<name>(x) into builder b; out is the recorded result."""
    x = a.get("x")
    if x is None:
        raise InvalidArgument(f"fd.ops.{name} needs x")
    have = b.dtype_of(x)
    if have is None:
        raise InvalidArgument(f"fd.ops.{name}: the Python wire form does not know the dtype of "
                              f"{x!r} (computed by an op it does not type); compile with fusionc")
    is_tensor = isinstance(x, Tensor) and x._size is None
    t = have if have in _FLOATS else ("Float" if is_tensor else "Double")
    if have in _REDUCED:
        t = "Float"
    e = _Emitter(b)
    h = (b.operand(x), b.extents.get(id(x)) if is_tensor else None)
    if t != have:
        h = e.node("CAST", [h], t)
    r = _body(e, name, h)
    if have in _REDUCED:
        r = e.node("CAST", [r], have)
        t = have
    b.note(out, r[0], r[1])
    b.dtypes[id(out)] = t


_FLOAT_ONLY_UNARY = ("exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin",
                     "cos", "tanh", "sigmoid", "erf", "erfc", "log2", "log10")
_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not",
               "isnan", "isinf", "isfinite")


def _category(t: str) -> int:
    return 2 if t in _FLOATS else 1 if t in ("Int32", "Int") else 0


def elementwise_dtype(b, name, operands):
    """The result dtype of an element-wise IR op, as compiler/ir/builder_infer.cc
    types it (PyTorch style: tensors decide unless a scalar is of a higher
    category), or None where an operand's dtype is not known here. Lets the
    math spellings and lerp / addcmul take operands computed by other ops."""
    from .definition import _UNARY
    from .wire import _promote
    types = [b.dtype_of(v) for v in operands]
    if any(t is None for t in types):
        return None
    tensor = [isinstance(v, Tensor) and v._size is None for v in operands]
    if name in _PREDICATES:
        return "Bool"
    if name in _UNARY:
        t = types[0]
        if name in _FLOAT_ONLY_UNARY and t not in _FLOATS:
            return "Float" if tensor[0] else "Double"
        return t
    pairs = list(zip(types, tensor))[1:] if name == "where" else list(zip(types, tensor))
    tensor_t = scalar_t = None
    for t, is_tensor in pairs:
        if is_tensor:
            tensor_t = t if tensor_t is None else _promote(tensor_t, t)
        else:
            scalar_t = t if scalar_t is None else _promote(scalar_t, t)
    if tensor_t is None:
        t = scalar_t
    elif scalar_t is None or _category(scalar_t) <= _category(tensor_t):
        t = tensor_t
    else:
        t = "Float" if _category(scalar_t) == 2 else "Int"
    any_tensor = any(tensor)
    if (name == "atan2" and t not in _FLOATS) or (
            name == "div" and t not in _FLOATS and (any_tensor or _category(t) != 1)):
        return "Float" if any_tensor else "Double"
    return t
