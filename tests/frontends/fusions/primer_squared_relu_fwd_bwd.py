# Primer / Nemotron squared ReLU, forward and backward in one fusion as an
# autodiff pass rematerializes it: y = relu(x)^2 (fd.ops.relu then pow
# with 2.0), dx = 2 * relu(x) * dy; bf16, the relu kept in float.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id11(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.relu(T2)
    S4 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T5 = fd.ops.pow(T3, S4)
    T6 = fd.ops.cast(T5, dtype=DataType.BFloat16)
    T7 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.mul(T3, S4)
    T9 = fd.ops.mul(T8, T7)
    T10 = fd.ops.cast(T9, dtype=DataType.BFloat16)
    fd.add_output(T6)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id11(fd)

inputs = [
    torch.testing.make_tensor((2, 2048, 12288), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 2048, 12288), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
