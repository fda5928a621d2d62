# MobileNetV3's hardswish and hardsigmoid and softplus (beta 1, threshold
# 20) forward and backward as AOTAutograd decomposes them: clamp(x + 3, 0,
# 6) / 6, the backward's nested where on x < -3 and x <= 3, softplus as
# where(x > 20, x, log1p(exp(x))) and its gradient g * z / (z + 1) with z =
# exp(x). float32 NCHW activations [N, C, H, W].
# small: 64->4, 96->6, 56->8
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id53(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    S2 = fd.define_scalar(3.00000, dtype=DataType.Double)
    T3 = fd.ops.add(T0, S2)
    S4 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S5 = fd.define_scalar(6.00000, dtype=DataType.Double)
    T6 = fd.ops.clamp(T3, S4, S5)
    T7 = fd.ops.mul(T0, T6)
    T8 = fd.ops.div(T7, S5)
    fd.add_output(T8)
    S9 = fd.define_scalar(-3.00000, dtype=DataType.Double)
    T10 = fd.ops.lt(T0, S9)
    T11 = fd.ops.le(T0, S2)
    T12 = fd.ops.div(T0, S2)
    S13 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T14 = fd.ops.add(T12, S13)
    T15 = fd.ops.mul(T1, T14)
    T16 = fd.ops.where(T11, T15, T1)
    T17 = fd.ops.where(T10, S4, T16)
    fd.add_output(T17)
    T18 = fd.ops.div(T6, S5)
    fd.add_output(T18)
    T19 = fd.ops.gt(T0, S9)
    T20 = fd.ops.lt(T0, S2)
    T21 = fd.ops.logical_and(T19, T20)
    T22 = fd.ops.div(T1, S5)
    T23 = fd.ops.where(T21, T22, S4)
    fd.add_output(T23)
    S24 = fd.define_scalar(20.0000, dtype=DataType.Double)
    T25 = fd.ops.gt(T0, S24)
    T26 = fd.ops.exp(T0)
    T27 = fd.ops.log1p(T26)
    T28 = fd.ops.where(T25, T0, T27)
    fd.add_output(T28)
    S29 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T30 = fd.ops.mul(T1, T26)
    T31 = fd.ops.add(T26, S29)
    T32 = fd.ops.div(T30, T31)
    T33 = fd.ops.where(T25, T1, T32)
    fd.add_output(T33)


with FusionDefinition() as fd:
    nvfuser_fusion_id53(fd)

inputs = [
    torch.testing.make_tensor((64, 96, 56, 56), dtype=torch.float32, device='cuda:0', low=-30, high=30),
    torch.testing.make_tensor((64, 96, 56, 56), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
