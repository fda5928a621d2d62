"""The kernel runtime for Python: torch tensors in, torch tensors out.

Loads what ``fusionc compile FILE --out DIR`` writes (``DIR/manifest.json`` and
one cubin or PTX file per kernel, see docs/manifest.md) and launches the
kernels in order on torch's current stream through the CUDA driver API,
called with ctypes on ``libcuda.so.1`` (the same driver, and the same primary
context, that torch uses). No compiler, no daemon, no protobuf or gRPC.

    from fusiond.runtime import load
    fusion = load("artifacts/rmsnorm_bwd_manual")
    grad_x, grad_w = fusion(x, rms, grad_out, weight)

Outputs, intermediates and workspaces are allocated with torch (so they live
in torch's caching allocator and follow its stream rules); workspaces that ask
for it are zeroed before the first kernel. torch is imported lazily, so the
manifest and expression code works without it.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import struct
import threading
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "FusionError", "InvalidArgument", "Unavailable", "NotFound", "ResourceExhausted",
    "Expr", "Manifest", "parse_manifest", "LaunchPlan", "plan_launch", "LoadedFusion", "load",
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
}
ELEMENT_SIZE = {"bool": 1, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
                "float32": 4, "float64": 8}


@dataclass
class TensorSpec:
    name: str
    dtype: str
    shape: List[Expr]
    scalar: bool = False


@dataclass
class KernelParam:
    kind: str  # input, output, intermediate, workspace, scalar, size
    index: int = 0
    symbol: str = ""


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
        shape = _get(t, "shape", list, where, [], not scalar)
        out.append(TensorSpec(t.get("name", ""), _DTYPE_NAMES[dt],
                              [_expr(e, f"{where}.shape[{a}]") for a, e in enumerate(shape)],
                              scalar))
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
    if version != 1:
        raise FusionError(f"manifest: manifest_version {version} is not supported (this runtime reads 1)")
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
                params.append(KernelParam(kind, _get(p, "index", int, pw)))
            else:
                raise _bad(pw, f"unknown param kind '{kind}'")
        kernels.append(KernelSpec(_get(k, "name", str, where), binary, k.get("scheduler", ""),
                                  bool(k.get("cooperative", False)), dims["block"], dims["grid"],
                                  _expr(k.get("smem_bytes", 0), where + ".smem_bytes"), params))
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


def plan_launch(m: Manifest, input_shapes: Sequence[Optional[Sequence[int]]]) -> LaunchPlan:
    """input_shapes: one per manifest input (None or () for scalar inputs)."""
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


# ----------------------------------------------------------------------------
# The CUDA driver, through ctypes.

_c = ctypes
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16

_PROTOTYPES = {
    "cuInit": [_c.c_uint],
    "cuGetErrorName": [_c.c_int, _c.POINTER(_c.c_char_p)],
    "cuGetErrorString": [_c.c_int, _c.POINTER(_c.c_char_p)],
    "cuCtxGetCurrent": [_c.POINTER(_c.c_void_p)],
    "cuCtxGetDevice": [_c.POINTER(_c.c_int)],
    "cuDeviceGetAttribute": [_c.POINTER(_c.c_int), _c.c_int, _c.c_int],
    "cuModuleLoadData": [_c.POINTER(_c.c_void_p), _c.c_void_p],
    "cuModuleUnload": [_c.c_void_p],
    "cuModuleGetFunction": [_c.POINTER(_c.c_void_p), _c.c_void_p, _c.c_char_p],
    "cuFuncSetAttribute": [_c.c_void_p, _c.c_int, _c.c_int],
    "cuOccupancyMaxActiveBlocksPerMultiprocessor": [_c.POINTER(_c.c_int), _c.c_void_p, _c.c_int,
                                                    _c.c_size_t],
    "cuLaunchKernel": [_c.c_void_p] + [_c.c_uint] * 7 + [_c.c_void_p, _c.c_void_p, _c.c_void_p],
    "cuLaunchCooperativeKernel": [_c.c_void_p] + [_c.c_uint] * 7 + [_c.c_void_p, _c.c_void_p],
}


class _Driver:
    _instance = None
    _lock = threading.Lock()

    @classmethod
    def get(cls) -> "_Driver":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def __init__(self):
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise Unavailable(f"CUDA driver not found (libcuda.so.1: {e})") from None
        for name, argtypes in _PROTOTYPES.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise Unavailable(f"CUDA driver lacks {name}") from None
            fn.argtypes = argtypes
            fn.restype = _c.c_int
            setattr(self, name, fn)
        self.check(self.cuInit(0), "cuInit", "initializing the CUDA driver")

    def check(self, result: int, call: str, context) -> None:
        """context: a string, or a callable making one (built only on failure)."""
        if result == 0:
            return
        if callable(context):
            context = context()
        name, text = _c.c_char_p(), _c.c_char_p()
        self.cuGetErrorName(result, _c.byref(name))
        self.cuGetErrorString(result, _c.byref(text))
        n = name.value.decode() if name.value else "CUDA_ERROR_?"
        t = text.value.decode() if text.value else ""
        raise Unavailable(f"{call} failed ({context}): {n} ({result}): {t}")


# ----------------------------------------------------------------------------
# Loaded fusions.

_TORCH_DTYPES: Dict[str, object] = {}


def _torch_dtype(name: str):
    if not _TORCH_DTYPES:
        import torch
        _TORCH_DTYPES.update({"bool": torch.bool, "int32": torch.int32, "int64": torch.int64,
                              "float16": torch.float16, "bfloat16": torch.bfloat16,
                              "float32": torch.float32, "float64": torch.float64})
    return _TORCH_DTYPES[name]


def _double_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


class _Module:
    """The kernels of one fusion loaded into one device's context."""

    def __init__(self, drv: _Driver, manifest: Manifest, binaries: Dict[str, bytes], index: int):
        self.drv = drv
        self.index = index  # the device
        self.modules = []
        self.functions = []
        self.smem_opt_in = []
        self.param_buffers = []
        # "keep" workspaces (zeroed once, left fit for the next launch by the
        # kernel: the grid barrier's words), per (stream, workspace index).
        self.kept = {}
        self.lock = threading.Lock()
        for k in manifest.kernels:
            image = binaries[k.binary] + b"\0"  # PTX must be NUL-terminated
            buf = ctypes.create_string_buffer(image, len(image))
            mod = _c.c_void_p()
            drv.check(drv.cuModuleLoadData(_c.byref(mod), buf), "cuModuleLoadData",
                      f"loading {k.binary} for kernel {k.name}")
            self.modules.append(mod)
            fn = _c.c_void_p()
            drv.check(drv.cuModuleGetFunction(_c.byref(fn), mod, k.name.encode()),
                      "cuModuleGetFunction", f"finding kernel {k.name} in {k.binary}")
            self.functions.append(fn)
            # Dynamic shared memory is opted in once per kernel (the 48 KiB
            # default bounds static + dynamic together).
            self.smem_opt_in.append(0)
            # Kernel parameters: every one is 8 bytes (pointer, double or
            # int64); the driver copies them at launch, so the buffers are
            # reused (under self.lock).
            n = max(len(k.params), 1)
            values = (_c.c_uint64 * n)()
            pointers = (_c.c_void_p * n)(*[_c.addressof(values) + 8 * j for j in range(n)])
            self.param_buffers.append((values, pointers))
        dev = _c.c_int()
        drv.check(drv.cuCtxGetDevice(_c.byref(dev)), "cuCtxGetDevice", "loading modules")
        sms = _c.c_int()
        drv.check(drv.cuDeviceGetAttribute(_c.byref(sms), _CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                           dev.value), "cuDeviceGetAttribute", "counting SMs")
        self.sm_count = sms.value


