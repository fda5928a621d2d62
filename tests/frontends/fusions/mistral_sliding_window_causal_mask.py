# Mistral / Gemma 2 sliding-window causal attention without a fused
# kernel: the mask built in the fusion from two Int iotas (query and key
# positions), causal (q >= k) and within a 1024-token window (q - k < 1024, integer
# subtraction), combined with logical_and, masked_fill with -inf, softmax
# over keys in float, bf16 probabilities.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id24(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[1, 32, 2048, 2048], contiguity=[None, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    S1 = fd.define_scalar(2048, dtype=DataType.Int)
    S2 = fd.define_scalar(0, dtype=DataType.Int)
    S3 = fd.define_scalar(1, dtype=DataType.Int)
    T4 = fd.ops.iota(S1, S2, S3, dtype=DataType.Int)
    T5 = fd.ops.iota(S1, S2, S3, dtype=DataType.Int)
    T6 = fd.ops.broadcast_in_dim(T4, shape=[2048, 2048], broadcast_dims=[0])
    T7 = fd.ops.broadcast_in_dim(T5, shape=[2048, 2048], broadcast_dims=[1])
    T8 = fd.ops.ge(T6, T7)
    T9 = fd.ops.sub(T6, T7)
    S10 = fd.define_scalar(1024, dtype=DataType.Int)
    T11 = fd.ops.lt(T9, S10)
    T12 = fd.ops.logical_and(T8, T11)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[1, 32, 2048, 2048], broadcast_dims=[2, 3])
    T14 = fd.ops.cast(T0, dtype=DataType.Float)
    S15 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
    T16 = fd.ops.where(T13, T14, S15)
    T17 = fd.ops.max(T16, dims=[3], keepdim=False, dtype=DataType.Null)
    T18 = fd.ops.broadcast_in_dim(T17, shape=[1, 32, 2048, 1], broadcast_dims=[0, 1, 2])
    T19 = fd.ops.broadcast_in_dim(T18, shape=[1, 32, 2048, 2048], broadcast_dims=[0, 1, 2, 3])
    T20 = fd.ops.sub(T16, T19)
    T21 = fd.ops.exp(T20)
    T22 = fd.ops.sum(T21, dims=[3], keepdim=False, dtype=DataType.Null)
    T23 = fd.ops.broadcast_in_dim(T22, shape=[1, 32, 2048, 1], broadcast_dims=[0, 1, 2])
    T24 = fd.ops.broadcast_in_dim(T23, shape=[1, 32, 2048, 2048], broadcast_dims=[0, 1, 2, 3])
    T25 = fd.ops.div(T21, T24)
    T26 = fd.ops.cast(T25, dtype=DataType.BFloat16)
    fd.add_output(T26)


with FusionDefinition() as fd:
    nvfuser_fusion_id24(fd)

inputs = [
    torch.testing.make_tensor((1, 32, 2048, 2048), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
