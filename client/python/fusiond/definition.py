"""A drop-in for nvFuser's Python frontend, compiled by fusiond.

    from fusiond import FusionDefinition, DataType

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        y = fd.ops.cast(fd.ops.relu(fd.ops.cast(x, DataType.Float)), DataType.BFloat16)
        fd.add_output(y)
    out, = fd.execute([x_cuda])

The same method names and arguments as nvFuser (define_tensor, define_scalar,
define_vector, fd.ops.*, add_output, execute), so the repro scripts that
nvFuser's frontend executes, and front ends written for it, run by changing
the import. Every call is recorded as a line of the repro language (the text
`fusionc` parses, docs/ir.md), so the C++ front end checks the definition and
its messages (line:column: what; expected ...) reach the caller unchanged.

`execute` compiles once per input signature (dtype and shape of each input)
and then only launches (fusiond.runtime); compiled fusions are shared by
every definition of the same text in the process. An op the compiler lacks
raises UnsupportedOpError naming it, when the definition calls it.
"""

from __future__ import annotations

import math
import threading
from typing import Dict, List, Optional, Sequence

from .compiler import CompileError, compile_definition
from .manifest import InvalidArgument

__all__ = ["FusionDefinition", "DataType", "Tensor", "Scalar", "Vector", "UnsupportedOpError",
           "SUPPORTED_OPS", "CompileError"]


class UnsupportedOpError(InvalidArgument, NotImplementedError):
    """fd.ops.<name> is not an op of fusiond's compiler."""


class _DType:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"DataType.{self.name}"


class DataType:
    """nvFuser's DataType names. Complex types exist for front ends that
    name them; the compiler refuses them with its own message."""

    Bool = _DType("Bool")
    Int32 = _DType("Int32")
    Int = _DType("Int")
    Half = _DType("Half")
    BFloat16 = _DType("BFloat16")
    Float = _DType("Float")
    Double = _DType("Double")
    Null = _DType("Null")
    ComplexFloat = _DType("ComplexFloat")
    ComplexDouble = _DType("ComplexDouble")


# The ops of fusiond's IR (compiler/ir/op.cc), by category: what fd.ops offers.
_UNARY = ("abs", "neg", "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal",
          "sin", "cos", "tanh", "sigmoid", "erf", "erfc", "relu", "logical_not", "floor", "ceil",
          "sign", "round", "trunc", "log2", "log10", "isnan", "isinf", "isfinite", "bitwise_not")
