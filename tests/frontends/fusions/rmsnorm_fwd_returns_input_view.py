# A fusion that returns a view of one of its inputs next to what it
# computes, as Thunder's fusion pass leaves it when the flattened
# activation [B * T, C] is saved for a later matmul's backward: the input
# x.view(-1, C) is an output while RMSNorm reads x too (so the reshape is
# no view of a kernel's input or output by itself); fp16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id37(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[8, 1024, 2048], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[2048], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T2 = fd.ops.reshape(T0, new_shape=[8192, 2048])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.mul(T3, T3)
    T5 = fd.ops.sum(T4, dims=[2], keepdim=True, dtype=DataType.Null)
    S6 = fd.define_scalar(0.000488281, dtype=DataType.Double)
    T7 = fd.ops.mul(T5, S6)
    S8 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T9 = fd.ops.add(T7, S8)
    T10 = fd.ops.rsqrt(T9)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[8, 1024, 2048], broadcast_dims=[0, 1, 2])
    T12 = fd.ops.mul(T3, T11)
    T13 = fd.ops.cast(T1, dtype=DataType.Float)
    T14 = fd.ops.broadcast_in_dim(T13, shape=[8, 1024, 2048], broadcast_dims=[2])
    T15 = fd.ops.mul(T12, T14)
    T16 = fd.ops.cast(T15, dtype=DataType.Half)
    fd.add_output(T2)
    fd.add_output(T16)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id37(fd)

inputs = [
    torch.randn((8, 1024, 2048), dtype=torch.float16, device='cuda:0'),
    torch.randn((2048,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
