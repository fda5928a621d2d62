# Backward of bias + tanh GELU over a [batch, seq, 4 * hidden] activation
# with the bias gradient in the same fusion: a sum over the two OUTER axes
# (dims [0, 1]) next to the elementwise input gradient. Written as
# nvFuser's benchmark code writes it: define_scalar without a dtype, sum
# without dtype=, the bias broadcast to [1, 1, T.size(-1)] (a negative
# axis), the derivative's constants spelled out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id4(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T1, dtype=DataType.Float)
    T5 = fd.ops.cast(T2, dtype=DataType.Float)
    S6 = fd.define_scalar(0.79788456)
    S7 = fd.define_scalar(0.044715)
    S8 = fd.define_scalar(0.1070322243)
    T9 = fd.ops.broadcast_in_dim(T5, shape=[1, 1, T0.size(-1)], broadcast_dims=[2])
    T10 = fd.ops.add(T3, T9)
    T11 = fd.ops.mul(T10, S6)
    T12 = fd.ops.mul(T10, S7)
    T13 = fd.ops.mul(T12, T10)
    S14 = fd.define_scalar(1.0)
    T15 = fd.ops.add(S14, T13)
    T16 = fd.ops.mul(T11, T15)
    T17 = fd.ops.tanh(T16)
    S18 = fd.define_scalar(0.5)
    T19 = fd.ops.mul(T10, S18)
    T20 = fd.ops.mul(T17, T17)
    T21 = fd.ops.neg(T20)
    T22 = fd.ops.add(T21, S14)
    T23 = fd.ops.mul(T10, S8)
    T24 = fd.ops.mul(T23, T10)
    T25 = fd.ops.add(T24, S6)
    T26 = fd.ops.mul(T22, T25)
    T27 = fd.ops.mul(T19, T26)
    T28 = fd.ops.add(T17, S14)
    T29 = fd.ops.mul(T28, S18)
    T30 = fd.ops.add(T27, T29)
    T31 = fd.ops.mul(T4, T30)
    T32 = fd.ops.sum(T31, dims=[0, 1], keepdim=False)
    T33 = fd.ops.cast(T31, dtype=DataType.Half)
    T34 = fd.ops.cast(T32, dtype=DataType.Half)
    fd.add_output(T33)
    fd.add_output(T34)


with FusionDefinition() as fd:
    nvfuser_fusion_id4(fd)

inputs = [
    torch.randn((4, 1024, 3072), dtype=torch.float16, device='cuda:0'),
    torch.randn((4, 1024, 3072), dtype=torch.float16, device='cuda:0'),
    torch.randn((3072,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
