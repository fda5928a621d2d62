# Cross-entropy forward with ignore_index=-100 and mean reduction, the
# target's log-probability picked by comparing an iota over the vocabulary
# with the target (no gather), padding tokens masked by where(target !=
# -100) and the mean taken over the valid count (a full reduction of the
# mask). Logits float32 [N, V]; outputs the loss and the logsumexp [N]
# saved for backward.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id9(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False, stride_order=[0])
    T2 = fd.ops.max(T0, dims=[1], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[4096, 1], broadcast_dims=[0])
    T4 = fd.ops.broadcast_in_dim(T3, shape=[4096, 32000], broadcast_dims=[0, 1])
    T5 = fd.ops.sub(T0, T4)
    T6 = fd.ops.exp(T5)
    T7 = fd.ops.sum(T6, dims=[1], keepdim=False, dtype=DataType.Null)
    T8 = fd.ops.log(T7)
    T9 = fd.ops.add(T8, T2)
    T10 = fd.ops.broadcast_in_dim(T9, shape=[4096, 1], broadcast_dims=[0])
    T11 = fd.ops.broadcast_in_dim(T10, shape=[4096, 32000], broadcast_dims=[0, 1])
    T12 = fd.ops.sub(T0, T11)
    S13 = fd.define_scalar(0, dtype=DataType.Int)
    S14 = fd.define_scalar(32000, dtype=DataType.Int)
    S15 = fd.define_scalar(1, dtype=DataType.Int)
    T16 = fd.ops.iota(S14, S13, S15, dtype=DataType.Int)
    T17 = fd.ops.broadcast_in_dim(T16, shape=[4096, 32000], broadcast_dims=[1])
    T18 = fd.ops.broadcast_in_dim(T1, shape=[4096, 32000], broadcast_dims=[0])
    T19 = fd.ops.eq(T17, T18)
    S20 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T21 = fd.ops.where(T19, T12, S20)
    T22 = fd.ops.sum(T21, dims=[1], keepdim=False, dtype=DataType.Null)
    T23 = fd.ops.neg(T22)
    S24 = fd.define_scalar(-100, dtype=DataType.Int)
    T25 = fd.ops.ne(T1, S24)
    T26 = fd.ops.where(T25, T23, S20)
    T27 = fd.ops.sum(T26, dims=[0], keepdim=False, dtype=DataType.Null)
    T28 = fd.ops.cast(T25, dtype=DataType.Float)
    T29 = fd.ops.sum(T28, dims=[0], keepdim=False, dtype=DataType.Null)
    T30 = fd.ops.div(T27, T29)
    fd.add_output(T30)
    fd.add_output(T9)


with FusionDefinition() as fd:
    nvfuser_fusion_id9(fd)

inputs = [
    torch.testing.make_tensor((4096, 32000), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.int64, device='cuda:0', low=-100, high=32000),
]
fd.execute(inputs)
