# BERT output block backward: the LayerNorm gradient (saved mean and rstd,
# weight and bias gradients) flowing into the dropout's saved keep mask and
# the residual branch; bf16 activations, fp32 statistics.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id50(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T5 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False, stride_order=[1, 0])
    T6 = fd.ops.cast(T0, dtype=DataType.Float)
    T7 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T2, shape=[16384, 1024], broadcast_dims=[0])
    T9 = fd.ops.broadcast_in_dim(T3, shape=[16384, 1024], broadcast_dims=[0])
    T10 = fd.ops.sub(T7, T8)
    T11 = fd.ops.mul(T10, T9)
    T12 = fd.ops.cast(T4, dtype=DataType.Float)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[16384, 1024], broadcast_dims=[1])
    T14 = fd.ops.mul(T6, T13)
    T15 = fd.ops.sum(T14, dims=[1], keepdim=False, dtype=DataType.Null)
    T16 = fd.ops.mul(T14, T11)
    T17 = fd.ops.sum(T16, dims=[1], keepdim=False, dtype=DataType.Null)
    T18 = fd.ops.broadcast_in_dim(T15, shape=[16384, 1024], broadcast_dims=[0])
    T19 = fd.ops.broadcast_in_dim(T17, shape=[16384, 1024], broadcast_dims=[0])
    T20 = fd.ops.mul(T11, T19)
    T21 = fd.ops.add(T18, T20)
    S22 = fd.define_scalar(0.000976562, dtype=DataType.Double)
    T23 = fd.ops.mul(T21, S22)
    T24 = fd.ops.sub(T14, T23)
    T25 = fd.ops.mul(T24, T9)
    T26 = fd.ops.cast(T5, dtype=DataType.Float)
    T27 = fd.ops.mul(T25, T26)
    S28 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T29 = fd.ops.mul(T27, S28)
    T30 = fd.ops.cast(T29, dtype=DataType.BFloat16)
    T31 = fd.ops.cast(T25, dtype=DataType.BFloat16)
    T32 = fd.ops.mul(T6, T11)
    T33 = fd.ops.sum(T32, dims=[0], keepdim=False, dtype=DataType.Null)
    T34 = fd.ops.sum(T6, dims=[0], keepdim=False, dtype=DataType.Null)
    T35 = fd.ops.cast(T33, dtype=DataType.BFloat16)
    T36 = fd.ops.cast(T34, dtype=DataType.BFloat16)
    fd.add_output(T30)
    fd.add_output(T31)
    fd.add_output(T35)
    fd.add_output(T36)


with FusionDefinition() as fd:
    nvfuser_fusion_id50(fd)

inputs = [
    torch.testing.make_tensor((16384, 1024), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((16384, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((16384,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((16384,), dtype=torch.float32, device='cuda:0', low=0.1, high=0.5),
    torch.testing.make_tensor((1024,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((16384, 1024), dtype=torch.bool, device='cuda:0'),
]
fd.execute(inputs)
