# The 4-D batch norm backward of batchnorm_bwd_4d.py with symbolic shapes
# (-1): one cubin for every [N, C, H, W], the element count per channel a
# product of sizes. Written by us to check the multi-pass outer persistent
# kernel (channels too large for the chip) at shapes other than the one it
# was compiled for: partial last iterations, threads with fewer iterations
# than the kept ones, rows whose H*W is not a multiple of the vector width.
# Inputs: T0 x, T1 grad_out [N, C, H, W] bf16, T2 weight [C] bf16,
#         T3 saved mean [C] float, T4 saved invstd [C] float.
# Outputs: grad_x bf16, grad_weight [C] bf16, grad_bias [C] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def batchnorm_bwd_4d_symbolic(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T9 = fd.ops.broadcast_in_dim(T3, shape=T0.shape(), broadcast_dims=[1])
    T11 = fd.ops.broadcast_in_dim(T4, shape=T0.shape(), broadcast_dims=[1])
    T12 = fd.ops.sub(T5, T9)
    T13 = fd.ops.mul(T12, T11)
    T14 = fd.ops.sum(T6, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.mul(T6, T13)
    T16 = fd.ops.sum(T15, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    T17 = fd.ops.cast(T2, dtype=DataType.Float)
    T18 = fd.ops.broadcast_in_dim(T17, shape=T0.shape(), broadcast_dims=[1])
    S19 = fd.ops.mul(fd.ops.mul(T0.size(0), T0.size(2)), T0.size(3))
    S20 = fd.ops.reciprocal(S19)
    T21 = fd.ops.broadcast_in_dim(T14, shape=T0.shape(), broadcast_dims=[1])
    T22 = fd.ops.mul(T21, S20)
    T23 = fd.ops.broadcast_in_dim(T16, shape=T0.shape(), broadcast_dims=[1])
    T24 = fd.ops.mul(T13, T23)
    T25 = fd.ops.mul(T24, S20)
    T26 = fd.ops.sub(T6, T22)
    T27 = fd.ops.sub(T26, T25)
    T28 = fd.ops.mul(T27, T11)
    T29 = fd.ops.mul(T28, T18)
    T30 = fd.ops.cast(T29, dtype=DataType.BFloat16)
    T31 = fd.ops.cast(T16, dtype=DataType.BFloat16)
    T32 = fd.ops.cast(T14, dtype=DataType.BFloat16)
    fd.add_output(T30)
    fd.add_output(T31)
    fd.add_output(T32)


with FusionDefinition() as fd:
    batchnorm_bwd_4d_symbolic(fd)

inputs = [
    torch.randn((256, 64, 56, 56), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((256, 64, 56, 56), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((64,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((64,), dtype=torch.float32, device="cuda:0"),
    torch.rand((64,), dtype=torch.float32, device="cuda:0") + 0.5,
]
fd.execute(inputs)