class LoadedFusion:
    """One compiled fusion. Call it with torch tensors (and numbers for scalar
    inputs) in manifest input order; it returns the outputs as a list."""

    def __init__(self, manifest: Manifest, binaries: Dict[str, bytes], directory: str = ""):
        self.manifest = manifest
        self.directory = directory
        self._binaries = binaries
        self._modules: Dict[int, _Module] = {}
        self._plans: Dict[tuple, LaunchPlan] = {}
        self._dtypes = None  # torch dtypes of inputs, outputs, intermediates (at the first run)

    @classmethod
    def load(cls, directory: str) -> "LoadedFusion":
        path = os.path.join(directory, "manifest.json")
        try:
            with open(path, "r", encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise NotFound(f"cannot open {path}: {e.strerror}") from None
        manifest = parse_manifest(text)
        binaries = {}
        for k in manifest.kernels:
            p = os.path.join(directory, k.binary)
            try:
                with open(p, "rb") as f:
                    binaries[k.binary] = f.read()
            except OSError as e:
                raise NotFound(f"kernel {k.name}: cannot open {p}: {e.strerror}") from None
        return cls(manifest, binaries, directory)

    def plan(self, input_shapes) -> LaunchPlan:
        key = tuple(tuple(s) if s is not None else None for s in input_shapes)
        return self._plan(key)

    def _plan(self, key: tuple) -> LaunchPlan:
        """key: the input shapes as tuples (None for scalar inputs)."""
        p = self._plans.get(key)
        if p is None:
            p = plan_launch(self.manifest, key)
            if len(self._plans) > 64:
                self._plans.clear()
            self._plans[key] = p
        return p

    def _module(self, device_index: int) -> _Module:
        mod = self._modules.get(device_index)
        if mod is None:
            import torch
            drv = _Driver.get()
            with torch.cuda.device(device_index):
                torch.cuda.current_stream()  # makes torch's (primary) context current
                ctx = _c.c_void_p()
                drv.check(drv.cuCtxGetCurrent(_c.byref(ctx)), "cuCtxGetCurrent", "loading modules")
                if not ctx.value:
                    torch.empty(1, device=f"cuda:{device_index}")
                    drv.check(drv.cuCtxGetCurrent(_c.byref(ctx)), "cuCtxGetCurrent", "loading modules")
                    if not ctx.value:
                        raise Unavailable("no current CUDA context after torch initialized the device")
                mod = _Module(drv, self.manifest, self._binaries, device_index)
            self._modules[device_index] = mod
        return mod

    def __call__(self, *inputs, out=None):
        return self.run(inputs, outputs=out)

    def run(self, inputs: Sequence, outputs: Optional[Sequence] = None, stream=None) -> list:
        """Runs on `stream` (default: torch's current stream of the inputs'
        device). `outputs`: preallocated dense tensors to write into."""
        import torch
        m = self.manifest
        if len(inputs) != len(m.inputs):
            raise InvalidArgument(f"fusion {m.fusion} takes {len(m.inputs)} inputs, got {len(inputs)}")
        if self._dtypes is None:
            self._dtypes = ([None if t.scalar else _torch_dtype(t.dtype) for t in m.inputs],
                            [_torch_dtype(t.dtype) for t in m.outputs],
                            [_torch_dtype(t.dtype) for t in m.intermediates])
        in_dtypes, out_dtypes, _ = self._dtypes
        device = None
        args = []
        shapes = []
        for i, (spec, x) in enumerate(zip(m.inputs, inputs)):
            if spec.scalar:
                if isinstance(x, torch.Tensor):
                    if x.numel() != 1:
                        raise InvalidArgument(f"input {spec.name} (index {i}) is a scalar")
                    x = x.item()
                if not isinstance(x, (int, float, bool)):
                    raise InvalidArgument(f"input {spec.name} (index {i}) must be a number")
                args.append(float(x))
                shapes.append(None)
                continue
            if not isinstance(x, torch.Tensor):
                raise InvalidArgument(f"input {spec.name} (index {i}) must be a torch tensor")
            if x.dtype != in_dtypes[i]:
                raise InvalidArgument(f"input {spec.name} (index {i}) is {x.dtype}, "
                                      f"the fusion wants {spec.dtype}")
            d = x.get_device()  # -1 off the GPU; cheaper than building x.device
            if d < 0:
                raise InvalidArgument(f"input {spec.name} (index {i}) is not on a CUDA device")
            if device is None:
                device = d
            elif d != device:
                raise InvalidArgument(f"inputs are on cuda:{device} and cuda:{d}")
            if not x.is_contiguous():
                x = x.contiguous()
            args.append(x)
            shapes.append(tuple(x.shape))
        if device is None:  # scalars only: torch may not have started CUDA yet
            current = device = torch.cuda.current_device()
        else:
            current = _current_device()
        plan = self._plan(tuple(shapes))
        if outputs is None:
            outputs = [torch.empty(s, dtype=d, device=device) for s, d in zip(plan.output_shapes, out_dtypes)]
        else:
            outputs = list(outputs)
            if len(outputs) != len(m.outputs):
                raise InvalidArgument(f"fusion {m.fusion} has {len(m.outputs)} outputs, got {len(outputs)}")
            for i, (o, s, t) in enumerate(zip(outputs, plan.output_shapes, m.outputs)):
                if (not isinstance(o, torch.Tensor) or tuple(o.shape) != s or o.get_device() != device
                        or o.dtype != out_dtypes[i] or not o.is_contiguous()):
                    raise InvalidArgument(f"output {i} must be a contiguous {t.dtype} tensor of "
                                          f"shape {list(s)} on cuda:{device}")
        index = device  # a CUDA device ordinal (torch allocates on it when given the int)
        mod = self._module(index)
        raw = _current_raw_stream(index) if index == current else None
        if raw is not None and (stream is None or stream.cuda_stream == raw):
            # The common case: torch's current stream, no device or stream
            # switch (each costs microseconds, as does building a Stream).
            self._allocate_and_launch(mod, plan, args, outputs, device, raw)
        else:
            with torch.cuda.device(index):
                if stream is None:
                    stream = torch.cuda.current_stream(index)
                with torch.cuda.stream(stream):
                    self._allocate_and_launch(mod, plan, args, outputs, device, stream.cuda_stream)
        return outputs

    def _allocate_and_launch(self, mod, plan, args, outputs, device, stream: int) -> None:
        """Allocates on torch's current stream, which is `stream` (a raw handle)."""
        import torch
        m = self.manifest
        intermediates = [torch.empty(s, dtype=d, device=device)
                         for s, d in zip(plan.intermediate_shapes, self._dtypes[2])]
        workspaces = []
        for i, (nbytes, (_, zero, keep)) in enumerate(zip(plan.workspace_bytes, m.workspaces)):
            key = (stream, i)
            w = mod.kept.get(key) if keep and zero else None
            if w is not None and w.numel() >= nbytes:
                workspaces.append(w)
            elif keep and zero and not torch.cuda.is_current_stream_capturing():
                # Not while capturing a CUDA graph: memory allocated then
                # belongs to the graph's pool (the graph zeroes its own copy).
                w = torch.zeros(max(nbytes, 1), dtype=torch.uint8, device=device)
                with mod.lock:
                    mod.kept[key] = w
                workspaces.append(w)
            else:
                workspaces.append((torch.zeros if zero else torch.empty)(max(nbytes, 1), dtype=torch.uint8,
                                                                          device=device))
        self._launch(mod, plan, args, outputs, intermediates, workspaces, stream)

    def _recipe(self, mod, plan, index: int) -> list:
        """What launching plan's kernels on device `index` needs besides the
        call's pointers and scalars, made once per plan and device: the
        shared-memory opt-in and the cooperative co-residency check are done
        here, the size arguments are known, and the driver call's leading
        arguments are ready."""
        drv = mod.drv
        recipe = []
        for k_i, (k, (grid, block, smem)) in enumerate(zip(self.manifest.kernels, plan.launches)):
            fn = mod.functions[k_i]

            def what(k=k, grid=grid, block=block, smem=smem):
                return f"kernel {k.name} grid {list(grid)} block {list(block)} smem {smem}"

            if smem > mod.smem_opt_in[k_i]:
                drv.check(drv.cuFuncSetAttribute(fn, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 smem), "cuFuncSetAttribute", what)
                mod.smem_opt_in[k_i] = smem
            if k.cooperative:
                per_sm = _c.c_int()
                drv.check(drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    _c.byref(per_sm), fn, block[0] * block[1] * block[2], smem),
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor", what)
                blocks = grid[0] * grid[1] * grid[2]
                if blocks > per_sm.value * mod.sm_count:
                    raise ResourceExhausted(f"{what()}: a cooperative launch of {blocks} blocks exceeds "
                                            f"the {per_sm.value} x {mod.sm_count} that can be resident")
            sizes, pointers, scalars = [], [], []
            for j, p in enumerate(k.params):
                if p.kind == "scalar":
                    scalars.append((j, p.index))
                elif p.kind == "size":
                    sizes.append((j, plan.symbols[p.symbol] & 0xFFFFFFFFFFFFFFFF))
                else:
                    pointers.append((j, _TENSOR_KINDS.index(p.kind), p.index))
            call = drv.cuLaunchCooperativeKernel if k.cooperative else drv.cuLaunchKernel
            head = (fn, *grid, *block, smem)
            recipe.append((k_i, call, head, k.cooperative, sizes, pointers, scalars, what))
        plan.recipes[index] = recipe
        return recipe

    def _launch(self, mod, plan, args, outputs, intermediates, workspaces, stream: int) -> None:
        recipe = plan.recipes.get(mod.index)
        if recipe is None:
            recipe = self._recipe(mod, plan, mod.index)
        tensors = (args, outputs, intermediates, workspaces)
        for k_i, call, head, cooperative, sizes, pointers, scalars, what in recipe:
            values, params = mod.param_buffers[k_i]
            with mod.lock:
                for j, v in sizes:
                    values[j] = v
                for j, kind, i in pointers:
                    values[j] = tensors[kind][i].data_ptr()
                for j, i in scalars:
                    values[j] = _double_bits(args[i])
                if cooperative:
                    rc = call(*head, stream, params)
                else:
                    rc = call(*head, stream, params, None)
            if rc:
                mod.drv.check(rc, "cuLaunchCooperativeKernel" if cooperative else "cuLaunchKernel", what)


# Kernel parameter kinds that are tensors, in the order _launch passes them.
_TENSOR_KINDS = ("input", "output", "intermediate", "workspace")


def _current_device() -> int:
    """torch's current CUDA device index, without torch.cuda's Python layers
    (its lazy-init check costs microseconds a call)."""
    import torch
    get = getattr(torch._C, "_cuda_getDevice", None)
    return get() if get is not None else torch.cuda.current_device()


def _current_raw_stream(index: int) -> int:
    """torch's current stream on device `index` as a raw handle. torch's own
    binding (what Triton's launcher uses) skips building a Stream object: a
    third of the runtime's host time per launch went to
    torch.cuda.current_stream() (bench/gpu/launch_overhead.py --profile)."""
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(index) if raw is not None else torch.cuda.current_stream(index).cuda_stream


def load(directory: str) -> LoadedFusion:
    """Reads DIRECTORY/manifest.json and its kernel binaries."""
    return LoadedFusion.load(directory)
