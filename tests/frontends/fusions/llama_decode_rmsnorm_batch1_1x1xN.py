# Token-by-token decoding: LLaMA's residual add + RMSNorm on ONE token, a
# [1, 1, 4096] bf16 hidden state (batch 1, sequence 1): a single row, so
# the whole fusion is one reduction over 4096 elements; Thunder's static
# print with squeeze-free [1, 1, N] shapes, residual stream an output.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id20(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[1, 1, 4096], contiguity=[None, None, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[1, 1, 4096], contiguity=[None, None, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T1, dtype=DataType.Float)
    T5 = fd.ops.add(T3, T4)
    T6 = fd.ops.cast(T5, dtype=DataType.BFloat16)
    T7 = fd.ops.cast(T6, dtype=DataType.Float)
    T8 = fd.ops.mul(T7, T7)
    T9 = fd.ops.sum(T8, dims=[2], keepdim=False, dtype=DataType.Null)
    T10 = fd.ops.broadcast_in_dim(T9, shape=[1, 1, 1], broadcast_dims=[0, 1])
    S11 = fd.define_scalar(4096.00, dtype=DataType.Double)
    T12 = fd.ops.div(T10, S11)
    S13 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T14 = fd.ops.add(T12, S13)
    T15 = fd.ops.rsqrt(T14)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[1, 1, 4096], broadcast_dims=[0, 1, 2])
    T17 = fd.ops.mul(T7, T16)
    T18 = fd.ops.broadcast_in_dim(T2, shape=[1, 1, 4096], broadcast_dims=[2])
    T19 = fd.ops.cast(T18, dtype=DataType.Float)
    T20 = fd.ops.mul(T17, T19)
    T21 = fd.ops.cast(T20, dtype=DataType.BFloat16)
    fd.add_output(T6)
    fd.add_output(T21)


with FusionDefinition() as fd:
    nvfuser_fusion_id20(fd)

inputs = [
    torch.testing.make_tensor((1, 1, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1, 1, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
