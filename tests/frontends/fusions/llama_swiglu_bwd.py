# Backward of silu(gate) * up: the gradients of gate and up from the
# output gradient, with sigmoid recomputed from gate (Thunder's
# rematerialized form).
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id12(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T1, dtype=DataType.Float)
    T5 = fd.ops.cast(T2, dtype=DataType.Float)
    T6 = fd.ops.sigmoid(T4)
    T7 = fd.ops.mul(T4, T6)
    T8 = fd.ops.mul(T3, T7)
    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)
    T10 = fd.ops.mul(T3, T5)
    S11 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T12 = fd.ops.sub(S11, T6)
    T13 = fd.ops.mul(T4, T12)
    T14 = fd.ops.add(S11, T13)
    T15 = fd.ops.mul(T6, T14)
    T16 = fd.ops.mul(T10, T15)
    T17 = fd.ops.cast(T16, dtype=DataType.BFloat16)
    fd.add_output(T17)
    fd.add_output(T9)


with FusionDefinition() as fd:
    nvfuser_fusion_id12(fd)

inputs = [
    torch.testing.make_tensor((4096, 11008), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096, 11008), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096, 11008), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
