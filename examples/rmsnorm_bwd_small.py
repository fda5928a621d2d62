# A small RMSNorm backward with symbolic shapes, written by hand:
#   xhat = x * rstd,  g = grad_out * w,
#   grad_x = rstd * (g - xhat * mean(g * xhat over the row)),
#   grad_w = sum over rows of grad_out * xhat.
# rstd (1/rms) comes in as a saved [M, 1] float; the row mean is a sum times
# 1/N where N is read from the input's size.
# Inputs: T0 x [M, N] bf16, T1 rstd [M, 1] float, T2 grad_out [M, N] bf16,
#         T3 weight [N] bf16. Outputs: grad_x [M, N] bf16, grad_w [N] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def rmsnorm_bwd_small(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    T5 = fd.ops.cast(T2, dtype=DataType.Float)
    T6 = fd.ops.broadcast_in_dim(fd.ops.cast(T3, dtype=DataType.Float), shape=T0.shape(), broadcast_dims=[1])
    T7 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[0, 1])
    T8 = fd.ops.mul(T4, T7)
    T9 = fd.ops.mul(T5, T6)
    T10 = fd.ops.sum(fd.ops.mul(T9, T8), dims=[1], keepdim=False, dtype=DataType.Null)
    S11 = fd.ops.reciprocal(T0.size(1))
    T12 = fd.ops.mul(T10, S11)
    V13 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T14 = fd.ops.broadcast_in_dim(T12, shape=V13, broadcast_dims=[0])
    T15 = fd.ops.broadcast_in_dim(T14, shape=T0.shape(), broadcast_dims=[0, 1])
    T16 = fd.ops.sub(T9, fd.ops.mul(T8, T15))
    T17 = fd.ops.mul(T7, T16)
    T18 = fd.ops.sum(fd.ops.mul(T5, T8), dims=[0], keepdim=False, dtype=DataType.Null)
    T17 = fd.ops.cast(T17, dtype=DataType.BFloat16)
    T18 = fd.ops.cast(T18, dtype=DataType.BFloat16)
    fd.add_output(T17)
    fd.add_output(T18)


with FusionDefinition() as fd:
    rmsnorm_bwd_small(fd)

inputs = [
    torch.randn((64, 128), dtype=torch.bfloat16, device="cuda:0"),
    torch.rand((64, 1), dtype=torch.float32, device="cuda:0") + 0.5,
    torch.randn((64, 128), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((128,), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
