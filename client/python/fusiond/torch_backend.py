"""torch.compile(model, backend="fusiond"): fusions of a training step compiled
by fusiond.

Dynamo hands the captured graph to AOTAutograd, which traces the forward and
backward graphs in aten ops (softmax, layer norm, GELU, SiLU and their
gradients decomposed into pointwise ops and reductions). In each graph the
maximal groups of ops fusiond compiles (fusiond.partition: pointwise, casts,
broadcasts, views, reductions, var_mean) become one call each of a
FusionDefinition; matmuls, attention kernels and everything else stay aten
ops. A group is compiled at its first call (fusionc, or the daemon with
FUSIOND_SERVER) and then only launched; a group that cannot be lowered, or
fails to compile or launch, runs its aten ops instead, logged once with the
reason (logger "fusiond.torch_backend"), never failing the step.

PyTorch finds the backend through the `torch_dynamo_backends` entry point of
the installed package; `register()` does the same for a package used from a
checkout. `report()` lists every fused group: its ops, its calls, and why it
fell back if it did.
"""

from __future__ import annotations

import heapq
import logging
import operator
from collections import Counter
from typing import Dict, List, Optional

from .partition import GraphNode, Ref, Unsupported, lower, partition, supported

__all__ = ["fusiond_backend", "register", "report", "reset_report", "FusedGroup"]

log = logging.getLogger("fusiond.torch_backend")

# Decomposed by AOTAutograd so that their pieces can be fused.
_DECOMPOSED = ("_softmax", "_softmax_backward_data", "_log_softmax", "_log_softmax_backward_data",
               "native_layer_norm", "native_layer_norm_backward", "gelu", "gelu_backward", "silu",
               "silu_backward", "sigmoid_backward", "tanh_backward", "threshold_backward", "rsub",
               "mse_loss", "mse_loss_backward", "_fused_rms_norm", "_fused_rms_norm_backward",
               "rms_norm", "hardtanh_backward", "leaky_relu_backward")

_GROUPS: List["FusedGroup"] = []


def _require_dynamo() -> None:
    """torch.compile and Dynamo came with torch 2.0; older torch gets an
    error that says so instead of a missing module."""
    import torch
    if not hasattr(torch, "compile"):
        raise ImportError(f"fusiond's torch.compile backend needs torch 2.0 or later "
                          f"(torch.compile); this torch is {torch.__version__}")


def fusiond_backend(gm, example_inputs, **options):
    """The torch.compile backend (a Dynamo backend function)."""
    _require_dynamo()
    from torch._dynamo.backends.common import aot_autograd

    def fw(g, inputs):
        return _compile_graph(g, "forward")

    def bw(g, inputs):
        return _compile_graph(g, "backward")

    def inference(g, inputs):
        return _compile_graph(g, "inference")

    return aot_autograd(fw_compiler=fw, bw_compiler=bw, inference_compiler=inference,
                        decompositions=_decompositions())(gm, example_inputs)


def register(name: str = "fusiond") -> None:
    """Makes backend=`name` known to torch.compile (the installed package's
    entry point does this without a call)."""
    _require_dynamo()
    import torch._dynamo
    from torch._dynamo.backends import registry
    if name in getattr(registry, "_COMPILER_FNS", {}):
        return
    try:
        torch._dynamo.register_backend(compiler_fn=fusiond_backend, name=name)
    except AssertionError:  # registered meanwhile (the entry point)
        pass


def report() -> List[dict]:
    """Every fused group so far: graph, ops, calls, fallback reason (None
    while it runs in fusiond), the input shapes of its first call, and the
    FusedGroup itself ("group")."""
    return [g.describe() for g in _GROUPS]


def reset_report() -> None:
    _GROUPS.clear()


def _decompositions():
    import torch
    from torch._decomp import get_decompositions
    aten = torch.ops.aten
    return get_decompositions([getattr(aten, n) for n in _DECOMPOSED if hasattr(aten, n)])


# ----------------------------------------------------------------------------
# torch.fx graph <-> plain data.

def _target_name(node) -> str:
    if node.target is operator.getitem:
        return "operator.getitem"
    return str(node.target)


