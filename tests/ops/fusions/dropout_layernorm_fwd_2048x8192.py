# Dropout then a residual add and LayerNorm forward, in one kernel: the mask
# is uniform(0, 1) < 1 - p from the seed and offset inputs (Philox), kept as
# an output (what autodiff saves for backward).
# Inputs: T0 x [M, N] bf16, T1 residual [M, N] bf16, T2 weight [N] bf16,
# T3 bias [N] bf16, S4 seed, S5 offset.
# Outputs: y [M, N] bf16, the residual sum h [M, N] bf16, mask [M, N] bool,
# mean [M, 1] float, rstd [M, 1] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    S4 = fd.define_scalar(None, dtype=DataType.Int)
    S5 = fd.define_scalar(None, dtype=DataType.Int)
    S6 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S7 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T8 = fd.ops.uniform(S6, S7, shape=T0.shape(), rng_seed=S4, rng_offset=S5, dtype=DataType.Float)
    S9 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T10 = fd.ops.lt(T8, S9)
    T11 = fd.ops.cast(T0, dtype=DataType.Float)
    T12 = fd.ops.cast(T10, dtype=DataType.Float)
    T13 = fd.ops.mul(T11, T12)
    S14 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T15 = fd.ops.mul(T13, S14)
    T16 = fd.ops.cast(T1, dtype=DataType.Float)
    T17 = fd.ops.add(T15, T16)
    T18, T19 = fd.ops.var_mean(T17, dims=[1], correction=0, keepdim=False)
    V20 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T21 = fd.ops.broadcast_in_dim(T18, shape=V20, broadcast_dims=[0])
    T22 = fd.ops.broadcast_in_dim(T19, shape=V20, broadcast_dims=[0])
    S23 = fd.define_scalar(1e-05, dtype=DataType.Double)
    T24 = fd.ops.rsqrt(fd.ops.add(T21, S23))
    T25 = fd.ops.broadcast_in_dim(T22, shape=T0.shape(), broadcast_dims=[0, 1])
    T26 = fd.ops.broadcast_in_dim(T24, shape=T0.shape(), broadcast_dims=[0, 1])
    T27 = fd.ops.mul(fd.ops.sub(T17, T25), T26)
    T28 = fd.ops.broadcast_in_dim(fd.ops.cast(T2, dtype=DataType.Float), shape=T0.shape(), broadcast_dims=[1])
    T29 = fd.ops.broadcast_in_dim(fd.ops.cast(T3, dtype=DataType.Float), shape=T0.shape(), broadcast_dims=[1])
    T30 = fd.ops.add(fd.ops.mul(T27, T28), T29)
    fd.add_output(fd.ops.cast(T30, dtype=DataType.BFloat16))
    fd.add_output(fd.ops.cast(T17, dtype=DataType.BFloat16))
    fd.add_output(T10)
    fd.add_output(T22)
    fd.add_output(T24)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192,), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192,), dtype=torch.bfloat16, device="cuda:0"),
    20261205,
    4,
]
fd.execute(inputs)
