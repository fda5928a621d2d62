# QK-norm (OLMo 2, Qwen3, Gemma 3): the query projection [B, S, H * D]
# split into heads with fd.ops.reshape, RMSNorm over the head dimension D
# (a per-head weight [D]), then permuted to [B, H, S, D] for attention;
# Thunder's static print, bf16 in and out. One inner persistent kernel: the
# rows of D stay contiguous, the permute moves where each row is written.
# expect: compiles
# small: 2048->64
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id19(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2, 2048, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[128], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.reshape(T0, new_shape=[2, 2048, 32, 128])
    T3 = fd.ops.cast(T2, dtype=DataType.Float)
    S4 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T5 = fd.ops.pow(T3, S4)
    T6 = fd.ops.sum(T5, dims=[3], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, shape=[2, 2048, 32, 1], broadcast_dims=[0, 1, 2])
    S8 = fd.define_scalar(128.000, dtype=DataType.Double)
    T9 = fd.ops.div(T7, S8)
    S10 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T11 = fd.ops.add(T9, S10)
    T12 = fd.ops.rsqrt(T11)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[2, 2048, 32, 128], broadcast_dims=[0, 1, 2, 3])
    T14 = fd.ops.mul(T3, T13)
    T15 = fd.ops.cast(T1, dtype=DataType.Float)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[2, 2048, 32, 128], broadcast_dims=[3])
    T17 = fd.ops.mul(T14, T16)
    T18 = fd.ops.cast(T17, dtype=DataType.BFloat16)
    T19 = fd.ops.permute(T18, dims=[0, 2, 1, 3])
    fd.add_output(T19)


with FusionDefinition() as fd:
    nvfuser_fusion_id19(fd)

inputs = [
    torch.testing.make_tensor((2, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((128,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
