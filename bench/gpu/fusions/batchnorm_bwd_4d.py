# Training batch norm backward over an NCHW input [256, 64, 56, 56] bf16 (a
# ResNet stage), written by us in the corpus's repro-script form: the same
# math as tests/corpus/fusions/batchnorm_bwd_thunder.py with reductions
# over (0, 2, 3). Issue 5 wants it as one kernel at >= 70% of copy bandwidth.
# Inputs: T0 x, T1 grad_out [256, 64, 56, 56] bf16, T2 weight [64] bf16,
#         T3 saved mean [64] float, T4 saved invstd [64] float.
# Outputs: grad_x bf16, grad_weight [64] bf16, grad_bias [64] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def batchnorm_bwd_4d(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[256, 64, 56, 56], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[256, 64, 56, 56], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[64], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T3 = fd.define_tensor(shape=[64], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T4 = fd.define_tensor(shape=[64], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T9 = fd.ops.broadcast_in_dim(T3, shape=[256, 64, 56, 56], broadcast_dims=[1])
    T11 = fd.ops.broadcast_in_dim(T4, shape=[256, 64, 56, 56], broadcast_dims=[1])
    T12 = fd.ops.sub(T5, T9)
    T13 = fd.ops.mul(T12, T11)
    T14 = fd.ops.sum(T6, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.mul(T6, T13)
    T16 = fd.ops.sum(T15, dims=[0, 2, 3], keepdim=False, dtype=DataType.Null)
    T17 = fd.ops.cast(T2, dtype=DataType.Float)
    T18 = fd.ops.broadcast_in_dim(T17, shape=[256, 64, 56, 56], broadcast_dims=[1])
    S19 = fd.define_scalar(802816.0, dtype=DataType.Double)
    S20 = fd.ops.reciprocal(S19)
    T21 = fd.ops.broadcast_in_dim(T14, shape=[256, 64, 56, 56], broadcast_dims=[1])
    T22 = fd.ops.mul(T21, S20)
    T23 = fd.ops.broadcast_in_dim(T16, shape=[256, 64, 56, 56], broadcast_dims=[1])
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
    batchnorm_bwd_4d(fd)

inputs = [
    torch.randn((256, 64, 56, 56), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((256, 64, 56, 56), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((64,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((64,), dtype=torch.float32, device="cuda:0"),
    torch.rand((64,), dtype=torch.float32, device="cuda:0") + 0.5,
]
fd.execute(inputs)
