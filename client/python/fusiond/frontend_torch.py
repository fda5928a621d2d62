"""A small torch implementation of the nvFuser-style fd.ops front end.

Executes a repro script (``tests/corpus/fusions/*.py``: ``fd.define_tensor``,
``fd.ops.*``, ``fd.add_output``, then ``inputs = [...]``) without nvFuser: the
script runs against a stand-in ``nvfuser`` module whose FusionDefinition
records the definition, and the record is turned into straight-line torch
code (Python source, printable with ``program.source()``). Two versions:

* ``native``: what PyTorch eager (and torch.compile of the same function)
  computes: every op in the dtype the definition says.
* ``float64``: the reference. Every floating value is held in float64; a
  cast to bfloat16/float16 is honoured by rounding (``x.to(bf16).to(f64)``),
  a cast to float32 is not (float64 stands in for it).

The ``inputs = [...]`` list is evaluated with a torch proxy that redirects
``device=`` and can substitute sizes (``size_map``), so one script yields
inputs at other shapes for symbolic definitions.

Standalone on purpose (imports only torch, lazily): loadable by path.
"""

from __future__ import annotations

import ast
import math
import sys
import types
from typing import Dict, List, Optional

# nvFuser DataType names -> torch dtype attribute names.
_DTYPES = {
    "Float": "float32", "Double": "float64", "BFloat16": "bfloat16", "Half": "float16",
    "Int": "int64", "Index": "int64", "Int32": "int32", "Bool": "bool", "ComplexFloat": "complex64",
    "ComplexDouble": "complex128", "Null": None,
    "Float8_e4m3fn": "float8_e4m3fn", "Float8_e5m2": "float8_e5m2",
}
_REDUCED_FLOATS = ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2")


class DataType:
    """Stand-in for nvfuser.DataType: attributes are the names themselves."""


for _name in _DTYPES:
    setattr(DataType, _name, _name)


class Value:
    """A recorded value: a tensor (rank known) or a scalar (Python number)."""

    def __init__(self, fd: "FusionDefinition", expr: str, is_tensor: bool, ndim: int = 0,
                 dtype: Optional[str] = None):
        self._fd = fd
        self.expr = expr
        self.is_tensor = is_tensor
        self.ndim = ndim
        self.dtype = dtype
        self.length = None  # number of entries, for shape vectors

    # nvFuser's tensor API used by repro scripts.
    def shape(self) -> "Value":
        v = Value(self._fd, f"list({self.expr}.shape)", False)
        v.length = self.ndim
        return v

    def size(self, axis: int) -> "Value":
        return self._fd._scalar(f"{self.expr}.shape[{int(axis)}]")

    def __repr__(self):
        return f"Value({self.expr})"


class UnsupportedOp(Exception):
    pass


def _lit(v) -> str:
    """Python source for an argument: a recorded value or a literal."""
    if isinstance(v, Value):
        return v.expr
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_lit(x) for x in v) + "]"
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v):
            return f"float('{v}')"
        return repr(v)
    if isinstance(v, (int, bool)) or v is None:
        return repr(v)
    if isinstance(v, str) and v in _DTYPES:
        return repr(v)
    raise UnsupportedOp(f"cannot use argument {v!r}")


def _is_tensor(v) -> bool:
    return isinstance(v, Value) and v.is_tensor


