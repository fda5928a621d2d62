# DeepNet-style scaled residual with run-time scalars of several types: a
# Double alpha, a Float scalar threshold, an Int scalar used as a float
# (its cast), clamping with scalar bounds.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id33(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    S2 = fd.define_scalar(None, dtype=DataType.Double)
    S3 = fd.define_scalar(None, dtype=DataType.Float)
    S4 = fd.define_scalar(None, dtype=DataType.Int)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.mul(T5, S2)
    T8 = fd.ops.add(T7, T6)
    S9 = fd.ops.cast(S4, dtype=DataType.Double)
    S10 = fd.ops.reciprocal(S9)
    T11 = fd.ops.mul(T8, S10)
    S12 = fd.ops.neg(S3)
    T13 = fd.ops.clamp(T11, S12, S3)
    T14 = fd.ops.cast(T13, dtype=DataType.BFloat16)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id33(fd)

inputs = [
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    2.8284271247461903,
    4.0,
    2,
]
fd.execute(inputs)
