# Cross-entropy with the target gathered from the log-probabilities
# (fd.ops.take_along_axis): gather-heavy, out of scope, refused naming it.
# expect: refused take_along_axis
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id41(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Int, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.take_along_axis(T0, T1, dim=1)
    T3 = fd.ops.neg(T2)
    T4 = fd.ops.sum(T3, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T4)


with FusionDefinition() as fd:
    nvfuser_fusion_id41(fd)

inputs = [
    torch.testing.make_tensor((4096, 32000), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 1), dtype=torch.int64, device='cuda:0', low=0, high=32000),
]
fd.execute(inputs)