# Unary ops: name -> (torch form, scalar form). {x} is the operand.
_UNARY = {
    "neg": ("(-{x})", "(-{x})"),
    "abs": ("torch.abs({x})", "abs({x})"),
    "exp": ("torch.exp({x})", "math.exp({x})"),
    "exp2": ("torch.exp2({x})", "(2.0 ** {x})"),
    "log": ("torch.log({x})", "math.log({x})"),
    "log1p": ("torch.log1p({x})", "math.log1p({x})"),
    "expm1": ("torch.expm1({x})", "math.expm1({x})"),
    "sqrt": ("torch.sqrt({x})", "math.sqrt({x})"),
    "rsqrt": ("torch.rsqrt({x})", "(1.0 / math.sqrt({x}))"),
    "reciprocal": ("torch.reciprocal({x})", "(1.0 / {x})"),
    "tanh": ("torch.tanh({x})", "math.tanh({x})"),
    "sigmoid": ("torch.sigmoid({x})", "(1.0 / (1.0 + math.exp(-{x})))"),
    "sin": ("torch.sin({x})", "math.sin({x})"),
    "cos": ("torch.cos({x})", "math.cos({x})"),
    "erf": ("torch.erf({x})", "math.erf({x})"),
    "erfc": ("torch.erfc({x})", "math.erfc({x})"),
    "logical_not": ("torch.logical_not({x})", "(not {x})"),
    "relu": ("torch.relu({x})", "max({x}, 0.0)"),
    "isnan": ("torch.isnan({x})", "math.isnan({x})"),
    "bitwise_not": ("torch.bitwise_not({x})", "(~{x})"),
    "sign": ("torch.sign({x})", "float((0 < {x}) - ({x} < 0))"),
    "round": ("torch.round({x})", "round({x})"),
    "trunc": ("torch.trunc({x})", "math.trunc({x})"),
    "floor": ("torch.floor({x})", "math.floor({x})"),
    "ceil": ("torch.ceil({x})", "math.ceil({x})"),
    "log2": ("torch.log2({x})", "math.log2({x})"),
    "log10": ("torch.log10({x})", "math.log10({x})"),
    "isinf": ("torch.isinf({x})", "math.isinf({x})"),
    "isfinite": ("torch.isfinite({x})", "math.isfinite({x})"),
    # nvFuser ops the C++ front end writes with IR ops (math_calls.cc).
    "silu": ("torch.nn.functional.silu({x})", "({x} / (1.0 + math.exp(-{x})))"),
    "atan": ("torch.atan({x})", "math.atan({x})"),
    "tan": ("torch.tan({x})", "math.tan({x})"),
    "sinh": ("torch.sinh({x})", "math.sinh({x})"),
    "cosh": ("torch.cosh({x})", "math.cosh({x})"),
    "asin": ("torch.asin({x})", "math.asin({x})"),
    "acos": ("torch.acos({x})", "math.acos({x})"),
    "atanh": ("torch.atanh({x})", "math.atanh({x})"),
    # ... and in special_math.cc.
    "asinh": ("torch.asinh({x})", "math.asinh({x})"),
    "acosh": ("torch.acosh({x})", "math.acosh({x})"),
    "lgamma": ("torch.lgamma({x})", "math.lgamma({x})"),
    "erfinv": ("torch.erfinv({x})", "_erfinv({x})"),
    "is_neginf": ("torch.isneginf({x})", "({x} == -math.inf)"),
    "is_posinf": ("torch.isposinf({x})", "({x} == math.inf)"),
    "signbit": ("torch.signbit({x})", "(math.copysign(1.0, {x}) < 0)"),  # arith_calls.cc
    # nvfuser_direct's names (arith_calls.cc).
    "isneginf": ("torch.isneginf({x})", "({x} == -math.inf)"),
    "isposinf": ("torch.isposinf({x})", "({x} == math.inf)"),
    "frac": ("torch.frac({x})", "math.fmod({x}, 1.0)"),
}
# Binary ops: name -> Python operator or torch function.
_BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "truediv": "/", "pow": "**",
                     "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BINARY_FUNCTIONS = {"maximum": "torch.maximum", "minimum": "torch.minimum",
                     "atan2": "torch.atan2", "fmod": "torch.fmod", "remainder": "torch.remainder",
                     "bitwise_and": "torch.bitwise_and", "bitwise_or": "torch.bitwise_or",
                     "bitwise_xor": "torch.bitwise_xor",
                     "bitwise_left_shift": "torch.bitwise_left_shift",
                     "bitwise_right_shift": "torch.bitwise_right_shift",
                     "logical_and": "torch.logical_and", "logical_or": "torch.logical_or",
                     "fmax": "torch.fmax", "fmin": "torch.fmin", "mod": "torch.fmod"}
