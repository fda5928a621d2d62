# Special functions Thunder prints for distributions: a probit transform of
# uniforms (sqrt(2) * erfinv(2u - 1)), a log-Gamma normalizer and the inverse
# hyperbolic ops of a soft-clipping activation, plus an inf check of the
# result (is_neginf / is_posinf); bf16 in, float compute, bf16 out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id21(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    S3 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T4 = fd.ops.mul(T1, S3)
    S5 = fd.define_scalar(0.999000, dtype=DataType.Double)
    T6 = fd.ops.sub(T4, 1.0)
    T7 = fd.ops.mul(T6, S5)
    T8 = fd.ops.erfinv(T7)
    S9 = fd.define_scalar(1.41421, dtype=DataType.Double)
    T10 = fd.ops.mul(T8, S9)
    T11 = fd.ops.abs(T2)
    S12 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T13 = fd.ops.add(T11, S12)
    T14 = fd.ops.lgamma(T13)
    T15 = fd.ops.asinh(T2)
    S16 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T17 = fd.ops.add(T11, S16)
    T18 = fd.ops.acosh(T17)
    T19 = fd.ops.add(T10, T14)
    T20 = fd.ops.sub(T15, T18)
    T21 = fd.ops.add(T19, T20)
    T22 = fd.ops.is_posinf(T21)
    T23 = fd.ops.is_neginf(T21)
    T24 = fd.ops.logical_or(T22, T23)
    S25 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T26 = fd.ops.where(T24, S25, T21)
    T27 = fd.ops.cast(T26, dtype=DataType.BFloat16)
    fd.add_output(T27)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id21(fd)

inputs = [
    torch.testing.make_tensor((2048, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.rand((2048, 1024), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
