# Positions made by fd.ops.iota as rotary embeddings make them: the column
# index times an inverse frequency, its cos and sin applied to the input;
# the positions themselves (int64 and float) are outputs too.
# Inputs: T0 x [M, N] bf16.
# Outputs: y [M, N] bf16, positions [N] int64, scaled positions [N] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.iota(T0.size(1), dtype=DataType.Int)
    T2 = fd.ops.iota(T0.size(1), 0.0, 0.001, dtype=DataType.Float)
    T3 = fd.ops.broadcast_in_dim(T2, shape=T0.shape(), broadcast_dims=[1])
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    T5 = fd.ops.add(fd.ops.mul(T4, fd.ops.cos(T3)), fd.ops.sin(T3))
    fd.add_output(fd.ops.cast(T5, dtype=DataType.BFloat16))
    fd.add_output(T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
