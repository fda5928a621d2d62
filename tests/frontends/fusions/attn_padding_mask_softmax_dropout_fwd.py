# Encoder attention: scores plus an additive key-padding mask [B, 1, 1, S]
# (bool input turned into 0 / -10000), softmax, then dropout on the
# probabilities with uniform of the scores' shape (seed, offset inputs);
# outputs the dropped probabilities and the softmax for the backward.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id13(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, 1, 1, -1], contiguity=[True, None, None, True], dtype=DataType.Bool, is_cpu=False, stride_order=[3, 2, 1, 0])
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    S3 = fd.define_scalar(None, dtype=DataType.Int)
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    S5 = fd.define_scalar(0.125000, dtype=DataType.Double)
    T6 = fd.ops.mul(T4, S5)
    S7 = fd.define_scalar(-10000.0, dtype=DataType.Double)
    S8 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T9 = fd.ops.where(T1, S7, S8)
    T10 = fd.ops.broadcast_in_dim(T9, shape=[4, 12, 256, 256], broadcast_dims=[0, 1, 2, 3])
    T11 = fd.ops.add(T6, T10)
    T12 = fd.ops.max(T11, dims=[3], keepdim=True, dtype=DataType.Null)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[4, 12, 256, 256], broadcast_dims=[0, 1, 2, 3])
    T14 = fd.ops.sub(T11, T13)
    T15 = fd.ops.exp(T14)
    T16 = fd.ops.sum(T15, dims=[3], keepdim=True, dtype=DataType.Null)
    T17 = fd.ops.broadcast_in_dim(T16, shape=[4, 12, 256, 256], broadcast_dims=[0, 1, 2, 3])
    T18 = fd.ops.div(T15, T17)
    S19 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S20 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T21 = fd.ops.uniform(S19, S20, shape=[4, 12, 256, 256], rng_seed=S2, rng_offset=S3, dtype=DataType.Float)
    S22 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T23 = fd.ops.lt(T21, S22)
    T24 = fd.ops.mul(T18, T23)
    S25 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T26 = fd.ops.mul(T24, S25)
    T27 = fd.ops.cast(T26, dtype=DataType.Half)
    T28 = fd.ops.cast(T18, dtype=DataType.Half)
    fd.add_output(T27)
    fd.add_output(T28)


with FusionDefinition() as fd:
    nvfuser_fusion_id13(fd)

inputs = [
    torch.testing.make_tensor((4, 12, 256, 256), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((4, 1, 1, 256), dtype=torch.bool, device='cuda:0'),
    11,
    0,
]
fd.execute(inputs)
