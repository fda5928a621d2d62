# Sum over the outer axis (dim 0) with symbolic sizes, accumulated in float:
# a bias gradient compiled once at a small size (the inputs list) and run at
# others with the same artifact (tests/launch_audit/gpu_check.sh).
# Inputs: T0 x [M, N] bf16. Outputs: y [N] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def column_sum(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.sum(T1, dims=[0], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.cast(T2, dtype=DataType.BFloat16)
    fd.add_output(T3)


with FusionDefinition() as fd:
    column_sum(fd)

inputs = [
    torch.randn((64, 256), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
