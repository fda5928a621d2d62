# A merge of symbolic axes by a size product, as front ends print it before a
# norm over the last axis: x [B, S, H] bf16 reshaped to [B * S, H], RMSNorm
# over H, scaled by the weight; the output stays [B * S, H].
# Inputs: T0 x [B, S, H] bf16, T1 weight [H] bf16.
# Outputs: y [B * S, H] bf16, rstd [B * S, 1] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    S2 = fd.ops.mul(T0.size(0), T0.size(1))
    T3 = fd.ops.reshape(T0, new_shape=[S2, T0.size(2)])
    T4 = fd.ops.cast(T3, dtype=DataType.Float)
    T5 = fd.ops.sum(fd.ops.mul(T4, T4), dims=[1], keepdim=True, dtype=DataType.Float)
    S6 = fd.ops.reciprocal(fd.ops.cast(T0.size(2), dtype=DataType.Double))
    S7 = fd.define_scalar(1e-06, dtype=DataType.Double)
    T8 = fd.ops.rsqrt(fd.ops.add(fd.ops.mul(T5, S6), S7))
    T9 = fd.ops.mul(T4, T8)
    T10 = fd.ops.broadcast_in_dim(fd.ops.cast(T1, dtype=DataType.Float), shape=[S2, T0.size(2)], broadcast_dims=[1])
    fd.add_output(fd.ops.cast(fd.ops.mul(T9, T10), dtype=DataType.BFloat16))
    fd.add_output(T8)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((8, 512, 4096), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((4096,), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
