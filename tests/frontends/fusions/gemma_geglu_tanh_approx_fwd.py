# Gemma's GeGLU forward (gelu with approximate="tanh" on the gate
# projection times the up projection) as Thunder decomposes it: the cubic
# term as pow(x, 3), the constant sqrt(2 / pi), both inputs upcast to float
# and the product rounded once to bfloat16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id12(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    S3 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T4 = fd.ops.mul(S3, T2)
    S5 = fd.define_scalar(3.00000, dtype=DataType.Double)
    T6 = fd.ops.pow(T2, S5)
    S7 = fd.define_scalar(0.0447150, dtype=DataType.Double)
    T8 = fd.ops.mul(S7, T6)
    T9 = fd.ops.add(T2, T8)
    S10 = fd.define_scalar(0.797885, dtype=DataType.Double)
    T11 = fd.ops.mul(S10, T9)
    T12 = fd.ops.tanh(T11)
    S13 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T14 = fd.ops.add(S13, T12)
    T15 = fd.ops.mul(T4, T14)
    T16 = fd.ops.cast(T15, dtype=DataType.BFloat16)
    T17 = fd.ops.cast(T16, dtype=DataType.Float)
    T18 = fd.ops.cast(T1, dtype=DataType.Float)
    T19 = fd.ops.mul(T17, T18)
    T20 = fd.ops.cast(T19, dtype=DataType.BFloat16)
    fd.add_output(T20)


with FusionDefinition() as fd:
    nvfuser_fusion_id12(fd)

inputs = [
    torch.testing.make_tensor((2, 2048, 16384), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 2048, 16384), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
