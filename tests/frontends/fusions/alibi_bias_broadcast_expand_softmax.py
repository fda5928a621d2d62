# ALiBi (BLOOM, MPT): per-head slopes [H] made [H, 1, 1] with fd.ops.broadcast
# (is_broadcast_dim), the relative key position (k - q) from two Int iotas
# cast to float, the bias slope * (k - q) grown to [B, H, S, S] with
# fd.ops.expand, added to fp16 scores and softmaxed over keys. The bias
# [1, S, S] times the slopes [H, 1, 1] broadcasts on both sides of the
# multiply; one inner persistent kernel computes the positions from the
# row and column indices.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id34(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4, 16, 1024, 1024], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[16], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.ops.broadcast(T1, is_broadcast_dim=[False, True, True])
    S3 = fd.define_scalar(1024, dtype=DataType.Int)
    T4 = fd.ops.iota(S3, 0, 1, dtype=DataType.Int)
    T5 = fd.ops.broadcast(T4, is_broadcast_dim=[True, False])
    T6 = fd.ops.broadcast(T4, is_broadcast_dim=[False, True])
    T7 = fd.ops.sub(T5, T6)
    T8 = fd.ops.cast(T7, dtype=DataType.Float)
    T9 = fd.ops.broadcast(T8, is_broadcast_dim=[True, False, False])
    T10 = fd.ops.mul(T2, T9)
    T11 = fd.ops.broadcast(T10, is_broadcast_dim=[True, False, False, False])
    T12 = fd.ops.expand(T11, shape=[4, 16, 1024, 1024])
    T13 = fd.ops.cast(T0, dtype=DataType.Float)
    T14 = fd.ops.add(T13, T12)
    T15 = fd.ops.max(T14, dims=[-1], keepdim=True, dtype=DataType.Null)
    T16 = fd.ops.expand(T15, shape=[4, 16, 1024, 1024])
    T17 = fd.ops.sub(T14, T16)
    T18 = fd.ops.exp(T17)
    T19 = fd.ops.sum(T18, dims=[-1], keepdim=True, dtype=DataType.Null)
    T20 = fd.ops.expand(T19, shape=[4, 16, 1024, 1024])
    T21 = fd.ops.div(T18, T20)
    T22 = fd.ops.cast(T21, dtype=DataType.Half)
    fd.add_output(T22)


with FusionDefinition() as fd:
    nvfuser_fusion_id34(fd)

inputs = [
    torch.randn((4, 16, 1024, 1024), dtype=torch.float16, device='cuda:0'),
    torch.rand((16,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
