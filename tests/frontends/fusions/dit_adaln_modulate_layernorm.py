# DiT / SD3 adaptive LayerNorm: LayerNorm without affine over the hidden
# axis of [B, tokens, hidden], then modulate: x * (1 + scale) + shift with
# scale and shift [B, hidden] broadcast over the tokens (broadcast_dims
# [0, 2], skipping the middle axis), gated residual out + gate * x; fp16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id9(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[8, 1024, 1152], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[8, 1152], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[8, 1152], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[8, 1152], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T4 = fd.define_tensor(shape=[8, 1024, 1152], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6, T7 = fd.ops.var_mean(T5, dims=[2], correction=0, keepdim=False)
    T8 = fd.ops.broadcast_in_dim(T6, shape=[8, 1024, 1], broadcast_dims=[0, 1])
    T9 = fd.ops.broadcast_in_dim(T7, shape=[8, 1024, 1], broadcast_dims=[0, 1])
    S10 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T11 = fd.ops.add(T8, S10)
    T12 = fd.ops.rsqrt(T11)
    T13 = fd.ops.broadcast_in_dim(T9, shape=[8, 1024, 1152], broadcast_dims=[0, 1, 2])
    T14 = fd.ops.sub(T5, T13)
    T15 = fd.ops.broadcast_in_dim(T12, shape=[8, 1024, 1152], broadcast_dims=[0, 1, 2])
    T16 = fd.ops.mul(T14, T15)
    T17 = fd.ops.cast(T1, dtype=DataType.Float)
    S18 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T19 = fd.ops.add(T17, S18)
    T20 = fd.ops.broadcast_in_dim(T19, shape=[8, 1024, 1152], broadcast_dims=[0, 2])
    T21 = fd.ops.mul(T16, T20)
    T22 = fd.ops.cast(T2, dtype=DataType.Float)
    T23 = fd.ops.broadcast_in_dim(T22, shape=[8, 1024, 1152], broadcast_dims=[0, 2])
    T24 = fd.ops.add(T21, T23)
    T25 = fd.ops.cast(T3, dtype=DataType.Float)
    T26 = fd.ops.broadcast_in_dim(T25, shape=[8, 1024, 1152], broadcast_dims=[0, 2])
    T27 = fd.ops.mul(T26, T24)
    T28 = fd.ops.cast(T4, dtype=DataType.Float)
    T29 = fd.ops.add(T28, T27)
    T30 = fd.ops.cast(T24, dtype=DataType.Half)
    T31 = fd.ops.cast(T29, dtype=DataType.Half)
    fd.add_output(T30)
    fd.add_output(T31)


with FusionDefinition() as fd:
    nvfuser_fusion_id9(fd)

inputs = [
    torch.randn((8, 1024, 1152), dtype=torch.float16, device='cuda:0'),
    torch.randn((8, 1152), dtype=torch.float16, device='cuda:0'),
    torch.randn((8, 1152), dtype=torch.float16, device='cuda:0'),
    torch.randn((8, 1152), dtype=torch.float16, device='cuda:0'),
    torch.randn((8, 1024, 1152), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
