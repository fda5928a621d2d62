# Attention scores masked_fill(mask, -inf) then softmax in float32, as
# Thunder prints an encoder with a key padding mask [B, 1, 1, T]: rows whose
# keys are all padding are all -inf, their max is -inf, x - max is NaN and
# the softmax row is NaN, as eager PyTorch gives (the fusion must not turn
# them into zeros or uniform weights). bf16 scores [B, H, T, T].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id28(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, 1, 1, -1], contiguity=[True, None, None, True], dtype=DataType.Bool, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    S3 = fd.define_scalar(0.125000, dtype=DataType.Double)
    T4 = fd.ops.mul(T2, S3)
    T5 = fd.ops.broadcast_in_dim(T1, shape=[8, 16, 512, 512], broadcast_dims=[0, 1, 2, 3])
    S6 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
    T7 = fd.ops.where(T5, S6, T4)
    T8 = fd.ops.max(T7, dims=[3], keepdim=False, dtype=DataType.Null)
    T9 = fd.ops.broadcast_in_dim(T8, shape=[8, 16, 512, 1], broadcast_dims=[0, 1, 2])
    T10 = fd.ops.broadcast_in_dim(T9, shape=[8, 16, 512, 512], broadcast_dims=[0, 1, 2, 3])
    T11 = fd.ops.sub(T7, T10)
    T12 = fd.ops.exp(T11)
    T13 = fd.ops.sum(T12, dims=[3], keepdim=False, dtype=DataType.Null)
    T14 = fd.ops.broadcast_in_dim(T13, shape=[8, 16, 512, 1], broadcast_dims=[0, 1, 2])
    T15 = fd.ops.broadcast_in_dim(T14, shape=[8, 16, 512, 512], broadcast_dims=[0, 1, 2, 3])
    T16 = fd.ops.div(T12, T15)
    T17 = fd.ops.cast(T16, dtype=DataType.BFloat16)
    fd.add_output(T17)


with FusionDefinition() as fd:
    nvfuser_fusion_id28(fd)

inputs = [
    torch.testing.make_tensor((8, 16, 512, 512), dtype=torch.bfloat16, device='cuda:0'),
    torch.ones((8, 1, 1, 512), dtype=torch.bool, device='cuda:0'),
]
fd.execute(inputs)