def _tensor_meta(val):
    """(shape, dtype name) of a FakeTensor; dtype "<dtype>@<device>" off CUDA;
    (None, None) for a non-tensor. A symbolic extent (dynamic shapes) is -1:
    such groups are lowered at each new input signature (FusedGroup)."""
    import torch
    if not isinstance(val, torch.Tensor):
        return None, None
    # Never int() a SymInt: that would specialize the graph on its value.
    shape = tuple(s if isinstance(s, int) else -1 for s in val.shape)
    dtype = str(val.dtype).replace("torch.", "")
    if val.device.type != "cuda":
        dtype = f"{dtype}@{val.device.type}"
    return shape, dtype


class _Opaque:
    """An argument fusiond does not read (a SymInt, an object)."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return f"<{self.what}>"


def _graph_nodes(graph):
    import torch
    fx_nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(fx_nodes)}

    def conv(a):
        if isinstance(a, torch.fx.Node):
            return Ref(index[a])
        if isinstance(a, (list, tuple)):
            return type(a)(conv(x) for x in a)
        if isinstance(a, torch.dtype):
            return str(a).replace("torch.", "")
        if a is None or isinstance(a, (bool, int, float, str)):
            return a
        if isinstance(a, (torch.device, torch.memory_format, torch.layout)):
            return str(a)
        return _Opaque(type(a).__name__)

    nodes = []
    for n in fx_nodes:
        kind = {"placeholder": "placeholder", "output": "output"}.get(n.op, "call")
        if n.op in ("get_attr", "call_module", "call_method"):
            kind = "other"
        val = n.meta.get("val")
        g = GraphNode(kind, _target_name(n) if kind == "call" else n.op, conv(tuple(n.args)),
                      {k: conv(v) for k, v in n.kwargs.items()}, name=n.name)
        if isinstance(val, (list, tuple)) and kind == "call":
            metas = [_tensor_meta(v) for v in val]
            if all(s is not None for s, _ in metas):
                g.outputs = metas
            else:
                g.dtype = "tuple"
        else:
            g.shape, g.dtype = _tensor_meta(val)
        nodes.append(g)
    return fx_nodes, nodes


def _supported_fx(nodes, i) -> Optional[str]:
    why = supported(nodes, i)
    if why is None:
        n = nodes[i]
        for a in list(n.args) + list(n.kwargs.values()):
            for x in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(x, _Opaque):
                    return f"an argument fusiond does not read ({x.what})"
    return why


# ----------------------------------------------------------------------------
# Rewriting a graph: each group becomes one call of a FusedGroup.

class FusedGroup:
    """A group of aten ops run as one fusion; its aten ops (`fallback`, a
    GraphModule) run instead when the fusion cannot. A group with symbolic
    extents (`lazy`: the graph's nodes, the members, each input node's
    argument position) is lowered again for each input signature, its
    extents read from the fallback run on meta tensors."""

    def __init__(self, name, graph, lowered, fallback, take, ops, lazy=None):
        self.name = name
        self.graph = graph
        self.fd = lowered.fd if lowered else None
        self.sources = lowered.sources if lowered else None
        self.take = take          # positions of the fusion's inputs among the call's arguments
        self.fallback = fallback
        self.ops = ops
        self.lazy = lazy
        self.fusion = None        # static groups: the LoadedFusion, after the first call
        self.by_signature: Dict[tuple, tuple] = {}
        self.calls = 0
        self.fallback_reason: Optional[str] = None
        self.first_inputs = None  # (shape, dtype) of each argument at the first call

    def _lower_for(self, args):
        """(fd, sources, take) for these arguments' shapes (symbolic groups)."""
        key = tuple((tuple(a.shape), a.dtype) if hasattr(a, "shape") else type(a) for a in args)
        found = self.by_signature.get(key)
        if found is None:
            nodes, members, position = self.lazy
            concrete = _concrete_nodes(self.fallback, nodes, members, position, args)
            lowered = lower(concrete, members)
            found = (lowered.fd, lowered.sources, [position[i] for i in lowered.inputs])
            self.by_signature[key] = found
        self.fd, self.sources, self.take = found
        return found

    def __call__(self, *args):
        if self.fallback_reason is None:
            if self.first_inputs is None:
                self.first_inputs = [(tuple(a.shape), a.dtype) if hasattr(a, "shape") else a
                                     for a in args]
            try:
                inputs = [args[k] for k in self.take] if self.lazy is None else None
                if inputs is None:
                    self._lower_for(args)
                    outs = self.fd.execute([args[k] for k in self.take])
                else:  # static shapes (Dynamo guards them): the compiled fusion directly
                    if self.fusion is None:
                        self.fusion = self.fd.compiled_for(inputs)
                    outs = self.fusion.run(inputs)
            except Exception as e:  # noqa: BLE001 - any failure falls back, logged
                self.fallback_reason = f"{type(e).__name__}: {e}"
                log.warning("fusiond: %s (%s graph, %d ops) runs as aten ops: %s", self.name,
                            self.graph, len(self.ops), self.fallback_reason)
            else:
                self.calls += 1
                return tuple(outs[k] if kind == "fusion" else args[self.take[k]]
                             for kind, k in self.sources)
        return tuple(self.fallback(*args))

    def describe(self) -> dict:
        return {"name": self.name, "graph": self.graph, "ops": list(self.ops), "calls": self.calls,
                "fallback": self.fallback_reason, "first_inputs": self.first_inputs,
                "symbolic": self.lazy is not None,
                "definition": self.fd.definition_text() if self.fd else None, "group": self}


