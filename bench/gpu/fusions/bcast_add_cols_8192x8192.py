# A broadcast add along the columns: x [8192, 8192] + b [8192, 1] (b repeated
# across every row), bf16 (issue 34: pointwise kernels with broadcasts).
# Inputs: T0 x [8192, 8192] bf16, T1 b [8192] bf16. Outputs: y [8192, 8192] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def bcast_add_cols(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[8192, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[8192], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.broadcast_in_dim(T1, shape=[8192, 8192], broadcast_dims=[0])
    T3 = fd.ops.add(T0, T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    bcast_add_cols(fd)

inputs = [
    torch.randn((8192, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192,), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