# Scalar forms of the binary functions; div of two integer scalars (sizes)
# is an integer rounded toward zero, as nvFuser's.
_SCALAR_BINARY = {"maximum": "max", "minimum": "min", "atan2": "math.atan2", "fmod": "math.fmod",
                  "remainder": "_remainder", "bitwise_and": "_band", "bitwise_or": "_bor",
                  "bitwise_xor": "_bxor", "bitwise_left_shift": "_shl", "bitwise_right_shift": "_shr",
                  "logical_and": "_land", "logical_or": "_lor", "fmax": "_fmax", "fmin": "_fmin",
                  "mod": "math.fmod"}
_REDUCTIONS = {"sum": "torch.sum", "max": "torch.amax", "min": "torch.amin", "prod": "torch.prod"}


class _Ops:
    """fd.ops: every call appends a line of torch code to the definition."""

    def __init__(self, fd: "FusionDefinition"):
        self._fd = fd

    def __getattr__(self, name):
        if name in _UNARY:
            return lambda x: self._fd._unary(name, x)
        if name in _BINARY_OPERATORS or name in _BINARY_FUNCTIONS:
            return lambda a, b: self._fd._binary(name, a, b)
        if name in _REDUCTIONS:
            # keep_dim: keepdim as nvfuser_direct's first repro printer wrote it.
            return lambda x, dims=None, keepdim=False, dtype=None, axes=None, keep_dim=None: \
                self._fd._reduce(name, x, dims if axes is None else axes,
                                 keepdim if keep_dim is None else keep_dim, dtype)
        raise UnsupportedOp(f"fd.ops.{name} is not implemented by the torch front end")

    def cast(self, x, dtype):
        return self._fd._cast(x, dtype)

    def broadcast_in_dim(self, x, shape=None, broadcast_dims=None, output_shape=None):
        fd = self._fd
        shape = output_shape if shape is None else shape  # output_shape: the pre-2023 name
        return fd._tensor(f"_bcast({_lit(x)}, {_lit(shape)}, {_lit(list(broadcast_dims))})",
                          len(shape) if isinstance(shape, (list, tuple)) else _rank_of(shape),
                          x.dtype if isinstance(x, Value) else None)

    def broadcast(self, x, is_broadcast_dim):
        return self._fd._tensor(f"_bcast_dims({_lit(x)}, {_lit(list(is_broadcast_dim))})",
                                len(is_broadcast_dim), x.dtype)

    def var_mean(self, x, dims=None, correction=1, keepdim=False, axes=None):
        fd = self._fd
        dims = axes if dims is None else dims
        var = fd._new_var()
        mean = fd._new_var()
        fd._lines.append(f"{var}, {mean} = torch.var_mean({x.expr}, dim={_lit(list(dims))}, "
                         f"correction={_lit(correction)}, keepdim={_lit(keepdim)})")
        ndim = x.ndim if keepdim else x.ndim - len(dims)
        return Value(fd, var, True, ndim, x.dtype), Value(fd, mean, True, ndim, x.dtype)

    def welford(self, x, dims):
        """nvfuser_direct's print of var_mean: (mean, var_sum, count)."""
        fd = self._fd
        dims = [dims] if isinstance(dims, int) else list(dims)
        var, mean, n = fd._new_var(), fd._new_var(), fd._new_var()
        fd._lines.append(f"{var}, {mean} = torch.var_mean({x.expr}, dim={_lit(dims)}, correction=0)")
        fd._lines.append(f"{n} = math.prod({x.expr}.shape[d] for d in {_lit(dims)})")
        ndim = x.ndim - len(dims)
        return (Value(fd, mean, True, ndim, x.dtype), fd._tensor(f"({var} * {n})", ndim, x.dtype),
                fd._tensor(f"torch.full_like({mean}, {n}, dtype=torch.int64)", ndim, None))

    def var(self, x, dims=None, correction=1, keepdim=False, axes=None):
        dims = axes if dims is None else dims
        ndim = x.ndim if keepdim else x.ndim - len(dims)
        return self._fd._tensor(f"torch.var({x.expr}, dim={_lit(list(dims))}, correction="
                                f"{_lit(correction)}, keepdim={_lit(keepdim)})", ndim, x.dtype)

    def where(self, cond, a, b):
        fd = self._fd
        if not any(_is_tensor(v) for v in (cond, a, b)):
            return fd._scalar(f"({_lit(a)} if {_lit(cond)} else {_lit(b)})")
        ref = next(v for v in (a, b, cond) if _is_tensor(v))
        c = f"torch.as_tensor({_lit(cond)}, device={ref.expr}.device)" if not _is_tensor(cond) else cond.expr
        return fd._tensor(f"torch.where({c}, {_lit(a)}, {_lit(b)})", ref.ndim, ref.dtype)

    def reshape(self, x, *shapes, new_shape=None, original_shape=None):
        # Before mid-2023 nvFuser took reshape(x, original_shape, new_shape).
        new_shape = shapes[-1] if shapes else new_shape
        rank = len(new_shape) if isinstance(new_shape, (list, tuple)) else _rank_of(new_shape)
        return self._fd._tensor(f"{x.expr}.reshape([int(s) for s in {_lit(new_shape)}])", rank,
                                x.dtype)

    def permute(self, x, dims):
        return self._fd._tensor(f"{x.expr}.permute({_lit(list(dims))})", x.ndim, x.dtype)

    def squeeze(self, x, dims=None, squeeze_expanded=False, original_shape=None):
        # squeeze(x, original_shape=, dims=): nvFuser's spelling before mid-2023.
        dims = sorted((d + x.ndim) % x.ndim for d in dims)
        code = x.expr
        for d in reversed(dims):
            code = f"{code}.squeeze({d})"
        return self._fd._tensor(code, x.ndim - len(dims), x.dtype)

    def triu(self, x, diagonal=0):
        return self._fd._tensor(f"torch.triu({x.expr}, {int(diagonal)})", x.ndim, x.dtype)

    def tril(self, x, diagonal=0):
        return self._fd._tensor(f"torch.tril({x.expr}, {int(diagonal)})", x.ndim, x.dtype)

    def clamp(self, x, min, max):  # noqa: A002 - nvFuser's parameter names
        return self._fd._tensor(f"torch.clamp({_lit(x)}, {_lit(min)}, {_lit(max)})", x.ndim, x.dtype)

    def size(self, x, dim):
        return x.size(dim)

    def shape(self, x):
        return x.shape()

    def at(self, shape, index):
        return self._fd._scalar(f"{shape.expr}[{int(index)}]")

    def stride_order(self, x, stride_order):
        return x  # a layout request: the values are x's

    def lerp(self, start, end, weight):
        ref = next(v for v in (start, end, weight) if _is_tensor(v))
        return self._fd._tensor(f"torch.lerp({_lit(start)}, {_lit(end)}, {_lit(weight)})", ref.ndim,
                                ref.dtype)

    def addcmul(self, x, tensor1, tensor2, value=1.0):
        ref = next(v for v in (x, tensor1, tensor2) if _is_tensor(v))
        return self._fd._tensor(f"torch.addcmul({_lit(x)}, {_lit(tensor1)}, {_lit(tensor2)}, "
                                f"value={_lit(value)})", ref.ndim, ref.dtype)

    def threshold(self, x, threshold, value):
        return self._fd._tensor(f"torch.where({x.expr} <= {_lit(threshold)}, "
                                f"torch.as_tensor({_lit(value)}, dtype={x.expr}.dtype, "
                                f"device={x.expr}.device), {x.expr})", x.ndim, x.dtype)

    def expand(self, x, shape):
        return self._fd._tensor(f"{x.expr}.expand({_lit(list(shape))})", len(shape), x.dtype)

    def iota(self, length, start=0, step=1, dtype="Int"):
        fd = self._fd
        target = _DTYPES.get(dtype) or "int64"
        return fd._tensor(f"_iota({_lit(length)}, {_lit(start)}, {_lit(step)}, {target!r}, "
                          f"{fd._first_tensor() or 'None'})", 1, target)

    def slice(self, x, start_indices, end_indices, strides=None, manual_normalization=0):
        strides = [1] * len(start_indices) if strides is None else list(strides)
        return self._fd._tensor(f"_slice({x.expr}, {_lit(list(start_indices))}, "
                                f"{_lit(list(end_indices))}, {_lit(strides)})", x.ndim, x.dtype)

    def pad(self, x, pad_widths, value=None):
        # nvFuser's widths run from the last axis back, as torch's F.pad.
        v = 0 if value is None else value
        return self._fd._tensor(f"torch.nn.functional.pad({x.expr}, {_lit(list(pad_widths))}, "
                                f"value={_lit(v)})", x.ndim, x.dtype)

    def cat(self, tensors, dim, manual_padding=0):
        return self._fd._tensor(f"torch.cat({_lit(list(tensors))}, dim={_lit(dim)})",
                                tensors[0].ndim, tensors[0].dtype)

    def full(self, shape, fill_value, dtype=None):
        return self._fd._full(shape, fill_value, dtype)

    def zeros(self, shape, dtype="Float"):
        return self._fd._full(shape, 0, dtype)

    def ones(self, shape, dtype="Float"):
        return self._fd._full(shape, 1, dtype)

    def set(self, x):
        return x

    def segment_set(self, x):
        return x


