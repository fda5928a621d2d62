# A reduction of a reduction: per-row sums of x * y, then the sum of their
# exponentials (two kernels: no scheduler takes both reductions).
# Inputs: T0, T1 [M, N] bf16. Outputs: total [] float, e [M] float.
import torch
from nvfuser import FusionDefinition, DataType


def row_then_total_fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.mul(T2, T3)
    T5 = fd.ops.sum(T4, dims=[1], keepdim=False, dtype=DataType.Null)
    T6 = fd.ops.exp(T5)
    T7 = fd.ops.sum(T6, dims=[0], keepdim=False, dtype=DataType.Null)
    fd.add_output(T7)
    fd.add_output(T6)


with FusionDefinition() as fd:
    row_then_total_fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
