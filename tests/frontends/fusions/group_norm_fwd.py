# GroupNorm (32 groups, diffusion U-Nets): the channels split into groups
# with fd.ops.reshape, var_mean over each group's channels and pixels,
# reshaped back, then the per-channel affine; fp16.
# expect: compiles
# small: 64->8
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id39(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[8, 256, 64, 64], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.reshape(T3, new_shape=[8, 32, 8, 64, 64])
    T5, T6 = fd.ops.var_mean(T4, dims=[2, 3, 4], correction=0, keepdim=False)
    T7 = fd.ops.broadcast_in_dim(T5, shape=[8, 32, 1, 1, 1], broadcast_dims=[0, 1])
    T8 = fd.ops.broadcast_in_dim(T6, shape=[8, 32, 1, 1, 1], broadcast_dims=[0, 1])
    S9 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T10 = fd.ops.add(T7, S9)
    T11 = fd.ops.rsqrt(T10)
    T12 = fd.ops.broadcast_in_dim(T8, shape=[8, 32, 8, 64, 64], broadcast_dims=[0, 1, 2, 3, 4])
    T13 = fd.ops.sub(T4, T12)
    T14 = fd.ops.broadcast_in_dim(T11, shape=[8, 32, 8, 64, 64], broadcast_dims=[0, 1, 2, 3, 4])
    T15 = fd.ops.mul(T13, T14)
    T16 = fd.ops.reshape(T15, new_shape=[8, 256, 64, 64])
    T17 = fd.ops.cast(T1, dtype=DataType.Float)
    T18 = fd.ops.broadcast_in_dim(T17, shape=[8, 256, 64, 64], broadcast_dims=[1])
    T19 = fd.ops.mul(T16, T18)
    T20 = fd.ops.cast(T2, dtype=DataType.Float)
    T21 = fd.ops.broadcast_in_dim(T20, shape=[8, 256, 64, 64], broadcast_dims=[1])
    T22 = fd.ops.add(T19, T21)
    T23 = fd.ops.cast(T22, dtype=DataType.Half)
    fd.add_output(T23)


with FusionDefinition() as fd:
    nvfuser_fusion_id39(fd)

inputs = [
    torch.testing.make_tensor((8, 256, 64, 64), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