def _rank_of(shape):
    if isinstance(shape, Value) and shape.length is not None:
        return shape.length
    raise UnsupportedOp("broadcast_in_dim needs a shape list, T.shape() or fd.define_vector")


class FusionDefinition:
    """Stand-in for nvfuser.FusionDefinition: records the definition."""

    _last: Optional["FusionDefinition"] = None

    def __init__(self):
        self._lines: List[str] = []
        self._params: List[str] = []
        self._param_kinds: List[str] = []  # "tensor", "scalar" or "cpu_scalar"
        self._param_dtypes: List[Optional[str]] = []
        self._outputs: List[Value] = []
        self._count = 0
        self._symbolic = False
        self.ops = _Ops(self)
        FusionDefinition._last = self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    # Repro-script API.
    def define_tensor(self, shape=None, contiguity=None, dtype="Float", is_cpu=False,
                      stride_order=None, symbolic_sizes=None, **_):
        sizes = shape if shape is not None else symbolic_sizes
        if any(d == -1 for d in sizes):
            self._symbolic = True
        name = f"T{len(self._params)}"
        self._params.append(name)
        self._param_dtypes.append(_DTYPES.get(dtype))
        if is_cpu:  # a 0-dim CPU tensor: a scalar read at entry (.item()), as fusiond runs it
            if len(sizes) != 0:
                raise UnsupportedOp(f"CPU tensor input {name} of rank {len(sizes)} "
                                    "(only 0-dim CPU tensors are supported)")
            self._param_kinds.append("cpu_scalar")
            return Value(self, name, False, 0, _DTYPES.get(dtype))
        self._param_kinds.append("tensor")
        return Value(self, name, True, len(sizes), _DTYPES.get(dtype))

    def define_scalar(self, value=None, dtype="Double"):
        if value is None:
            name = f"S{len(self._params)}"
            self._params.append(name)
            self._param_kinds.append("scalar")
            self._param_dtypes.append(_DTYPES.get(dtype))
            return Value(self, name, False, 0, _DTYPES.get(dtype))
        if dtype in ("Double", "Float") and not isinstance(value, bool):
            value = float(value)
        return self._scalar(_lit(value))

    def define_constant(self, value, dtype="Double"):  # define_scalar's pre-2023 name
        return self.define_scalar(value, dtype)

    def define_vector(self, values, dtype="Int"):
        v = Value(self, _lit(list(values)), False)
        v.length = len(values)
        return v

    def add_output(self, value, *_, **__):  # stride_order=: the values are the same
        self._outputs.append(value)

    def execute(self, inputs, **_):
        self.executed_inputs = inputs
        return None

    # Recording helpers.
    def _new_var(self) -> str:
        self._count += 1
        return f"v{self._count}"

    def _tensor(self, code: str, ndim: int, dtype) -> Value:
        var = self._new_var()
        self._lines.append(f"{var} = {code}")
        return Value(self, var, True, ndim, dtype)

    def _scalar(self, code: str) -> Value:
        var = self._new_var()
        self._lines.append(f"{var} = {code}")
        return Value(self, var, False)

    def _unary(self, name, x):
        tensor_form, scalar_form = _UNARY[name]
        if _is_tensor(x):
            return self._tensor(tensor_form.format(x=x.expr), x.ndim, x.dtype)
        return self._scalar(scalar_form.format(x=_lit(x)))

    def _binary(self, name, a, b):
        tensors = [v for v in (a, b) if _is_tensor(v)]
        if name == "div" and not tensors:
            code = f"_div({_lit(a)}, {_lit(b)})"
        elif name == "div":
            code = f"_tensor_div({_lit(a)}, {_lit(b)})"
        elif name in _BINARY_OPERATORS:
            code = f"({_lit(a)} {_BINARY_OPERATORS[name]} {_lit(b)})"
        elif tensors:
            # torch.maximum and friends want tensors on both sides.
            def t(v):
                return v.expr if _is_tensor(v) else f"torch.as_tensor({_lit(v)}, device={tensors[0].expr}.device)"
            code = f"{_BINARY_FUNCTIONS[name]}({t(a)}, {t(b)})"
        else:
            code = _SCALAR_BINARY[name] + f"({_lit(a)}, {_lit(b)})"
        if not tensors:
            return self._scalar(code)
        ndim = max(v.ndim for v in tensors)
        return self._tensor(code, ndim, tensors[0].dtype)

    def _first_tensor(self):
        return next((p for p, k in zip(self._params, self._param_kinds) if k == "tensor"), None)

    def _full(self, shape, value, dtype):
        ndim = len(shape) if isinstance(shape, (list, tuple)) else _rank_of(shape)
        target = _DTYPES.get(dtype) if dtype is not None else None
        like = self._first_tensor()
        return self._tensor(f"_full({_lit(shape)}, {_lit(value)}, {target!r}, {like or 'None'})",
                            ndim, target)

    def _reduce(self, name, x, dims, keepdim, dtype):
        dims = list(range(x.ndim)) if dims is None else list(dims)
        code = f"{_REDUCTIONS[name]}({x.expr}, dim={_lit(dims)}, keepdim={_lit(bool(keepdim))})"
        ndim = x.ndim if keepdim else x.ndim - len(dims)
        out = self._tensor(code, ndim, x.dtype)
        if dtype is not None and _DTYPES.get(dtype) is not None:
            return self._cast(out, dtype)
        return out

    def _cast(self, x, dtype):
        target = _DTYPES.get(dtype)
        if target is None:
            raise UnsupportedOp(f"cast to {dtype}")
        if not _is_tensor(x):
            py = {"float32": "float", "float64": "float", "bfloat16": "float", "float16": "float",
                  "int64": "int", "int32": "int", "bool": "bool"}[target]
            return self._scalar(f"{py}({_lit(x)})")
        return self._tensor(f"_cast({x.expr}, {target!r})", x.ndim, target)

    # The program.
    def program(self) -> "FusionProgram":
        return FusionProgram(self._params, self._param_kinds, self._param_dtypes, self._lines,
                             [o.expr for o in self._outputs], self._symbolic)


