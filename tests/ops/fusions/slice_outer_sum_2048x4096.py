# A sum over the rows (an outer reduction: the lanes kernel of adjacent
# columns) of a slice that drops 8 rows at each end: the reduction reads
# x at shifted rows.
# Inputs: T0 x [2048, 4096] bf16.
# Outputs: the column sums of x[8:2040] [4096] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.slice(T0, [8, 0], [2040, 4096])
    fd.add_output(fd.ops.sum(fd.ops.cast(T1, DataType.Float), dims=[0]))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