def _concrete_nodes(fallback, nodes, members, position, args):
    """A copy of `nodes` with the group's members and inputs at the shapes
    these arguments give (the fallback GraphModule run on meta tensors)."""
    import copy

    import torch
    meta = [torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device="meta")
            if isinstance(a, torch.Tensor) else a for a in args]
    seen = {}

    class Shapes(torch.fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            seen[n.name] = result
            return result

    Shapes(fallback).run(*meta)
    out = list(nodes)
    for i in list(members) + list(position):
        n = copy.copy(nodes[i])
        val = args[position[i]] if i in position else seen[n.name]
        if isinstance(val, (list, tuple)):
            n.outputs = [(tuple(v.shape), str(v.dtype).replace("torch.", "")) for v in val]
        else:
            n.shape = tuple(val.shape)
        out[i] = n
    return out


def _fallback_module(fx_nodes, members, inputs, outputs):
    """The group's own aten ops as a GraphModule (inputs -> tuple of outputs)."""
    import torch
    sub = torch.fx.Graph()
    env = {}
    for n in inputs:
        p = sub.placeholder(n.name)
        p.meta = dict(n.meta)
        env[n] = p
    for n in members:
        env[n] = sub.node_copy(n, lambda x: env[x])
    outs = [env[n] if k is None else sub.call_function(operator.getitem, (env[n], k))
            for n, k in outputs]
    sub.output(tuple(outs))
    return torch.fx.GraphModule(torch.nn.Module(), sub)


def _topo_sort(gm) -> None:
    """Reorders gm's graph topologically, keeping the original order where
    it is free (a fused call sits after its group's last op, while some of
    its outputs' readers came earlier)."""
    import torch
    old = list(gm.graph.nodes)
    order = {n: i for i, n in enumerate(old)}
    waiting = {n: len(set(n.all_input_nodes)) for n in old}
    ready = [(order[n], n.name) for n in old if waiting[n] == 0]
    by_name = {n.name: n for n in old}
    heapq.heapify(ready)
    new, env = torch.fx.Graph(owning_module=gm), {}
    new._codegen = gm.graph._codegen
    output = None
    while ready:
        _, name = heapq.heappop(ready)
        n = by_name[name]
        if n.op == "output":
            output = n
        else:
            env[n] = new.node_copy(n, lambda x: env[x])
        for u in n.users:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (order[u], u.name))
    if output is None or len(env) != len(old) - 1:
        raise RuntimeError("fusiond: the rewritten graph has a cycle")
    new.node_copy(output, lambda x: env[x])
    gm.graph = new


def _compile_graph(gm, which: str):
    from functorch.compile import make_boxed_func
    saved, known = _copy_graph(gm.graph), len(_GROUPS)
    try:
        _fuse(gm, which)
    except Exception as e:  # noqa: BLE001 - the graph runs as aten ops
        log.warning("fusiond: the %s graph runs as aten ops: %s: %s", which, type(e).__name__, e)
        del _GROUPS[known:]
        gm.graph = saved
        gm.recompile()
    return make_boxed_func(gm.forward)


def _copy_graph(graph):
    import torch
    new = torch.fx.Graph()
    new.output(new.graph_copy(graph, {}))
    new._codegen = graph._codegen
    return new