_PRELUDE = '''
def _bcast(x, shape, dims):
    shape = [int(s) for s in shape]
    if not isinstance(x, torch.Tensor):
        return torch.full(shape, x)
    view = [1] * len(shape)
    for i, d in enumerate(dims):
        view[d] = x.shape[i]
    return x.reshape(view).expand(shape)


def _full(shape, value, dtype, like):
    device = like.device if isinstance(like, torch.Tensor) else "cuda"
    t = torch.full([int(s) for s in shape], value, device=device,
                   dtype=torch.float64 if dtype is None else getattr(torch, dtype))
    return _cast(t, dtype) if dtype is not None else t


def _iota(length, start, step, dtype, like):
    device = like.device if isinstance(like, torch.Tensor) else "cuda"
    integral = dtype in ("int64", "int32")
    i = torch.arange(int(length), device=device, dtype=torch.int64 if integral else torch.float64)
    return _cast(start + step * i, dtype)


def _slice(x, starts, ends, strides):
    return x[tuple(slice(s, e, k) for s, e, k in zip(starts, ends, strides))]


def _erfinv(x):
    return float(torch.erfinv(torch.tensor(float(x), dtype=torch.float64)))


def _land(a, b):
    return bool(a) and bool(b)


def _lor(a, b):
    return bool(a) or bool(b)


def _div(a, b):
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        return int(a / b) if abs(a) < 2 ** 53 and abs(b) < 2 ** 53 else (abs(a) // abs(b)) * (
            1 if (a < 0) == (b < 0) else -1)
    return a / b


def _fmax(a, b):
    return b if a != a else a if b != b else max(a, b)


def _fmin(a, b):
    return b if a != a else a if b != b else min(a, b)


def _tensor_div(a, b):
    """nvFuser's div: integers truncate (a divisor of 0 divides by 1, as the C++ front end's)."""
    def integral(v):
        if isinstance(v, torch.Tensor):
            return not v.dtype.is_floating_point and v.dtype != torch.bool
        return isinstance(v, int) and not isinstance(v, bool)
    if integral(a) and integral(b):
        b = torch.where(b == 0, 1, b) if isinstance(b, torch.Tensor) else (b or 1)
        return torch.div(a, b, rounding_mode="trunc")
    return a / b


def _remainder(a, b):
    r = math.fmod(a, b)
    return r + b if r != 0 and (r < 0) != (b < 0) else r


def _band(a, b):
    return a & b


def _bor(a, b):
    return a | b


def _bxor(a, b):
    return a ^ b


def _shl(a, b):
    return a << b if 0 <= b < 64 else 0


def _shr(a, b):
    return a >> b if 0 <= b < 64 else (-1 if a < 0 else 0)


def _bcast_dims(x, is_broadcast):
    for d, b in enumerate(is_broadcast):
        if b:
            x = x.unsqueeze(d)
    return x
'''

