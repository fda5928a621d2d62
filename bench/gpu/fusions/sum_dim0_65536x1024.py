# Sum over the outer axis (dim 0) of a [65536, 1024] bf16 tensor, accumulated in
# float (a bias gradient; issue 34: outer reductions near copy bandwidth).
# Inputs: T0 x [65536, 1024] bf16. Outputs: y [1024] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def sum_dim0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[65536, 1024], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.sum(T1, dims=[0], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.cast(T2, dtype=DataType.BFloat16)
    fd.add_output(T3)


with FusionDefinition() as fd:
    sum_dim0(fd)

inputs = [
    torch.randn((65536, 1024), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
