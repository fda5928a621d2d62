# Softmax backward over the outer axis (dim 0), symbolic sizes (one kernel
# for every shape; the harness runs it at three other shapes):
# dx = y * (dy - sum_0(dy * y)) (issue 34: no cliffs for outer reductions).
# Inputs: T0 y [M, N] bf16 (softmax output), T1 grad_out [M, N] bf16.
# Outputs: grad_x [M, N] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def softmax_dim0_bwd(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.mul(T3, T2)
    T5 = fd.ops.sum(T4, dims=[0], keepdim=True, dtype=DataType.Null)
    T6 = fd.ops.broadcast_in_dim(T5, shape=T0.shape(), broadcast_dims=[0, 1])
    T7 = fd.ops.sub(T3, T6)
    T8 = fd.ops.mul(T2, T7)
    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)
    fd.add_output(T9)


with FusionDefinition() as fd:
    softmax_dim0_bwd(fd)

inputs = [
    torch.softmax(torch.randn((2048, 8192), device="cuda:0"), 0).to(torch.bfloat16),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
