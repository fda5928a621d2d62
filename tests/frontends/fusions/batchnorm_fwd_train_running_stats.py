# BatchNorm2d forward in training mode as Thunder decomposes it: biased
# variance for the normalization, the running mean and variance updated
# with momentum 0.1 and the unbiased variance (n / (n - 1)), all outputs.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id27(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6, T7 = fd.ops.var_mean(T5, dims=[0, 2, 3], correction=0, keepdim=False)
    S8 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T9 = fd.ops.add(T6, S8)
    T10 = fd.ops.rsqrt(T9)
    T11 = fd.ops.broadcast_in_dim(T7, shape=[64, 256, 28, 28], broadcast_dims=[1])
    T12 = fd.ops.sub(T5, T11)
    T13 = fd.ops.broadcast_in_dim(T10, shape=[64, 256, 28, 28], broadcast_dims=[1])
    T14 = fd.ops.mul(T12, T13)
    T15 = fd.ops.cast(T3, dtype=DataType.Float)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[64, 256, 28, 28], broadcast_dims=[1])
    T17 = fd.ops.mul(T14, T16)
    T18 = fd.ops.cast(T4, dtype=DataType.Float)
    T19 = fd.ops.broadcast_in_dim(T18, shape=[64, 256, 28, 28], broadcast_dims=[1])
    T20 = fd.ops.add(T17, T19)
    T21 = fd.ops.cast(T20, dtype=DataType.BFloat16)
    S22 = fd.define_scalar(0.900000, dtype=DataType.Double)
    S23 = fd.define_scalar(0.100000, dtype=DataType.Double)
    T24 = fd.ops.mul(T1, S22)
    T25 = fd.ops.mul(T7, S23)
    T26 = fd.ops.add(T24, T25)
    S27 = fd.define_scalar(1.00002, dtype=DataType.Double)
    T28 = fd.ops.mul(T6, S27)
    T29 = fd.ops.mul(T2, S22)
    T30 = fd.ops.mul(T28, S23)
    T31 = fd.ops.add(T29, T30)
    fd.add_output(T21)
    fd.add_output(T7)
    fd.add_output(T10)
    fd.add_output(T26)
    fd.add_output(T31)


with FusionDefinition() as fd:
    nvfuser_fusion_id27(fd)

inputs = [
    torch.testing.make_tensor((64, 256, 28, 28), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0', low=0.5, high=2),
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
