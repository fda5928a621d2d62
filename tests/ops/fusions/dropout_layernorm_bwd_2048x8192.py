# Backward of LayerNorm over a dropout's output (tests/corpus's per-primitive
# LayerNorm backward, static shapes), then dropout's backward with the mask
# recomputed from the forward's seed and offset: grad_x = dLN * mask / (1 - p).
# Inputs: T0 the dropout's output [2048, 8192] bf16, T1 grad_out bf16,
# T2 weight [8192] bf16, T3 mean [2048, 1] float, T4 rstd [2048, 1] float,
# S50 seed, S51 offset.
# Outputs: grad_x bf16, grad_weight [8192] bf16, grad_bias [8192] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[8192], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[2048, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T4 = fd.define_tensor(shape=[2048, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    S50 = fd.define_scalar(None, dtype=DataType.Int)
    S51 = fd.define_scalar(None, dtype=DataType.Int)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.cast(T2, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T3, shape=[2048, 8192], broadcast_dims=[0, 1])
    T9 = fd.ops.broadcast_in_dim(T4, shape=[2048, 8192], broadcast_dims=[0, 1])
    T10 = fd.ops.sub(T5, T8)
    T11 = fd.ops.mul(T10, T9)
    T12 = fd.ops.broadcast_in_dim(T7, shape=[2048, 8192], broadcast_dims=[1])
    T13 = fd.ops.mul(T6, T12)
    T14 = fd.ops.mul(T13, T9)
    T15 = fd.ops.mul(T13, T10)
    T16 = fd.ops.sum(T15, dims=[1], keepdim=False, dtype=DataType.Null)
    T17 = fd.ops.broadcast_in_dim(T16, shape=[2048, 1], broadcast_dims=[0])
    S18 = fd.define_scalar(3.00000, dtype=DataType.Double)
    T19 = fd.ops.pow(T4, S18)
    S20 = fd.define_scalar(-0.500000, dtype=DataType.Double)
    T21 = fd.ops.mul(S20, T17)
    T22 = fd.ops.mul(T21, T19)
    T23 = fd.ops.neg(T14)
    T24 = fd.ops.sum(T23, dims=[1], keepdim=False, dtype=DataType.Null)
    T25 = fd.ops.broadcast_in_dim(T24, shape=[2048, 1], broadcast_dims=[0])
    S26 = fd.define_scalar(8192.00, dtype=DataType.Double)
    S27 = fd.ops.reciprocal(S26)
    T28 = fd.ops.mul(T25, S27)
    T29 = fd.ops.broadcast_in_dim(T28, shape=[2048, 8192], broadcast_dims=[0, 1])
    S30 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T31 = fd.ops.mul(S30, T22)
    T32 = fd.ops.mul(T31, S27)
    T33 = fd.ops.broadcast_in_dim(T32, shape=[2048, 8192], broadcast_dims=[0, 1])
    T34 = fd.ops.mul(T33, T10)
    T35 = fd.ops.add(T14, T29)
    T36 = fd.ops.add(T35, T34)
    T37 = fd.ops.mul(T6, T11)
    T38 = fd.ops.sum(T37, dims=[0], keepdim=False, dtype=DataType.Null)
    T39 = fd.ops.sum(T6, dims=[0], keepdim=False, dtype=DataType.Null)
    T52 = fd.ops.uniform(0.0, 1.0, shape=[2048, 8192], rng_seed=S50, rng_offset=S51, dtype=DataType.Float)
    T53 = fd.ops.cast(fd.ops.lt(T52, 0.9), dtype=DataType.Float)
    T54 = fd.ops.mul(fd.ops.mul(T36, T53), 1.11111)
    T40 = fd.ops.cast(T54, dtype=DataType.BFloat16)
    T41 = fd.ops.cast(T38, dtype=DataType.BFloat16)
    T42 = fd.ops.cast(T39, dtype=DataType.BFloat16)
    fd.add_output(T40)
    fd.add_output(T41)
    fd.add_output(T42)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 1), dtype=torch.float32, device="cuda:0"),
    torch.rand((2048, 1), dtype=torch.float32, device="cuda:0") + 0.5,
    20261205,
    4,
]
fd.execute(inputs)
