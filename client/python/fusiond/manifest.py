"""Manifests and launch plans: what the Python runtime knows without a GPU.

Parses and checks what ``fusionc compile FILE --out DIR`` writes as
``DIR/manifest.json`` (docs/manifest.md): the launch expressions (grid, block,
shared memory and buffer sizes as functions of the input sizes), the tensors'
specs, the kernels' parameter bindings; and computes a launch plan (every size
and launch dimension) from the input shapes. Nothing here needs torch or
CUDA; fusiond.runtime launches what it describes.

Version 2 adds kernel preconditions ("requires": conditions on launch
expressions that plan_launch checks, raising FailedPrecondition) and pointer
alignments (a param's "align", which fusiond.runtime enforces); version 3
the condition "equals" (a kernel compiled for exactly these sizes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "FusionError", "InvalidArgument", "Unavailable", "NotFound", "ResourceExhausted",
    "FailedPrecondition",
    "Expr", "ELEMENT_SIZE", "TensorSpec", "KernelParam", "Requirement", "KernelSpec", "Manifest",
    "parse_manifest", "SUPPORTED_VERSIONS",
    "LaunchPlan", "plan_launch",
]

# ----------------------------------------------------------------------------
# Errors, with the same codes as the C++ side's absl::Status.

class FusionError(Exception):
    code = "UNKNOWN"


class InvalidArgument(FusionError, ValueError):
    code = "INVALID_ARGUMENT"


class Unavailable(FusionError, RuntimeError):
    code = "UNAVAILABLE"


class NotFound(FusionError, FileNotFoundError):
    code = "NOT_FOUND"


class ResourceExhausted(FusionError, RuntimeError):
    code = "RESOURCE_EXHAUSTED"


class FailedPrecondition(FusionError, ValueError):
    """The inputs' shapes break a kernel's "requires" (it was compiled for
    other shapes): nothing was launched; compile the fusion for these shapes."""
    code = "FAILED_PRECONDITION"


# ----------------------------------------------------------------------------
# Launch expressions: ints, symbols, + - * / (truncating), unary minus,
# parentheses, ceil_div(a, b), min(a, b), max(a, b). Parsed once into a
# Python closure, evaluated per launch.

_TOKEN = re.compile(r"(\d+)|([A-Za-z_]\w*)|(.)")


def _tdiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ceil_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    return -((-a) // b)


class Expr:
    """A parsed launch expression. ``Expr("ceil_div(s0, 4)")({"s0": 10}) == 3``."""

    __slots__ = ("text", "symbols", "_fn")

    def __init__(self, text):
        if isinstance(text, int) and not isinstance(text, bool):
            text = str(text)
        if not isinstance(text, str):
            raise InvalidArgument(f"expression must be a string or an integer, got {text!r}")
        self.text = text
        self.symbols: set = set()
        self._fn = self._compile(text)

    def __call__(self, values: Dict[str, int]) -> int:
        try:
            return self._fn(values)
        except KeyError as e:
            raise InvalidArgument(f"expression '{self.text}': unbound symbol {e.args[0]!r}") from None
        except ZeroDivisionError:
            raise InvalidArgument(f"expression '{self.text}': division by zero") from None

    def is_constant(self) -> bool:
        return not self.symbols

    def _compile(self, text: str) -> Callable[[Dict[str, int]], int]:
        tokens = []  # (number, name, other character, column)
        pos = 0
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            m = _TOKEN.match(text, pos)
            tokens.append((m.group(1), m.group(2), m.group(3), pos + 1))
            pos = m.end()
        i = 0

        def err(what):
            col = tokens[i][3] if i < len(tokens) else len(text) + 1
            return InvalidArgument(f"expression '{text}' at column {col}: {what}")

        def peek(ch):
            return i < len(tokens) and tokens[i][2] == ch

        def sum_(depth):
            nonlocal i
            node = product(depth)
            while peek("+") or peek("-"):
                op = tokens[i][2]
                i += 1
                rhs = product(depth)
                node = f"({node} {op} {rhs})"
            return node

        def product(depth):
            nonlocal i
            node = unary(depth)
            while peek("*") or peek("/"):
                op = tokens[i][2]
                i += 1
                rhs = unary(depth)
                node = f"({node} * {rhs})" if op == "*" else f"_tdiv({node}, {rhs})"
            return node

        def unary(depth):
            nonlocal i
            if depth > 100:
                raise err("nested too deeply")
            if peek("-"):
                i += 1
                return f"(-{unary(depth + 1)})"
            return primary(depth)

        def primary(depth):
            nonlocal i
            if i >= len(tokens):
                raise err("expected a number, a symbol or '('")
            num, name, other, _ = tokens[i]
            if other == "(":
                i += 1
                inner = sum_(depth + 1)
                if not peek(")"):
                    raise err("expected ')'")
                i += 1
                return inner
            if num is not None:
                i += 1
                if int(num) >= 2**63:
                    raise err("integer literal does not fit in int64")
                return num
            if name is not None:
                i += 1
                if not peek("("):
                    self.symbols.add(name)
                    return f"S[{name!r}]"
                fn = {"ceil_div": "_ceil_div", "min": "min", "max": "max"}.get(name)
                if fn is None:
                    raise err(f"unknown function '{name}' (known: ceil_div, min, max)")
                i += 1
                a = sum_(depth + 1)
                if not peek(","):
                    raise err(f"expected ',' in {name}(a, b)")
                i += 1
                b = sum_(depth + 1)
                if not peek(")"):
                    raise err(f"expected ')' closing {name}(")
                i += 1
                return f"{fn}({a}, {b})"
            raise err(f"unexpected character '{other}'")

        src = sum_(0)
        if i != len(tokens):
            raise err("unexpected trailing characters")
        # Only tokens produced above reach this source text.
        return eval(f"lambda S: {src}", {"_tdiv": _tdiv, "_ceil_div": _ceil_div,  # noqa: S307
                                         "min": min, "max": max, "__builtins__": {}})


# ----------------------------------------------------------------------------
# The manifest.

_DTYPE_NAMES = {
    "bool": "bool", "Bool": "bool", "int32": "int32", "Int32": "int32",
    "int64": "int64", "Int": "int64", "float16": "float16", "Half": "float16",
    "bfloat16": "bfloat16", "BFloat16": "bfloat16", "float32": "float32",
    "Float": "float32", "float64": "float64", "Double": "float64",
    "float8_e4m3fn": "float8_e4m3fn", "Float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2", "Float8_e5m2": "float8_e5m2",
}
ELEMENT_SIZE = {"bool": 1, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
                "float32": 4, "float64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1}


@dataclass
class TensorSpec:
    name: str
    dtype: str
    shape: List[Expr]
    scalar: bool = False
    # Scalar inputs only: the caller passes a 0-dim CPU tensor (nvFuser's
    # is_cpu=True) whose value the runtime reads at launch.
    cpu_tensor: bool = False


@dataclass
class KernelParam:
    kind: str  # input, output, intermediate, workspace, scalar, size
    index: int = 0
    symbol: str = ""
    # Inputs and outputs: the pointer must be a multiple of this many bytes
    # (a power of two, 1..256); 0 when the manifest gives none (the element
    # size's natural alignment, no check).
    align: int = 0


@dataclass
class Requirement:
    """One of a kernel's preconditions: expr's value is a multiple of n
    (kind "multiple_of"), at most n (kind "at_most") or n (kind "equals",
    manifest version 3)."""
    expr: Expr
    kind: str  # multiple_of, at_most, equals
    n: int

    def holds(self, value: int) -> bool:
        if self.kind == "multiple_of":
            return value % self.n == 0
        return value <= self.n if self.kind == "at_most" else value == self.n

    def describe(self) -> str:
        """The condition as plan_launch's message words it."""
        if self.kind == "multiple_of":
            return f"{self.expr.text} is a multiple of {self.n}"
        return f"{self.expr.text} {'<=' if self.kind == 'at_most' else '=='} {self.n}"


