# BERT MLP activation: exact GELU, 0.5 x (1 + erf(x / sqrt(2))), on the
# output of a linear with its bias, bf16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id4(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[1])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T2, dtype=DataType.Float)
    T5 = fd.ops.add(T3, T4)
    S6 = fd.define_scalar(0.707107, dtype=DataType.Double)
    T7 = fd.ops.mul(T5, S6)
    T8 = fd.ops.erf(T7)
    S9 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T10 = fd.ops.add(T8, S9)
    T11 = fd.ops.mul(T5, T10)
    S12 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T13 = fd.ops.mul(T11, S12)
    T14 = fd.ops.cast(T13, dtype=DataType.BFloat16)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id4(fd)

inputs = [
    torch.testing.make_tensor((16384, 4096), dtype=torch.bfloat16, device='cuda:0', low=-4, high=4),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
]
fd.execute(inputs)
