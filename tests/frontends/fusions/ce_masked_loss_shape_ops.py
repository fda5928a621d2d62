# Cross-entropy with ignore_index as recent nvFuser printers write it for a
# [1, tokens, vocab] logits tensor: sizes through fd.ops.shape / fd.ops.at,
# the batch axis dropped with squeeze(..., squeeze_expanded=False), a
# segment_set before the recomputed exp, and the one-hot target an input
# (the gather stays outside); the mean over tokens whose target is not -100.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id45(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False, stride_order=[0])
    T1 = fd.define_tensor(shape=[1, -1, -1], contiguity=[None, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    V3 = fd.ops.shape(T0)
    S4 = fd.ops.at(V3, index=-1)
    T5 = fd.ops.cast(T1, dtype=DataType.Float)
    T6 = fd.ops.squeeze(T5, dims=[0], squeeze_expanded=False)
    S7 = fd.define_scalar(-100, dtype=DataType.Int)
    S8 = fd.define_scalar(0.00000, dtype=DataType.Float)
    T9 = fd.ops.ne(T0, S7)
    T10 = fd.ops.max(T6, dims=[1], keepdim=False, dtype=DataType.Null)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[S4, 1], broadcast_dims=[0])
    T12 = fd.ops.segment_set(T1)
    T13 = fd.ops.cast(T12, dtype=DataType.Float)
    T14 = fd.ops.squeeze(T13, dims=[0], squeeze_expanded=False)
    V15 = fd.ops.shape(T14)
    T16 = fd.ops.broadcast_in_dim(T11, shape=V15, broadcast_dims=[0, 1])
    T17 = fd.ops.sub(T14, T16)
    T18 = fd.ops.exp(T17)
    T19 = fd.ops.sum(T18, dims=[1], keepdim=False, dtype=DataType.Null)
    T20 = fd.ops.log(T19)
    T21 = fd.ops.cast(T2, dtype=DataType.Float)
    T22 = fd.ops.mul(T14, T21)
    T23 = fd.ops.sum(T22, dims=[1], keepdim=False, dtype=DataType.Null)
    T24 = fd.ops.sub(T23, T10)
    T25 = fd.ops.sub(T24, T20)
    T26 = fd.ops.neg(T25)
    T27 = fd.ops.where(T9, T26, S8)
    T28 = fd.ops.sum(T9, dims=[0], keepdim=False, dtype=DataType.Null)
    T29 = fd.ops.cast(T28, dtype=DataType.Float)
    T30 = fd.ops.sum(T27, dims=[0], keepdim=False, dtype=DataType.Null)
    T31 = fd.ops.div(T30, T29)
    T32 = fd.ops.broadcast_in_dim(T20, shape=[S4, 1], broadcast_dims=[0])
    T33 = fd.ops.stride_order(T32, stride_order=[1, 0])
    fd.add_output(T31)
    fd.add_output(T33, stride_order=[1, 0])


with FusionDefinition() as fd:
    nvfuser_fusion_id45(fd)

inputs = [
    torch.testing.make_tensor((4096,), dtype=torch.int64, device='cuda:0', low=-100, high=-98),
    torch.testing.make_tensor((1, 4096, 32064), dtype=torch.bfloat16, device='cuda:0', low=-4, high=4),
    torch.testing.make_tensor((4096, 32064), dtype=torch.bfloat16, device='cuda:0', low=0, high=1),
]
fd.execute(inputs)
