"""The wire form of the unary math ops the IR has no node for (fusiond.wire):
each written with IR nodes in the order compiler/frontend/math_calls.cc
writes them, so the Python wire form and `fusionc parse` give one canonical
graph. Integer and bool operands are computed in float32 (double for an
integer scalar), 16- and 8-bit floats in float32 with one cast back."""

from __future__ import annotations

import math

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
    if name in _SPECIAL:
        return _SPECIAL[name](e, x)
    raise InvalidArgument(f"fd.ops.{name} has no wire form; compile with fusionc")


# compiler/frontend/special_math.cc, node for node and constant for constant.
_LN2 = math.log(2.0)
_BIG = 268435456.0


def _asinh(e, x):
    a = e.node("ABS", [x])
    inv = e.node("RECIPROCAL", [a])
    q = e.node("MUL", [inv, inv])
    one = e.k(1)
    s = e.node("SQRT", [e.node("ADD", [one, q])])
    den = e.node("ADD", [inv, s])
    u = e.node("DIV", [a, den])
    small = e.node("LOG1P", [e.node("ADD", [a, u])])
    la = e.node("LOG", [a])
    big = e.node("ADD", [la, e.k(_LN2)])
    limit = e.k(_BIG)
    r = e.node("WHERE", [e.node("GT", [a, limit]), big, small])
    neg = e.node("LT", [x, e.k(0)])
    nr = e.node("NEG", [r])
    return e.node("WHERE", [neg, nr, r])


def _acosh(e, x):
    xm = e.node("SUB", [x, e.k(1)])
    xp = e.node("ADD", [x, e.k(1)])
    s = e.node("SQRT", [e.node("MUL", [xm, xp])])
    small = e.node("LOG1P", [e.node("ADD", [xm, s])])
    lx = e.node("LOG", [x])
    big = e.node("ADD", [lx, e.k(_LN2)])
    limit = e.k(_BIG)
    return e.node("WHERE", [e.node("GT", [x, limit]), big, small])


_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma(e, x):
    lt = e.node("LT", [x, e.k(0.5)])
    one = e.k(1)
    om = e.node("SUB", [one, x])
    y = e.node("WHERE", [lt, om, x])
    z = e.node("SUB", [y, e.k(1)])
    acc = None
    for i in range(8, 0, -1):
        zi = e.node("ADD", [z, e.k(i)])
        pk = e.k(_LANCZOS[i])
        term = e.node("DIV", [pk, zi])
        acc = term if i == 8 else e.node("ADD", [acc, term])
    acc = e.node("ADD", [acc, e.k(_LANCZOS[0])])
    g = e.k(7.5)
    lt7 = e.node("LOG", [e.node("ADD", [z, g])])
    lm = e.node("SUB", [lt7, e.k(1)])
    zh = e.node("ADD", [z, e.k(0.5)])
    m = e.node("MUL", [zh, lm])
    la = e.node("LOG", [acc])
    lg = e.node("ADD", [m, la])
    lg = e.node("ADD", [lg, e.k(0.5 * math.log(2 * math.pi) - 7)])
    rx = e.node("ROUND", [x])
    r = e.node("SUB", [x, rx])
    pi = e.k(math.pi)
    sn = e.node("ABS", [e.node("SIN", [e.node("MUL", [r, pi])])])
    lpi = e.k(math.log(math.pi))
    lsn = e.node("LOG", [sn])
    refl = e.node("SUB", [lpi, lsn])
    refl = e.node("SUB", [refl, lg])
    res = e.node("WHERE", [lt, refl, lg])
    inf = e.node("ISINF", [x])
    ax = e.node("ABS", [x])
    return e.node("WHERE", [inf, ax, res])


_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(e, w, coef):
    p = e.k(coef[0])
    for c in coef[1:]:
        pw = e.node("MUL", [p, w])
        p = e.node("ADD", [pw, e.k(c)])
    return p


