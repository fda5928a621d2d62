# Group norm forward as front ends print it: x [N, C, H, W] bf16 reshaped to
# [N, G, C/G, H, W] (G = 32; C/G a size expression), mean and variance over
# (C/G, H, W), normalized, reshaped back and scaled and shifted per channel.
# Inputs: T0 x [N, C, H, W] bf16, T1 weight [C] bf16, T2 bias [C] bf16.
# Outputs: y [N, C, H, W] bf16, mean [N, G] float, rstd [N, G] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    S4 = fd.define_scalar(32, dtype=DataType.Int)
    S5 = fd.ops.div(T0.size(1), S4)
    T6 = fd.ops.reshape(T3, new_shape=[T0.size(0), S4, S5, T0.size(2), T0.size(3)])
    T7, T8 = fd.ops.var_mean(T6, dims=[2, 3, 4], correction=0, keepdim=False)
    S9 = fd.define_scalar(1e-05, dtype=DataType.Double)
    T10 = fd.ops.rsqrt(fd.ops.add(T7, S9))
    V11 = fd.define_vector([T0.size(0), S4, 1, 1, 1], dtype=DataType.Int)
    T12 = fd.ops.broadcast_in_dim(T8, shape=V11, broadcast_dims=[0, 1])
    T13 = fd.ops.broadcast_in_dim(T10, shape=V11, broadcast_dims=[0, 1])
    T14 = fd.ops.mul(fd.ops.sub(T6, T12), T13)
    T15 = fd.ops.reshape(T14, new_shape=T0.shape())
    T16 = fd.ops.broadcast_in_dim(fd.ops.cast(T1, dtype=DataType.Float), shape=[1, T0.size(1), 1, 1], broadcast_dims=[1])
    T17 = fd.ops.broadcast_in_dim(fd.ops.cast(T2, dtype=DataType.Float), shape=[1, T0.size(1), 1, 1], broadcast_dims=[1])
    T18 = fd.ops.add(fd.ops.mul(T15, T16), T17)
    fd.add_output(fd.ops.cast(T18, dtype=DataType.BFloat16))
    fd.add_output(T8)
    fd.add_output(T10)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((32, 256, 28, 28), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((256,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((256,), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