@dataclass
class KernelSpec:
    name: str
    binary: str
    scheduler: str
    cooperative: bool
    block: List[Expr]
    grid: List[Expr]
    smem_bytes: Expr
    params: List[KernelParam]
    requires: List[Requirement] = field(default_factory=list)


@dataclass
class Manifest:
    fusion: str
    canonical_hash: str
    arch: str
    symbols: List[Tuple[str, int, int]]  # (name, input, axis)
    inputs: List[TensorSpec]
    outputs: List[TensorSpec]
    intermediates: List[TensorSpec]
    workspaces: List[Tuple[Expr, bool, bool]]  # (bytes, zero, keep)
    kernels: List[KernelSpec]
    version: int = 1

    def required_alignments(self, kind: str) -> List[Tuple[int, str]]:
        """kind "input" or "output": per tensor, the largest "align" of the
        kernel params bound to it and the (first) kernel asking for it;
        (1, "") where none asks."""
        n = len(self.inputs) if kind == "input" else len(self.outputs)
        out = [(1, "")] * n
        for k in self.kernels:
            for p in k.params:
                if p.kind == kind and p.align > out[p.index][0]:
                    out[p.index] = (p.align, k.name)
        return out


def _bad(where, what):
    return InvalidArgument(f"manifest: {where}: {what}")


