# BERT/GPT output path: bias add, dropout (uniform < keep, scaled by
# 1/keep, seed and offset as scalar inputs), residual add, LayerNorm with
# var_mean; outputs the normalized bf16 tensor, the residual stream, the
# dropout mask and mean / rstd for the backward.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id6(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    S5 = fd.define_scalar(None, dtype=DataType.Int)
    S6 = fd.define_scalar(None, dtype=DataType.Int)
    T7 = fd.ops.cast(T0, dtype=DataType.Float)
    T8 = fd.ops.cast(T1, dtype=DataType.Float)
    T9 = fd.ops.broadcast_in_dim(T8, shape=[8192, 1024], broadcast_dims=[1])
    T10 = fd.ops.add(T7, T9)
    S11 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S12 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T13 = fd.ops.uniform(S11, S12, shape=[8192, 1024], rng_seed=S5, rng_offset=S6, dtype=DataType.Float)
    S14 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T15 = fd.ops.lt(T13, S14)
    T16 = fd.ops.cast(T15, dtype=DataType.Float)
    T17 = fd.ops.mul(T10, T16)
    S18 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T19 = fd.ops.mul(T17, S18)
    T20 = fd.ops.cast(T2, dtype=DataType.Float)
    T21 = fd.ops.add(T19, T20)
    T22, T23 = fd.ops.var_mean(T21, dims=[1], correction=0, keepdim=False)
    T24 = fd.ops.broadcast_in_dim(T22, shape=[8192, 1], broadcast_dims=[0])
    T25 = fd.ops.broadcast_in_dim(T23, shape=[8192, 1], broadcast_dims=[0])
    S26 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T27 = fd.ops.add(T24, S26)
    T28 = fd.ops.rsqrt(T27)
    T29 = fd.ops.broadcast_in_dim(T25, shape=[8192, 1024], broadcast_dims=[0, 1])
    T30 = fd.ops.sub(T21, T29)
    T31 = fd.ops.broadcast_in_dim(T28, shape=[8192, 1024], broadcast_dims=[0, 1])
    T32 = fd.ops.mul(T30, T31)
    T33 = fd.ops.cast(T3, dtype=DataType.Float)
    T34 = fd.ops.broadcast_in_dim(T33, shape=[8192, 1024], broadcast_dims=[1])
    T35 = fd.ops.mul(T32, T34)
    T36 = fd.ops.cast(T4, dtype=DataType.Float)
    T37 = fd.ops.broadcast_in_dim(T36, shape=[8192, 1024], broadcast_dims=[1])
    T38 = fd.ops.add(T35, T37)
    T39 = fd.ops.cast(T38, dtype=DataType.BFloat16)
    T40 = fd.ops.cast(T21, dtype=DataType.BFloat16)
    fd.add_output(T39)
    fd.add_output(T40)
    fd.add_output(T15)
    fd.add_output(T25)
    fd.add_output(T28)


with FusionDefinition() as fd:
    nvfuser_fusion_id6(fd)

inputs = [
    torch.testing.make_tensor((8192, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1024,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1024,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1024,), dtype=torch.bfloat16, device='cuda:0'),
    20261205,
    4096,
]
fd.execute(inputs)
