# Pointwise ops front ends print that map straight onto IR ops: expm1, log1p,
# rsqrt, reciprocal, erfc, sigmoid, fmod, clamp with tensor bounds, where with
# scalar branches, and on an int64 tensor bitwise shifts and logical_not.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id22(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.expm1(T0)
    T4 = fd.ops.abs(T1)
    T5 = fd.ops.log1p(T4)
    S6 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T7 = fd.ops.add(T4, S6)
    T8 = fd.ops.rsqrt(T7)
    T9 = fd.ops.reciprocal(T7)
    T10 = fd.ops.erfc(T0)
    T11 = fd.ops.sigmoid(T1)
    S12 = fd.define_scalar(0.750000, dtype=DataType.Double)
    T13 = fd.ops.fmod(T0, S12)
    T14 = fd.ops.neg(T4)
    T15 = fd.ops.clamp(T3, T14, T4)
    S16 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T17 = fd.ops.gt(T0, S16)
    S18 = fd.define_scalar(2.00000, dtype=DataType.Double)
    S19 = fd.define_scalar(-3.00000, dtype=DataType.Double)
    T20 = fd.ops.where(T17, S18, S19)
    T21 = fd.ops.add(T5, T8)
    T22 = fd.ops.add(T21, T9)
    T23 = fd.ops.add(T22, T10)
    T24 = fd.ops.mul(T23, T11)
    T25 = fd.ops.add(T24, T13)
    T26 = fd.ops.add(T25, T15)
    T27 = fd.ops.mul(T26, T20)
    S28 = fd.define_scalar(2, dtype=DataType.Int)
    T29 = fd.ops.bitwise_left_shift(T2, S28)
    T30 = fd.ops.bitwise_right_shift(T29, 1)
    S31 = fd.define_scalar(0, dtype=DataType.Int)
    T32 = fd.ops.eq(T30, S31)
    T33 = fd.ops.logical_not(T32)
    T34 = fd.ops.where(T33, T27, 0.0)
    fd.add_output(T34)
    fd.add_output(T30)


with FusionDefinition() as fd:
    nvfuser_fusion_id22(fd)

inputs = [
    torch.testing.make_tensor((1024, 768), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((1024, 768), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((1024, 768), dtype=torch.int64, device='cuda:0', low=-1000, high=1000),
]
fd.execute(inputs)
