# Backward of the tanh GELU (x saved, not the tanh): the derivative
# 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), and the
# bias gradient as a column sum, bf16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id9(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[8192, 3072], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[8192, 3072], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.mul(T3, T3)
    T5 = fd.ops.mul(T4, T3)
    T6 = fd.ops.mul(T5, 0.044715)
    T7 = fd.ops.add(T3, T6)
    T8 = fd.ops.mul(T7, 0.7978845608028654)
    T9 = fd.ops.tanh(T8)
    T10 = fd.ops.add(T9, 1.0)
    T11 = fd.ops.mul(T10, 0.5)
    T12 = fd.ops.mul(T9, T9)
    T13 = fd.ops.sub(1.0, T12)
    T14 = fd.ops.mul(T4, 0.134145)
    T15 = fd.ops.add(T14, 1.0)
    T16 = fd.ops.mul(T15, 0.7978845608028654)
    T17 = fd.ops.mul(T13, T16)
    T18 = fd.ops.mul(T3, 0.5)
    T19 = fd.ops.mul(T18, T17)
    T20 = fd.ops.add(T11, T19)
    T21 = fd.ops.mul(T2, T20)
    T22 = fd.ops.cast(T21, dtype=DataType.BFloat16)
    T23 = fd.ops.sum(T21, dims=[0], keepdim=False, dtype=DataType.Null)
    T24 = fd.ops.cast(T23, dtype=DataType.BFloat16)
    fd.add_output(T22)
    fd.add_output(T24)


with FusionDefinition() as fd:
    nvfuser_fusion_id9(fd)

inputs = [
    torch.testing.make_tensor((8192, 3072), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((8192, 3072), dtype=torch.bfloat16, device='cuda:0', low=-4, high=4),
]
fd.execute(inputs)
