# ViT-B/16 block entry: 197 tokens (196 patches and the class token), hidden
# 768, residual add and LayerNorm over hidden in fp16, static shapes as
# Thunder writes them.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id47(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[64, 197, 768], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[64, 197, 768], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[768], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    T5 = fd.ops.cast(T1, dtype=DataType.Float)
    T6 = fd.ops.add(T4, T5)
    T7 = fd.ops.cast(T6, dtype=DataType.Half)
    T8 = fd.ops.cast(T7, dtype=DataType.Float)
    T9, T10 = fd.ops.var_mean(T8, dims=[2], correction=0, keepdim=False)
    T11 = fd.ops.broadcast_in_dim(T9, shape=[64, 197, 1], broadcast_dims=[0, 1])
    T12 = fd.ops.broadcast_in_dim(T10, shape=[64, 197, 1], broadcast_dims=[0, 1])
    S13 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T14 = fd.ops.add(T11, S13)
    T15 = fd.ops.rsqrt(T14)
    T16 = fd.ops.broadcast_in_dim(T12, shape=[64, 197, 768], broadcast_dims=[0, 1, 2])
    T17 = fd.ops.sub(T8, T16)
    T18 = fd.ops.broadcast_in_dim(T15, shape=[64, 197, 768], broadcast_dims=[0, 1, 2])
    T19 = fd.ops.mul(T17, T18)
    T20 = fd.ops.cast(T2, dtype=DataType.Float)
    T21 = fd.ops.broadcast_in_dim(T20, shape=[64, 197, 768], broadcast_dims=[2])
    T22 = fd.ops.mul(T19, T21)
    T23 = fd.ops.cast(T3, dtype=DataType.Float)
    T24 = fd.ops.broadcast_in_dim(T23, shape=[64, 197, 768], broadcast_dims=[2])
    T25 = fd.ops.add(T22, T24)
    T26 = fd.ops.cast(T25, dtype=DataType.Half)
    fd.add_output(T7)
    fd.add_output(T26)
    fd.add_output(T12)
    fd.add_output(T15)


with FusionDefinition() as fd:
    nvfuser_fusion_id47(fd)

inputs = [
    torch.testing.make_tensor((64, 197, 768), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((64, 197, 768), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((768,), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((768,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