_CAST_NATIVE = '''
def _cast(x, dtype):
    return x.to(getattr(torch, dtype))
'''

# float64 reference: keep floats in float64, round where the definition
# narrows to a 16-bit float.
_CAST_FLOAT64 = '''
def _cast(x, dtype):
    if dtype in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"):
        return x.to(getattr(torch, dtype)).to(torch.float64)
    if dtype in ("float32", "float64"):
        return x.to(torch.float64)
    return x.to(getattr(torch, dtype))
'''


class FusionProgram:
    """A recorded definition as Python source; builds callables."""

    def __init__(self, params, kinds, dtypes, lines, outputs, symbolic=False):
        self.symbolic = symbolic  # some input extent is -1 (any size)
        self.params = params
        self.param_kinds = kinds
        self.param_dtypes = dtypes
        self.lines = lines
        self.outputs = outputs

    def source(self, mode: str = "native") -> str:
        entry = [f"{p} = {p}.item() if isinstance({p}, torch.Tensor) else {p}"
                 for p, k in zip(self.params, self.param_kinds) if k == "cpu_scalar"]
        body = "\n".join("    " + line for line in entry + self.lines) or "    pass"
        cast = _CAST_NATIVE if mode == "native" else _CAST_FLOAT64
        return (f"{_PRELUDE}{cast}\n\ndef fusion({', '.join(self.params)}):\n{body}\n"
                f"    return [{', '.join(self.outputs)}]\n")

    def function(self, mode: str = "native"):
        """mode: "native" (eager semantics) or "float64" (the reference)."""
        import torch
        namespace = {"torch": torch, "math": math}
        exec(compile(self.source(mode), f"<fusion:{mode}>", "exec"), namespace)  # noqa: S102
        fn = namespace["fusion"]
        if mode == "native":
            return fn

        def reference(*inputs):
            up = [x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                  for x in inputs]
            return fn(*up)
        return reference