def _get(obj, key, typ, where, default=None, required=True):
    if not isinstance(obj, dict):
        raise _bad(where, "expected an object")
    if key not in obj:
        if required:
            raise _bad(where, f'missing "{key}"')
        return default
    v = obj[key]
    if typ is int and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
        raise _bad(where, f'"{key}" must be a non-negative integer')
    if typ is not int and not isinstance(v, typ):
        raise _bad(where, f'"{key}" has the wrong type ({type(v).__name__})')
    return v


_INT64 = (-2**63, 2**63 - 1)
SUPPORTED_VERSIONS = (1, 2, 3)
_REQUIREMENT_KINDS = ("multiple_of", "at_most", "equals")


def _requires(k, where) -> List[Requirement]:
    """A kernel's "requires" (where: "kernels[0] (its name)", as the C++ runtime words it)."""
    if "requires" not in k:
        return []
    lst = k["requires"]
    if not isinstance(lst, list):
        raise _bad(where + ".requires", "expected a list of conditions")
    out = []
    for c_i, c in enumerate(lst):
        cw = f"{where}.requires[{c_i}]"
        if not isinstance(c, dict):
            raise _bad(cw, "expected an object")
        unknown = sorted(set(c) - {"expr", *_REQUIREMENT_KINDS})
        if unknown:
            raise _bad(cw, f'unknown key "{unknown[0]}" (known: expr, multiple_of, at_most, equals)')
        if "expr" not in c:
            raise _bad(cw, 'missing "expr"')
        kinds = [key for key in _REQUIREMENT_KINDS if key in c]
        if len(kinds) != 1:
            raise _bad(cw, 'needs exactly one of "multiple_of", "at_most", "equals"')
        kind = kinds[0]
        n = c[kind]
        if isinstance(n, bool) or not isinstance(n, int) or not _INT64[0] <= n <= _INT64[1]:
            raise _bad(cw, f'"{kind}" must be an integer')
        if kind == "multiple_of" and n <= 0:
            raise _bad(cw, f'"multiple_of" must be positive, got {n}')
        out.append(Requirement(_expr(c["expr"], cw + ".expr"), kind, n))
    return out


def _align(p, kind, where) -> int:
    """An input or output param's "align" (0: none). Other kinds' pointers
    are runtime-allocated, so aligned: their "align" is ignored (as by the
    C++ runtime)."""
    if "align" not in p or kind not in ("input", "output"):
        return 0
    b = p["align"]
    if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 256 or b & (b - 1):
        raise _bad(where, f'"align" must be a power of two from 1 to 256 (bytes), got {b!r}')
    return b


def _expr(v, where):
    try:
        return Expr(v)
    except InvalidArgument as e:
        raise _bad(where, str(e)) from None


def _tensors(root, key, required):
    lst = _get(root, key, list, "top level", [], required)
    out = []
    for i, t in enumerate(lst):
        where = f"{key}[{i}]"
        dt = _get(t, "dtype", str, where)
        if dt not in _DTYPE_NAMES:
            raise _bad(where, f"unknown dtype '{dt}'")
        scalar = bool(t.get("scalar", False))
        cpu_tensor = t.get("cpu_tensor", False)
        if not isinstance(cpu_tensor, bool) or (cpu_tensor and not scalar):
            raise _bad(where, '"cpu_tensor" must be true or false, and true only on a scalar input')
        shape = _get(t, "shape", list, where, [], not scalar)
        out.append(TensorSpec(t.get("name", ""), _DTYPE_NAMES[dt],
                              [_expr(e, f"{where}.shape[{a}]") for a, e in enumerate(shape)],
                              scalar, cpu_tensor))
    return out


