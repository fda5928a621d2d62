# A sum over dim 0 of a 3-D [333, 16, 77] fp32 tensor at odd sizes: 1232
# kept elements over two axes, 333 rows (no vector chunks), fp32 in and
# out. A correctness check of the lanes kernel's edges (issue 34).
# Inputs: T0 x [333, 16, 77] float. Outputs: y [16, 77] float.
import torch
from nvfuser import FusionDefinition, DataType


def sum_dim0_3d(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[333, 16, 77], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.sum(T0, dims=[0], keepdim=False, dtype=DataType.Null)
    fd.add_output(T1)


with FusionDefinition() as fd:
    sum_dim0_3d(fd)

inputs = [
    torch.randn((333, 16, 77), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
