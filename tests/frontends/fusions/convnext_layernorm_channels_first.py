# ConvNeXt's LayerNorm with data_format="channels_first": statistics over
# the channel axis, dim 1 of an NCHW tensor (a reduction over a MIDDLE
# axis), written in the model as u = x.mean(1, keepdim=True), s = (x -
# u).pow(2).mean(1, keepdim=True), (x - u) / sqrt(s + eps) * w[:, None,
# None] + b[:, None, None]; keepdim reductions, broadcast_dims [1] into 4-D.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id14(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[32, 96, 56, 56], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[96], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[96], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.ops.sum(T0, dims=[1], keepdim=True, dtype=DataType.Null)
    S4 = fd.define_scalar(96.0000, dtype=DataType.Double)
    T5 = fd.ops.div(T3, S4)
    T6 = fd.ops.broadcast_in_dim(T5, shape=[32, 96, 56, 56], broadcast_dims=[0, 1, 2, 3])
    T7 = fd.ops.sub(T0, T6)
    S8 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T9 = fd.ops.pow(T7, S8)
    T10 = fd.ops.sum(T9, dims=[1], keepdim=True, dtype=DataType.Null)
    T11 = fd.ops.div(T10, S4)
    S12 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T13 = fd.ops.add(T11, S12)
    T14 = fd.ops.sqrt(T13)
    T15 = fd.ops.broadcast_in_dim(T14, shape=[32, 96, 56, 56], broadcast_dims=[0, 1, 2, 3])
    T16 = fd.ops.div(T7, T15)
    T17 = fd.ops.broadcast_in_dim(T1, shape=[32, 96, 56, 56], broadcast_dims=[1])
    T18 = fd.ops.mul(T16, T17)
    T19 = fd.ops.broadcast_in_dim(T2, shape=[32, 96, 56, 56], broadcast_dims=[1])
    T20 = fd.ops.add(T18, T19)
    fd.add_output(T20)


with FusionDefinition() as fd:
    nvfuser_fusion_id14(fd)

inputs = [
    torch.randn((32, 96, 56, 56), dtype=torch.float32, device='cuda:0'),
    torch.randn((96,), dtype=torch.float32, device='cuda:0'),
    torch.randn((96,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
