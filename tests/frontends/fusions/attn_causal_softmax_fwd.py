# Attention scores without a fused attention kernel: scale by 1/sqrt(d),
# causal mask from two iotas (row >= column), masked_fill with -inf, softmax
# over the last axis in float, probabilities back in bf16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id11(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    S2 = fd.define_scalar(0.0883883, dtype=DataType.Double)
    T3 = fd.ops.mul(T1, S2)
    S4 = fd.define_scalar(1024, dtype=DataType.Int)
    S5 = fd.define_scalar(0, dtype=DataType.Int)
    S6 = fd.define_scalar(1, dtype=DataType.Int)
    T7 = fd.ops.iota(S4, S5, S6, dtype=DataType.Int)
    T8 = fd.ops.broadcast_in_dim(T7, shape=[1024, 1024], broadcast_dims=[0])
    T9 = fd.ops.iota(S4, S5, S6, dtype=DataType.Int)
    T10 = fd.ops.broadcast_in_dim(T9, shape=[1024, 1024], broadcast_dims=[1])
    T11 = fd.ops.ge(T8, T10)
    T12 = fd.ops.broadcast_in_dim(T11, shape=[4, 16, 1024, 1024], broadcast_dims=[2, 3])
    S13 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
    T14 = fd.ops.where(T12, T3, S13)
    T15 = fd.ops.max(T14, dims=[3], keepdim=False, dtype=DataType.Null)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[4, 16, 1024, 1], broadcast_dims=[0, 1, 2])
    T17 = fd.ops.broadcast_in_dim(T16, shape=[4, 16, 1024, 1024], broadcast_dims=[0, 1, 2, 3])
    T18 = fd.ops.sub(T14, T17)
    T19 = fd.ops.exp(T18)
    T20 = fd.ops.sum(T19, dims=[3], keepdim=False, dtype=DataType.Null)
    T21 = fd.ops.broadcast_in_dim(T20, shape=[4, 16, 1024, 1], broadcast_dims=[0, 1, 2])
    T22 = fd.ops.broadcast_in_dim(T21, shape=[4, 16, 1024, 1024], broadcast_dims=[0, 1, 2, 3])
    T23 = fd.ops.div(T19, T22)
    T24 = fd.ops.cast(T23, dtype=DataType.BFloat16)
    fd.add_output(T24)


with FusionDefinition() as fd:
    nvfuser_fusion_id11(fd)

inputs = [
    torch.testing.make_tensor((4, 16, 1024, 1024), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
