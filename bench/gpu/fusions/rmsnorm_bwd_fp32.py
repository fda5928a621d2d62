# RMSNorm backward written by hand, float32 throughout (the corpus rmsnorm_bwd_manual.py with
# float32 tensors; GPU.md lists torch.compile at 117.6 us for it at 2048x8192). Shapes from the inputs list.
# Inputs: T4 x [M, N], T5 rms [M, 1], T6 grad_out [M, N], T7 weight [N], all float32.
# Outputs: grad_x [M, N], grad_weight [N], float32.
import torch
from nvfuser import FusionDefinition, DataType


def rmsnorm_bwd_fusion(fd: FusionDefinition) -> None:
    T4 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T5 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False)
    T6 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T7 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    S0 = fd.define_scalar(2.0, dtype=DataType.Double)
    T4 = fd.ops.cast(T4, dtype=DataType.Float)
    T6 = fd.ops.cast(T6, dtype=DataType.Float)
    T7 = fd.ops.cast(T7, dtype=DataType.Float)
    T14 = fd.ops.broadcast_in_dim(T5, shape=T4.shape(), broadcast_dims=[0, 1])
    T15 = fd.ops.reciprocal(T14)
    T16 = fd.ops.mul(T4, T15)
    T20 = fd.ops.broadcast_in_dim(T7, shape=T4.shape(), broadcast_dims=[1])
    T23 = fd.ops.mul(T6, T16)
    T24 = fd.ops.mul(T6, T20)
    T25 = fd.ops.sum(T23, dims=[0], keepdim=False, dtype=DataType.Null)
    T28 = fd.ops.mul(T24, T15)
    T29 = fd.ops.neg(T24)
    T30 = fd.ops.mul(T29, T4)
    T32 = fd.ops.pow(T14, S0)
    T33 = fd.ops.reciprocal(T32)
    T34 = fd.ops.mul(T30, T33)
    T35 = fd.ops.sum(T34, dims=[1], keepdim=False, dtype=DataType.Null)
    V39 = fd.define_vector([T4.size(0), 1], dtype=DataType.Int)
    T41 = fd.ops.broadcast_in_dim(T35, shape=V39, broadcast_dims=[0])
    T43 = fd.ops.mul(S0, T5)
    T44 = fd.ops.reciprocal(T43)
    T45 = fd.ops.mul(T41, T44)
    S48 = fd.ops.reciprocal(T4.size(1))
    T49 = fd.ops.mul(T45, S48)
    T50 = fd.ops.sum(T49, dims=[1], keepdim=False, dtype=DataType.Null)
    T54 = fd.ops.broadcast_in_dim(T50, shape=V39, broadcast_dims=[0])
    T58 = fd.ops.broadcast_in_dim(T54, shape=T4.shape(), broadcast_dims=[0, 1])
    T59 = fd.ops.mul(T58, S0)
    T62 = fd.ops.mul(T59, T4)
    T63 = fd.ops.add(T28, T62)
    T63 = fd.ops.cast(T63, dtype=DataType.Float)
    T25 = fd.ops.cast(T25, dtype=DataType.Float)
    fd.add_output(T63)
    fd.add_output(T25)


with FusionDefinition() as fd:
    rmsnorm_bwd_fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.float32, device="cuda:0"),
    torch.rand((2048, 1), dtype=torch.float32, device="cuda:0") + 0.5,
    torch.randn((2048, 8192), dtype=torch.float32, device="cuda:0"),
    torch.randn((8192,), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
