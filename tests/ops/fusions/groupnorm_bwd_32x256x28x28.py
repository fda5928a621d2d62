# Group norm backward as front ends print it: the saved mean and rstd [N, G]
# (G = 32) normalize x reshaped to [N, G, C/G, H, W]; the weight and bias
# gradients sum over (N, H, W) per channel, the input gradient reduces over
# (C/G, H, W) per group and is reshaped back to [N, C, H, W].
# Inputs: T0 grad_out [N, C, H, W] bf16, T1 x [N, C, H, W] bf16,
# T2 mean [N, G] float, T3 rstd [N, G] float, T4 weight [C] bf16.
# Outputs: grad_in [N, C, H, W] bf16, grad_weight [C] bf16, grad_bias [C] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T3 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    S5 = fd.define_scalar(32, dtype=DataType.Int)
    S6 = fd.ops.div(T1.size(1), S5)
    V7 = fd.define_vector([T1.size(0), S5, S6, T1.size(2), T1.size(3)], dtype=DataType.Int)
    T8 = fd.ops.cast(T0, dtype=DataType.Float)
    T9 = fd.ops.cast(T1, dtype=DataType.Float)
    T10 = fd.ops.reshape(T9, new_shape=V7)
    V11 = fd.define_vector([T1.size(0), S5, 1, 1, 1], dtype=DataType.Int)
    T12 = fd.ops.broadcast_in_dim(T2, shape=V11, broadcast_dims=[0, 1])
    T13 = fd.ops.broadcast_in_dim(T3, shape=V11, broadcast_dims=[0, 1])
    T14 = fd.ops.mul(fd.ops.sub(T10, T12), T13)
    T15 = fd.ops.reshape(T14, new_shape=T1.shape())
    T16 = fd.ops.sum(T8, dims=[0, 2, 3], keepdim=False, dtype=DataType.Float)
    T17 = fd.ops.sum(fd.ops.mul(T8, T15), dims=[0, 2, 3], keepdim=False, dtype=DataType.Float)
    T18 = fd.ops.broadcast_in_dim(fd.ops.cast(T4, dtype=DataType.Float), shape=[1, T1.size(1), 1, 1], broadcast_dims=[1])
    T19 = fd.ops.mul(T8, T18)
    T20 = fd.ops.reshape(T19, new_shape=V7)
    T21 = fd.ops.sum(T20, dims=[2, 3, 4], keepdim=True, dtype=DataType.Float)
    T22 = fd.ops.sum(fd.ops.mul(T20, T14), dims=[2, 3, 4], keepdim=True, dtype=DataType.Float)
    S23 = fd.ops.mul(fd.ops.mul(S6, T1.size(2)), T1.size(3))
    S24 = fd.ops.reciprocal(S23)
    T25 = fd.ops.mul(T21, S24)
    T26 = fd.ops.mul(fd.ops.mul(T14, T22), S24)
    T27 = fd.ops.mul(fd.ops.sub(fd.ops.sub(T20, T25), T26), T13)
    T28 = fd.ops.reshape(T27, new_shape=T1.shape())
    fd.add_output(fd.ops.cast(T28, dtype=DataType.BFloat16))
    fd.add_output(fd.ops.cast(T17, dtype=DataType.BFloat16))
    fd.add_output(fd.ops.cast(T16, dtype=DataType.BFloat16))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((32, 256, 28, 28), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((32, 256, 28, 28), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((32, 32), dtype=torch.float32, device="cuda:0"),
    torch.rand((32, 32), dtype=torch.float32, device="cuda:0"),
    torch.randn((256,), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