def _erfinv(e, x, double):
    lo = e.node("SUB", [e.k(1), x])
    hi = e.node("ADD", [e.k(1), x])
    w = e.node("NEG", [e.node("LOG", [e.node("MUL", [lo, hi])])])
    k25 = e.k(2.5)
    central = _horner(e, e.node("SUB", [w, k25]), _ERFINV_CENTRAL)
    sw = e.node("SQRT", [w])
    k3 = e.k(3)
    tail = _horner(e, e.node("SUB", [sw, k3]), _ERFINV_TAIL)
    k5 = e.k(5)
    p = e.node("WHERE", [e.node("LT", [w, k5]), central, tail])
    y = e.node("MUL", [p, x])
    a = e.node("ABS", [x])
    if double:
        ya = e.node("ABS", [y])
        oma = e.node("SUB", [e.k(1), a])
        log_oma = e.node("LOG", [oma])
        small = e.node("LT", [a, e.k(0.5)])
        for _ in range(4):
            e1 = e.node("SUB", [e.node("ERF", [ya]), a])
            ec = e.node("ERFC", [ya])
            lr = e.node("SUB", [log_oma, e.node("LOG", [ec])])
            e2 = e.node("MUL", [lr, ec])
            err = e.node("WHERE", [small, e1, e2])
            ex = e.node("EXP", [e.node("NEG", [e.node("MUL", [ya, ya])])])
            d = e.node("MUL", [ex, e.k(2 / math.sqrt(math.pi))])
            ya = e.node("SUB", [ya, e.node("DIV", [err, d])])
        neg = e.node("LT", [x, e.k(0)])
        y = e.node("WHERE", [neg, e.node("NEG", [ya]), ya])
    is_one = e.node("EQ", [a, e.k(1)])
    inf = e.node("MUL", [x, e.k(math.inf)])
    return e.node("WHERE", [is_one, inf, y])


_SPECIAL = {"asinh": _asinh, "acosh": _acosh, "lgamma": _lgamma}


def lower_math(b, name, a, out) -> None:
    """fd.ops.<name>(x) into builder b; out is the recorded result."""
    x = a.get("x")
    if x is None:
        raise InvalidArgument(f"fd.ops.{name} needs x")
    if name in ("is_neginf", "is_posinf"):  # bool results of x itself, no compute type
        e = _Emitter(b)
        is_tensor = isinstance(x, Tensor) and x._size is None
        h = (b.operand(x), b.extents.get(id(x)) if is_tensor else None)
        inf = e.node("ISINF", [h])
        side = e.node("LT" if name == "is_neginf" else "GT", [h, e.k(0)])
        r = e.node("LOGICAL_AND", [inf, side])
        b.note(out, r[0], r[1])
        b.dtypes[id(out)] = "Bool"
        return
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
    r = _erfinv(e, h, t == "Double") if name == "erfinv" else _body(e, name, h)
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


def lower_triangle(b, name, a, out) -> None:
    """fd.ops.triu / tril(x, diagonal) as compiler/frontend/triangle_calls.cc
    writes it: row and column iotas of the last two axes, their difference
    compared with diagonal, where(mask, x, 0)."""
    from .wire import _dtype
    x, diagonal = a.get("x"), a.get("diagonal", 0)
    diagonal = 0 if diagonal is None else diagonal
    ext = b.extents.get(id(x)) if isinstance(x, Tensor) and x._size is None else None
    if ext is None or len(ext) < 2 or isinstance(diagonal, bool) or not isinstance(diagonal, int):
        raise InvalidArgument(f"fd.ops.{name}: a tensor of rank 2 or more and an integer "
                              "diagonal (fusionc names the error)")
    have = b.dtype_of(x)
    if have is None:
        raise InvalidArgument(f"fd.ops.{name}: the Python wire form does not know the dtype of "
                              f"{x!r}; compile with fusionc")
    rank = len(ext)
    matrix = [ext[rank - 2], ext[rank - 1]]
    index = []
    for k, axis in enumerate((rank - 2, rank - 1)):
        handles = [b.constant(0, DataType.Int), b.constant(1, DataType.Int)]
        node = b.pb.Node(op=b.pb.OpKind.Value("IOTA"), dtype=_dtype(b.pb, DataType.Int))
        node.shape.extend(b.proto_extents([ext[axis]]))
        b.nodes.append((node, handles, 1))
        index.append(_broadcast(b, ("node", len(b.nodes) - 1, 0), matrix, [k]))
    e = _Emitter(b)
    diff = e.node("SUB", [index[1], index[0]])
    k = (b.constant(diagonal, DataType.Int), None)
    mask = e.node("GE" if name == "triu" else "LE", [diff, k])
    full = _broadcast(b, mask, list(ext), [rank - 2, rank - 1])
    zero = (b.constant(0, have), None)
    r = e.node("WHERE", [full, (b.operand(x), ext), zero])
    b.note(out, r[0], list(ext))
    b.dtypes[id(out)] = have


def _broadcast(b, handle, shape, dims):
    """A BROADCAST_IN_DIM node of a builder handle (or (handle, extents))."""
    node = b.pb.Node(op=b.pb.OpKind.Value("BROADCAST_IN_DIM"))
    node.shape.extend(b.proto_extents(shape))
    node.broadcast_dims.extend(dims)
    b.nodes.append((node, [handle[0] if isinstance(handle[0], tuple) else handle], 1))
    return ("node", len(b.nodes) - 1, 0), list(shape)
