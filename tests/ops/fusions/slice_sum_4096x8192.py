# Reductions over slices of an input: the sum of a column window and the
# max over every other column, one kernel each side of nothing: the
# reductions read x at shifted indices.
# Inputs: T0 x [4096, 8192] bf16.
# Outputs: s [4096] float (sum of x[:, 1024:5120]), m [4096, 1] bf16 (max of x[:, ::2]).
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4096, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.slice(T0, start_indices=[0, 1024], end_indices=[4096, 5120], strides=[1, 1], manual_normalization=0)
    T2 = fd.ops.cast(T1, dtype=DataType.Float)
    T3 = fd.ops.sum(T2, dims=[1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T3)
    T4 = fd.ops.slice(T0, start_indices=[0, 0], end_indices=[4096, 8192], strides=[1, 2], manual_normalization=0)
    T5 = fd.ops.max(T4, dims=[1], keepdim=True, dtype=DataType.Null)
    fd.add_output(T5)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((4096, 8192), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
