# ELU, SELU and leaky_relu forward and backward as AOTAutograd decomposes
# them (torch._decomp: where(x > 0, x * scale, (exp(x * input_scale) - 1) *
# alpha * scale), the backward from the input, not the result), lowered to
# nvFuser ops on float16 activations [N, C] computed in float. Three
# activations of one input and their input gradients from one upstream
# gradient: six fp16 outputs.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id52(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    S4 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T5 = fd.ops.gt(T2, S4)
    T6 = fd.ops.exp(T2)
    S7 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T8 = fd.ops.sub(T6, S7)
    T9 = fd.ops.where(T5, T2, T8)
    fd.add_output(fd.ops.cast(T9, dtype=DataType.Half))
    T10 = fd.ops.le(T2, S4)
    T11 = fd.ops.mul(T3, T6)
    T12 = fd.ops.where(T10, T11, T3)
    fd.add_output(fd.ops.cast(T12, dtype=DataType.Half))
    S13 = fd.define_scalar(1.05070, dtype=DataType.Double)
    S14 = fd.define_scalar(1.75810, dtype=DataType.Double)
    T15 = fd.ops.mul(T2, S13)
    T16 = fd.ops.mul(T8, S14)
    T17 = fd.ops.where(T5, T15, T16)
    fd.add_output(fd.ops.cast(T17, dtype=DataType.Half))
    T18 = fd.ops.mul(T3, S14)
    T19 = fd.ops.mul(T18, T6)
    T20 = fd.ops.mul(T3, S13)
    T21 = fd.ops.where(T10, T19, T20)
    fd.add_output(fd.ops.cast(T21, dtype=DataType.Half))
    S22 = fd.define_scalar(0.0100000, dtype=DataType.Double)
    T23 = fd.ops.mul(T2, S22)
    T24 = fd.ops.where(T5, T2, T23)
    fd.add_output(fd.ops.cast(T24, dtype=DataType.Half))
    T25 = fd.ops.mul(T3, S22)
    T26 = fd.ops.where(T5, T3, T25)
    fd.add_output(fd.ops.cast(T26, dtype=DataType.Half))


with FusionDefinition() as fd:
    nvfuser_fusion_id52(fd)

inputs = [
    torch.testing.make_tensor((16384, 4096), dtype=torch.float16, device='cuda:0', low=-8, high=8),
    torch.testing.make_tensor((16384, 4096), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
