# Row and column sums of x padded with a zero row above and below: one
# kernel with a column epilogue (inner-outer), both reductions reading x at
# shifted rows.
# Inputs: T0 x [2048, 4096] bf16.
# Outputs: column sums [4096] float, row sums [2050] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(fd.ops.pad(T0, [0, 0, 1, 1]), DataType.Float)
    fd.add_output(fd.ops.sum(T1, dims=[0]))
    fd.add_output(fd.ops.sum(T1, dims=[1]))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