class _TorchProxy:
    """The `torch` seen by a script's inputs list: device= redirected, sizes
    substituted through size_map (old extent -> new extent)."""

    def __init__(self, torch, device, size_map, dtype_class=None):
        self._torch = torch
        self._device = device
        self._size_map = size_map or {}
        self._dtype_class = dtype_class or torch.dtype

    def _shape(self, s):
        if isinstance(s, (list, tuple)) and all(isinstance(d, int) for d in s):
            return type(s)(self._size_map.get(d, d) for d in s)
        return s

    def __getattr__(self, name):
        attr = getattr(self._torch, name)
        if isinstance(attr, types.ModuleType):  # torch.testing.make_tensor and the like
            return _TorchProxy(attr, self._device, self._size_map, self._dtype_class)
        if not callable(attr) or isinstance(attr, (type, self._dtype_class)):
            return attr

        def call(*args, **kwargs):
            # A 0-dim tensor made on the CPU stays there (is_cpu=True inputs).
            keep_cpu = (str(kwargs.get("device")) == "cpu" and bool(args)
                        and isinstance(args[0], (tuple, list)) and len(args[0]) == 0)
            if "device" in kwargs and not keep_cpu:
                kwargs["device"] = self._device
            if args:
                args = (self._shape(args[0]),) + args[1:]
                if name == "randint":  # randint(high, size) / randint(low, high, size)
                    args = tuple(self._shape(a) for a in args)
                if (len(args) > 1 and all(isinstance(a, int) for a in args)
                        and name in ("randn", "rand", "zeros", "ones", "empty")):
                    args = tuple(self._size_map.get(a, a) for a in args)
            if "size" in kwargs:
                kwargs["size"] = self._shape(kwargs["size"])
            return attr(*args, **kwargs)
        return call


