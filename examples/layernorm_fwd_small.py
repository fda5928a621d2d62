# A small static LayerNorm forward over the last axis of a [32, 64] input:
# mean and variance from var_mean, rstd = rsqrt(var + eps), then scale and
# shift. Outputs the normalized bf16 result and the saved mean and rstd.
# Inputs: T0 x [32, 64] bf16, T1 weight [64] bf16, T2 bias [64] bf16.
# Outputs: y [32, 64] bf16, mean [32, 1] float, rstd [32, 1] float.
import torch
from nvfuser import FusionDefinition, DataType


def layernorm_fwd_small(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[32, 64], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[64], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[64], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4, T5 = fd.ops.var_mean(T3, dims=[1], correction=0, keepdim=True)
    S6 = fd.define_scalar(1e-05, dtype=DataType.Double)
    T7 = fd.ops.add(T4, S6)
    T8 = fd.ops.rsqrt(T7)
    T9 = fd.ops.broadcast_in_dim(T5, shape=[32, 64], broadcast_dims=[0, 1])
    T10 = fd.ops.broadcast_in_dim(T8, shape=[32, 64], broadcast_dims=[0, 1])
    T11 = fd.ops.sub(T3, T9)
    T12 = fd.ops.mul(T11, T10)
    T13 = fd.ops.broadcast_in_dim(fd.ops.cast(T1, dtype=DataType.Float), shape=[32, 64], broadcast_dims=[1])
    T14 = fd.ops.broadcast_in_dim(fd.ops.cast(T2, dtype=DataType.Float), shape=[32, 64], broadcast_dims=[1])
    T15 = fd.ops.add(fd.ops.mul(T12, T13), T14)
    T16 = fd.ops.cast(T15, dtype=DataType.BFloat16)
    fd.add_output(T16)
    fd.add_output(T5)
    fd.add_output(T8)


with FusionDefinition() as fd:
    layernorm_fwd_small(fd)

inputs = [
    torch.randn((32, 64), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((64,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((64,), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
