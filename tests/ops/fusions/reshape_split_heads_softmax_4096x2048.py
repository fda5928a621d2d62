# A split of a symbolic axis by a size expression: x [M, D] bf16 reshaped to
# [M, 16, D / 16] (attention heads), a softmax over each head's D / 16
# values, reshaped back to [M, D].
# Inputs: T0 x [M, D] bf16. Outputs: y [M, D] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    S1 = fd.define_scalar(16, dtype=DataType.Int)
    S2 = fd.ops.div(T0.size(1), S1)
    T3 = fd.ops.reshape(T0, new_shape=[T0.size(0), S1, S2])
    T4 = fd.ops.cast(T3, dtype=DataType.Float)
    T5 = fd.ops.max(T4, dims=[2], keepdim=False, dtype=DataType.Float)
    T6 = fd.ops.broadcast_in_dim(T5, shape=[T0.size(0), S1, S2], broadcast_dims=[0, 1])
    T7 = fd.ops.exp(fd.ops.sub(T4, T6))
    T8 = fd.ops.sum(T7, dims=[2], keepdim=False, dtype=DataType.Float)
    T9 = fd.ops.broadcast_in_dim(T8, shape=[T0.size(0), S1, S2], broadcast_dims=[0, 1])
    T10 = fd.ops.div(T7, T9)
    T11 = fd.ops.reshape(T10, new_shape=[T0.size(0), T0.size(1)])
    fd.add_output(fd.ops.cast(T11, dtype=DataType.BFloat16))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((4096, 2048), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
