# Dropout then a residual add and RMSNorm forward, in one kernel (the mask
# from the seed and offset inputs, recomputed by backward, not an output).
# Inputs: T0 x [M, N] bf16, T1 residual [M, N] bf16, T2 weight [N] bf16,
# S3 seed, S4 offset.
# Outputs: y [M, N] bf16, the residual sum h [M, N] bf16, rstd [M, 1] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    S3 = fd.define_scalar(None, dtype=DataType.Int)
    S4 = fd.define_scalar(None, dtype=DataType.Int)
    S5 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S6 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T7 = fd.ops.uniform(S5, S6, shape=T0.shape(), rng_seed=S3, rng_offset=S4, dtype=DataType.BFloat16)
    S8 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T9 = fd.ops.lt(T7, S8)
    T10 = fd.ops.cast(T0, dtype=DataType.Float)
    T11 = fd.ops.cast(T9, dtype=DataType.Float)
    T12 = fd.ops.mul(T10, T11)
    S13 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T14 = fd.ops.mul(T12, S13)
    T15 = fd.ops.add(T14, fd.ops.cast(T1, dtype=DataType.Float))
    T16 = fd.ops.mul(T15, T15)
    T17 = fd.ops.sum(T16, dims=[1], keepdim=False, dtype=DataType.Null)
    V18 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T19 = fd.ops.broadcast_in_dim(T17, shape=V18, broadcast_dims=[0])
    S20 = fd.define_scalar(8192.0, dtype=DataType.Double)
    T21 = fd.ops.div(T19, S20)
    S22 = fd.define_scalar(1e-06, dtype=DataType.Double)
    T23 = fd.ops.rsqrt(fd.ops.add(T21, S22))
    T24 = fd.ops.broadcast_in_dim(T23, shape=T0.shape(), broadcast_dims=[0, 1])
    T25 = fd.ops.broadcast_in_dim(fd.ops.cast(T2, dtype=DataType.Float), shape=T0.shape(), broadcast_dims=[1])
    T26 = fd.ops.mul(fd.ops.mul(T15, T24), T25)
    fd.add_output(fd.ops.cast(T26, dtype=DataType.BFloat16))
    fd.add_output(fd.ops.cast(T15, dtype=DataType.BFloat16))
    fd.add_output(T23)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192,), dtype=torch.bfloat16, device="cuda:0"),
    77,
    1024,
]
fd.execute(inputs)
