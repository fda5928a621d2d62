# RMSNorm backward as Thunder's autodiff prints it for a LLaMA layer: the
# saved rstd [N, 1] in float, weight and input gradients (a row reduction
# and a column reduction over the same tensor).
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id3(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    T5 = fd.ops.cast(T1, dtype=DataType.Float)
    T6 = fd.ops.cast(T3, dtype=DataType.Float)
    T7 = fd.ops.broadcast_in_dim(T2, shape=[8192, 4096], broadcast_dims=[0, 1])
    T8 = fd.ops.mul(T5, T7)
    T9 = fd.ops.mul(T4, T8)
    T10 = fd.ops.sum(T9, dims=[0], keepdim=False, dtype=DataType.Null)
    T11 = fd.ops.cast(T10, dtype=DataType.BFloat16)
    T12 = fd.ops.broadcast_in_dim(T6, shape=[8192, 4096], broadcast_dims=[1])
    T13 = fd.ops.mul(T4, T12)
    T14 = fd.ops.mul(T13, T5)
    T15 = fd.ops.sum(T14, dims=[1], keepdim=False, dtype=DataType.Null)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[8192, 1], broadcast_dims=[0])
    S17 = fd.define_scalar(3.00000, dtype=DataType.Double)
    T18 = fd.ops.pow(T2, S17)
    S19 = fd.define_scalar(-0.500000, dtype=DataType.Double)
    T20 = fd.ops.mul(S19, T16)
    T21 = fd.ops.mul(T20, T18)
    S22 = fd.define_scalar(4096.00, dtype=DataType.Double)
    S23 = fd.ops.reciprocal(S22)
    S24 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T25 = fd.ops.mul(S24, T21)
    T26 = fd.ops.mul(T25, S23)
    T27 = fd.ops.broadcast_in_dim(T26, shape=[8192, 4096], broadcast_dims=[0, 1])
    T28 = fd.ops.mul(T27, T5)
    T29 = fd.ops.mul(T13, T7)
    T30 = fd.ops.add(T29, T28)
    T31 = fd.ops.cast(T30, dtype=DataType.BFloat16)
    fd.add_output(T31)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id3(fd)

inputs = [
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 1), dtype=torch.float32, device='cuda:0', low=0.5, high=1.5),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
