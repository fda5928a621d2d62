# Gemma 2 logit soft-capping: attention scores capped at 50 before the
# softmax (tanh(x / 50) * 50 on [B, H, S, S], then the softmax over keys
# with the sliding-window mask an additive bf16 input [1, 1, S, S]) and the
# final logits capped at 30 are separate fusions in the model; this one is
# the attention half, 4-D static shapes, bf16 in and out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id8(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2, 8, 1024, 1024], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[1, 1, 1024, 1024], contiguity=[None, None, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    S3 = fd.define_scalar(50.0000, dtype=DataType.Double)
    T4 = fd.ops.div(T2, S3)
    T5 = fd.ops.tanh(T4)
    T6 = fd.ops.mul(T5, S3)
    T7 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T7, shape=[2, 8, 1024, 1024], broadcast_dims=[0, 1, 2, 3])
    T9 = fd.ops.add(T6, T8)
    T10 = fd.ops.max(T9, dims=[3], keepdim=False, dtype=DataType.Null)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[2, 8, 1024, 1], broadcast_dims=[0, 1, 2])
    T12 = fd.ops.broadcast_in_dim(T11, shape=[2, 8, 1024, 1024], broadcast_dims=[0, 1, 2, 3])
    T13 = fd.ops.sub(T9, T12)
    T14 = fd.ops.exp(T13)
    T15 = fd.ops.sum(T14, dims=[3], keepdim=False, dtype=DataType.Null)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[2, 8, 1024, 1], broadcast_dims=[0, 1, 2])
    T17 = fd.ops.broadcast_in_dim(T16, shape=[2, 8, 1024, 1024], broadcast_dims=[0, 1, 2, 3])
    T18 = fd.ops.div(T14, T17)
    T19 = fd.ops.cast(T18, dtype=DataType.BFloat16)
    fd.add_output(T19)


with FusionDefinition() as fd:
    nvfuser_fusion_id8(fd)

inputs = [
    torch.testing.make_tensor((2, 8, 1024, 1024), dtype=torch.bfloat16, device='cuda:0', low=-200, high=200),
    torch.testing.make_tensor((1, 1, 1024, 1024), dtype=torch.bfloat16, device='cuda:0', low=-4, high=0),
]
fd.execute(inputs)
