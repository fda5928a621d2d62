# Backward of rmsnorm(residual + dropout(x)) (nvFuser's dropout + RMSNorm
# benchmark form, written here for bf16): the saved bool mask cast to
# float, the saved rms [N, 1], the 1/N of the mean as
# fd.ops.reciprocal(T.size(1)) (a float from an integer size), pow(rms,
# 2.0); outputs grad of x (through the mask), grad of the residual and the
# weight gradient (a sum over rows).
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id5(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False)
    T3 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False)
    T4 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T5 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T6 = fd.ops.cast(T0, dtype=DataType.Float)
    T7 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.cast(T2, dtype=DataType.Float)
    T9 = fd.ops.cast(T4, dtype=DataType.Float)
    T10 = fd.ops.cast(T5, dtype=DataType.Float)
    T11 = fd.ops.mul(T6, T8)
    S12 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T13 = fd.ops.mul(T11, S12)
    T14 = fd.ops.add(T7, T13)
    V15 = T0.shape()
    T16 = fd.ops.broadcast_in_dim(T3, shape=V15, broadcast_dims=[0, 1])
    T17 = fd.ops.reciprocal(T16)
    T18 = fd.ops.mul(T14, T17)
    T19 = fd.ops.broadcast_in_dim(T10, shape=V15, broadcast_dims=[1])
    T20 = fd.ops.mul(T9, T18)
    T21 = fd.ops.mul(T9, T19)
    T22 = fd.ops.sum(T20, dims=[0], keepdim=False, dtype=DataType.Null)
    T23 = fd.ops.mul(T21, T17)
    T24 = fd.ops.neg(T21)
    T25 = fd.ops.mul(T24, T14)
    S26 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T27 = fd.ops.pow(T16, S26)
    T28 = fd.ops.reciprocal(T27)
    T29 = fd.ops.mul(T25, T28)
    T30 = fd.ops.sum(T29, dims=[1], keepdim=False, dtype=DataType.Null)
    T31 = fd.ops.broadcast_in_dim(T30, shape=[T0.size(0), 1], broadcast_dims=[0])
    T32 = fd.ops.mul(S26, T3)
    T33 = fd.ops.reciprocal(T32)
    T34 = fd.ops.mul(T31, T33)
    S35 = fd.ops.reciprocal(T0.size(1))
    T36 = fd.ops.mul(T34, S35)
    T37 = fd.ops.sum(T36, dims=[1], keepdim=False, dtype=DataType.Null)
    T38 = fd.ops.broadcast_in_dim(T37, shape=[T0.size(0), 1], broadcast_dims=[0])
    T39 = fd.ops.broadcast_in_dim(T38, shape=V15, broadcast_dims=[0, 1])
    T40 = fd.ops.mul(T39, S26)
    T41 = fd.ops.mul(T40, T14)
    T42 = fd.ops.add(T23, T41)
    T43 = fd.ops.mul(T42, S12)
    T44 = fd.ops.mul(T43, T8)
    T45 = fd.ops.cast(T44, dtype=DataType.BFloat16)
    T46 = fd.ops.cast(T42, dtype=DataType.BFloat16)
    T47 = fd.ops.cast(T22, dtype=DataType.BFloat16)
    fd.add_output(T45)
    fd.add_output(T46)
    fd.add_output(T47)


with FusionDefinition() as fd:
    nvfuser_fusion_id5(fd)

inputs = [
    torch.randn((8192, 2048), dtype=torch.bfloat16, device='cuda:0'),
    torch.randn((8192, 2048), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 2048), dtype=torch.bool, device='cuda:0'),
    torch.rand((8192, 1), dtype=torch.float32, device='cuda:0') + 0.5,
    torch.randn((8192, 2048), dtype=torch.bfloat16, device='cuda:0'),
    torch.randn((2048,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
