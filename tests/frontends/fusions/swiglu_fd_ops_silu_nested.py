# SwiGLU as nvFuser's own transformer tests write it by hand: nested calls
# (fd.ops.mul(fd.ops.silu(gate), up)) on fp16 [tokens, 4 * hidden] halves,
# nvFuser's silu op computing in float and rounding once; a second output
# takes silu of an explicit float cast times a Python float literal.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id32(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    T2 = fd.ops.mul(fd.ops.silu(T0), T1)
    T3 = fd.ops.cast(fd.ops.mul(fd.ops.silu(fd.ops.cast(T0, dtype=DataType.Float)), 0.5), dtype=DataType.Half)
    fd.add_output(T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id32(fd)

inputs = [
    torch.randn((4096, 14336), dtype=torch.float16, device='cuda:0'),
    torch.randn((4096, 14336), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