_BINARY = ("add", "sub", "mul", "div", "pow", "fmod", "maximum", "minimum", "eq", "ne", "lt", "le",
           "gt", "ge", "logical_and", "logical_or", "atan2", "remainder", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")
_TERNARY = ("where", "clamp")
_TENSOR_RESULT = ("broadcast_in_dim", "broadcast", "expand", "squeeze", "reshape", "permute",
                  "sum", "max", "min", "prod", "var", "slice", "pad", "cat")
_FACTORY = ("uniform", "normal", "iota")  # tensors made from scalars (seed, offset, sizes)
# Front-end spellings the repro parser lowers to IR ops (compiler/frontend).
# MATH_SPELLINGS: unary math ops written with IR ops (compiler/frontend/math_calls.cc).
MATH_SPELLINGS = ("silu", "atan", "tan", "sinh", "cosh", "asin", "acos", "atanh", "asinh", "acosh",
                  "lgamma", "erfinv", "is_neginf", "is_posinf")
# ARITH_SPELLINGS: element-wise names nvFuser's printers use, written with IR
# ops (compiler/frontend/arith_calls.cc; truediv is the IR's div).
ARITH_SPELLINGS = ("signbit", "truediv", "isneginf", "isposinf", "mod", "fmax", "fmin", "frac")
FRONTEND_SPELLINGS = ("full", "zeros", "ones", "rand_like", "randn_like", "lerp", "addcmul",
                      "threshold", "stride_order", "shape", "at", "triu", "tril",
                      "welford") + MATH_SPELLINGS + ARITH_SPELLINGS
SUPPORTED_OPS = frozenset(_UNARY + _BINARY + _TERNARY + _TENSOR_RESULT + _FACTORY +
                          FRONTEND_SPELLINGS + ("cast", "var_mean", "size", "set", "segment_set"))


# Ops with several results: var_mean (var, mean), welford (avg, var_sum, n).
_TUPLE_RESULT = {"var_mean": 2, "welford": 3}
# Spellings whose result is a tensor only when an operand is.
_ELEMENTWISE_SPELLINGS = MATH_SPELLINGS + ARITH_SPELLINGS


def _literal(v) -> str:
    """Repro-language text of a call argument."""
    if isinstance(v, (Value, Vector, _DType)):
        return v._expr if not isinstance(v, _DType) else repr(v)
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("inf")' if v > 0 else 'float("-inf")'
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    item = getattr(v, "item", None)  # a 0-d torch / numpy number
    if callable(item) and getattr(v, "ndim", 1) == 0:
        return _literal(item())
    raise InvalidArgument(f"cannot pass {type(v).__name__} {v!r} to a fusion definition "
                          "(numbers, lists, DataType and values of this definition only)")


class Value:
    """A value of a definition (nvFuser's Tensor or Scalar). `_size`: (tensor,
    axis) for T.size(axis)."""

    __slots__ = ("_fd", "_expr", "_size")

    def __init__(self, fd: "FusionDefinition", expr: str, size=None):
        self._fd = fd
        self._expr = expr
        self._size = size

    def __repr__(self):
        return f"{type(self).__name__}({self._expr})"

    def size(self, dim: int) -> "Scalar":
        return Scalar(self._fd, f"{self._expr}.size({int(dim)})", (self, int(dim)))

    def shape(self) -> "Vector":
        return Vector(self._fd, f"{self._expr}.shape()", self)

    # Operators, as nvFuser's Tensor and Scalar have them.
    def __add__(self, o): return self._fd.ops.add(self, o)
    def __radd__(self, o): return self._fd.ops.add(o, self)
    def __sub__(self, o): return self._fd.ops.sub(self, o)
    def __rsub__(self, o): return self._fd.ops.sub(o, self)
    def __mul__(self, o): return self._fd.ops.mul(self, o)
    def __rmul__(self, o): return self._fd.ops.mul(o, self)
    def __truediv__(self, o): return self._fd.ops.div(self, o)
    def __rtruediv__(self, o): return self._fd.ops.div(o, self)
    def __pow__(self, o): return self._fd.ops.pow(self, o)
    def __neg__(self): return self._fd.ops.neg(self)
    def __abs__(self): return self._fd.ops.abs(self)
    def __lt__(self, o): return self._fd.ops.lt(self, o)
    def __le__(self, o): return self._fd.ops.le(self, o)
    def __gt__(self, o): return self._fd.ops.gt(self, o)
    def __ge__(self, o): return self._fd.ops.ge(self, o)


class Tensor(Value):
    __slots__ = ()


class Scalar(Value):
    __slots__ = ()


class Vector:
    """A shape: T.shape() (`_of`: T) or fd.define_vector([...]) (`_of`: the list)."""

    __slots__ = ("_fd", "_expr", "_of")

    def __init__(self, fd, expr, of=None):
        self._fd = fd
        self._expr = expr
        self._of = of

    def __repr__(self):
        return f"Vector({self._expr})"


class _Ops:
    """fd.ops: each call records one line of the definition."""

    def __init__(self, fd: "FusionDefinition"):
        self._fd = fd

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in SUPPORTED_OPS:
            raise UnsupportedOpError(
                f"fd.ops.{name} is not supported by fusiond's compiler (it has: "
                f"{', '.join(sorted(SUPPORTED_OPS - {'set', 'segment_set'}))})")
        fd = self._fd

        def op(*args, **kwargs):
            return fd._record_op(name, args, kwargs)

        op.__name__ = name
        return op


class FusionDefinition:
    """Records a fusion definition; `execute` compiles (once per input
    signature) and launches it. Use as a context manager, or subclass and
    override `definition(self)`, as with nvFuser."""

    def __init__(self, id: Optional[int] = None, max_length: int = 0, **_):  # noqa: A002
        self.ops = _Ops(self)
        self._lines: List[str] = []
        self._outputs: List[str] = []
        self._inputs: List[str] = []    # "tensor" or "scalar", in definition order
        self._ranks: List[int] = []     # per input (0 for scalars)
        self._symbolic = False
        self._count = 0
        self._text: Optional[str] = None
        # The calls as data, for the wire form (fusiond.wire): (kind, result, details...).
        self._records: List[tuple] = []
        self._compiled: Dict[tuple, object] = {}
        self.last_compile_key = None    # the signature compiled by the latest execute, if any

    # Defining.
    def __enter__(self):
        self._text = None
        return self

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            self._finalize()
        return False

    def definition(self):
        """Subclasses override this to define the fusion (nvFuser style)."""

    def _name(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def _check_open(self):
        if self._text is not None:
            raise InvalidArgument("this FusionDefinition is complete; define a new one")

    def _emit(self, prefix: str, call: str) -> str:
        self._check_open()
        name = self._name(prefix)
        self._lines.append(f"{name} = {call}")
        return name

    def _check_operands(self, values) -> None:
        for v in values:
            if isinstance(v, (Value, Vector)) and v._fd is not self:
                raise InvalidArgument(f"{v!r} belongs to another FusionDefinition")
            if isinstance(v, (list, tuple)):
                self._check_operands(v)

    def define_tensor(self, shape=None, contiguity=None, dtype=DataType.Float, is_cpu=False,
                      stride_order=None, symbolic_sizes=None, **kwargs) -> Tensor:
        sizes = shape if shape is not None else symbolic_sizes
        if sizes is None:
            raise InvalidArgument("define_tensor needs shape=[...] (-1 for a symbolic extent)")
        sizes = [int(d) for d in sizes]
        args = [f"shape={_literal(sizes)}"]
        if contiguity is not None:
            args.append(f"contiguity={_literal(contiguity)}")
        args.append(f"dtype={_literal(dtype)}")
        args.append(f"is_cpu={_literal(bool(is_cpu))}")
        if stride_order is not None:
            args.append(f"stride_order={_literal(list(stride_order))}")
        if is_cpu and sizes:
            raise InvalidArgument(f"input {len(self._inputs)} is a CPU tensor (is_cpu=True) of rank "
                                  f"{len(sizes)}; only 0-dim CPU tensors (scalars) are supported")
        self._symbolic |= any(d < 0 for d in sizes)
        name = self._emit("T", f"fd.define_tensor({', '.join(args)})")
        self._ranks.append(len(sizes))
        if is_cpu:  # a scalar input passed as a 0-dim CPU tensor (read with .item() at launch)
            s = Scalar(self, name)
            self._inputs.append("scalar")
            self._records.append(("scalar_input", s, dtype, True))
            return s
        t = Tensor(self, name)
        self._inputs.append("tensor")
        self._records.append(("tensor", t, sizes, contiguity, dtype, stride_order))
        return t

    def define_scalar(self, value=None, dtype=None) -> Scalar:
        args = [_literal(value)]
        if dtype is not None:
            args.append(f"dtype={_literal(dtype)}")
        name = self._emit("S", f"fd.define_scalar({', '.join(args)})")
        s = Scalar(self, name)
        if value is None:
            self._inputs.append("scalar")
            self._ranks.append(0)
            self._records.append(("scalar_input", s, dtype))
        else:
            self._records.append(("constant", s, value, dtype))
        return s

    define_constant = define_scalar  # older nvFuser name

    def define_vector(self, values, dtype=DataType.Int) -> Vector:
        if isinstance(values, int):
            raise UnsupportedOpError("define_vector(size) (a vector input) is not supported; "
                                     "pass the sizes: define_vector([T0.size(0), 1])")
        self._check_operands(values)
        name = self._emit("V", f"fd.define_vector({_literal(list(values))}, dtype={_literal(dtype)})")
        return Vector(self, name, list(values))

    def add_output(self, value, alias_input=None, stride_order=None) -> None:
        """stride_order: the layout nvFuser would give the output; the values
        are the same and outputs here are contiguous, so it is checked only."""
        self._check_open()
        if alias_input is not None:
            raise UnsupportedOpError("aliased outputs (add_output(..., alias_input)) are not supported")
        if not isinstance(value, Value) or value._fd is not self:
            raise InvalidArgument(f"add_output takes a tensor of this definition, got {value!r}")
        text = value._expr
        if stride_order is not None:
            text += f", stride_order={_literal(list(stride_order))}"
        self._lines.append(f"fd.add_output({text})")
        self._outputs.append(value._expr)
        self._records.append(("output", value, stride_order))

    def _record_op(self, name: str, args: Sequence, kwargs: dict):
        self._check_operands(args)
        self._check_operands(list(kwargs.values()))
        text = ", ".join([_literal(a) for a in args] +
                         [f"{k}={_literal(v)}" for k, v in kwargs.items()])
        call = f"fd.ops.{name}({text})"
        if name in _TUPLE_RESULT:
            self._check_open()
            names = [self._name("T") for _ in range(_TUPLE_RESULT[name])]
            self._lines.append(f"{', '.join(names)} = {call}")
            out = [Tensor(self, n) for n in names]
        elif name == "size":
            out = [Scalar(self, self._emit("S", call))]
        elif name == "shape":  # fd.ops.shape(T): T.shape()
            out = [Vector(self, self._emit("V", call), args[0] if args else kwargs.get("arg"))]
        elif name == "at":  # fd.ops.at(V, i): entry i of a shape (T.size(i) for V = T.shape())
            bound = dict(zip(("arg", "index"), args), **kwargs)
            vec, index, size = bound.get("arg"), bound.get("index"), None
            if isinstance(vec, Vector) and isinstance(index, int) and not isinstance(index, bool):
                if isinstance(vec._of, Tensor) and not vec._expr.endswith(".shape()"):
                    size = (vec._of, int(index))  # fd.ops.shape's entries are size scalars
            out = [Scalar(self, self._emit("S", call), size)]
        elif name in _TENSOR_RESULT + _FACTORY + FRONTEND_SPELLINGS and name not in _ELEMENTWISE_SPELLINGS or any(isinstance(v, Tensor) for v in list(args) + list(kwargs.values())):
            out = [Tensor(self, self._emit("T", call))]
        else:
            out = [Scalar(self, self._emit("S", call))]
        self._records.append(("op", name, tuple(args), dict(kwargs), out))
        return tuple(out) if name in _TUPLE_RESULT else out[0]

    def _finalize(self) -> str:
        if self._text is None:
            body = "\n".join("    " + line for line in self._lines) or "    pass"
            self._text = ("from nvfuser import FusionDefinition, DataType\n\n\n"
                          "def fusion(fd: FusionDefinition) -> None:\n"
                          f"{body}\n\n\nwith FusionDefinition() as fd:\n    fusion(fd)\n")
        return self._text

    def _ensure_defined(self):
        if self._text is None and not self._lines and type(self).definition is not FusionDefinition.definition:
            with self:
                self.definition()
        if self._text is None:
            if not self._lines:
                raise InvalidArgument("the FusionDefinition is empty: define it in `with "
                                      "FusionDefinition() as fd:` or override definition()")
            self._finalize()

    def _wire_form(self):
        from .wire import to_graph
        return to_graph(self)

    def definition_text(self) -> str:
        """The definition in the repro language (what fusionc compiles)."""
        self._ensure_defined()
        return self._text

    def __repr__(self):
        return self.definition_text() if self._text is not None else "FusionDefinition(<open>)"

    # Running.
    def execute(self, inputs: Sequence, device=None, **_) -> list:
        """Runs the fusion on `inputs` (torch CUDA tensors and numbers, in
        definition order) and returns the outputs. The first call for an
        input signature compiles; later calls only launch."""
        key = tuple([(x.dtype, x.shape) if hasattr(x, "data_ptr") else type(x) for x in inputs])
        fusion = self._compiled.get(key)
        if fusion is None:
            fusion = self._compile(inputs, key)
        return fusion.run(inputs)

    def compiled_for(self, inputs: Sequence):
        """The fusiond.runtime.LoadedFusion that `execute(inputs)` launches
        (compiled now if this signature is new); calling it skips execute's
        signature lookup, for callers whose signature never changes."""
        key = tuple([(x.dtype, x.shape) if hasattr(x, "data_ptr") else type(x) for x in inputs])
        return self._compiled.get(key) or self._compile(inputs, key)

    def _compile(self, inputs: Sequence, key: tuple):
        self._ensure_defined()
        if len(inputs) != len(self._inputs):
            raise InvalidArgument(f"the definition has {len(self._inputs)} inputs, got {len(inputs)}")
        shapes = []
        for i, (kind, x) in enumerate(zip(self._inputs, inputs)):
            is_tensor = hasattr(x, "data_ptr")
            if kind == "tensor":
                if not is_tensor:
                    raise InvalidArgument(f"input {i} must be a tensor, got {type(x).__name__}")
                if x.dim() != self._ranks[i]:
                    raise InvalidArgument(f"input {i} has rank {x.dim()}, the definition's "
                                          f"tensor has rank {self._ranks[i]}")
                shapes.append(tuple(x.shape))
            else:
                if is_tensor and x.numel() != 1:
                    raise InvalidArgument(f"input {i} is a scalar input; got a tensor of shape "
                                          f"{list(x.shape)}")
                shapes.append(None)
        fusion = _compiled_fusion(self._text, tuple(shapes), self._symbolic, self._wire_form)
        self._compiled[key] = fusion
        self.last_compile_key = key
        return fusion


_cache_lock = threading.Lock()
_cache: Dict[tuple, object] = {}


def _compiled_fusion(text: str, shapes: tuple, symbolic: bool, wire_form=None):
    """One LoadedFusion per (definition text, shapes) in the process. A
    static definition compiles once for any inputs of its shapes."""
    key = (text, shapes if symbolic or None in shapes else None)
    with _cache_lock:
        fusion = _cache.get(key)
    if fusion is None:
        fusion = compile_definition(text, list(shapes), symbolic, wire_form=wire_form)
        with _cache_lock:
            fusion = _cache.setdefault(key, fusion)
    return fusion
