# LLaMA MLP activation: silu(gate) * up, gate and up halves of one
# projection (two inputs), bf16 in and out, computed in float.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.neg(T2)
    T4 = fd.ops.exp(T3)
    S5 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T6 = fd.ops.add(S5, T4)
    T7 = fd.ops.reciprocal(T6)
    T8 = fd.ops.mul(T2, T7)
    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)
    T10 = fd.ops.cast(T9, dtype=DataType.Float)
    T11 = fd.ops.cast(T1, dtype=DataType.Float)
    T12 = fd.ops.mul(T10, T11)
    T13 = fd.ops.cast(T12, dtype=DataType.BFloat16)
    fd.add_output(T13)


with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

inputs = [
    torch.testing.make_tensor((2, 2048, 11008), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 2048, 11008), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