class LoadedScript:
    """A repro script: its program and a way to make its inputs."""

    def __init__(self, path: str, program: FusionProgram, inputs_src: Optional[str]):
        self.path = path
        self.program = program
        self._inputs_src = inputs_src

    def make_inputs(self, device="cuda", size_map: Optional[Dict[int, int]] = None, seed: int = 0):
        """Evaluates the script's `inputs = [...]` on `device`, with extents
        replaced through size_map."""
        import torch
        if self._inputs_src is None:
            raise ValueError(f"{self.path}: no `inputs = [...]` list")
        torch.manual_seed(seed)
        ns = {"torch": _TorchProxy(torch, device, size_map), "math": math}
        return list(eval(compile(self._inputs_src, f"{self.path}:inputs", "eval"), ns))  # noqa: S307


def load_script(path: str) -> LoadedScript:
    """Records the definition of a repro script (without evaluating its
    inputs list or fd.execute)."""
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path)
    inputs_src = None
    body = []
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "inputs"):
            inputs_src = ast.get_source_segment(text, stmt.value)
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and func.attr == "execute":
                continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in stmt.names]
            if isinstance(stmt, ast.Import) and names == ["torch"]:
                continue  # the definition needs no torch
        body.append(stmt)
    module = types.ModuleType("nvfuser")
    module.FusionDefinition = FusionDefinition
    module.DataType = DataType
    # nvfuser_direct: the direct-bindings front end's repro scripts import it.
    saved = {name: sys.modules.get(name) for name in ("nvfuser", "nvfuser_direct")}
    for name in saved:
        sys.modules[name] = module
    FusionDefinition._last = None
    try:
        code = compile(ast.Module(body=body, type_ignores=[]), path, "exec")
        exec(code, {"__name__": "__fusion_script__"})  # noqa: S102
    finally:
        for name, old in saved.items():
            if old is None:
                del sys.modules[name]
            else:
                sys.modules[name] = old
    fd = FusionDefinition._last
    if fd is None:
        raise ValueError(f"{path}: no FusionDefinition was created")
    return LoadedScript(path, fd.program(), inputs_src)