def parse_manifest(text: str) -> Manifest:
    """Parses and checks manifest.json text; InvalidArgument when malformed."""
    try:
        root = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad("json", str(e)) from None
    if not isinstance(root, dict):
        raise _bad("top level", "expected an object")
    version = _get(root, "manifest_version", int, "top level")
    if version not in SUPPORTED_VERSIONS:
        raise FusionError(f"manifest: manifest_version {version} is not supported "
                          f"(this runtime reads 1 to 3)")
    symbols = []
    for i, s in enumerate(_get(root, "symbols", list, "top level", [], False)):
        where = f"symbols[{i}]"
        symbols.append((_get(s, "name", str, where), _get(s, "input", int, where),
                        _get(s, "axis", int, where)))
    inputs = _tensors(root, "inputs", True)
    outputs = _tensors(root, "outputs", True)
    intermediates = _tensors(root, "intermediates", False)
    workspaces = []
    for i, w in enumerate(_get(root, "workspaces", list, "top level", [], False)):
        where = f"workspaces[{i}]"
        if not isinstance(w, dict) or "bytes" not in w:
            raise _bad(where, 'missing "bytes"')
        workspaces.append((_expr(w["bytes"], where + ".bytes"), bool(w.get("zero", False)),
                           bool(w.get("keep", False))))
    kernels = []
    for k_i, k in enumerate(_get(root, "kernels", list, "top level")):
        where = f"kernels[{k_i}]"
        name = _get(k, "name", str, where)
        binary = _get(k, "binary", str, where)
        if not binary or "/" in binary:
            raise _bad(where, '"binary" must be a plain file name beside manifest.json')
        dims = {}
        for key in ("block", "grid"):
            lst = _get(k, key, list, where)
            if not 1 <= len(lst) <= 3:
                raise _bad(where, f'"{key}" needs 1 to 3 entries')
            dims[key] = [_expr(e, f"{where}.{key}[{d}]") for d, e in enumerate(lst)]
            dims[key] += [Expr("1")] * (3 - len(lst))
        params = []
        for p_i, p in enumerate(_get(k, "params", list, where)):
            pw = f"{where}.params[{p_i}]"
            kind = _get(p, "kind", str, pw)
            if kind == "size":
                params.append(KernelParam("size", 0, _get(p, "symbol", str, pw)))
            elif kind in ("input", "output", "intermediate", "workspace", "scalar"):
                params.append(KernelParam(kind, _get(p, "index", int, pw), "", _align(p, kind, pw)))
            else:
                raise _bad(pw, f"unknown param kind '{kind}'")
        requires = _requires(k, f"{where} ({name})")
        kernels.append(KernelSpec(name, binary, k.get("scheduler", ""),
                                  bool(k.get("cooperative", False)), dims["block"], dims["grid"],
                                  _expr(k.get("smem_bytes", 0), where + ".smem_bytes"), params,
                                  requires))
    m = Manifest(root.get("fusion", ""), root.get("canonical_hash", ""), root.get("arch", ""),
                 symbols, inputs, outputs, intermediates, workspaces, kernels, version)
    _validate(m)
    return m


def _validate(m: Manifest) -> None:
    declared = set()
    for i, (name, inp, axis) in enumerate(m.symbols):
        where = f"symbols[{i}]"
        if name in declared:
            raise _bad(where, f"duplicate symbol '{name}'")
        declared.add(name)
        if inp >= len(m.inputs) or m.inputs[inp].scalar:
            raise _bad(where, f"input {inp} is not a tensor input")
        if axis >= len(m.inputs[inp].shape):
            raise _bad(where, f"axis {axis} out of range for input {inp}")

    def check(e: Expr, where):
        extra = e.symbols - declared
        if extra:
            raise _bad(where, f"expression '{e.text}' reads undeclared symbol '{sorted(extra)[0]}'")

    for key in ("inputs", "outputs", "intermediates"):
        for i, t in enumerate(getattr(m, key)):
            for a, e in enumerate(t.shape):
                check(e, f"{key}[{i}].shape[{a}]")
    for i, (b, _, _) in enumerate(m.workspaces):
        check(b, f"workspaces[{i}]")
    if not m.kernels:
        raise _bad("kernels", "no kernels")
    limits = {"input": len(m.inputs), "scalar": len(m.inputs), "output": len(m.outputs),
              "intermediate": len(m.intermediates), "workspace": len(m.workspaces)}
    for k_i, k in enumerate(m.kernels):
        where = f"kernels[{k_i}]"
        for e in k.block + k.grid + [k.smem_bytes]:
            check(e, where)
        for c_i, c in enumerate(k.requires):
            check(c.expr, f"{where} ({k.name}).requires[{c_i}]")
        for p_i, p in enumerate(k.params):
            pw = f"{where}.params[{p_i}]"
            if p.kind == "size":
                if p.symbol not in declared:
                    raise _bad(pw, f"undeclared symbol '{p.symbol}'")
                continue
            if p.index >= limits[p.kind]:
                raise _bad(pw, f"index {p.index} out of range ({limits[p.kind]} available)")
            if p.kind == "input" and m.inputs[p.index].scalar:
                raise _bad(pw, f'input {p.index} is a scalar; use kind "scalar"')


# ----------------------------------------------------------------------------
# Launch plans: everything computed from the input shapes alone.

