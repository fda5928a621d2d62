# Backward of the exact GELU: grad * (0.5 (1 + erf(x / sqrt 2)) + x
# exp(-x^2 / 2) / sqrt(2 pi)), 3-D, float32 gradient in, bf16 out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id5(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.ops.cast(T1, dtype=DataType.Float)
    S3 = fd.define_scalar(0.707107, dtype=DataType.Double)
    T4 = fd.ops.mul(T2, S3)
    T5 = fd.ops.erf(T4)
    S6 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T7 = fd.ops.add(S6, T5)
    S8 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T9 = fd.ops.mul(S8, T7)
    T10 = fd.ops.mul(T2, T2)
    S11 = fd.define_scalar(-0.500000, dtype=DataType.Double)
    T12 = fd.ops.mul(S11, T10)
    T13 = fd.ops.exp(T12)
    S14 = fd.define_scalar(0.398942, dtype=DataType.Double)
    T15 = fd.ops.mul(S14, T13)
    T16 = fd.ops.mul(T2, T15)
    T17 = fd.ops.add(T9, T16)
    T18 = fd.ops.mul(T0, T17)
    T19 = fd.ops.cast(T18, dtype=DataType.BFloat16)
    fd.add_output(T19)


with FusionDefinition() as fd:
    nvfuser_fusion_id5(fd)

inputs = [
    torch.testing.make_tensor((8, 512, 4096), dtype=torch.float32, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((8, 512, 4096), dtype=torch.bfloat16, device='cuda:0', low=-4, high=4),
]
fd.execute(inputs)
