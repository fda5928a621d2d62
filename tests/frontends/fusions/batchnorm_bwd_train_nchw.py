# BatchNorm2d backward in training mode: saved mean and invstd per channel,
# grad_input = w invstd (g - mean(g) - xhat mean(g xhat)), grad_weight and
# grad_bias (reductions over N, H, W), fp16 activations.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id28(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.broadcast_in_dim(T2, shape=T1.shape(), broadcast_dims=[1])
    T8 = fd.ops.sub(T6, T7)
    T9 = fd.ops.broadcast_in_dim(T3, shape=T1.shape(), broadcast_dims=[1])
    T10 = fd.ops.mul(T8, T9)
    T11 = fd.ops.sum(T5, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    T12 = fd.ops.mul(T5, T10)
    T13 = fd.ops.sum(T12, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    S14 = fd.define_scalar(1.99298e-05, dtype=DataType.Double)
    T15 = fd.ops.mul(T11, S14)
    T16 = fd.ops.mul(T13, S14)
    T17 = fd.ops.broadcast_in_dim(T15, shape=T1.shape(), broadcast_dims=[1])
    T18 = fd.ops.broadcast_in_dim(T16, shape=T1.shape(), broadcast_dims=[1])
    T19 = fd.ops.mul(T10, T18)
    T20 = fd.ops.sub(T5, T17)
    T21 = fd.ops.sub(T20, T19)
    T22 = fd.ops.cast(T4, dtype=DataType.Float)
    T23 = fd.ops.mul(T3, T22)
    T24 = fd.ops.broadcast_in_dim(T23, shape=T1.shape(), broadcast_dims=[1])
    T25 = fd.ops.mul(T21, T24)
    T26 = fd.ops.cast(T25, dtype=DataType.Half)
    T27 = fd.ops.cast(T13, dtype=DataType.Half)
    T28 = fd.ops.cast(T11, dtype=DataType.Half)
    fd.add_output(T26)
    fd.add_output(T27)
    fd.add_output(T28)


with FusionDefinition() as fd:
    nvfuser_fusion_id28(fd)

inputs = [
    torch.testing.make_tensor((64, 256, 28, 28), dtype=torch.float16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((64, 256, 28, 28), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0', low=0.1, high=0.5),
    torch.testing.make_tensor((256,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
