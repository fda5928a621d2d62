# A linear's output gradient arriving transposed (stride_order [0, 1], as
# nvFuser prints a column-major view, .as_strided in the inputs list): add
# the bias gradient path's residual, cast, and the bias gradient as a sum
# over the rows.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id31(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 1])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.add(T2, T3)
    T5 = fd.ops.cast(T4, dtype=DataType.BFloat16)
    T6 = fd.ops.sum(T2, dims=[0], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.cast(T6, dtype=DataType.BFloat16)
    fd.add_output(T5)
    fd.add_output(T7)


with FusionDefinition() as fd:
    nvfuser_fusion_id31(fd)

inputs = [
    torch.randn(16777216, dtype=torch.bfloat16, device='cuda:0').as_strided((4096, 4096), (1, 4096)),
    torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
