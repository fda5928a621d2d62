# Instance norm (style transfer, GAN generators): statistics per (n, c) over
# H and W, affine per channel, float16 in and out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id26(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4, T5 = fd.ops.var_mean(T3, dims=[2, 3], correction=0, keepdim=False)
    T6 = fd.ops.broadcast_in_dim(T4, shape=[16, 64, 1, 1], broadcast_dims=[0, 1])
    T7 = fd.ops.broadcast_in_dim(T5, shape=[16, 64, 1, 1], broadcast_dims=[0, 1])
    S8 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T9 = fd.ops.add(T6, S8)
    T10 = fd.ops.rsqrt(T9)
    T11 = fd.ops.broadcast_in_dim(T7, shape=[16, 64, 128, 128], broadcast_dims=[0, 1, 2, 3])
    T12 = fd.ops.sub(T3, T11)
    T13 = fd.ops.broadcast_in_dim(T10, shape=[16, 64, 128, 128], broadcast_dims=[0, 1, 2, 3])
    T14 = fd.ops.mul(T12, T13)
    T15 = fd.ops.cast(T1, dtype=DataType.Float)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[16, 64, 128, 128], broadcast_dims=[1])
    T17 = fd.ops.mul(T14, T16)
    T18 = fd.ops.cast(T2, dtype=DataType.Float)
    T19 = fd.ops.broadcast_in_dim(T18, shape=[16, 64, 128, 128], broadcast_dims=[1])
    T20 = fd.ops.add(T17, T19)
    T21 = fd.ops.cast(T20, dtype=DataType.Half)
    fd.add_output(T21)
    fd.add_output(T7)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id26(fd)

inputs = [
    torch.testing.make_tensor((16, 64, 128, 128), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((64,), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((64,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