@dataclass
class LaunchPlan:
    symbols: Dict[str, int]
    output_shapes: List[Tuple[int, ...]]
    intermediate_shapes: List[Tuple[int, ...]]
    workspace_bytes: List[int]
    # Per kernel: (grid, block, smem_bytes).
    launches: List[Tuple[Tuple[int, int, int], Tuple[int, int, int], int]] = field(default_factory=list)
    # Per device index: the kernels' launch recipes (LoadedFusion._recipe).
    recipes: Dict[int, list] = field(default_factory=dict)


_GRID_LIMITS = (2**31 - 1, 65535, 65535)
_BLOCK_LIMITS = (1024, 1024, 64)


def _sources(m: Manifest, expr: Expr) -> str:
    """Which input axes give the symbols expr reads: " (s1 is input T4 axis 1, ...)"."""
    parts = [f"{name} is input {m.inputs[inp].name} axis {axis}"
             for name, inp, axis in m.symbols if name in expr.symbols]
    return f" ({', '.join(parts)})" if parts else ""


def plan_launch(m: Manifest, input_shapes: Sequence[Optional[Sequence[int]]]) -> LaunchPlan:
    """input_shapes: one per manifest input (None or () for scalar inputs).
    InvalidArgument when the shapes disagree with the manifest or a launch
    dimension is out of range; FailedPrecondition when they break a kernel's
    "requires"."""
    if len(input_shapes) != len(m.inputs):
        raise InvalidArgument(f"fusion {m.fusion} takes {len(m.inputs)} inputs, got {len(input_shapes)}")
    symbols = {}
    for name, inp, axis in m.symbols:
        shape = input_shapes[inp] or ()
        if axis >= len(shape):
            raise InvalidArgument(f"input {m.inputs[inp].name} (index {inp}) has rank {len(shape)}; "
                                  f"symbol {name} reads axis {axis}")
        symbols[name] = int(shape[axis])
    for i, t in enumerate(m.inputs):
        if t.scalar:
            continue
        got = tuple(input_shapes[i] or ())
        want = tuple(e(symbols) for e in t.shape)
        what = f"input {t.name} (index {i})"
        if len(got) != len(want):
            raise InvalidArgument(f"{what} has shape {list(got)}, the manifest wants rank {len(want)}")
        for a, (g, w) in enumerate(zip(got, want)):
            if g != w:
                raise InvalidArgument(f"{what} axis {a} is {g} but the manifest wants "
                                      f"{t.shape[a].text} = {w}")
    # The kernels' preconditions, before anything else is computed from the
    # symbols: a kernel specialized for other shapes is never launched (and
    # its launch expressions may mean nothing at these shapes).
    for k in m.kernels:
        for c in k.requires:
            value = c.expr(symbols)
            if not c.holds(value):
                raise FailedPrecondition(
                    f"kernel {k.name} ({k.scheduler}) was compiled for shapes where {c.describe()}; "
                    f"these inputs give {c.expr.text} = {value}{_sources(m, c.expr)}: "
                    f"compile the fusion for these shapes "
                    f"(fusionc compile --shapes, or a daemon request with this signature), "
                    f"or with --general for kernels that run every shape")

    def shape_of(t: TensorSpec, what):
        s = tuple(e(symbols) for e in t.shape)
        if any(d < 0 for d in s):
            raise InvalidArgument(f"{what} shape evaluates to {list(s)}")
        return s

    plan = LaunchPlan(symbols,
                      [shape_of(t, f"output {i}") for i, t in enumerate(m.outputs)],
                      [shape_of(t, f"intermediate {i}") for i, t in enumerate(m.intermediates)],
                      [b(symbols) for b, _, _ in m.workspaces])
    for k in m.kernels:
        grid = tuple(e(symbols) for e in k.grid)
        block = tuple(e(symbols) for e in k.block)
        for what, dims, lim in (("grid", grid, _GRID_LIMITS), ("block", block, _BLOCK_LIMITS)):
            for d in range(3):
                if not 1 <= dims[d] <= lim[d]:
                    raise InvalidArgument(f"kernel {k.name} {what}[{d}] = '{getattr(k, what)[d].text}' "
                                          f"evaluates to {dims[d]}, outside [1, {lim[d]}]")
        if block[0] * block[1] * block[2] > 1024:
            raise InvalidArgument(f"kernel {k.name}: more than 1024 threads per block")
        smem = k.smem_bytes(symbols)
        if not 0 <= smem <= 2**30:
            raise InvalidArgument(f"kernel {k.name}: dynamic shared memory evaluates to {smem}")
        plan.launches.append((grid, block, smem))
    return plan