def _fuse(gm, which: str) -> None:
    known = len(_GROUPS)
    fx_nodes, nodes = _graph_nodes(gm.graph)
    reasons = Counter()
    for i, n in enumerate(nodes):
        if n.kind == "call":
            why = _supported_fx(nodes, i)
            if why is not None:
                reasons[why] += 1
    groups = partition(nodes, lambda i: nodes[i].kind == "call" and _supported_fx(nodes, i) is None)
    fused_ops = 0
    replaced: Dict = {}  # a fused op's node -> the node now giving its value
    for members in groups:
        if len(members) < MIN_GROUP_OPS:
            reasons["a lone op (nothing to fuse; aten launches it for less host time)"] += 1
            continue
        name = f"fusiond_{which}_{len(_GROUPS)}"
        try:
            lowered = None if _symbolic(nodes, members) else lower(nodes, members)
        except Exception as e:  # noqa: BLE001 - Unsupported, or our bug: the group stays aten
            level = logging.INFO if isinstance(e, Unsupported) else logging.WARNING
            log.log(level, "fusiond: a group of %d ops in the %s graph stays aten: %s: %s",
                    len(members), which, type(e).__name__, e)
            continue
        _replace(gm, fx_nodes, nodes, members, lowered, name, which, replaced)
        fused_ops += len(members)
    # Ordered first: a fused call sits after its group's last op, and torch's
    # dead-code elimination lints (fails on) a graph out of order.
    _topo_sort(gm)
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    n_calls = sum(1 for n in nodes if n.kind == "call")
    log.info("fusiond: %s graph: %d of %d ops in %d fusions; as aten: %s", which, fused_ops, n_calls,
             len(_GROUPS) - known, dict(reasons.most_common(8)))


# Groups smaller than this stay aten: one op gains no memory traffic from a
# fusion and costs our launch path's host time (20-30 us a call on the
# transformer example against aten's few).
MIN_GROUP_OPS = 2


def _symbolic(nodes, members) -> bool:
    """Whether a member or an input of the group has a symbolic extent."""
    from .partition import _inputs_of
    involved = set(members)
    for i in members:
        involved.update(_inputs_of(nodes[i]))
    for i in involved:
        n = nodes[i]
        shapes = [s for s, _ in n.outputs] if n.outputs else [n.shape or ()]
        if any(d < 0 for s in shapes for d in s):
            return True
    return False


def _replace(gm, fx_nodes, nodes, members, lowered, name, which, replaced) -> None:
    from .partition import _inputs_of, group_outputs
    member_fx = [fx_nodes[i] for i in members]
    inside = set(member_fx)
    inputs = []
    for n in member_fx:
        for a in n.all_input_nodes:
            if a not in inside and a not in inputs:
                inputs.append(a)
    # Each input node of the group (original numbering) -> its argument position.
    position = {}
    for i in members:
        for j in _inputs_of(nodes[i]):
            if j not in members:
                position[j] = inputs.index(replaced.get(fx_nodes[j], fx_nodes[j]))
    take = [position[i] for i in lowered.inputs] if lowered else None
    outputs = [(fx_nodes[i], k) for i, k in group_outputs(nodes, members)]
    fallback = _fallback_module(fx_nodes, member_fx, inputs, outputs)
    lazy = None if lowered else (nodes, list(members), position)
    group = FusedGroup(name, which, lowered, fallback, take, [nodes[i].target for i in members], lazy)
    setattr(gm, name, _GroupModule(group))
    graph = gm.graph
    with graph.inserting_after(member_fx[-1]):
        call = graph.call_module(name, tuple(inputs))
    for k, (n, elem) in enumerate(outputs):
        with graph.inserting_after(call):
            item = graph.call_function(operator.getitem, (call, k))
        if elem is None:
            replaced[n] = item
            for u in list(n.users):
                if u not in inside:
                    u.replace_input_with(n, item)
        else:
            for u in list(n.users):
                if u not in inside and u.target is operator.getitem and u.args[1] == elem:
                    replaced[u] = item
                    u.replace_all_uses_with(item)
    for n in reversed(member_fx):
        if not n.users:
            graph.erase_node(n)
    _GROUPS.append(group)


def _group_module_class():
    import torch

    class GroupModule(torch.nn.Module):
        def __init__(self, group):
            super().__init__()
            self.group = group

        def forward(self, *args):
            return self.group(*args)

    return GroupModule


_GROUP_MODULE = None


def _GroupModule(group):
    global _GROUP_MODULE
    if _GROUP_MODULE is None:
        _GROUP_MODULE = _group_module_class()
    return _GROUP_MODULE(group)
