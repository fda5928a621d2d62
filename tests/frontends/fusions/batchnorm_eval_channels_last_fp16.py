# BatchNorm2d in eval mode on a channels_last float16 activation (ResNet
# inference or a frozen-BN fine-tune), as Thunder prints it: the input
# [N, C, H, W] with stride_order [3, 0, 2, 1] (C fastest in memory), the
# running statistics and affine parameters [C] in float32, (x - mean) *
# rsqrt(var + eps) * weight + bias, then ReLU; fp16 out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id61(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 0, 2, 1])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.broadcast_in_dim(T1, shape=[128, 256, 56, 56], broadcast_dims=[1])
    T7 = fd.ops.sub(T5, T6)
    S8 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T9 = fd.ops.add(T2, S8)
    T10 = fd.ops.rsqrt(T9)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[128, 256, 56, 56], broadcast_dims=[1])
    T12 = fd.ops.mul(T7, T11)
    T13 = fd.ops.broadcast_in_dim(T3, shape=[128, 256, 56, 56], broadcast_dims=[1])
    T14 = fd.ops.mul(T12, T13)
    T15 = fd.ops.broadcast_in_dim(T4, shape=[128, 256, 56, 56], broadcast_dims=[1])
    T16 = fd.ops.add(T14, T15)
    T17 = fd.ops.relu(T16)
    T18 = fd.ops.cast(T17, dtype=DataType.Half)
    fd.add_output(T18, stride_order=[3, 0, 2, 1])


with FusionDefinition() as fd:
    nvfuser_fusion_id61(fd)

inputs = [
    torch.randn(102760448, dtype=torch.float16, device='cuda:0').as_strided((128, 256, 56, 56), (802816, 1, 14336, 256)),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0', low=0.5, high=2),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
