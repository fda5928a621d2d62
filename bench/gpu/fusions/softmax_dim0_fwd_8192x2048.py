# Softmax over the outer axis (dim 0) of a [8192, 2048] bf16 tensor: each column
# normalized over its 8192 rows (issue 34: no cliffs for outer reductions).
# Inputs: T0 x [8192, 2048] bf16. Outputs: y [8192, 2048] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def softmax_dim0_fwd(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[8192, 2048], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.max(T1, dims=[0], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[8192, 2048], broadcast_dims=[1])
    T4 = fd.ops.sub(T1, T3)
    T5 = fd.ops.exp(T4)
    T6 = fd.ops.sum(T5, dims=[0], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, shape=[8192, 2048], broadcast_dims=[1])
    T8 = fd.ops.div(T5, T7)
    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)
    fd.add_output(T9)


with FusionDefinition() as fd:
    softmax_dim0_fwd(fd)

inputs = [
    torch.randn((8192, 2048), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
