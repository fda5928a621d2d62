# LayerNorm backward built from per-primitive gradient rules, symbolic (-1)
# shapes (bench/gpu: layernorm_bwd_thunder.py with its sizes as symbols):
# the variance gradient goes through pow(rstd, 3.0) and -0.5, the mean
# gradient through a separate row reduction. Three row reductions and two
# column reductions; one kernel is the goal.
# Inputs: T0 x [2048, 8192] bf16, T1 grad_out [2048, 8192] bf16,
#         T2 weight [8192] bf16, T3 mean [2048, 1] float, T4 rstd [2048, 1] float.
# Outputs: grad_x bf16, grad_weight [8192] bf16, grad_bias [8192] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id2(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T4 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    V1 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.cast(T2, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T3, shape=T0.shape(), broadcast_dims=[0, 1])
    T9 = fd.ops.broadcast_in_dim(T4, shape=T0.shape(), broadcast_dims=[0, 1])
    T10 = fd.ops.sub(T5, T8)
    T11 = fd.ops.mul(T10, T9)
    T12 = fd.ops.broadcast_in_dim(T7, shape=T0.shape(), broadcast_dims=[1])
    T13 = fd.ops.mul(T6, T12)
    T14 = fd.ops.mul(T13, T9)
    T15 = fd.ops.mul(T13, T10)
    T16 = fd.ops.sum(T15, dims=[1], keepdim=False, dtype=DataType.Null)
    T17 = fd.ops.broadcast_in_dim(T16, shape=V1, broadcast_dims=[0])
    S18 = fd.define_scalar(3.00000, dtype=DataType.Double)
    T19 = fd.ops.pow(T4, S18)
    S20 = fd.define_scalar(-0.500000, dtype=DataType.Double)
    T21 = fd.ops.mul(S20, T17)
    T22 = fd.ops.mul(T21, T19)
    T23 = fd.ops.neg(T14)
    T24 = fd.ops.sum(T23, dims=[1], keepdim=False, dtype=DataType.Null)
    T25 = fd.ops.broadcast_in_dim(T24, shape=V1, broadcast_dims=[0])
    S27 = fd.ops.reciprocal(T0.size(1))
    T28 = fd.ops.mul(T25, S27)
    T29 = fd.ops.broadcast_in_dim(T28, shape=T0.shape(), broadcast_dims=[0, 1])
    S30 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T31 = fd.ops.mul(S30, T22)
    T32 = fd.ops.mul(T31, S27)
    T33 = fd.ops.broadcast_in_dim(T32, shape=T0.shape(), broadcast_dims=[0, 1])
    T34 = fd.ops.mul(T33, T10)
    T35 = fd.ops.add(T14, T29)
    T36 = fd.ops.add(T35, T34)
    T37 = fd.ops.mul(T6, T11)
    T38 = fd.ops.sum(T37, dims=[0], keepdim=False, dtype=DataType.Null)
    T39 = fd.ops.sum(T6, dims=[0], keepdim=False, dtype=DataType.Null)
    T40 = fd.ops.cast(T36, dtype=DataType.BFloat16)
    T41 = fd.ops.cast(T38, dtype=DataType.BFloat16)
    T42 = fd.ops.cast(T39, dtype=DataType.BFloat16)
    fd.add_output(T40)
    fd.add_output(T41)
    fd.add_output(T42)


with FusionDefinition() as fd:
    nvfuser_fusion_id2(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 1), dtype=torch.float32, device="cuda:0"),
    torch.rand((2048, 1), dtype=torch.float32, device="cuda:0") + 0.5,
]
fd.execute(inputs)
