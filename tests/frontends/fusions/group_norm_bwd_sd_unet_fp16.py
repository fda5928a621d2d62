# GroupNorm backward of a Stable Diffusion UNet block (32 groups of 10
# channels, fp16 [8, 320, 64, 64]) as Thunder prints its autodiff: input and
# gradient viewed as [N, 32, 10, H, W], the saved mean and rstd [N, 32] in
# float32, the weight as [32, 10]; per-group sums of dy * w and of dy * w *
# xhat for the input gradient, sums over batch and space for the weight and
# bias gradients, all reshaped back to the caller's layout.
# small: 64->8, 40960->640
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id102(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.reshape(T5, new_shape=[8, 32, 10, 64, 64])
    T8 = fd.ops.reshape(T6, new_shape=[8, 32, 10, 64, 64])
    T9 = fd.ops.broadcast_in_dim(T2, shape=[8, 32, 10, 64, 64], broadcast_dims=[0, 1])
    T10 = fd.ops.broadcast_in_dim(T3, shape=[8, 32, 10, 64, 64], broadcast_dims=[0, 1])
    T11 = fd.ops.sub(T8, T9)
    T12 = fd.ops.mul(T11, T10)
    T13 = fd.ops.cast(T4, dtype=DataType.Float)
    T14 = fd.ops.reshape(T13, new_shape=[32, 10])
    T15 = fd.ops.broadcast_in_dim(T14, shape=[8, 32, 10, 64, 64], broadcast_dims=[1, 2])
    T16 = fd.ops.mul(T7, T15)
    T17 = fd.ops.sum(T16, dims=[2, 3, 4], keepdim=False, dtype=DataType.Null)
    T18 = fd.ops.mul(T16, T12)
    T19 = fd.ops.sum(T18, dims=[2, 3, 4], keepdim=False, dtype=DataType.Null)
    T20 = fd.ops.broadcast_in_dim(T17, shape=[8, 32, 10, 64, 64], broadcast_dims=[0, 1])
    T21 = fd.ops.broadcast_in_dim(T19, shape=[8, 32, 10, 64, 64], broadcast_dims=[0, 1])
    T22 = fd.ops.mul(T12, T21)
    T23 = fd.ops.add(T20, T22)
    S24 = fd.define_scalar(40960.0, dtype=DataType.Double)
    T25 = fd.ops.div(T23, S24)
    T26 = fd.ops.sub(T16, T25)
    T27 = fd.ops.mul(T10, T26)
    T28 = fd.ops.reshape(T27, new_shape=[8, 320, 64, 64])
    T29 = fd.ops.cast(T28, dtype=DataType.Half)
    T30 = fd.ops.mul(T7, T12)
    T31 = fd.ops.sum(T30, dims=[0, 3, 4], keepdim=False, dtype=DataType.Null)
    T32 = fd.ops.reshape(T31, new_shape=[320])
    T33 = fd.ops.cast(T32, dtype=DataType.Half)
    T34 = fd.ops.sum(T5, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    T35 = fd.ops.cast(T34, dtype=DataType.Half)
    fd.add_output(T29)
    fd.add_output(T33)
    fd.add_output(T35)


with FusionDefinition() as fd:
    nvfuser_fusion_id102(fd)

inputs = [
    torch.testing.make_tensor((8, 320, 64, 64), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((8, 320, 64, 64), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((8, 32), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((8, 32), dtype=torch.float32, device='cuda:0', low=0.5, high=2),
    torch.testing.make_tensor((320,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
