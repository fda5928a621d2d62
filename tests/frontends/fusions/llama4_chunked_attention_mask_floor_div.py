# Llama 4's chunked local attention mask built from int64 positions, as
# Thunder prints torch.floor_divide on integer tensors: nvFuser's div of
# integers truncates, so floor division subtracts 1 where the signs differ
# (fd.ops.signbit) and the remainder (fmod) is not 0. chunk = pos // 2048
# for query and key positions (iota); allowed where the chunks are equal and
# the key is not after the query; the additive bf16 bias [1, 1, T, T] is 0
# there and -inf elsewhere.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id40(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False, stride_order=[0])
    T1 = fd.ops.signbit(T0)
    S2 = fd.define_scalar(False, dtype=DataType.Bool)
    T3 = fd.ops.ne(T1, S2)
    S4 = fd.define_scalar(2048, dtype=DataType.Int)
    T5 = fd.ops.fmod(T0, S4)
    S6 = fd.define_scalar(0, dtype=DataType.Int)
    T7 = fd.ops.ne(T5, S6)
    T8 = fd.ops.logical_and(T3, T7)
    T9 = fd.ops.div(T0, S4)
    T10 = fd.ops.sub(T9, T8)
    S11 = fd.define_scalar(8192, dtype=DataType.Int)
    S12 = fd.define_scalar(1, dtype=DataType.Int)
    T13 = fd.ops.iota(S11, S6, S12, dtype=DataType.Int)
    T14 = fd.ops.signbit(T13)
    T15 = fd.ops.ne(T14, S2)
    T16 = fd.ops.fmod(T13, S4)
    T17 = fd.ops.ne(T16, S6)
    T18 = fd.ops.logical_and(T15, T17)
    T19 = fd.ops.div(T13, S4)
    T20 = fd.ops.sub(T19, T18)
    T21 = fd.ops.broadcast_in_dim(T10, shape=[8192, 8192], broadcast_dims=[0])
    T22 = fd.ops.broadcast_in_dim(T20, shape=[8192, 8192], broadcast_dims=[1])
    T23 = fd.ops.eq(T21, T22)
    T24 = fd.ops.broadcast_in_dim(T0, shape=[8192, 8192], broadcast_dims=[0])
    T25 = fd.ops.broadcast_in_dim(T13, shape=[8192, 8192], broadcast_dims=[1])
    T26 = fd.ops.le(T25, T24)
    T27 = fd.ops.logical_and(T23, T26)
    S28 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S29 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
    T30 = fd.ops.where(T27, S28, S29)
    T31 = fd.ops.cast(T30, dtype=DataType.BFloat16)
    T32 = fd.ops.broadcast_in_dim(T31, shape=[1, 1, 8192, 8192], broadcast_dims=[2, 3])
    fd.add_output(T32)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id40(fd)

inputs = [
    torch.testing.make_tensor((8192,), dtype=torch.int64, device='cuda:0', low=-4096, high=16384),
]
fd.execute(inputs)
