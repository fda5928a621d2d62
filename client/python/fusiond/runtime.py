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
manifest and expression code (fusiond/manifest.py) works without it.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import sys
import threading
from typing import Dict, Optional, Sequence

# The manifest half (fusiond/manifest.py), re-exported: callers and tests use
# runtime.Expr, runtime.parse_manifest, runtime.plan_launch and the errors.
from .manifest import (ELEMENT_SIZE, Expr, FailedPrecondition, FusionError,  # noqa: F401
                       InvalidArgument, LaunchPlan, Manifest, NotFound, ResourceExhausted,
                       Unavailable, parse_manifest, plan_launch)

__all__ = [
    "FusionError", "InvalidArgument", "Unavailable", "NotFound", "ResourceExhausted",
    "FailedPrecondition",
    "Expr", "Manifest", "parse_manifest", "LaunchPlan", "plan_launch", "LoadedFusion", "load",
]


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
        for fp8 in ("float8_e4m3fn", "float8_e5m2"):  # torch >= 2.1
            if hasattr(torch, fp8):
                _TORCH_DTYPES[fp8] = getattr(torch, fp8)
    return _TORCH_DTYPES[name]


def scalar_argument(spec, index: int, x) -> float:
    """The double a kernel gets for scalar input `index` (manifest input
    `spec`): a number as is; a one-element tensor's value (x.item()); where
    the manifest says cpu_tensor, a tensor must be 0-dim, on the CPU and of
    the input's dtype (nvFuser's is_cpu=True scalars)."""
    if isinstance(x, (bool, int, float)):
        return float(x)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        who = f"input {spec.name} (index {index})"
        if spec.cpu_tensor:
            if x.dim() != 0 or x.device.type != "cpu":
                raise InvalidArgument(f"{who} is a 0-dim CPU tensor in the fusion, got shape "
                                      f"{tuple(x.shape)} on {x.device}")
            if x.dtype != _torch_dtype(spec.dtype):
                raise InvalidArgument(f"{who} is {x.dtype}, the fusion wants {spec.dtype}")
        elif x.numel() != 1:
            raise InvalidArgument(f"{who} is a scalar, got a tensor of shape {tuple(x.shape)}")
        return float(x.item())
    what = "a number or a 0-dim CPU tensor" if spec.cpu_tensor else "a number"
    raise InvalidArgument(f"input {spec.name} (index {index}) must be {what}")


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
        # The pointer alignment (bytes) the kernels need of each input and
        # output (params' "align"), and the kernel asking.
        self._input_align = [b for b, _ in manifest.required_alignments("input")]
        self._output_align = manifest.required_alignments("output")

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
        device). `outputs`: preallocated dense tensors to write into, aligned
        as the kernels need (InvalidArgument otherwise). Inputs that are not
        contiguous, or not aligned as the kernels need, are copied first.
        FailedPrecondition (nothing launched) when the input shapes break a
        kernel's "requires"."""
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
        copies = None  # inputs to copy (non-contiguous or misaligned), once the plan is made
        for i, (spec, x) in enumerate(zip(m.inputs, inputs)):
            if spec.scalar:
                args.append(scalar_argument(spec, i, x))
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
            align = self._input_align[i]
            if not x.is_contiguous() or (align > 1 and x.data_ptr() % align):
                if copies is None:
                    copies = []
                copies.append(i)
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
                align, kernel = self._output_align[i]
                if align > 1:
                    ptr = o.data_ptr()
                    if ptr % align:
                        raise InvalidArgument(f"output {i} at 0x{ptr:x} is not {align}-byte aligned, "
                                              f"which kernel {kernel} needs")
        if copies is not None:
            # A fresh, dense buffer from torch's allocator (aligned to far more
            # than the 256 bytes "align" may ask), as the kernels need.
            for i in copies:
                args[i] = args[i].clone(memory_format=torch.contiguous_format)
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
